//===- LayersTest.cpp - Layers and models, eager
//---------------------------===//

#include "kcc/kcc.h"
#include "tests/unit/ErrorOf.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace kcc;
using kcc::testing::errorOf;

namespace {

/// Uniform [-1, 1) test data from a fixed LCG (independent of kcc's RNG).
NDArray testData(const Shape &shape, uint64_t seed) {
  NDArray a = NDArray::empty(shape, DType::F32);
  uint64_t s = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (int64_t i = 0; i < a.numel(); ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    a.set(i, static_cast<double>(s >> 11) * 0x1.0p-53 * 2 - 1);
  }
  return a;
}

TEST(Layers, DenseShapeErrorNamesLayerAndBothShapes) {
  Dense dense(128);
  dense(testData({4, 784}, 1)); // builds for 784 inputs
  std::string msg = errorOf([&] { dense(testData({4, 100}, 2)); });
  EXPECT_NE(msg.find("'dense'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("784"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[4, 100]"), std::string::npos) << msg;
}

TEST(Layers, SequentialShapeErrorOnAddNamesTheLayer) {
  // Keras builds a layer as soon as its input shape is known: a Conv2D after
  // a Flatten fails at add() and names itself and the shape it got.
  Sequential m({Input({28, 28, 1}), Flatten()});
  std::string msg = errorOf([&] { m.add(Conv2D(8, 3)); });
  EXPECT_NE(msg.find("conv2d"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[None, 784]"), std::string::npos) << msg;
}

TEST(Layers, DenseMatchesHandComputation) {
  Dense dense(3, "relu");
  NDArray x = testData({2, 4}, 3);
  Tensor y = dense(x);
  std::vector<NDArray> w = dense.getWeights();
  ASSERT_EQ(w.size(), 2u);
  ASSERT_EQ(w[0].shape(), (Shape{4, 3}));
  // Non-zero bias so the test sees it.
  NDArray bias = NDArray::fromVector({3}, {0.5, -0.25, 0.1});
  dense.setWeights({w[0], bias});
  y = dense(x);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j) {
      double acc = bias.at(j);
      for (int64_t k = 0; k < 4; ++k)
        acc += x.at(i * 4 + k) * w[0].at(k * 3 + j);
      EXPECT_NEAR(y.array().at(i * 3 + j), std::max(acc, 0.0), 1e-6);
    }
  EXPECT_THROW(dense.setWeights({w[0]}), Error);
  EXPECT_THROW(dense.setWeights({w[0], NDArray::zeros({4}, DType::F32)}),
               Error);
}

TEST(Layers, Conv2DMatchesNaiveLoops) {
  Conv2D conv(2, {2, 3}, 1, "same", "linear");
  NDArray x = testData({2, 5, 4, 3}, 4);
  Tensor y = conv(x);
  ASSERT_EQ(y.shape(), (Shape{2, 5, 4, 2}));
  NDArray w = conv.getWeights()[0];
  ASSERT_EQ(w.shape(), (Shape{2, 3, 3, 2}));
  // SAME, stride 1: total padding kh-1 = 1 (all at the bottom), kw-1 = 2
  // (one left, one right).
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t oh = 0; oh < 5; ++oh)
      for (int64_t ow = 0; ow < 4; ++ow)
        for (int64_t f = 0; f < 2; ++f) {
          double acc = 0;
          for (int64_t i = 0; i < 2; ++i)
            for (int64_t j = 0; j < 3; ++j)
              for (int64_t c = 0; c < 3; ++c) {
                int64_t h = oh + i, ww = ow + j - 1;
                if (h < 0 || h >= 5 || ww < 0 || ww >= 4)
                  continue;
                acc += x.at(((n * 5 + h) * 4 + ww) * 3 + c) *
                       w.at(((i * 3 + j) * 3 + c) * 2 + f);
              }
          EXPECT_NEAR(y.array().at(((n * 5 + oh) * 4 + ow) * 2 + f), acc, 1e-5);
        }
}

TEST(Layers, KerasAutoNamingPerModel) {
  Sequential m({Input({8}), Dense(4), Dense(4).named("head"), Dense(2),
                Dropout(0.5), Dense(2)});
  std::vector<std::string> names;
  for (const Layer &l : m.layers())
    names.push_back(l.name());
  EXPECT_EQ(names, (std::vector<std::string>{"dense", "head", "dense_1",
                                             "dropout", "dense_2"}));
  EXPECT_EQ(toSnakeCase("MaxPooling2D"), "max_pooling2d");
  EXPECT_EQ(toSnakeCase("Conv2D"), "conv2d");
  std::vector<Parameter> params = m.parameters();
  ASSERT_EQ(params.size(), 8u);
  EXPECT_EQ(params[0].name, "dense/kernel");
  EXPECT_EQ(params[3].name, "head/bias");
  EXPECT_EQ(params[7].name, "dense_2/bias");
}

TEST(Layers, DropoutIdentityWhenNotTraining) {
  Dropout drop(0.3, 11);
  NDArray x = testData({50, 40}, 5);
  Tensor y = drop(x, /*training=*/false);
  EXPECT_EQ(y.toVector(), Tensor(x).toVector());
}

TEST(Layers, DropoutMaskFractionAndScaleWhenTraining) {
  double rate = 0.3;
  Dropout drop(rate, 11);
  NDArray ones = NDArray::fromVector({100, 100}, std::vector<double>(10000, 1));
  std::vector<double> y = drop(ones, /*training=*/true).toVector();
  int64_t dropped = 0;
  for (double v : y) {
    if (v == 0)
      ++dropped;
    else
      EXPECT_NEAR(v, 1 / (1 - rate), 1e-6);
  }
  // 10k Bernoulli(0.3): stddev of the fraction ~0.0046.
  EXPECT_NEAR(dropped / 10000.0, rate, 0.02);
  // Same step, same mask; another step, another mask.
  CallContext at0, at1;
  at0.training = at1.training = true;
  at1.step = ops::full({}, 1, DType::I64);
  EXPECT_EQ(drop.call({Tensor(ones)}, at0)[0].toVector(), y);
  EXPECT_NE(drop.call({Tensor(ones)}, at1)[0].toVector(), y);
  EXPECT_THROW(Dropout(1.0), Error);
}

/// SpatialDropout1D, 2D and 3D drop whole channels: every step (pixel,
/// voxel) of an (example, channel) is kept, scaled, or dropped together;
/// the fraction of dropped channels is the rate; identity when not
/// training.
TEST(Layers, SpatialDropoutDropsWholeChannels) {
  double rate = 0.4;
  for (int dims : {1, 2, 3}) {
    Shape shape = dims == 1   ? Shape{40, 6, 50}
                  : dims == 2 ? Shape{40, 3, 2, 50}
                              : Shape{40, 1, 3, 2, 50};
    Layer drop = dims == 1   ? Layer(SpatialDropout1D(rate, 5))
                 : dims == 2 ? Layer(SpatialDropout2D(rate, 5))
                             : Layer(SpatialDropout3D(rate, 5));
    NDArray ones =
        NDArray::fromVector(shape, std::vector<double>(numElements(shape), 1));
    EXPECT_EQ(drop(ones, /*training=*/false).toVector(),
              Tensor(ones).toVector());
    std::vector<double> y = drop(ones, /*training=*/true).toVector();
    int64_t batch = 40, positions = 6, channels = 50, dropped = 0;
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t c = 0; c < channels; ++c) {
        double first = y[n * positions * channels + c];
        if (first == 0)
          ++dropped;
        else
          EXPECT_NEAR(first, 1 / (1 - rate), 1e-6);
        for (int64_t p = 1; p < positions; ++p)
          ASSERT_EQ(y[(n * positions + p) * channels + c], first)
              << "example " << n << " channel " << c << " position " << p;
      }
    // 2,000 Bernoulli(0.4) channels: stddev of the fraction ~0.011.
    EXPECT_NEAR(dropped / double(batch * channels), rate, 0.05);
  }
  EXPECT_THROW(SpatialDropout1D(1.0), Error);
  std::string msg = errorOf(
      [] { SpatialDropout2D(0.5)(testData({4, 8}, 1), /*training=*/true); });
  EXPECT_NE(msg.find("expects an input of rank 4"), std::string::npos) << msg;
  msg = errorOf(
      [] { SpatialDropout3D(0.5)(testData({4, 8}, 1), /*training=*/true); });
  EXPECT_NE(msg.find("expects an input of rank 5 ([batch, depth, rows, "
                     "columns, channels])"),
            std::string::npos)
      << msg;
}

