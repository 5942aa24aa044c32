//===- InitializersTest.cpp - Keras initializer statistics ----------------===//

#include "kcc/kcc.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>

using namespace kcc;

namespace {

struct Stats {
  double mean = 0, var = 0, min = 1e300, max = -1e300;
};

Stats stats(const NDArray &a) {
  Stats s;
  std::vector<double> v = a.toVector();
  for (double x : v) {
    s.mean += x / v.size();
    s.min = std::min(s.min, x);
    s.max = std::max(s.max, x);
  }
  for (double x : v)
    s.var += (x - s.mean) * (x - s.mean) / v.size();
  return s;
}

TEST(Initializers, KerasFans) {
  init::Fans dense = init::computeFans({784, 128});
  EXPECT_EQ(dense.in, 784);
  EXPECT_EQ(dense.out, 128);
  init::Fans conv = init::computeFans({3, 3, 32, 64});
  EXPECT_EQ(conv.in, 3 * 3 * 32);
  EXPECT_EQ(conv.out, 3 * 3 * 64);
}

TEST(Initializers, GlorotUniformBoundsAndVariance) {
  NDArray w = init::initialize("glorot_uniform", {784, 128}, DType::F32, 42,
                               "dense/kernel");
  double limit = std::sqrt(6.0 / (784 + 128));
  Stats s = stats(w);
  EXPECT_GE(s.min, -limit);
  EXPECT_LE(s.max, limit);
  // The extremes of 100k uniform draws come within 0.1% of the bounds.
  EXPECT_LT(s.max, limit);
  EXPECT_GT(s.max, 0.999 * limit);
  EXPECT_LT(s.min, -0.999 * limit);
  EXPECT_NEAR(s.mean, 0.0, 0.01 * limit);
  // U(-l, l) has variance l^2/3 = 2/(fan_in+fan_out); 100k draws: ~1%.
  EXPECT_NEAR(s.var / (limit * limit / 3), 1.0, 0.02);
}

TEST(Initializers, ConvGlorotUsesReceptiveField) {
  NDArray w = init::initialize("glorot_uniform", {3, 3, 32, 64}, DType::F32, 1,
                               "conv2d/kernel");
  double limit = std::sqrt(6.0 / (9 * 32 + 9 * 64));
  Stats s = stats(w);
  EXPECT_LE(s.max, limit);
  EXPECT_GT(s.max, 0.99 * limit);
  EXPECT_NEAR(s.var / (limit * limit / 3), 1.0, 0.03);
}

TEST(Initializers, NormalsHaveTheirVarianceAndAreTruncated) {
  // Keras: truncated normal at 2 stddev, stddev divided by .8796 so the
  // variance after truncation is scale / fan.
  NDArray he = init::initialize("he_normal", {400, 300}, DType::F32, 3, "a");
  Stats s = stats(he);
  double target = 2.0 / 400;
  EXPECT_NEAR(s.var / target, 1.0, 0.02);
  double cutoff = 2 * std::sqrt(target) / 0.87962566103423978;
  EXPECT_LE(s.max, cutoff + 1e-6);
  EXPECT_GE(s.min, -cutoff - 1e-6);

  NDArray gn =
      init::initialize("glorot_normal", {400, 300}, DType::F32, 3, "b");
  EXPECT_NEAR(stats(gn).var / (2.0 / 700), 1.0, 0.02);

  NDArray hu = init::initialize("he_uniform", {400, 300}, DType::F32, 3, "c");
  Stats u = stats(hu);
  EXPECT_LE(u.max, std::sqrt(6.0 / 400));
  EXPECT_NEAR(u.var / (2.0 / 400), 1.0, 0.02);
}

TEST(Initializers, ConstantsAndErrors) {
  Stats z = stats(init::initialize("zeros", {5}, DType::F32, 0, "b"));
  EXPECT_EQ(z.min, 0);
  EXPECT_EQ(z.max, 0);
  Stats o = stats(init::initialize("ones", {5}, DType::F64, 0, "b"));
  EXPECT_EQ(o.min, 1);
  EXPECT_EQ(o.max, 1);
  EXPECT_THROW(init::initialize("glorot_uniformish", {5}, DType::F32, 0, "x"),
               Error);
}

TEST(Initializers, SeededModelsAreReproducible) {
  auto weights = [](uint64_t seed) {
    Sequential m({Input({20}), Dense(16, "relu"), Dense(4)}, "m", seed);
    return m.getWeights();
  };
  std::vector<NDArray> a = weights(5), b = weights(5), c = weights(6);
  ASSERT_EQ(a.size(), 4u);
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_EQ(a[i].toVector(), b[i].toVector()) << "weight " << i;
  EXPECT_NE(a[0].toVector(), c[0].toVector());
  // Each weight has its own stream: the two kernels differ in content.
  EXPECT_NE(a[0].toVector()[0], a[2].toVector()[0]);
}

} // namespace

