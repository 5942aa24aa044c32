//===- Ops.h - Tensor ops of the frontend (eager, traced, symbolic) -*- C++
//-*-===//
//
// kcc::ops mirrors the kc dialect one function per op. Each op computes its
// result shape with the shared rules in ir/ShapeFunctions.h, then:
//
//  - concrete inputs: one output allocation and one kernel call (eager mode,
//    as in PyTorch; no MLIR on this path);
//  - traced inputs:   one kc op, located at the current layer's name
//                     (loc("dense_1")) so diagnostics and fusion reports can
//                     name layers; concrete operands become kc.constant;
//  - symbolic inputs: only the result shape (functional graph construction).
//
// Elementwise binary ops broadcast numpy-style by inserting an explicit
// kc.broadcast_to (or a broadcast kernel call) for each operand that needs it.
//
// A shape error throws kcc::Error naming the current layer and the shapes,
// e.g. "layer 'dense_1': matmul: expects lhs columns (100) to match rhs rows
// (784): lhs [4, 100], rhs [784, 128]".
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_OPS_H
#define KCC_FRONTEND_OPS_H

#include "frontend/Tensor.h"
#include "runtime/kernels/Kernels.h"

#include <optional>
#include <string>
#include <vector>

namespace kcc {

/// RAII: the layer the ops issued in its lifetime belong to. Nested scopes
/// (a model calling a layer) report the innermost.
class LayerScope {
public:
  explicit LayerScope(std::string layerName);
  ~LayerScope();
  LayerScope(const LayerScope &) = delete;
  LayerScope &operator=(const LayerScope &) = delete;

