//===- Kernels.h - One host kernel per kc op -------------------*- C++ -*-===//
//
// The kernel library behind eager mode and the interpreter: one function per
// kc op, f32 and f64 (dispatched on the dtype of the arrays). GEMM and
// convolution go through oneDNN (f32) with primitives cached by shape;
// everything else is plain loops written so the compiler vectorizes them and
// spread over the cores with OpenMP (the same runtime oneDNN uses here).
//
// Convention: the caller allocates `out` with the result shape and dtype (the
// interpreter reads it from the op's result type, eager mode from the shared
// shape functions); kernels check shapes they depend on and throw
// kcc::KernelError (a kcc::Error) on a mismatch. Elementwise binary
// kernels take operands of identical shape: broadcasting is an explicit op.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_RUNTIME_KERNELS_KERNELS_H
#define KCC_RUNTIME_KERNELS_KERNELS_H

#include "runtime/Error.h"
#include "runtime/NDArray.h"

#include <string>

namespace kcc {

/// A kernel called with arrays it cannot handle (a kcc::Error).
struct KernelError : Error {
  using Error::Error;
};

namespace kernels {

enum class BinaryKind { Add, Sub, Mul, Div, Pow, Max, Min };
enum class UnaryKind {
  Neg,
  Exp,
  Log,
  Sqrt,
  Rsqrt,
  Abs,
  Relu,
  Sigmoid,
  Tanh,
  Gelu,
  GeluTanh,
  Silu
};
enum class CompareKind { EQ, NE, LT, LE, GT, GE };
enum class ReduceKind { Sum, Max, Mean };
enum class Padding { Valid, Same };

/// out = op(a, b); a, b, out of identical shape and dtype.
void binary(BinaryKind kind, const NDArray &a, const NDArray &b, NDArray &out);
/// out = op(x). Gelu is the exact erf form, GeluTanh the tanh approximation;
/// Silu is x * sigmoid(x) (no kc op of its own: the fused epilogues use it).
void unary(UnaryKind kind, const NDArray &x, NDArray &out);
/// The activations kcc composes of kc ops (frontend/ops/Activations.cpp)
/// that the fused GEMM and convolution epilogues apply to their output in
/// place (runtime/LibraryCalls.cpp): each step computed and rounded as the
/// kc op's kernel computes it, in the same order, so the result equals the
/// composition's (NaN and infinities included). `param` is Elu's alpha,
/// LeakyRelu's negative slope and BoundedRelu's maximum; the others take
/// none. Selu has jax.nn's alpha and scale; BoundedRelu is min(relu(x),
/// param) (relu6, ReLU(max_value)).
enum class ComposedActivation {
  Elu,
  Selu,
  LeakyRelu,
  BoundedRelu,
  Softplus,
  Mish,
  HardSigmoid,
  HardSilu,
  Softsign
};
void composedActivation(ComposedActivation kind, double param, const NDArray &x,
                        NDArray &out);
/// out (I1) = a <kind> b.
void compare(CompareKind kind, const NDArray &a, const NDArray &b,
             NDArray &out);
/// out = cond ? a : b; cond is I1.
void select(const NDArray &cond, const NDArray &a, const NDArray &b,
            NDArray &out);
/// Numpy broadcasting of x to out.shape() (x's rank <= out's rank, dims
/// aligned from the right, each 1 or equal).
void broadcastTo(const NDArray &x, NDArray &out);

/// What a GEMM or convolution applies to its result before writing it,
/// as the kernel library's post-ops: a bias along the last (channel)
/// dimension, then relu. Fusing these saves a pass over the output.
struct Epilogue {
  const NDArray *bias = nullptr; ///< 1-D, the output's last dim; optional
  bool relu = false;
};

/// out[M,N] = op(a) * op(b), op = transpose when the flag is set.
/// a is [M,K] (or [K,M] transposed), b is [K,N] (or [N,K] transposed).
void matmul(const NDArray &a, const NDArray &b, bool transposeA,
            bool transposeB, NDArray &out, const Epilogue &epilogue = {});
/// The f32 GEMM on raw pointers, for compiled code whose shapes the op
/// verifier already checked: no array views, no checks (a microsecond GEMM
/// is otherwise dominated by them). `bias` may be null; m, n, k > 0.
void matmulF32(const float *a, const float *b, const float *bias, float *out,
               int64_t m, int64_t n, int64_t k, bool transposeA,
               bool transposeB, bool relu);

/// out[B,M,N] = op(a[b]) * op(b[b]) for each b of the shared leading dim;
/// a is [B,M,K] (or [B,K,M] transposed), b is [B,K,N] (or [B,N,K]).
void batchMatmul(const NDArray &a, const NDArray &b, bool transposeA,
                 bool transposeB, NDArray &out);
/// The f32 batched GEMM on raw pointers (compiled code); all dims > 0.
void batchMatmulF32(const float *a, const float *b, float *out, int64_t batch,
                    int64_t m, int64_t n, int64_t k, bool transposeA,
                    bool transposeB);

void softmax(const NDArray &x, int64_t axis, NDArray &out);
void logSoftmax(const NDArray &x, int64_t axis, NDArray &out);
/// Reduce over `axes` (sorted, unique, non-negative). `out` has the kept or
/// dropped dims already (its element count is what matters).
void reduce(ReduceKind kind, const NDArray &x, const std::vector<int64_t> &axes,
            NDArray &out);
/// out (I64) = argmax over `axis` (first maximum wins), that axis dropped.
void argmax(const NDArray &x, int64_t axis, NDArray &out);

void transpose(const NDArray &x, const std::vector<int64_t> &perm,
               NDArray &out);
void concat(const std::vector<NDArray> &inputs, int64_t axis, NDArray &out);
/// out = x[start : start + out.shape*stride : stride] per dim.
void slice(const NDArray &x, const std::vector<int64_t> &start,
           const std::vector<int64_t> &strides, NDArray &out);
/// Copies x into out (same numel); the interpreter's reshape.
void copy(const NDArray &x, NDArray &out);
/// Elementwise dtype conversion.
void cast(const NDArray &x, NDArray &out);
/// out[..., depth] (float) = 1 where labels (I32/I64) == class index.
void oneHot(const NDArray &labels, NDArray &out);
/// Rows of `table` [V, D...] by integer `indices` [I...] into out
/// [I..., D...]: an index in [-V, 0) counts from the end, any other one
/// outside [0, V) gives a NaN row (jnp.take, Keras's Embedding on JAX).
void gather(const NDArray &table, const NDArray &indices, NDArray &out);
/// gather's table gradient: out [V, D...] zeroed, then each gradOut row
/// added to the row its index names (indices gather maps to NaN add none).
void gatherGrad(const NDArray &indices, const NDArray &gradOut, NDArray &out);
/// Keras's ctc loss (its JAX backend's recursion): logits [B, T, C], labels
/// [B, N] int32 (0 the blank and the padding; the first count-of-non-zero
/// labels are the sequence), out [B] = -log p(labels | logits).
void ctcLoss(const NDArray &logits, const NDArray &labels, NDArray &out);
/// ctcLoss's gradient: out [B, T, C] = gradOut[b] * d loss[b] / d logits.
void ctcLossGrad(const NDArray &logits, const NDArray &labels,
                 const NDArray &gradOut, NDArray &out);
/// How kc.image_transform samples its input: Keras's affine_transform on
/// JAX (jax.scipy.ndimage.map_coordinates, order 0 or 1).
enum class ImageInterpolation : int64_t { Nearest = 0, Bilinear = 1 };
/// Where a sample outside the image comes from: reflect (d c b a | a b c d),
/// wrap (a b c d | a b c d), constant (fillValue), nearest (a a | a b c d).
enum class ImageFillMode : int64_t {
  Reflect = 0,
  Wrap = 1,
  Constant = 2,
  Nearest = 3
};
struct ImageTransformParams {
  ImageInterpolation interpolation = ImageInterpolation::Bilinear;
  ImageFillMode fillMode = ImageFillMode::Reflect;
  double fillValue = 0.0;
};
/// images [N, H, W, C], transforms [N, 8] (a0 a1 a2 b0 b1 b2 c0 c1, c0 and
/// c1 unused as in JAX), out [N, Ho, Wo, C]: out[n, y, x, c] is the input
/// sampled at (b0 x + b1 y + b2, a0 x + a1 y + a2) (row, column).
void imageTransform(const NDArray &images, const NDArray &transforms,
                    const ImageTransformParams &p, NDArray &out);
/// imageTransform's input gradient: out [N, H, W, C] zeroed, then each
/// gradOut [N, Ho, Wo, C] element added to the pixels its sample read,
/// weighed as they were (the transpose of the sampling).
void imageTransformGrad(const NDArray &transforms, const NDArray &gradOut,
                        const ImageTransformParams &p, NDArray &out);
/// Counter-based uniform [0,1) numbers: a pure function of (seed, counter,
/// element index), so every backend produces the same stream.
void randomUniform(uint64_t seed, uint64_t counter, NDArray &out);

/// NHWC input, HWIO filter, NHWC output. `padding` Same follows TF/Keras:
/// out = ceil(in / stride), the extra padding row/col goes at the bottom/right.
/// With `groups` G the filter is [KH, KW, C/G, F]: output channel f reads the
/// input channels of its group f / (F/G).
struct Conv2DParams {
  int64_t strideH = 1, strideW = 1;
  int64_t dilationH = 1, dilationW = 1;
  Padding padding = Padding::Valid;
  int64_t groups = 1;
};
void conv2d(const NDArray &input, const NDArray &filter, const Conv2DParams &p,
            NDArray &out, const Epilogue &epilogue = {});
/// d(input) given d(out) and the filter; out has the input's shape.
void conv2dBackpropInput(const NDArray &gradOut, const NDArray &filter,
                         const Conv2DParams &p, NDArray &gradInput);
/// d(filter) given the input and d(out); out has the filter's shape.
void conv2dBackpropFilter(const NDArray &input, const NDArray &gradOut,
                          const Conv2DParams &p, NDArray &gradFilter);

struct Pool2DParams {
  int64_t windowH = 2, windowW = 2;
  int64_t strideH = 2, strideW = 2;
  Padding padding = Padding::Valid;
};
/// NHWC pooling. Average pooling with Same padding divides by the number of
/// valid (non-padded) elements in the window, as Keras does.
void maxPool2d(const NDArray &x, const Pool2DParams &p, NDArray &out);
/// relu of each maximum (NaN kept), written as the pooling writes it:
/// relu(max_pool2d(x)), which equals max_pool2d(relu(x)).
void maxPool2dRelu(const NDArray &x, const Pool2DParams &p, NDArray &out);
void avgPool2d(const NDArray &x, const Pool2DParams &p, NDArray &out);
/// Gradients: route d(out) to the first max of each window / spread evenly.
/// With `reluMask` a routed gradient is kept only where that maximum is
/// positive: the gradient through relu then max pooling, in one pass. When
/// the windows tile the input (window == stride, no padding) gradInput may
/// be x itself, which it then overwrites; reluMask requires tiling windows.
void maxPool2dGrad(const NDArray &x, const NDArray &gradOut,
                   const Pool2DParams &p, NDArray &gradInput,
                   bool reluMask = false);
void avgPool2dGrad(const NDArray &gradOut, const Pool2DParams &p,
                   NDArray &gradInput);
/// The activation before an average pooling whose gradient avgPool2dGrad
/// below applies as it writes the input gradient
/// (codegen/fusion/FuseEpilogues.cpp fuses it): from the activation's output y
/// (the pooling's input) and the pooled gradient r, relu `y > 0 ? r : 0`, tanh
/// `r * (1 - y * y)`, sigmoid `r * (y * (1 - y))`, each rounded as the kc ops
/// of its gradient are.
enum class PoolGradActivation { Relu, Tanh, Sigmoid };
/// avgPool2dGrad, then the gradient of `act` (y: the activation's output,
/// the pooling's input, shaped as gradInput), in one pass: bit for bit
/// avgPool2dGrad followed by the activation's gradient ops. When the
/// windows tile the input (window == stride, no padding) gradInput may be
/// y itself, which it then overwrites.
void avgPool2dGrad(const NDArray &y, const NDArray &gradOut,
                   const Pool2DParams &p, PoolGradActivation act,
                   NDArray &gradInput);

/// Output spatial size of a convolution or pooling window, and the padding
/// before the first element (TF "SAME" convention). Shared with the IR's
/// shape functions so both agree.
int64_t windowOutputSize(int64_t in, int64_t window, int64_t stride,
                         int64_t dilation, Padding padding);
int64_t windowPadBefore(int64_t in, int64_t window, int64_t stride,
                        int64_t dilation, Padding padding);

/// The version of oneDNN the GEMM and convolution kernels run on
/// ("2.6.3"), as the loaded library reports it.
std::string oneDnnVersion();

} // namespace kernels
} // namespace kcc

#endif // KCC_RUNTIME_KERNELS_KERNELS_H
