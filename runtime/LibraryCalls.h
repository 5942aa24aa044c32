//===- LibraryCalls.h - C entry points compiled code calls ------*- C++ -*-===//
//
// Generated code calls the kernel library (oneDNN GEMM and convolution,
// pooling) through these `extern "C"` functions;
// codegen/lowering/LowerLibraryCalls.cpp emits the calls. ABI: data pointers
// (inputs, then the output), then the dims of every array in that order, then
// the op's integer attributes, all int64_t. Padding is 0 (valid) or 1 (same).
//
// A kernel failure cannot unwind through JIT-compiled frames, so these
// functions catch kcc::Error, print it and abort; the op verifiers have
// already checked every shape, so a failure here is a compiler bug.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_RUNTIME_LIBRARYCALLS_H
#define KCC_RUNTIME_LIBRARYCALLS_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

extern "C" {

#define KCC_RT_MATMUL(T, S)                                                    \
  void kcc_rt_matmul_##S(const T *a, const T *b, T *out, int64_t a0,           \
                         int64_t a1, int64_t b0, int64_t b1, int64_t o0,       \
                         int64_t o1, int64_t transposeA, int64_t transposeB);
/// [B, M, K] x [B, K, N] per batch, operands and output as 3 dims each.
#define KCC_RT_BATCH_MATMUL(T, S)                                              \
  void kcc_rt_batch_matmul_##S(const T *a, const T *b, T *out, int64_t a0,     \
                               int64_t a1, int64_t a2, int64_t b0, int64_t b1, \
                               int64_t b2, int64_t o0, int64_t o1, int64_t o2, \
                               int64_t transposeA, int64_t transposeB);
/// The GEMM with its epilogue fused (codegen/fusion/FuseEpilogues.cpp): a bias
/// pointer before the output, and after the transposes `hasBias`, `act` (a
/// kcc::EpilogueActivation, below) and the activation's parameter
/// `actParam` (alpha, slope or maximum; 0 for those without one). The bias
/// spans the output's last dim.
#define KCC_RT_MATMUL_EPILOGUE(T, S)                                           \
  void kcc_rt_matmul_epilogue_##S(                                             \
      const T *a, const T *b, const T *bias, T *out, int64_t a0, int64_t a1,   \
      int64_t b0, int64_t b1, int64_t o0, int64_t o1, int64_t transposeA,      \
      int64_t transposeB, int64_t hasBias, int64_t act, double actParam);
/// The convolution with its epilogue, arguments as the matmul's above.
#define KCC_RT_CONV_EPILOGUE(T, S)                                             \
  void kcc_rt_conv2d_epilogue_##S(                                             \
      const T *x, const T *y, const T *bias, T *out, int64_t x0, int64_t x1,   \
      int64_t x2, int64_t x3, int64_t y0, int64_t y1, int64_t y2, int64_t y3,  \
      int64_t o0, int64_t o1, int64_t o2, int64_t o3, int64_t sh, int64_t sw,  \
      int64_t dh, int64_t dw, int64_t pad, int64_t groups, int64_t hasBias,    \
      int64_t act, double actParam);
/// 4-D arrays x 3 (input, filter or grad, output), then strides, dilations,
/// padding, groups.
#define KCC_RT_CONV(NAME, T, S)                                                \
  void kcc_rt_##NAME##_##S(                                                    \
      const T *x, const T *y, T *out, int64_t x0, int64_t x1, int64_t x2,      \
      int64_t x3, int64_t y0, int64_t y1, int64_t y2, int64_t y3, int64_t o0,  \
      int64_t o1, int64_t o2, int64_t o3, int64_t sh, int64_t sw, int64_t dh,  \
      int64_t dw, int64_t pad, int64_t groups);
/// One 4-D input, then window, strides, padding. max_pool2d_relu writes
/// relu of each maximum (kc-pool-before-activation's relu, fused by
/// codegen/fusion/FuseEpilogues.cpp).
#define KCC_RT_POOL1(NAME, T, S)                                               \
  void kcc_rt_##NAME##_##S(const T *x, T *out, int64_t x0, int64_t x1,         \
                           int64_t x2, int64_t x3, int64_t o0, int64_t o1,     \
                           int64_t o2, int64_t o3, int64_t wh, int64_t ww,     \
                           int64_t sh, int64_t sw, int64_t pad);