namespace {

/// FNV-1a over the float bits of every value: the draws, bit for bit.
uint64_t bitsHash(const NDArray &a) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (int64_t i = 0; i < a.numel(); ++i) {
    float f = static_cast<float>(a.at(i));
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    for (int b = 0; b < 4; ++b)
      h = (h ^ ((u >> (8 * b)) & 0xff)) * 0x100000001b3ull;
  }
  return h;
}

/// The draws of the names kcc always had are the same bits as before the
/// initializers took arguments (hashes recorded from that code).
TEST(Initializers, NamedDrawsAreUnchanged) {
  const std::vector<std::pair<const char *, std::vector<uint64_t>>> golden = {
      {"glorot_uniform",
       {0x2974b57a886efe27ull, 0xbbef36da888f8052ull, 0x271c88239473f9e4ull}},
      {"glorot_normal",
       {0x39f64079f33a138bull, 0xbc17f4d6a914699aull, 0x8582ec1e6fef7083ull}},
      {"he_uniform",
       {0xb6b3ba064cd2276bull, 0xdab1789a91d771a1ull, 0xff3ba097dc68c862ull}},
      {"he_normal",
       {0xc3ba953607deee67ull, 0x3b0ea8286dc9079full, 0x6ba69d83dfa80987ull}},
      {"lecun_uniform",
       {0xb948949d7f659e1dull, 0x8a886c079802f4faull, 0x271c88239473f9e4ull}},
      {"lecun_normal",
       {0x391de77f112a4dcfull, 0x5e1733460c179b01ull, 0x8582ec1e6fef7083ull}},
      {"orthogonal",
       {0xea7091455e4e5d17ull, 0x1744379d591b2dccull, 0xbf523437992821caull}},
      {"zeros",
       {0x37a9b9857c5bfd95ull, 0xa5bb8525e65abe15ull, 0xab0c262759a1d225ull}},
      {"ones",
       {0xa253389086326ac8ull, 0x82ad41861b9fad08ull, 0xdd9a28cbf32bd6a5ull}},
      {"uniform",
       {0x65099523c11a329ull, 0x3e19b84f443988e0ull, 0xc8cbe5c4c6dfb46full}},
      {"random_uniform",
       {0x65099523c11a329ull, 0x3e19b84f443988e0ull, 0xc8cbe5c4c6dfb46full}},
      {"unit_forget_bias",
       {0xb1ec6e65540016b8ull, 0xec660e4dc8e36188ull, 0x8ff0678d295f5d45ull}},
  };
  const Shape shapes[] = {{37, 23}, {3, 3, 5, 7}, {48}};
  for (const auto &[name, hashes] : golden)
    for (size_t i = 0; i < 3; ++i)
      EXPECT_EQ(bitsHash(init::initialize(name, shapes[i], DType::F32, 1234,
                                          "layer/w")),
                hashes[i])
          << name << " " << shapeToString(shapes[i]);
  // The named ones are VarianceScaling: the same bits through it.
  for (auto [named, scaling] :
       {std::pair{"glorot_uniform", "variance_scaling(scale=1,mode=fan_avg,"
                                    "distribution=uniform)"},
        std::pair{"he_normal", "variance_scaling(scale=2,mode=fan_in,"
                               "distribution=truncated_normal)"},
        std::pair{"lecun_normal", "variance_scaling(scale=1)"},
        std::pair{"uniform", "random_uniform(minval=-0.05,maxval=0.05)"},
        std::pair{"orthogonal", "orthogonal(gain=1)"},
        std::pair{"zeros", "constant(value=0)"}})
    EXPECT_EQ(
        bitsHash(init::initialize(named, {9, 4, 6}, DType::F32, 7, "s")),
        bitsHash(init::initialize(scaling, {9, 4, 6}, DType::F32, 7, "s")))
        << named << " vs " << scaling;
}