TEST(Layers, SequentialDeferredBuildAndInputShapeArg) {
  Sequential deferred({Flatten(), Dense(5)});
  Tensor y = deferred(testData({3, 2, 4}, 6));
  EXPECT_EQ(y.shape(), (Shape{3, 5}));
  EXPECT_EQ(deferred.inputShapes()[0], (Shape{2, 4}));

  Sequential viaArg({Dense(5).withInputShape({8}), Dense(2)});
  EXPECT_EQ(viaArg.inputShapes()[0], (Shape{8}));
  std::string msg = errorOf([&] { viaArg(testData({3, 7}, 7)); });
  EXPECT_NE(msg.find("[None, 8]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[3, 7]"), std::string::npos) << msg;
}

TEST(Layers, FunctionalGraphErrors) {
  Tensor a = Input({4}), b = Input({4});
  Tensor y = Add()({Dense(4)(a), Dense(4)(b)});
  std::string msg = errorOf([&] { Model(a, y); });
  EXPECT_NE(msg.find("graph disconnected"), std::string::npos) << msg;
  msg = errorOf([&] { Model(a, ops::relu(Dense(4)(a))); });
  EXPECT_NE(msg.find("wrap the computation in a layer"), std::string::npos)
      << msg;
  msg = errorOf([&] { Add()({Dense(4)(a), Dense(3)(a)}); });
  EXPECT_NE(msg.find("[None, 4]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[None, 3]"), std::string::npos) << msg;
}

TEST(Layers, SharedLayerIsCalledTwiceWithOneWeightSet) {
  Tensor x = Input({6});
  Dense shared(6, "tanh");
  Tensor y = shared(shared(x));
  Model m(x, y, "twice", 3);
  ASSERT_EQ(m.parameters().size(), 2u);
  NDArray in = testData({2, 6}, 8);
  Tensor expected = shared(shared(in));
  EXPECT_EQ(m(in).toVector(), expected.toVector());
}

TEST(Layers, PoolingLayersAndReshape) {
  NDArray x = testData({2, 6, 6, 3}, 9);
  EXPECT_EQ(MaxPooling2D(2)(x).shape(), (Shape{2, 3, 3, 3}));
  EXPECT_EQ(AveragePooling2D(3, Size2(2), "same")(x).shape(),
            (Shape{2, 3, 3, 3}));
  EXPECT_EQ(Reshape({-1, 3})(x).shape(), (Shape{2, 36, 3}));
  EXPECT_THROW(MaxPooling2D(2, std::nullopt, "full"), Error);
  Tensor s = Softmax()(testData({2, 5}, 10));
  std::vector<double> v = s.toVector();
  EXPECT_NEAR(v[0] + v[1] + v[2] + v[3] + v[4], 1.0, 1e-6);
  EXPECT_THROW(Activation("swish2"), Error);
}

} // namespace