/// Two 4-D inputs (x, grad_output), then window, strides, padding.
/// max_pool2d_grad_relu also masks by x > 0 (the relu before the pooling,
/// fused by codegen/fusion/FuseEpilogues.cpp); it needs windows that tile x.
/// Both may write over x when the windows tile it
/// (codegen/memory/ReuseBuffers.cpp). avg_pool2d_grad_relu, _tanh and _sigmoid:
/// avg_pool2d_grad followed by the gradient of the activation before the
/// pooling (x is its output, the pooling's input; kernels::PoolGradActivation),
/// fused by codegen/fusion/FuseEpilogues.cpp; they too may write over x when
/// the windows tile it.
#define KCC_RT_POOL2(NAME, T, S)                                               \
  void kcc_rt_##NAME##_##S(const T *x, const T *y, T *out, int64_t x0,         \
                           int64_t x1, int64_t x2, int64_t x3, int64_t y0,     \
                           int64_t y1, int64_t y2, int64_t y3, int64_t o0,     \
                           int64_t o1, int64_t o2, int64_t o3, int64_t wh,     \
                           int64_t ww, int64_t sh, int64_t sw, int64_t pad);

/// gather with the table as [t0, t1] rows, indices flattened to [i0] of
/// index type I (suffix IS: i32 or i64), output [o0, o1]; gather_grad takes
/// indices [i0] and grad_output [g0, g1] into the table gradient [o0, o1].
#define KCC_RT_GATHER(T, S, I, IS)                                             \
  void kcc_rt_gather_##IS##_##S(const T *table, const I *indices, T *out,      \
                                int64_t t0, int64_t t1, int64_t i0,            \
                                int64_t o0, int64_t o1);                       \
  void kcc_rt_gather_grad_##IS##_##S(const I *indices, const T *grad, T *out,  \
                                     int64_t i0, int64_t g0, int64_t g1,       \
                                     int64_t o0, int64_t o1);

/// kc.ctc_loss: logits [l0, l1, l2], labels [y0, y1] int32, out [o0];
/// ctc_loss_grad takes grad_output [g0] before its out [o0, o1, o2].
#define KCC_RT_CTC(T, S)                                                       \
  void kcc_rt_ctc_loss_##S(const T *logits, const int32_t *labels, T *out,     \
                           int64_t l0, int64_t l1, int64_t l2, int64_t y0,     \
                           int64_t y1, int64_t o0);                            \
  void kcc_rt_ctc_loss_grad_##S(                                               \
      const T *logits, const int32_t *labels, const T *grad, T *out,           \
      int64_t l0, int64_t l1, int64_t l2, int64_t y0, int64_t y1, int64_t g0,  \
      int64_t o0, int64_t o1, int64_t o2);

/// kc.image_transform: images [i0..i3], transforms [t0, t1], out
/// [o0..o3], then the interpolation and fill mode codes
/// (kernels::ImageInterpolation, ImageFillMode) and the fill value's
/// IEEE-754 double bits; image_transform_grad takes transforms and
/// grad_output [g0..g3] into the images' gradient [o0..o3].
#define KCC_RT_IMAGE_TRANSFORM(T, S)                                           \
  void kcc_rt_image_transform_##S(                                             \
      const T *images, const T *transforms, T *out, int64_t i0, int64_t i1,    \
      int64_t i2, int64_t i3, int64_t t0, int64_t t1, int64_t o0, int64_t o1,  \
      int64_t o2, int64_t o3, int64_t interpolation, int64_t fillMode,         \
      int64_t fillBits);                                                       \
  void kcc_rt_image_transform_grad_##S(                                        \
      const T *transforms, const T *grad, T *out, int64_t t0, int64_t t1,      \
      int64_t g0, int64_t g1, int64_t g2, int64_t g3, int64_t o0, int64_t o1,  \
      int64_t o2, int64_t o3, int64_t interpolation, int64_t fillMode,         \
      int64_t fillBits);

/// One step of kc.recurrence / kc.recurrence_grad (runtime/kernels/
/// Recurrence.h): compiled code loops over the steps and calls these, the
/// forward for step = 0 .. T-1, the backward for step = T-1 .. 0. After the
/// step: T, B, H, then the cell, reset_after, the activation and the
/// recurrent activation (their RecurrentCell / RecurrentActivation codes)
/// and reverse.
#define KCC_RT_RECURRENCE(T, S)                                                \
  void kcc_rt_recurrence_step_##S(                                             \
      const T *x, const T *kernel, const T *initial, const T *rbias,           \
      T *states, int64_t step, int64_t steps, int64_t batch, int64_t units,    \
      int64_t cell, int64_t resetAfter, int64_t activation,                    \
      int64_t recurrentActivation, int64_t reverse);                           \
  void kcc_rt_recurrence_grad_step_##S(                                        \
      const T *kernel, const T *initial, const T *states, const T *gradStates, \
      T *grad, int64_t step, int64_t steps, int64_t batch, int64_t units,      \
      int64_t cell, int64_t resetAfter, int64_t activation,                    \
      int64_t recurrentActivation, int64_t reverse);

