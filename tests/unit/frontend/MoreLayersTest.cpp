//===- MoreLayersTest.cpp - activation, merge and image layers, eager -----===//
//
// Hand-computed results of the layers kcc composes of kc ops, run eagerly
// (one kernel per op): padding, cropping, nearest upsampling, global
// pooling, the merge layers, ReLU's arguments and PReLU's weight, and
// TimeDistributed.
//
//===----------------------------------------------------------------------===//

#include "kcc/kcc.h"
#include "tests/unit/ErrorOf.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace kcc;
using kcc::testing::errorOf;

namespace {

/// [1, h, w, 1] holding 1, 2, 3, ... row by row.
NDArray counting(int64_t h, int64_t w) {
  std::vector<double> v;
  for (int64_t i = 0; i < h * w; ++i)
    v.push_back(static_cast<double>(i + 1));
  return NDArray::fromVector({1, h, w, 1}, v);
}

std::vector<double> valuesOf(const Tensor &t) { return t.array().toVector(); }

TEST(MoreLayers, ZeroPaddingCroppingUpSampling) {
  NDArray x = counting(2, 3); // [[1 2 3] [4 5 6]]
  Tensor padded = ZeroPadding2D(Sides2({1, 0}, {0, 1}))(x);
  EXPECT_EQ(padded.shape(), (Shape{1, 3, 4, 1}));
  EXPECT_EQ(valuesOf(padded), (std::vector<double>{0, 0, 0, 0, //
                                                   1, 2, 3, 0, //
                                                   4, 5, 6, 0}));
  Tensor cropped = Cropping2D(Sides2({0, 1}, {1, 0}))(x);
  EXPECT_EQ(cropped.shape(), (Shape{1, 1, 2, 1}));
  EXPECT_EQ(valuesOf(cropped), (std::vector<double>{2, 3}));
  Tensor up = UpSampling2D(Size2(2, 1))(counting(2, 2));
  EXPECT_EQ(up.shape(), (Shape{1, 4, 2, 1}));
  EXPECT_EQ(valuesOf(up), (std::vector<double>{1, 2, 1, 2, 3, 4, 3, 4}));
  Tensor up2 = UpSampling2D(2)(counting(1, 2));
  EXPECT_EQ(valuesOf(up2), (std::vector<double>{1, 1, 2, 2, 1, 1, 2, 2}));
  EXPECT_NE(errorOf([&] { Cropping2D(1)(x); }).find("leaves nothing"),
            std::string::npos);
  EXPECT_NE(errorOf([] { UpSampling2D(2, "bilinear"); }).find("only nearest"),
            std::string::npos);
}

TEST(MoreLayers, GlobalPooling) {
  // Two channels: 1..4 and 10 * (1..4) interleaved.
  NDArray x = NDArray::fromVector({1, 2, 2, 2}, {1, 10, 2, 20, 3, 30, 4, 40});
  Tensor avg = GlobalAveragePooling2D()(x);
  EXPECT_EQ(avg.shape(), (Shape{1, 2}));
  EXPECT_EQ(valuesOf(avg), (std::vector<double>{2.5, 25}));
  Tensor mx = GlobalMaxPooling2D(/*keepdims=*/true)(x);
  EXPECT_EQ(mx.shape(), (Shape{1, 1, 1, 2}));
  EXPECT_EQ(valuesOf(mx), (std::vector<double>{4, 40}));
}

TEST(MoreLayers, MergeLayers) {
  NDArray a = NDArray::fromVector({2, 2}, {1, -2, 3, 8});
  NDArray b = NDArray::fromVector({2, 2}, {4, 5, -6, 2});
  EXPECT_EQ(valuesOf(Subtract()({a, b})), (std::vector<double>{-3, -7, 9, 6}));
  EXPECT_EQ(valuesOf(Multiply()({a, b, a})),
            (std::vector<double>{4, 20, -54, 128}));
  EXPECT_EQ(valuesOf(Average()({a, b})),
            (std::vector<double>{2.5, 1.5, -1.5, 5}));
  EXPECT_EQ(valuesOf(Maximum()({a, b})), (std::vector<double>{4, 5, 3, 8}));
  EXPECT_EQ(valuesOf(Minimum()({a, b})), (std::vector<double>{1, -2, -6, 2}));
  // A dim of 1 broadcasts, as in Keras.
  NDArray col = NDArray::fromVector({2, 1}, {10, -1});
  EXPECT_EQ(valuesOf(Multiply()({a, col})),
            (std::vector<double>{10, -20, -3, -8}));
  Tensor joined = Concatenate()({a, col});
  EXPECT_EQ(joined.shape(), (Shape{2, 3}));
  EXPECT_EQ(valuesOf(joined), (std::vector<double>{1, -2, 10, 3, 8, -1}));
  EXPECT_NE(errorOf([&] { Subtract()({a, b, a}); }).find("exactly 2 inputs"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { Concatenate(0)({a, b}); }).find("batch axis"),
            std::string::npos);
  NDArray wide = NDArray::fromVector({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_NE(errorOf([&] { Maximum()({a, wide}); }).find("[2, 2] and [2, 3]"),
            std::string::npos);
}

TEST(MoreLayers, ReLUArgumentsLeakyReLUAndELU) {
  NDArray x = NDArray::fromVector({1, 6}, {-2, -0.5, 0.25, 1, 3, 9});
  EXPECT_EQ(valuesOf(ReLU()(x)), (std::vector<double>{0, 0, 0.25, 1, 3, 9}));
  EXPECT_EQ(valuesOf(ReLU(6.0)(x)), (std::vector<double>{0, 0, 0.25, 1, 3, 6}));
  // Keras: x > threshold ? x : 0, clipped to max_value, minus
  // negative_slope * relu(threshold - x).
  std::vector<double> full = valuesOf(ReLU(4.0, 0.5, 0.5)(x));
  std::vector<double> want = {-1.25, -0.5, -0.125, 1, 3, 4};
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_FLOAT_EQ(full[i], want[i]) << i;
  EXPECT_EQ(valuesOf(LeakyReLU(0.5)(x)),
            (std::vector<double>{-1, -0.25, 0.25, 1, 3, 9}));
  std::vector<double> elu = valuesOf(ELU(2.0)(x));
  EXPECT_FLOAT_EQ(elu[0], 2 * std::expm1(-2.0));
  EXPECT_FLOAT_EQ(elu[4], 3);
}

TEST(MoreLayers, PReLUHasATrainableAlphaPerSharedAxes) {
  PReLU prelu("zeros", {1});
  NDArray x = NDArray::fromVector({1, 2, 2, 1}, {-2, 1, -4, 3});
  EXPECT_EQ(valuesOf(prelu(x)), (std::vector<double>{0, 1, 0, 3}));
  std::vector<NDArray> w = prelu.getWeights();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].shape(), (Shape{1, 2, 1})); // axis 1 shared
  prelu.setWeights({NDArray::fromVector({1, 2, 1}, {0.5, 0.25})});
  // alpha varies along the width: -2 * 0.5 and -4 * 0.5.
  EXPECT_EQ(valuesOf(prelu(x)), (std::vector<double>{-1, 1, -2, 3}));
  EXPECT_NE(errorOf([&] { PReLU("zeros", {4})(x); }).find("out of range"),
            std::string::npos);
}

TEST(MoreLayers, KerasNamesAndActivationStrings) {
  EXPECT_EQ(PReLU().name(), "p_re_lu");
  EXPECT_EQ(ReLU().name(), "re_lu");
  EXPECT_EQ(LeakyReLU().name(), "leaky_re_lu");
  EXPECT_EQ(GlobalAveragePooling2D().name(), "global_average_pooling2d");
  EXPECT_EQ(UpSampling2D().name(), "up_sampling2d");
  for (const char *name :
       {"elu", "selu", "gelu", "silu", "swish", "softplus", "softsign",
        "hard_sigmoid", "hard_silu", "hard_swish", "relu6", "exponential",
        "log_softmax", "mish", "leaky_relu"})
    EXPECT_TRUE(ops::isActivation(name)) << name;
  std::string msg = errorOf([] { Dense(4, "celu"); });
  EXPECT_NE(msg.find("unknown activation 'celu' (expected linear, relu"),
            std::string::npos)
      << msg;
}

TEST(MoreLayers, TracingAllocatesNoArrayForTheirConstants) {
  // The constants activations and padding mix in are splat kc.constants:
  // tracing at a large batch allocates nothing of the batch's size.
  Tensor x = Input({64});
  Tensor h = ReLU(4.0, 0.1, 0.5)(Dense(64, "mish")(x));
  Tensor y = Average()({h, LeakyReLU()(h)});
  Model model(x, y, "m");
  model.parameters(); // the weights are drawn before measuring
  mlir::MLIRContext ctx;
  TraceOptions opts;
  opts.batch = 1 << 16; // a [65536, 64] f32 constant would be 16 MiB
  AllocStats::resetPeak();
  int64_t before = AllocStats::liveBytes();
  traceForward(ctx, model, opts);
  EXPECT_LT(AllocStats::peakBytes() - before, int64_t(1) << 20);
}

} // namespace

