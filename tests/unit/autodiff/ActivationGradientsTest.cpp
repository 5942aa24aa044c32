//===- ActivationGradientsTest.cpp - gradients of composed layers ---------===//
//
// Keras's activations, the padding, cropping, upsampling, merging and
// global pooling layers, the 3-D layers and TimeDistributed are
// compositions of kc ops (frontend/ops/
// Activations.cpp, frontend/layers/). Each is traced here in f64 into
// @f(x, R) = sum(layer(x) * R) and its gradient, built by autodiff from
// the pieces' rules, is checked against central differences. Inputs stay
// away from the kinks (0, relu6's 6, hard_sigmoid's -3 and 3, ReLU's
// threshold and max_value).
//
//===----------------------------------------------------------------------===//

#include "tests/unit/autodiff/GradCheck.h"

#include "frontend/Layers.h"
#include "frontend/Ops.h"
#include "frontend/Trace.h"
#include "ir/KcDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "gtest/gtest.h"

#include <functional>

using namespace kcc;
using namespace kcc::test;

namespace {

using Fn = std::function<Tensor(const std::vector<Tensor> &)>;

/// Traces @f(x0.., R) = sum(fn(x0..) * R) over f64 inputs of `shapes`
/// (R has fn's result shape) and checks the gradients of the x's.
GradCheckResult checkTraced(const std::vector<Shape> &shapes, const Fn &fn,
                            const std::vector<NDArray> &inputs,
                            const Shape &resultShape) {
  mlir::MLIRContext ctx;
  loadDialects(ctx);
  mlir::OpBuilder b(&ctx);
  mlir::Location loc = b.getUnknownLoc();
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  llvm::SmallVector<mlir::Type> argTypes;
  for (const Shape &s : shapes)
    argTypes.push_back(toTensorType(&ctx, s, DType::F64));
  argTypes.push_back(toTensorType(&ctx, resultShape, DType::F64));
  auto f = b.create<mlir::func::FuncOp>(
      loc, "f",
      b.getFunctionType(argTypes, {toTensorType(&ctx, {}, DType::F64)}));
  mlir::Block *entry = f.addEntryBlock();
  b.setInsertionPointToStart(entry);
  {
    TraceContext tc(b);
    std::vector<Tensor> xs;
    for (size_t i = 0; i < shapes.size(); ++i)
      xs.push_back(
          Tensor::traced(entry->getArgument(i), shapes[i], DType::F64));
    Tensor r = Tensor::traced(entry->getArgument(shapes.size()), resultShape,
                              DType::F64);
    Tensor y = fn(xs);
    EXPECT_EQ(y.shape(), resultShape);
    std::vector<int64_t> all;
    for (int64_t d = 0; d < y.rank(); ++d)
      all.push_back(d);
    Tensor loss = ops::reduceSum(ops::mul(y, r), all);
    b.create<mlir::func::ReturnOp>(loc, loss.value());
  }
  std::vector<NDArray> args = inputs;
  args.push_back(uniform(resultShape, -1, 1, 99));
  return checkGradients(*module, args, static_cast<int>(shapes.size()));
}

GradCheckResult checkUnary(const std::function<Tensor(const Tensor &)> &fn,
                           const NDArray &x) {
  return checkTraced(
      {x.shape()}, [&](const std::vector<Tensor> &xs) { return fn(xs[0]); },
      {x}, x.shape());
}

const Shape kShape = {4, 5};

struct Case {
  const char *name;
  std::function<Tensor(const Tensor &)> fn;
};

TEST(ActivationGradients, EveryActivationMatchesCentralDifferences) {
  // |x| in [0.1, 2.9): both sides of 0, inside hard_sigmoid's (-3, 3).
  NDArray x = awayFromZero(kShape, 0.1, 2.9, 7);
  const Case cases[] = {
      {"elu", [](const Tensor &t) { return ops::elu(t); }},
      {"elu(0.5)", [](const Tensor &t) { return ops::elu(t, 0.5); }},
      {"selu", [](const Tensor &t) { return ops::selu(t); }},
      {"gelu", [](const Tensor &t) { return ops::gelu(t); }},
      {"gelu(approximate)", [](const Tensor &t) { return ops::gelu(t, true); }},
      {"silu", [](const Tensor &t) { return ops::silu(t); }},
      {"softplus", [](const Tensor &t) { return ops::softplus(t); }},
      {"softsign", [](const Tensor &t) { return ops::softsign(t); }},
      {"hard_sigmoid", [](const Tensor &t) { return ops::hardSigmoid(t); }},
      {"hard_silu", [](const Tensor &t) { return ops::hardSilu(t); }},
      {"relu6", [](const Tensor &t) { return ops::relu6(t); }},
      {"exponential",
       [](const Tensor &t) { return ops::activation(t, "exponential"); }},
      {"log_softmax",
       [](const Tensor &t) { return ops::activation(t, "log_softmax"); }},
      {"mish", [](const Tensor &t) { return ops::mish(t); }},
      {"leaky_relu", [](const Tensor &t) { return ops::leakyRelu(t, 0.2); }},
      {"relu(slope 0.1, max 2, threshold 0.5)",
       [](const Tensor &t) { return ops::kerasRelu(t, 0.1, 2.0, 0.5); }},
      {"relu(max 6)",
       [](const Tensor &t) { return ops::kerasRelu(t, 0.0, 6.0, 0.0); }},
      {"relu(slope 0.2, threshold 1.5)",
       [](const Tensor &t) {
         return ops::kerasRelu(t, 0.2, std::nullopt, 1.5);
       }},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_GRADIENTS_MATCH(checkUnary(c.fn, x));
  }
}

TEST(ActivationGradients, SoftplusAndEluStayFiniteFarOut) {
  // exp(-|x|) and exp(min(x, 0)) keep the discarded branches finite: no
  // 0 * inf = NaN reaches the gradient at |x| = 800.
  NDArray x =
      NDArray::fromVector({4}, {-800.0, -30.0, 30.0, 800.0}, DType::F64);
  EXPECT_GRADIENTS_MATCH(
      checkUnary([](const Tensor &t) { return ops::softplus(t); }, x));
  EXPECT_GRADIENTS_MATCH(
      checkUnary([](const Tensor &t) { return ops::elu(t); }, x));
  EXPECT_GRADIENTS_MATCH(
      checkUnary([](const Tensor &t) { return ops::mish(t); }, x));
}

TEST(ActivationGradients, PReLUAlphaAndInput) {
  // relu(x) - alpha * relu(-x), alpha broadcast along the batch.
  NDArray x = awayFromZero(kShape, 0.1, 2, 3);
  NDArray alpha = uniform({5}, -0.5, 0.5, 4);
  EXPECT_GRADIENTS_MATCH(checkTraced(
      {kShape, {5}},
      [](const std::vector<Tensor> &in) {
        return ops::add(ops::relu(in[0]),
                        ops::mul(ops::neg(in[1]), ops::relu(ops::neg(in[0]))));
      },
      {x, alpha}, kShape));
}

GradCheckResult checkLayer(const Layer &layer, const std::vector<Shape> &shapes,
                           const Shape &resultShape) {
  std::vector<NDArray> inputs;
  for (size_t i = 0; i < shapes.size(); ++i)
    inputs.push_back(awayFromZero(shapes[i], 0.1, 2, 11 + i));
  return checkTraced(
      shapes,
      [&](const std::vector<Tensor> &xs) {
        return xs.size() == 1 ? layer(xs[0]) : layer(xs);
      },
      inputs, resultShape);
}

TEST(ActivationGradients, LayoutAndPoolingLayers) {
  const Shape img = {2, 3, 4, 2};
  EXPECT_GRADIENTS_MATCH(
      checkLayer(ZeroPadding2D(Sides2({1, 2}, {0, 3})), {img}, {2, 6, 7, 2}));
  EXPECT_GRADIENTS_MATCH(
      checkLayer(Cropping2D(Sides2({1, 0}, {1, 2})), {img}, {2, 2, 1, 2}));
  EXPECT_GRADIENTS_MATCH(
      checkLayer(UpSampling2D(Size2(2, 3)), {img}, {2, 6, 12, 2}));
  EXPECT_GRADIENTS_MATCH(checkLayer(GlobalAveragePooling2D(), {img}, {2, 2}));
  EXPECT_GRADIENTS_MATCH(
      checkLayer(GlobalMaxPooling2D(/*keepdims=*/true), {img}, {2, 1, 1, 2}));
  EXPECT_GRADIENTS_MATCH(
      checkLayer(Concatenate(2), {img, {2, 3, 1, 2}}, {2, 3, 5, 2}));
}

TEST(ActivationGradients, MergeLayers) {
  const Shape s = {3, 4};
  EXPECT_GRADIENTS_MATCH(checkLayer(Multiply(), {s, s, s}, s));
  EXPECT_GRADIENTS_MATCH(checkLayer(Subtract(), {s, s}, s));
  EXPECT_GRADIENTS_MATCH(checkLayer(Average(), {s, s, s}, s));
  // Broadcast along a dim of 1, as Keras's merge layers allow.
  EXPECT_GRADIENTS_MATCH(checkLayer(Multiply(), {s, {3, 1}}, s));
  // Distinct seeds keep maximum and minimum away from ties.
  EXPECT_GRADIENTS_MATCH(checkLayer(Maximum(), {s, s}, s));
  EXPECT_GRADIENTS_MATCH(checkLayer(Minimum(), {s, s}, s));
}

/// BatchNormalization's training-mode composition (frontend/layers/
/// Normalization.cpp), op for op: the gradient flows through the batch
/// statistics too, into x, gamma and beta.
TEST(ActivationGradients, BatchNormalizationTraining) {
  for (const Shape &shape : {Shape{6, 3}, Shape{2, 3, 2, 4}}) {
    Shape channels{shape.back()};
    EXPECT_GRADIENTS_MATCH(checkTraced(
        {shape, channels, channels},
        [&](const std::vector<Tensor> &in) {
          const Tensor &x = in[0];
          std::vector<int64_t> axes;
          for (int64_t d = 0; d + 1 < x.rank(); ++d)
            axes.push_back(d);
          Tensor mean = ops::reduceMean(x, axes);
          Tensor centred = ops::sub(x, mean);
          Tensor variance = ops::reduceMean(ops::mul(centred, centred), axes);
          Tensor inv = ops::mul(
              ops::rsqrt(ops::add(variance, ops::scalar(1e-3, DType::F64))),
              in[1]);
          Tensor shift = ops::add(ops::mul(ops::neg(mean), inv), in[2]);
          return ops::add(ops::mul(x, inv), shift);
        },
        {uniform(shape, -2, 2, 21), uniform(channels, 0.5, 1.5, 22),
         uniform(channels, -0.5, 0.5, 23)},
        shape));
  }
}

/// A layer with weights, traced in f64: the layer is built on symbolic f32
/// inputs, then @f(x.., w.., R) = sum(layer(x..) * R) binds each weight to
/// an argument, so the gradients of the inputs and of every weight are
/// checked.
GradCheckResult checkWeightedLayer(const Layer &layer,
                                   const std::vector<Shape> &shapes,
                                   const Shape &resultShape) {
  std::vector<Tensor> symbolic;
  for (const Shape &s : shapes)
    symbolic.push_back(Tensor::symbolic(s, DType::F32)); // f32 weights
  layer.call(symbolic, CallContext{});
  std::vector<Weight> &ws = layer.impl()->weights();
  std::vector<Shape> all = shapes;
  std::vector<NDArray> inputs;
  for (size_t i = 0; i < shapes.size(); ++i)
    inputs.push_back(uniform(shapes[i], -1.5, 1.5, 41 + i));
  for (size_t i = 0; i < ws.size(); ++i) {
    all.push_back(ws[i].shape);
    inputs.push_back(uniform(ws[i].shape, -0.8, 0.8, 61 + i));
  }
  return checkTraced(
      all,
      [&](const std::vector<Tensor> &xs) {
        for (size_t i = 0; i < ws.size(); ++i)
          TraceContext::current()->bindWeight(&ws[i], xs[shapes.size() + i]);
        std::vector<Tensor> in(xs.begin(), xs.begin() + shapes.size());
        return layer.call(in, CallContext{})[0];
      },
      inputs, resultShape);
}

TEST(ActivationGradients, LayerNormalization) {
  const Shape s = {2, 3, 5};
  EXPECT_GRADIENTS_MATCH(checkWeightedLayer(LayerNormalization(), {s}, s));
  EXPECT_GRADIENTS_MATCH(
      checkWeightedLayer(LayerNormalization(-1, 1e-6, false, true), {s}, s));
  EXPECT_GRADIENTS_MATCH(checkWeightedLayer(
      LayerNormalization(1, 1e-3, true, false), {{4, 6}}, {4, 6}));
}

TEST(ActivationGradients, EinsumDenseEquations) {
  EXPECT_GRADIENTS_MATCH(checkWeightedLayer(
      EinsumDense("ab,bc->ac", {4}, "c", "tanh"), {{3, 5}}, {3, 4}));
  EXPECT_GRADIENTS_MATCH(checkWeightedLayer(
      EinsumDense("abc,cd->abd", {-1, 4}, "d"), {{2, 3, 5}}, {2, 3, 4}));
  EXPECT_GRADIENTS_MATCH(
      checkWeightedLayer(EinsumDense("abc,cde->abde", {-1, 2, 3}, "de"),
                         {{2, 3, 4}}, {2, 3, 2, 3}));
  // A bias over d alone is [d, 1], broadcast over e after the GEMM.
  EXPECT_GRADIENTS_MATCH(
      checkWeightedLayer(EinsumDense("abc,cde->abde", {-1, 2, 3}, "d"),
                         {{2, 3, 4}}, {2, 3, 2, 3}));
  EXPECT_GRADIENTS_MATCH(checkWeightedLayer(
      EinsumDense("abcd,cde->abe", {-1, 4}, "e"), {{2, 3, 2, 3}}, {2, 3, 4}));
}

TEST(ActivationGradients, MultiHeadAttention) {
  // Self-attention with the causal mask.
  EXPECT_GRADIENTS_MATCH(checkWeightedLayer(
      MultiHeadAttention(2, 3, 0, true, {}, /*useCausalMask=*/true),
      {{2, 4, 5}, {2, 4, 5}}, {2, 4, 5}));
  // Cross-attention: a key of its own, value_dim != key_dim, output_shape,
  // no biases, more key steps than query steps.
  EXPECT_GRADIENTS_MATCH(
      checkWeightedLayer(MultiHeadAttention(2, 3, 2, false, {4}),
                         {{2, 3, 5}, {2, 4, 6}, {2, 4, 3}}, {2, 3, 4}));
  // The causal mask with fewer key steps than query steps.
  EXPECT_GRADIENTS_MATCH(
      checkWeightedLayer(MultiHeadAttention(1, 2, 0, true, {}, true),
                         {{1, 4, 3}, {1, 3, 3}}, {1, 4, 3}));
}

/// The 3-D layers compose the 2-D ops (frontend/ops/Volume.cpp): depth
/// taps as strided slices of the padded input, folded into the channels of
/// one conv2d; pooling in 2-D, then across depth.
TEST(ActivationGradients, VolumeLayers) {
  const Shape vol = {2, 5, 4, 6, 2};
  // Same padding with a strided, dilated depth; a valid window.
  EXPECT_GRADIENTS_MATCH(checkWeightedLayer(
      Conv3D(3, Size3(3, 2, 3), Size3(2, 1, 2), "same", Size3(1, 1, 1), "tanh"),
      {vol}, {2, 3, 4, 3, 3}));
  EXPECT_GRADIENTS_MATCH(
      checkWeightedLayer(Conv3D(2, Size3(2, 3, 2), 1, "valid", Size3(2, 1, 2)),
                         {vol}, {2, 3, 2, 4, 2}));
  // Transposed: strided same; dilated; a depth stride above the kernel.
  EXPECT_GRADIENTS_MATCH(checkWeightedLayer(
      Conv3DTranspose(2, Size3(3, 2, 2), Size3(2, 1, 2), "same"), {vol},
      {2, 10, 4, 12, 2}));
  EXPECT_GRADIENTS_MATCH(checkWeightedLayer(
      Conv3DTranspose(2, Size3(2, 2, 1), 1, "same", Size3(2, 1, 1)), {vol},
      {2, 5, 4, 6, 2}));
  EXPECT_GRADIENTS_MATCH(checkWeightedLayer(
      Conv3DTranspose(1, 2, Size3(3, 1, 1)), {vol}, {2, 15, 5, 7, 1}));
  // Partial windows at the end of depth: Keras's count of valid elements.
  EXPECT_GRADIENTS_MATCH(
      checkLayer(AveragePooling3D(Size3(2, 3, 2), Size3(2, 1, 2), "same"),
                 {vol}, {2, 3, 4, 3, 2}));
  EXPECT_GRADIENTS_MATCH(checkLayer(MaxPooling3D(Size3(3, 2, 2), 2, "same"),
                                    {vol}, {2, 3, 2, 3, 2}));
  EXPECT_GRADIENTS_MATCH(checkLayer(MaxPooling3D(2), {vol}, {2, 2, 2, 3, 2}));
  EXPECT_GRADIENTS_MATCH(checkLayer(
      ZeroPadding3D(Sides3({1, 0}, {0, 2}, {1, 1})), {vol}, {2, 6, 6, 8, 2}));
  EXPECT_GRADIENTS_MATCH(checkLayer(Cropping3D(Sides3({1, 2}, {0, 1}, {2, 0})),
                                    {vol}, {2, 2, 3, 4, 2}));
  EXPECT_GRADIENTS_MATCH(
      checkLayer(UpSampling3D(Size3(2, 1, 3)), {vol}, {2, 10, 4, 18, 2}));
  EXPECT_GRADIENTS_MATCH(checkLayer(GlobalAveragePooling3D(), {vol}, {2, 2}));
  EXPECT_GRADIENTS_MATCH(checkLayer(GlobalMaxPooling3D(/*keepdims=*/true),
                                    {vol}, {2, 1, 1, 1, 2}));
}

/// TimeDistributed lends its weights to the layers it wraps: the gradient
/// of each reaches the TimeDistributed's own argument.
TEST(ActivationGradients, TimeDistributed) {
  EXPECT_GRADIENTS_MATCH(checkWeightedLayer(TimeDistributed(Dense(3, "tanh")),
                                            {{2, 4, 5}}, {2, 4, 3}));
  EXPECT_GRADIENTS_MATCH(
      checkWeightedLayer(TimeDistributed(Conv2D(2, 3, 1, "same", "tanh")),
                         {{2, 3, 4, 5, 2}}, {2, 3, 4, 5, 2}));
  EXPECT_GRADIENTS_MATCH(checkWeightedLayer(
      TimeDistributed({Conv2D(2, 2), Flatten(), Dense(3)}, "frame_model"),
      {{2, 3, 4, 5, 1}}, {2, 3, 3}));
}

} // namespace

namespace {

TEST(ActivationGradients, RegularizationPenalties) {
  // l1 * sum(|w|) + l2 * sum(w^2), as the train step adds it to the loss.
  NDArray w = awayFromZero(kShape, 0.1, 2, 21);
  for (Regularizer r : {Regularizer::L1(0.3), Regularizer::L2(0.7),
                        Regularizer::L1L2(0.3, 0.7)})
    EXPECT_GRADIENTS_MATCH(checkTraced({kShape},
                                       [&](const std::vector<Tensor> &in) {
                                         return regularizationPenalty(in[0], r);
                                       },
                                       {w}, {}));
}

} // namespace