#define KCC_RT_ALL(T, S)                                                       \
  KCC_RT_MATMUL(T, S)                                                          \
  KCC_RT_BATCH_MATMUL(T, S)                                                    \
  KCC_RT_MATMUL_EPILOGUE(T, S)                                                 \
  KCC_RT_CONV_EPILOGUE(T, S)                                                   \
  KCC_RT_CONV(conv2d, T, S)                                                    \
  KCC_RT_CONV(conv2d_backprop_input, T, S)                                     \
  KCC_RT_CONV(conv2d_backprop_filter, T, S)                                    \
  KCC_RT_POOL1(max_pool2d, T, S)                                               \
  KCC_RT_POOL1(max_pool2d_relu, T, S)                                          \
  KCC_RT_POOL1(avg_pool2d, T, S)                                               \
  KCC_RT_POOL2(max_pool2d_grad, T, S)                                          \
  KCC_RT_POOL2(max_pool2d_grad_relu, T, S)                                     \
  KCC_RT_POOL1(avg_pool2d_grad, T, S)                                          \
  KCC_RT_POOL2(avg_pool2d_grad_relu, T, S)                                     \
  KCC_RT_POOL2(avg_pool2d_grad_tanh, T, S)                                     \
  KCC_RT_POOL2(avg_pool2d_grad_sigmoid, T, S)                                  \
  KCC_RT_RECURRENCE(T, S)                                                      \
  KCC_RT_CTC(T, S)                                                             \
  KCC_RT_IMAGE_TRANSFORM(T, S)

KCC_RT_ALL(float, f32)
KCC_RT_ALL(double, f64)
// bfloat16 (its bits in uint16_t) products: float32 accumulation.
KCC_RT_MATMUL(uint16_t, bf16)
KCC_RT_BATCH_MATMUL(uint16_t, bf16)
KCC_RT_CONV(conv2d, uint16_t, bf16)
KCC_RT_CONV(conv2d_backprop_input, uint16_t, bf16)
KCC_RT_CONV(conv2d_backprop_filter, uint16_t, bf16)
KCC_RT_GATHER(float, f32, int32_t, i32)
KCC_RT_GATHER(float, f32, int64_t, i64)
KCC_RT_GATHER(double, f64, int32_t, i32)
KCC_RT_GATHER(double, f64, int64_t, i64)

#undef KCC_RT_ALL
#undef KCC_RT_GATHER
#undef KCC_RT_RECURRENCE
#undef KCC_RT_CTC
#undef KCC_RT_IMAGE_TRANSFORM
#undef KCC_RT_POOL2
#undef KCC_RT_POOL1
#undef KCC_RT_CONV
#undef KCC_RT_MATMUL
#undef KCC_RT_BATCH_MATMUL
#undef KCC_RT_MATMUL_EPILOGUE
#undef KCC_RT_CONV_EPILOGUE
}

namespace kcc {

/// The `act` argument of kcc_rt_matmul_epilogue_* and kcc_rt_conv2d_epilogue_*
/// (codegen/fusion/FuseEpilogues.cpp emits it): the activation applied to the
/// output after the bias. From Elu on, Keras's activations kcc composes of
/// kc ops (frontend/ops/Activations.cpp), computed as the composition is
/// (kernels::composedActivation); `actParam` is the parameter noted.
enum class EpilogueActivation : int64_t {
  None = 0,
  Relu = 1,
  Tanh = 2,
  Sigmoid = 3,
  Gelu = 4,         ///< the exact erf form
  GeluTanh = 5,     ///< gelu's tanh approximation
  Silu = 6,         ///< x * sigmoid(x), Keras's swish
  Elu = 7,          ///< actParam: alpha
  Selu = 8,         ///< jax.nn.selu's alpha and scale
  LeakyRelu = 9,    ///< actParam: the negative slope
  BoundedRelu = 10, ///< min(relu(x), actParam): relu6, ReLU(max_value)
  Softplus = 11,
  Mish = 12,
  HardSigmoid = 13, ///< min(relu(x + 3), 6) / 6
  HardSilu = 14,    ///< x * hard_sigmoid(x), Keras's hard_swish
  Exp = 15,         ///< Keras's exponential
  Softsign = 16
};

namespace jit {

/// Every kcc_rt_* entry point by name, for the JIT's symbol table (and for
/// an AOT object's link map).
std::vector<std::pair<std::string, void *>> libraryCallSymbols();

/// The OpenMP runtime entry points (`__kmpc_*`) parallel loops call, from
/// LLVM's libomp, the process's one OpenMP runtime (linked into every kcc
/// program). Included in libraryCallSymbols().
std::vector<std::pair<std::string, void *>> openMPRuntimeSymbols();

} // namespace jit
} // namespace kcc

#endif // KCC_RUNTIME_LIBRARYCALLS_H