namespace {

/// TimeDistributed's eager calls: token ids through a wrapped Embedding
/// (the step is built with the input's dtype), a frozen wrapper freezing
/// its BatchNormalization (inference mode in a training call), and a
/// training call moving the moving mean once per step, in turn.
TEST(MoreLayers, TimeDistributedRunsItsLayerOnEveryStep) {
  Layer embedding = Embedding(10, 3);
  TimeDistributed td(embedding);
  std::vector<double> idValues;
  for (int i = 0; i < 24; ++i)
    idValues.push_back(i % 10);
  NDArray ids = NDArray::fromVector({2, 3, 4}, idValues, DType::I32);
  Tensor y = td(ids);
  EXPECT_EQ(y.shape(), (Shape{2, 3, 4, 3}));
  ASSERT_EQ(td.impl()->weights().size(), 1u);
  EXPECT_EQ(td.impl()->weights()[0].name, "layer/embeddings");
  EXPECT_EQ(valuesOf(y), valuesOf(embedding(ids)));
  // The wrapper's weights are the ones used: row k of the table is k.
  std::vector<double> rows;
  for (int k = 0; k < 10; ++k)
    rows.insert(rows.end(), {double(k), double(k), double(k)});
  td.setWeights({NDArray::fromVector({10, 3}, rows)});
  std::vector<double> looked = valuesOf(td(ids));
  for (size_t i = 0; i < idValues.size(); ++i)
    EXPECT_EQ(looked[3 * i + 2], idValues[i]) << i;

  // Steps of one value each: [[1, 2], [3, 5]] over two steps.
  NDArray x = NDArray::fromVector({2, 2, 1}, {1, 3, 2, 5});
  TimeDistributed frozen(BatchNormalization(-1, 0.5));
  frozen.setTrainable(false);
  std::vector<double> scaled = valuesOf(frozen(x, /*training=*/true));
  std::vector<double> xs = x.toVector();
  ASSERT_EQ(scaled.size(), xs.size());
  for (size_t i = 0; i < xs.size(); ++i)
    EXPECT_NEAR(scaled[i], xs[i] / std::sqrt(1 + 1e-3), 1e-6) << i;

  TimeDistributed moving(BatchNormalization(-1, 0.5));
  moving(x, /*training=*/true);
  // moving_mean: 0 -> 0.5 * 0 + 0.5 * 1.5 (step 0: 1, 2) -> 0.5 * 0.75 +
  // 0.5 * 4 (step 1: 3, 5).
  std::vector<NDArray> w = moving.getWeights();
  ASSERT_EQ(moving.impl()->weights()[2].name, "layer/moving_mean");
  EXPECT_NEAR(w[2].toVector()[0], 0.5 * 0.75 + 0.5 * 4, 1e-6);
}

} // namespace