TEST(Initializers, TextFormsParseAndPrintCanonically) {
  auto canonical = [](const std::string &text) {
    std::string why;
    std::optional<init::Initializer> i = init::parse(text, &why);
    return i ? i->str() : "error: " + why;
  };
  EXPECT_EQ(canonical("glorot_uniform"), "glorot_uniform");
  EXPECT_EQ(canonical("random_normal"), "random_normal(mean=0,stddev=0.05)");
  EXPECT_EQ(canonical("random_normal(stddev=0.02)"),
            "random_normal(mean=0,stddev=0.02)");
  EXPECT_EQ(canonical(" truncated_normal( mean = 0.5 , stddev=1e-07 ) "),
            "truncated_normal(mean=0.5,stddev=1e-07)");
  EXPECT_EQ(canonical("random_uniform(minval=-1,maxval=1)"),
            "random_uniform(minval=-1,maxval=1)");
  EXPECT_EQ(canonical("random_uniform"), "uniform");
  EXPECT_EQ(canonical("uniform(maxval=0.25)"),
            "random_uniform(minval=-0.05,maxval=0.25)");
  EXPECT_EQ(canonical("constant(value=0.1)"), "constant(value=0.1)");
  EXPECT_EQ(canonical("variance_scaling(distribution=Normal)"),
            "variance_scaling(scale=1,mode=fan_in,"
            "distribution=truncated_normal)");
  EXPECT_EQ(canonical("orthogonal(gain=0.5)"), "orthogonal(gain=0.5)");
  EXPECT_EQ(canonical("identity"), "identity(gain=1)");
  // Every text str() prints parses back to itself.
  for (const char *text :
       {"random_normal(mean=0.1,stddev=0.1)", "constant(value=-3.25)",
        "variance_scaling(scale=0.3333333333333333,mode=fan_out,"
        "distribution=untruncated_normal)"})
    EXPECT_EQ(canonical(text), text);

  for (auto [text, why] :
       {std::pair{"glorot_uniformish", "unknown initializer "
                                       "'glorot_uniformish' (expected "
                                       "glorot_uniform, glorot_normal"},
        std::pair{"random_normal(sd=1)",
                  "random_normal has no argument 'sd' (it takes mean, "
                  "stddev)"},
        std::pair{"glorot_uniform(scale=2)", "glorot_uniform takes no "
                                             "arguments"},
        std::pair{"constant(value=abc)", "'value' must be a number"},
        std::pair{"constant(value=1", "is malformed"},
        std::pair{"constant(value=1,value=2)", "'value' is given twice"},
        std::pair{"random_normal(stddev=inf)",
                  "random_normal's stddev must be a finite number"},
        std::pair{"variance_scaling(scale=0)",
                  "variance_scaling's scale must be positive, got 0"},
        std::pair{"variance_scaling(mode=fan_sum)",
                  "mode 'fan_sum' is not one of fan_in, fan_out, "
                  "fan_avg"},
        std::pair{"variance_scaling(distribution=cauchy)",
                  "distribution 'cauchy' is not one of truncated_normal, "
                  "untruncated_normal, uniform"}}) {
    EXPECT_FALSE(init::isInitializer(text)) << text;
    EXPECT_NE(canonical(text).find(why), std::string::npos)
        << text << ": " << canonical(text);
  }
}

TEST(Initializers, KerasNamesAndClasses) {
  EXPECT_EQ(init::fromKerasName("RandomNormal"), "random_normal");
  EXPECT_EQ(init::fromKerasName("random_normal"), "random_normal");
  EXPECT_EQ(init::fromKerasName("normal"), "random_normal");
  EXPECT_EQ(init::fromKerasName("TruncatedNormal"), "truncated_normal");
  EXPECT_EQ(init::fromKerasName("uniform"), "random_uniform");
  EXPECT_EQ(init::fromKerasName("IdentityInitializer"), "identity");
  EXPECT_EQ(init::fromKerasName("zero"), "zeros");
  EXPECT_EQ(init::fromKerasName("VarianceScaling"), "variance_scaling");
  EXPECT_EQ(init::fromKerasName("unit_forget_bias"), "");
  EXPECT_EQ(init::fromKerasName("STFT"), "");
  EXPECT_EQ(init::kerasClassName("constant"), "Constant");
  EXPECT_EQ(init::kerasClassName("uniform"), "RandomUniform");
  EXPECT_EQ(init::kerasClassName("unit_forget_bias"), "");
}

