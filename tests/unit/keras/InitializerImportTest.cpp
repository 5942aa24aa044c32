//===- InitializerImportTest.cpp - Keras initializers with arguments ------===//
//
// initializers/initializers.keras (make_initializer_fixtures.py): Keras 3
// wrote a model whose weights have RandomNormal, TruncatedNormal,
// RandomUniform, Constant, VarianceScaling (every mode and distribution),
// Identity and Orthogonal(gain) initializers. Imported with its weights it
// predicts Keras's outputs; built from its config alone, kcc draws weights
// with the statistics Keras's own draws in the archive have, and the
// constant ones equal them exactly. Unsupported initializers are errors at
// their field.
//
//===----------------------------------------------------------------------===//

#include "tests/unit/keras/KerasTestUtil.h"

#include <cmath>

using namespace kcc;
using namespace kcc::keras_test;
using ::testing::HasSubstr;
namespace json = llvm::json;

namespace {

const char *const kArchive = "initializers/initializers.keras";
const char *const kModelJson = "initializers/initializers_model.json";

struct Stats {
  double mean = 0, sd = 0, min = 1e300, max = -1e300;
  int64_t n = 0;
};

Stats stats(const NDArray &a) {
  Stats s;
  std::vector<double> v = a.toVector();
  s.n = static_cast<int64_t>(v.size());
  for (double x : v) {
    s.mean += x / v.size();
    s.min = std::min(s.min, x);
    s.max = std::max(s.max, x);
  }
  for (double x : v)
    s.sd += (x - s.mean) * (x - s.mean) / v.size();
  s.sd = std::sqrt(s.sd);
  return s;
}

std::map<std::string, NDArray> weightsByName(Model &model) {
  std::map<std::string, NDArray> out;
  for (const Parameter &p : model.parameters())
    out[p.name] = p.value;
  return out;
}

/// A layer's stored initializer (kcc's text form).
std::string initializerOf(Model &model, const std::string &layer,
                          const char *key) {
  json::Object c = model.getLayer(layer).impl()->kerasConfig();
  std::optional<llvm::StringRef> s = c.getString(key);
  return s ? s->str() : "<none>";
}

TEST(KerasInitializers, ArchiveImportsAndPredictsAsKeras) {
  keras::ImportedModel m = keras::importKerasArchive(fixture(kArchive));
  ASSERT_TRUE(m.weightsLoaded);
  json::Value rec = readJson("initializers/initializers.json");
  const json::Object &r = *rec.getAsObject();
  std::vector<double> image, tokens, expected;
  for (const json::Value &a : *r.getArray("image"))
    for (const json::Value &b : *a.getAsArray())
      for (const json::Value &c : *b.getAsArray())
        for (const json::Value &d : *c.getAsArray())
          image.push_back(*d.getAsNumber());
  for (const json::Value &row : *r.getArray("tokens"))
    for (const json::Value &t : *row.getAsArray())
      tokens.push_back(*t.getAsNumber());
  for (const json::Value &row : *r.getArray("predict"))
    for (const json::Value &p : *row.getAsArray())
      expected.push_back(*p.getAsNumber());
  ASSERT_EQ(image.size(), 4u * 6 * 6 * 32);
  ASSERT_EQ(tokens.size(), 4u * 5);
  std::vector<Tensor> y =
      m.model->call({Tensor(NDArray::fromVector({4, 6, 6, 32}, image)),
                     Tensor(NDArray::fromVector({4, 5}, tokens, DType::I32))},
                    CallContext{});
  ASSERT_EQ(y.size(), 1u);
  std::vector<double> got = y[0].toVector();
  ASSERT_EQ(got.size(), expected.size());
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, std::abs(got[i] - expected[i]));
  EXPECT_LE(worst, 1e-6);
  RecordProperty("max_abs_diff_vs_keras", std::to_string(worst));

