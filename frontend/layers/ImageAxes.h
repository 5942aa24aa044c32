//===- ImageAxes.h - Linear maps along an image axis ------------*- C++ -*-===//
//
// Resizing, flipping and the crops of Keras's image layers are linear maps
// along the height or the width of NHWC images: a product with a constant
// [out, in] matrix (interpolation weights, a reversal), which autodiff, the
// interpreter and the compiler take like any other product.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_LAYERS_IMAGEAXES_H
#define KCC_FRONTEND_LAYERS_IMAGEAXES_H

#include "frontend/Tensor.h"

namespace kcc {
namespace layers {

/// out[n, i, ...] = sum_j matrix[i, j] * x[n, j, ...] along `axis` (1: the
/// height, 2: the width) of NHWC `x`; `matrix` is [out, x.dim(axis)] in
/// x's dtype.
Tensor mapImageAxis(const Tensor &x, int64_t axis, const NDArray &matrix);

/// NHWC `x` resized to height x width as Keras's Resizing on JAX (after
/// Keras's centred crop to that aspect ratio when `crop`).
Tensor resizeImages(const Tensor &x, int64_t height, int64_t width,
                    bool nearest, bool crop);

/// The [n, n] reversal: x flipped along an axis of n entries.
NDArray reversalMatrix(int64_t n, DType dtype);

} // namespace layers
} // namespace kcc

#endif // KCC_FRONTEND_LAYERS_IMAGEAXES_H