// Statistics of 2^17 draws: the sample mean is within ~3 standard errors
// (stddev / 362), the sample stddev within 1.5%.
const Shape kBig = {256, 512};

TEST(Initializers, RandomNormalHasItsMeanAndStddev) {
  Stats s = stats(init::initialize("random_normal(mean=0.5,stddev=0.02)", kBig,
                                   DType::F32, 11, "dense/kernel"));
  EXPECT_NEAR(s.mean, 0.5, 0.02 * 0.01);
  EXPECT_NEAR(std::sqrt(s.var) / 0.02, 1.0, 0.015);
  // Untruncated: 2^17 normals reach past 4 stddev.
  EXPECT_GT(s.max, 0.5 + 4 * 0.02);
  EXPECT_LT(s.min, 0.5 - 4 * 0.02);
  Stats d = stats(init::initialize("random_normal", kBig, DType::F32, 11,
                                   "embedding/embeddings"));
  EXPECT_NEAR(d.mean, 0.0, 0.05 * 0.01);
  EXPECT_NEAR(std::sqrt(d.var) / 0.05, 1.0, 0.015);
}

TEST(Initializers, TruncatedNormalIsCutAtTwoStddevAndNotRescaled) {
  double mean = -0.1, sd = 0.02;
  Stats s = stats(init::initialize("truncated_normal(mean=-0.1,stddev=0.02)",
                                   kBig, DType::F32, 12, "dense/kernel"));
  EXPECT_NEAR(s.mean, mean, sd * 0.01);
  EXPECT_GE(s.min, mean - 2 * sd - 1e-7);
  EXPECT_LE(s.max, mean + 2 * sd + 1e-7);
  // The bounds are reached (to 0.1% of the range) ...
  EXPECT_LT(s.min, mean - 1.998 * sd);
  EXPECT_GT(s.max, mean + 1.998 * sd);
  // ... and the stddev is the truncated one, .8796 sd: not rescaled.
  EXPECT_NEAR(std::sqrt(s.var) / (0.87962566103423978 * sd), 1.0, 0.015);
}

TEST(Initializers, RandomUniformHasItsRange) {
  Stats s = stats(init::initialize("random_uniform(minval=-1,maxval=3)", kBig,
                                   DType::F32, 13, "dense/kernel"));
  EXPECT_GE(s.min, -1.0);
  EXPECT_LT(s.max, 3.0);
  EXPECT_LT(s.min, -1.0 + 4 * 1e-3);
  EXPECT_GT(s.max, 3.0 - 4 * 1e-3);
  EXPECT_NEAR(s.mean, 1.0, 0.01);
  EXPECT_NEAR(s.var / (16.0 / 12), 1.0, 0.02);
  Stats z = stats(init::initialize("random_uniform(minval=0,maxval=0.5)",
                                   {1000}, DType::F32, 13, "b"));
  EXPECT_GE(z.min, 0.0);
  EXPECT_LT(z.max, 0.5);
}

TEST(Initializers, ConstantAndIdentity) {
  Stats c = stats(
      init::initialize("constant(value=0.1)", {7, 3}, DType::F32, 0, "b"));
  EXPECT_EQ(c.min, static_cast<double>(0.1f));
  EXPECT_EQ(c.max, static_cast<double>(0.1f));
  NDArray eye =
      init::initialize("identity(gain=2)", {3, 4}, DType::F32, 0, "k");
  EXPECT_EQ(eye.toVector(),
            (std::vector<double>{2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 2, 0}));
  EXPECT_THROW(init::initialize("identity", {3, 3, 2}, DType::F32, 0, "k"),
               Error);
}

TEST(Initializers, OrthogonalGainScalesAnOrthonormalMatrix) {
  NDArray q =
      init::initialize("orthogonal(gain=0.5)", {40, 16}, DType::F64, 3, "k");
  // Q^T Q = gain^2 I.
  for (int64_t a = 0; a < 16; ++a)
    for (int64_t b = 0; b < 16; ++b) {
      double dot = 0;
      for (int64_t r = 0; r < 40; ++r)
        dot += q.at(r * 16 + a) * q.at(r * 16 + b);
      EXPECT_NEAR(dot, a == b ? 0.25 : 0.0, 1e-12) << a << ", " << b;
    }
}