  // What each Keras initializer became.
  Model &model = *m.model;
  EXPECT_EQ(initializerOf(model, "conv2d", "kernel_initializer"),
            "variance_scaling(scale=2,mode=fan_out,"
            "distribution=untruncated_normal)");
  EXPECT_EQ(initializerOf(model, "conv2d", "bias_initializer"),
            "constant(value=0.01)");
  EXPECT_EQ(initializerOf(model, "embedding", "embeddings_initializer"),
            "random_normal(mean=0,stddev=0.02)");
  EXPECT_EQ(initializerOf(model, "embedding_1", "embeddings_initializer"),
            "uniform");
  EXPECT_EQ(initializerOf(model, "lstm", "kernel_initializer"),
            "random_uniform(minval=-0.2,maxval=0.2)");
  EXPECT_EQ(initializerOf(model, "lstm", "recurrent_initializer"),
            "orthogonal(gain=0.5)");
  EXPECT_EQ(initializerOf(model, "dense", "kernel_initializer"),
            "truncated_normal(mean=0,stddev=0.02)");
  EXPECT_EQ(initializerOf(model, "dense_2", "kernel_initializer"),
            "variance_scaling(scale=1.5,mode=fan_in,"
            "distribution=truncated_normal)");
  EXPECT_EQ(initializerOf(model, "dense_3", "kernel_initializer"),
            "identity(gain=1)");
  EXPECT_EQ(initializerOf(model, "dense_4", "bias_initializer"),
            "constant(value=1)");
}

/// One weight's expected distribution under its initializer.
struct Expect {
  const char *weight;
  enum Kind { Normal, Truncated, Uniform, Exact } kind;
  double mean = 0, sd = 0; ///< Normal / Truncated: N(mean, sd), untruncated
  double lo = 0, hi = 0;   ///< Uniform
};