  /// The innermost layer's name, or "" outside every layer.
  static const std::string &current();
};

/// Throws kcc::Error "layer 'NAME': MESSAGE" (or just MESSAGE outside a
/// layer).
[[noreturn]] void throwInLayer(const std::string &message);

namespace ops {

using Padding = kernels::Padding;
using CompareKind = kernels::CompareKind;

// Elementwise binary, numpy broadcasting.
Tensor add(const Tensor &a, const Tensor &b);
Tensor sub(const Tensor &a, const Tensor &b);
Tensor mul(const Tensor &a, const Tensor &b);
Tensor div(const Tensor &a, const Tensor &b);
Tensor pow(const Tensor &a, const Tensor &b);
Tensor maximum(const Tensor &a, const Tensor &b);
Tensor minimum(const Tensor &a, const Tensor &b);

// Elementwise unary.
Tensor neg(const Tensor &x);
Tensor exp(const Tensor &x);
Tensor log(const Tensor &x);
Tensor sqrt(const Tensor &x);
Tensor rsqrt(const Tensor &x);
Tensor abs(const Tensor &x);
Tensor relu(const Tensor &x);
Tensor sigmoid(const Tensor &x);
Tensor tanh(const Tensor &x);
/// Exact erf GELU (Keras's default) or, with `approximate`, the tanh form.
Tensor gelu(const Tensor &x, bool approximate = false);

// Keras's activations, composed of the kc ops above as jax.nn writes them
// (frontend/ops/Activations.cpp): no op of their own, so autodiff, the
// interpreter and the compiler (which fuses the chain into one loop) need
// nothing new, and NaN and inf propagate as through those ops.
/// min(relu(x), 6).
Tensor relu6(const Tensor &x);
/// x if x > 0 else alpha * (exp(x) - 1).
Tensor elu(const Tensor &x, double alpha = 1.0);
/// scale * elu(x, alpha) with jax.nn.selu's constants.
Tensor selu(const Tensor &x);
/// x * sigmoid(x) (Keras's silu, alias swish).
Tensor silu(const Tensor &x);
/// log(1 + exp(x)) as logaddexp(x, 0) = max(x, 0) + log(1 + exp(-|x|)).
Tensor softplus(const Tensor &x);
/// x / (|x| + 1).
Tensor softsign(const Tensor &x);
/// Keras 3's relu6(x + 3) / 6.
Tensor hardSigmoid(const Tensor &x);
/// x * hard_sigmoid(x) (alias hard_swish).
Tensor hardSilu(const Tensor &x);
/// x if x >= 0 else negativeSlope * x.
Tensor leakyRelu(const Tensor &x, double negativeSlope = 0.2);
/// x * tanh(softplus(x)).
Tensor mish(const Tensor &x);
/// Keras's relu(x, negative_slope, max_value, threshold), step by step as
/// keras.activations.relu computes it.
Tensor kerasRelu(const Tensor &x, double negativeSlope,
                 std::optional<double> maxValue, double threshold);

/// A Keras activation by name: linear, relu, sigmoid, tanh, softmax,
/// log_softmax, exponential, elu, selu, gelu, silu (swish), softplus,
/// softsign, hard_sigmoid, hard_silu (hard_swish), relu6, mish,
/// leaky_relu. Throws kcc::Error for other names.
Tensor activation(const Tensor &x, const std::string &name);
/// Whether `activation` knows `name`.
bool isActivation(const std::string &name);
/// "linear, relu, ... or leaky_relu", for messages.
const std::string &activationNames();

/// I1 mask of `a <kind> b` (numpy broadcasting).
Tensor compare(CompareKind kind, const Tensor &a, const Tensor &b);
/// cond ? a : b; all three broadcast to a common shape.
Tensor select(const Tensor &cond, const Tensor &a, const Tensor &b);
Tensor cast(const Tensor &x, DType dtype);
Tensor broadcastTo(const Tensor &x, const Shape &shape);

/// A concrete tensor filled with `value` (rank 0 for an empty shape). Used
/// with traced tensors it becomes a kc.constant splat.
Tensor full(const Shape &shape, double value, DType dtype = DType::F32);
Tensor scalar(double value, DType dtype = DType::F32);
/// A float tensor of `shape` filled with `value`, of the kind of `like` and
/// its dtype: a splat kc.constant when `like` is traced (no array is
/// allocated, whatever the size), a symbolic tensor when it is symbolic, an
/// array when concrete. The constants composed ops mix in.
Tensor fillLike(const Tensor &like, const Shape &shape, double value);
/// Counter-based uniform [0, 1): a pure function of (seed, counter, index).
/// `counter` is a rank-0 I64 tensor (the training step).
Tensor randomUniform(const Shape &shape, uint64_t seed, const Tensor &counter,
                     DType dtype = DType::F32);
/// Standard normal draws of the same kind (Box-Muller on two uniform
/// streams, composed of elementwise ops: frontend/ops/RandomNormal.cpp).
Tensor randomNormal(const Shape &shape, uint64_t seed, const Tensor &counter,
                    DType dtype = DType::F32);

// Linear algebra and normalization.
Tensor matmul(const Tensor &a, const Tensor &b, bool transposeA = false,
              bool transposeB = false);
/// [B, M, K] x [B, K, N] -> [B, M, N], one matmul per leading index.
Tensor batchMatmul(const Tensor &a, const Tensor &b, bool transposeA = false,
                   bool transposeB = false);
Tensor softmax(const Tensor &x, int64_t axis = -1);
Tensor logSoftmax(const Tensor &x, int64_t axis = -1);

// Reductions; axes may be negative and in any order.
Tensor reduceSum(const Tensor &x, std::vector<int64_t> axes,
                 bool keepdims = false);
Tensor reduceMax(const Tensor &x, std::vector<int64_t> axes,
                 bool keepdims = false);
Tensor reduceMean(const Tensor &x, std::vector<int64_t> axes,
                  bool keepdims = false);
Tensor argmax(const Tensor &x, int64_t axis = -1);
/// Keras's ops.normalize(x, axes, order=2, epsilon):
/// x * min(rsqrt(sum(x^2, axes, keepdims)), 1 / epsilon).
Tensor l2Normalize(const Tensor &x, std::vector<int64_t> axes, double epsilon);
/// Rows of a float `table` [V, D...] at int32/int64 `indices` [I...]:
/// [I..., D...]. An index in [-V, 0) counts from the end; any other index
/// outside [0, V) gives a NaN row (jnp.take, as Keras's Embedding on JAX).
Tensor gather(const Tensor &table, const Tensor &indices);
/// A recurrent cell run over every step of a time-major sequence
/// (kc.recurrence). `cell` is "lstm", "gru" or "simple_rnn"; activations
/// among tanh, sigmoid, relu, linear, hard_sigmoid; `reverse` is Keras's
/// go_backwards.
struct RecurrenceSpec {
  std::string cell = "lstm";
  bool resetAfter = true;
  std::string activation = "tanh";
  std::string recurrentActivation = "sigmoid";
  bool reverse = false;
};
/// `x` [T, B, G*H] (the input projection, G gates: 4, 3, 1), `kernel`
/// [H, G*H], `initialState` [B, K*H] (LSTM [h | c], else h),
/// `recurrentBias` [G*H] -> the states [T, B, S], one row per step: h in
/// columns [0, H), LSTM's c in [H, 2H), then what the gradient needs (see
/// kc.recurrence).
Tensor recurrence(const Tensor &x, const Tensor &kernel,
                  const Tensor &initialState, const Tensor &recurrentBias,
                  const RecurrenceSpec &spec);
/// The sum (mean: the mean) of `x` over the ranks of a data-parallel job
/// (kc.all_reduce); `x` itself in a single process. Its gradient is the same
/// reduction of the ranks' gradients.
Tensor allReduce(const Tensor &x, bool mean);

/// How imageTransform samples (Keras's affine_transform arguments):
/// interpolation "nearest" or "bilinear"; fillMode "reflect", "wrap",
/// "constant" (reads fillValue) or "nearest"; the output's height and width
/// (the input's when 0).
struct ImageTransformSpec {
  std::string interpolation = "bilinear";
  std::string fillMode = "reflect";
  double fillValue = 0.0;
  int64_t outHeight = 0, outWidth = 0;
};
/// Keras's affine_transform on JAX (kc.image_transform): each image of
/// `images` [N, H, W, C] read at its own affine map of the output pixels,
/// `transforms` [N, 8] (a0 a1 a2 b0 b1 b2 c0 c1: pixel (y, x) reads row
/// b0 x + b1 y + b2, column a0 x + a1 y + a2). float16 and bfloat16
/// images are sampled in float32.
Tensor imageTransform(const Tensor &images, const Tensor &transforms,
                      const ImageTransformSpec &spec);
/// cos(2 pi u) for u in [0, 1), composed of elementwise ops (a polynomial
/// within 2e-9 of the cosine).
Tensor cosTwoPi(const Tensor &u);

// Layout. `reshape` accepts one -1 dim.
Tensor reshape(const Tensor &x, const Shape &shape);
Tensor transpose(const Tensor &x, const std::vector<int64_t> &perm);
Tensor concat(const std::vector<Tensor> &xs, int64_t axis);
Tensor slice(const Tensor &x, const std::vector<int64_t> &start,
             const std::vector<int64_t> &limit,
             const std::vector<int64_t> &strides);

// Convolution and pooling: NHWC input, HWIO filter; {h, w} pairs.
Tensor conv2d(const Tensor &x, const Tensor &filter,
              const std::vector<int64_t> &strides = {1, 1},
              Padding padding = Padding::Valid,
              const std::vector<int64_t> &dilations = {1, 1},
              int64_t groups = 1);
/// The transposed convolution (the gradient of conv2d with respect to its
/// input): `filter` is [KH, KW, out channels, in channels], as Keras's
/// Conv2DTranspose kernel; the output size is Keras's (output_padding None).
Tensor conv2dTranspose(const Tensor &x, const Tensor &filter,
                       const std::vector<int64_t> &strides = {1, 1},
                       Padding padding = Padding::Valid,
                       const std::vector<int64_t> &dilations = {1, 1});
Tensor maxPool2d(const Tensor &x, const std::vector<int64_t> &window,
                 const std::vector<int64_t> &strides,
                 Padding padding = Padding::Valid);
Tensor avgPool2d(const Tensor &x, const std::vector<int64_t> &window,
                 const std::vector<int64_t> &strides,
                 Padding padding = Padding::Valid);

// Volumes: NDHWC input, DHWIO filter; {d, h, w} triples. No op of their
// own (frontend/ops/Volume.cpp): the depth taps of a convolution become
// the channels of one conv2d, and pooling pools each depth slice in 2-D,
// then across depth, so autodiff, the interpreter and the compiler reuse
// the 2-D rules and kernels.
Tensor conv3d(const Tensor &x, const Tensor &filter,
              const std::vector<int64_t> &strides = {1, 1, 1},
              Padding padding = Padding::Valid,
              const std::vector<int64_t> &dilations = {1, 1, 1});
/// The transposed convolution: `filter` [KD, KH, KW, out, in], as Keras's
/// Conv3DTranspose kernel; Keras's output size (output_padding None).
Tensor conv3dTranspose(const Tensor &x, const Tensor &filter,
                       const std::vector<int64_t> &strides = {1, 1, 1},
                       Padding padding = Padding::Valid,
                       const std::vector<int64_t> &dilations = {1, 1, 1});
/// `padding` Same: the padded positions are ignored (max) or left out of
/// the count (average), as Keras's pooling.
Tensor maxPool3d(const Tensor &x, const std::vector<int64_t> &window,
                 const std::vector<int64_t> &strides,
                 Padding padding = Padding::Valid);
Tensor avgPool3d(const Tensor &x, const std::vector<int64_t> &window,
                 const std::vector<int64_t> &strides,
                 Padding padding = Padding::Valid);
} // namespace ops

/// Operators for readable model code: a + b, a * b, ...
inline Tensor operator+(const Tensor &a, const Tensor &b) {
  return ops::add(a, b);
}
inline Tensor operator-(const Tensor &a, const Tensor &b) {
  return ops::sub(a, b);
}
inline Tensor operator*(const Tensor &a, const Tensor &b) {
  return ops::mul(a, b);
}
inline Tensor operator/(const Tensor &a, const Tensor &b) {
  return ops::div(a, b);
}

} // namespace kcc

#endif // KCC_FRONTEND_OPS_H