TEST(Initializers, UnitForgetBiasAroundAnotherInitializer) {
  // Keras's LSTMCell with unit_forget_bias: [init(units), ones(units),
  // init(2 units)].
  std::vector<double> b =
      init::initialize("unit_forget_bias(constant(value=0.1))", {12},
                       DType::F64, 0, "lstm/cell/bias")
          .toVector();
  EXPECT_EQ(b, (std::vector<double>{0.1, 0.1, 0.1, 1, 1, 1, 0.1, 0.1, 0.1, 0.1,
                                    0.1, 0.1}));
  EXPECT_EQ(init::parse("unit_forget_bias(zeros)")->str(), "unit_forget_bias");
  EXPECT_EQ(init::parse("unit_forget_bias( random_normal(stddev=1) )")->str(),
            "unit_forget_bias(random_normal(mean=0,stddev=1))");
  EXPECT_FALSE(init::isInitializer("unit_forget_bias(unit_forget_bias)"));
  EXPECT_FALSE(init::isInitializer("unit_forget_bias(foo)"));
  std::vector<double> r =
      init::initialize("unit_forget_bias(random_uniform(minval=2,maxval=3))",
                       {400}, DType::F64, 5, "lstm/cell/bias")
          .toVector();
  for (size_t i = 0; i < r.size(); ++i)
    if (i >= 100 && i < 200)
      EXPECT_EQ(r[i], 1.0) << i;
    else
      EXPECT_TRUE(r[i] >= 2 && r[i] < 3) << i << ": " << r[i];
  // An LSTM layer puts its bias_initializer around the forget gate's ones.
  Sequential m(
      {Input({5, 3}), LSTM(4, "tanh", "sigmoid", true, "glorot_uniform",
                           "orthogonal", "constant(value=0.25)")},
      "m", 1);
  std::vector<double> bias = m.getWeights()[2].toVector();
  ASSERT_EQ(bias.size(), 16u);
  for (size_t i = 0; i < 16; ++i)
    EXPECT_EQ(bias[i], i >= 4 && i < 8 ? 1.0 : 0.25) << i;
}

TEST(Initializers, VarianceScalingModesAndDistributions) {
  // A conv kernel: fan_in 3*3*32 = 288, fan_out 3*3*64 = 576.
  const Shape conv = {3, 3, 32, 64};
  double fanIn = 288, fanOut = 576, fanAvg = 432;
  struct Case {
    const char *text;
    double variance; ///< scale / n
    const char *distribution;
  };
  const Case cases[] = {
      {"variance_scaling(scale=2,mode=fan_out,distribution=untruncated_normal)",
       2 / fanOut, "untruncated_normal"},
      {"variance_scaling(scale=0.5,mode=fan_avg,distribution=uniform)",
       0.5 / fanAvg, "uniform"},
      {"variance_scaling(scale=1.5,mode=fan_in,distribution=truncated_normal)",
       1.5 / fanIn, "truncated_normal"},
      {"variance_scaling", 1 / fanIn, "truncated_normal"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.text);
    Stats s = stats(init::initialize(c.text, conv, DType::F32, 21, "conv"));
    double sd = std::sqrt(c.variance);
    // Every distribution has variance scale / n (truncated_normal's
    // stddev is divided by .8796 to restore it).
    EXPECT_NEAR(std::sqrt(s.var) / sd, 1.0, 0.02);
    EXPECT_NEAR(s.mean, 0.0, 0.015 * sd);
    std::string d = c.distribution;
    if (d == "uniform") {
      double limit = std::sqrt(3 * c.variance);
      EXPECT_GE(s.min, -limit);
      EXPECT_LT(s.max, limit);
      EXPECT_GT(s.max, 0.998 * limit);
    } else if (d == "truncated_normal") {
      double cut = 2 * sd / 0.87962566103423978;
      EXPECT_GE(s.min, -cut - 1e-7);
      EXPECT_LE(s.max, cut + 1e-7);
      EXPECT_GT(s.max, 0.995 * cut);
    } else {
      EXPECT_GT(s.max, 3.5 * sd); // untruncated
    }
  }
}

} // namespace