TEST(KerasInitializers, ConfigAloneDrawsKerasStatistics) {
  keras::ImportedModel keras = keras::importKerasArchive(fixture(kArchive));
  keras::ImportedModel fresh =
      keras::importModelJson(readText(kModelJson), kModelJson, /*seed=*/3);
  ASSERT_FALSE(fresh.weightsLoaded);
  std::map<std::string, NDArray> k = weightsByName(*keras.model);
  std::map<std::string, NDArray> c = weightsByName(*fresh.model);
  ASSERT_EQ(k.size(), c.size());

  const double trunc = 0.87962566103423978;
  const Expect expects[] = {
      // VarianceScaling(2, fan_out, untruncated_normal), fan_out 3*3*64.
      {"conv2d/kernel", Expect::Normal, 0, std::sqrt(2.0 / 576)},
      // VarianceScaling(0.5, fan_avg, uniform), fans 576 and 288.
      {"conv2d_1/kernel", Expect::Uniform, 0, 0, -std::sqrt(1.5 / 432),
       std::sqrt(1.5 / 432)},
      {"embedding/embeddings", Expect::Normal, 0, 0.02},
      {"embedding_1/embeddings", Expect::Uniform, 0, 0, -0.05, 0.05},
      {"lstm/cell/kernel", Expect::Uniform, 0, 0, -0.2, 0.2},
      {"dense/kernel", Expect::Truncated, 0, 0.02},
      {"dense/bias", Expect::Normal, 0.1, 0.05},
      {"dense_1/kernel", Expect::Uniform, 0, 0, -1, 1},
      {"dense_1/bias", Expect::Normal, 0, 0.05},
      // VarianceScaling(1.5, fan_in, "normal" = truncated_normal).
      {"dense_2/kernel", Expect::Truncated, 0, std::sqrt(1.5 / 128) / trunc},
      {"dense_2/bias", Expect::Truncated, 0, 0.05},
      {"layer_normalization/beta", Expect::Uniform, 0, 0, -0.1, 0.1},
      // "variance_scaling": scale 1, fan_in 128, truncated_normal.
      {"dense_4/kernel", Expect::Truncated, 0, std::sqrt(1.0 / 128) / trunc},
      // Constant, Identity, Zeros and LSTM's unit_forget_bias around
      // Constant(0.1): the same values Keras drew.
      {"conv2d/bias", Expect::Exact},
      {"conv2d_1/bias", Expect::Exact},
      {"lstm/cell/bias", Expect::Exact},
      {"layer_normalization/gamma", Expect::Exact},
      {"dense_3/kernel", Expect::Exact},
      {"dense_3/bias", Expect::Exact},
      {"dense_4/bias", Expect::Exact},
  };
  size_t checked = 0;
  for (const Expect &e : expects) {
    SCOPED_TRACE(e.weight);
    ASSERT_TRUE(c.count(e.weight) && k.count(e.weight));
    const NDArray &mine = c.at(e.weight), &theirs = k.at(e.weight);
    ASSERT_EQ(mine.shape(), theirs.shape());
    ++checked;
    if (e.kind == Expect::Exact) {
      EXPECT_EQ(mine.toVector(), theirs.toVector());
      continue;
    }
    Stats s = stats(mine), ks = stats(theirs);
    double se = 1 / std::sqrt(static_cast<double>(s.n));
    // The standard error of a stddev is about sd / sqrt(2n); 5 of them
    // (and 2% for the smallest vectors).
    double sdTol = std::max(0.02, 5 * se / std::sqrt(2.0));
    if (e.kind == Expect::Uniform) {
      double width = e.hi - e.lo, sd = width / std::sqrt(12.0);
      EXPECT_GE(s.min, e.lo);
      EXPECT_LT(s.max, e.hi);
      EXPECT_NEAR(s.mean, (e.lo + e.hi) / 2, 5 * sd * se);
      EXPECT_NEAR(s.sd / sd, 1.0, sdTol);
      // Keras's draws in the archive: the same support.
      EXPECT_GE(ks.min, e.lo - 1e-7);
      EXPECT_LE(ks.max, e.hi + 1e-7);
      if (s.n >= 4096) {
        EXPECT_LT(s.min, e.lo + 0.01 * width);
        EXPECT_GT(s.max, e.hi - 0.01 * width);
      }
    } else {
      double sd = e.kind == Expect::Truncated ? trunc * e.sd : e.sd;
      EXPECT_NEAR(s.mean, e.mean, 5 * sd * se);
      EXPECT_NEAR(s.sd / sd, 1.0, sdTol);
      if (e.kind == Expect::Truncated) {
        EXPECT_GE(s.min, e.mean - 2 * e.sd - 1e-7);
        EXPECT_LE(s.max, e.mean + 2 * e.sd + 1e-7);
        EXPECT_GE(ks.min, e.mean - 2 * e.sd - 1e-7);
        EXPECT_LE(ks.max, e.mean + 2 * e.sd + 1e-7);
      } else if (s.n >= 4096) {
        // Untruncated: past 3 stddev somewhere in 4096+ draws.
        EXPECT_GT(std::max(s.max - e.mean, e.mean - s.min), 3 * e.sd);
      }
    }
    // kcc's draw and Keras's draw have the same statistics.
    double sd = e.kind == Expect::Uniform     ? (e.hi - e.lo) / std::sqrt(12.0)
                : e.kind == Expect::Truncated ? trunc * e.sd
                                              : e.sd;
    EXPECT_NEAR(s.mean, ks.mean, 7 * sd * se);
    EXPECT_NEAR(s.sd / ks.sd, 1.0, 1.5 * sdTol);
  }
  // Orthogonal(gain=0.5), [8, 32]: rows orthogonal with norm 0.5 (rows <
  // cols: Keras transposes), in kcc's draw as in Keras's.
  for (auto *w : {&c.at("lstm/cell/recurrent_kernel"),
                  &k.at("lstm/cell/recurrent_kernel")}) {
    ASSERT_EQ(w->shape(), (Shape{8, 32}));
    for (int64_t a = 0; a < 8; ++a)
      for (int64_t b = 0; b < 8; ++b) {
        double dot = 0;
        for (int64_t j = 0; j < 32; ++j)
          dot += w->at(a * 32 + j) * w->at(b * 32 + j);
        EXPECT_NEAR(dot, a == b ? 0.25 : 0.0, 1e-6) << a << ", " << b;
      }
  }
  ++checked;
  EXPECT_EQ(checked, k.size()) << "every weight of the fixture is checked";
}

/// initializers_model.json with the dense layer's kernel_initializer
/// (the first TruncatedNormal) replaced by `replacement`.
std::string withDenseKernelInitializer(const std::string &replacement) {
  json::Value spec = readJson(kModelJson);
  for (json::Value &layer :
       *spec.getAsObject()->getObject("config")->getArray("layers")) {
    json::Object &entry = *layer.getAsObject();
    if (entry.getString("class_name") == "Dense") {
      json::Object &config = *entry.getObject("config");
      config["kernel_initializer"] = cantFail(json::parse(replacement));
      break;
    }
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << spec;
  return text;
}

TEST(KerasInitializers, StringNamesTakeKerasDefaults) {
  auto draw = [](const std::string &replacement) {
    keras::ImportedModel m = keras::importModelJson(
        withDenseKernelInitializer(replacement), "strings.json", 5);
    return std::make_pair(
        initializerOf(*m.model, "dense", "kernel_initializer"),
        stats(weightsByName(*m.model).at("dense/kernel")));
  };
  auto [constant, cs] = draw("\"constant\"");
  EXPECT_EQ(constant, "constant(value=0)");
  EXPECT_EQ(cs.min, 0.0);
  EXPECT_EQ(cs.max, 0.0);
  auto [normal, ns] = draw("\"normal\"");
  EXPECT_EQ(normal, "random_normal(mean=0,stddev=0.05)");
  EXPECT_NEAR(ns.sd / 0.05, 1.0, 0.03);
  EXPECT_EQ(draw("\"random_normal\"").first,
            "random_normal(mean=0,stddev=0.05)");
  auto [truncated, ts] = draw("\"truncated_normal\"");
  EXPECT_EQ(truncated, "truncated_normal(mean=0,stddev=0.05)");
  EXPECT_LE(ts.max, 0.1 + 1e-7);
  EXPECT_EQ(draw("\"variance_scaling\"").first,
            "variance_scaling(scale=1,mode=fan_in,"
            "distribution=truncated_normal)");
  EXPECT_EQ(draw("\"TruncatedNormal\"").first,
            "truncated_normal(mean=0,stddev=0.05)");
  // Keras's distribution "normal", in any case, is truncated_normal.
  EXPECT_EQ(draw(R"({"class_name": "VarianceScaling", "config":
                    {"scale": 3, "mode": "fan_avg", "distribution": "Normal"}})")
                .first,
            "variance_scaling(scale=3,mode=fan_avg,"
            "distribution=truncated_normal)");
  EXPECT_EQ(draw(R"({"class_name": "RandomUniform", "config": {}})").first,
            "uniform");
}

TEST(KerasInitializers, UnsupportedInitializersAreLocatedErrors) {
  auto importError = [](const std::string &replacement) {
    return errorOf([&] {
      keras::importModelJson(withDenseKernelInitializer(replacement),
                             "bad.json");
    });
  };
  std::string unknown = importError(
      R"({"module": "keras.initializers", "class_name": "STFT",
          "config": {}, "registered_name": null})");
  EXPECT_THAT(unknown, HasSubstr("bad.json: $.config.layers[10].config."
                                 "kernel_initializer.class_name: layer "
                                 "'dense' (Dense): initializer 'STFT' is not "
                                 "supported (expected GlorotUniform, "));
  EXPECT_THAT(unknown, HasSubstr("RandomNormal, TruncatedNormal, "
                                 "RandomUniform, VarianceScaling, Constant"));
  EXPECT_THAT(importError("\"my_init\""),
              HasSubstr("config.kernel_initializer: layer 'dense' (Dense): "
                        "initializer 'my_init' is not supported (expected "
                        "GlorotUniform"));
  EXPECT_THAT(importError(R"({"class_name": "VarianceScaling",
                              "config": {"mode": "fan_sum"}})"),
              HasSubstr("config.kernel_initializer: layer 'dense' (Dense): "
                        "initializer 'VarianceScaling': variance_scaling's "
                        "mode 'fan_sum' is not one of fan_in, fan_out, "
                        "fan_avg"));
  EXPECT_THAT(importError(R"({"class_name": "VarianceScaling",
                              "config": {"scale": -1}})"),
              HasSubstr("variance_scaling's scale must be positive, got -1"));
  EXPECT_THAT(importError(R"({"class_name": "Constant",
                              "config": {"value": [1, 2]}})"),
              HasSubstr("kernel_initializer.config.value: layer 'dense' "
                        "(Dense): Constant's value must be a number"));
  EXPECT_THAT(importError(R"({"class_name": "RandomNormal",
                              "config": {"stddev": "big"}})"),
              HasSubstr("kernel_initializer.config.stddev"));
  EXPECT_THAT(importError(R"({"module": "mylib", "class_name": "MyInit",
                              "config": {}})"),
              HasSubstr("custom object from module 'mylib'"));
}

} // namespace
