//===- ImageTransform.cpp - Affine image sampling and its transpose -------===//
//
// Keras's affine_transform as its JAX backend computes it: every output
// pixel (y, x) reads the input at row b0 x + b1 y + b2 and column
// a0 x + a1 y + a2 (computed in the images' float type), through
// jax.scipy.ndimage.map_coordinates: order 0 rounds half away from zero,
// order 1 blends the four neighbours floor(coord) and floor(coord) + 1 with
// weights 1 - frac and frac. Each neighbour outside the image is moved in
// by the fill mode's index rule (JAX's, integer arithmetic), or, in
// constant mode, reads the fill value instead.
//
// The gradient sends each output element's adjoint back to the pixels it
// read, with the same weights (a scatter-add; fill values take none).
//
//===----------------------------------------------------------------------===//

#include "runtime/kernels/KernelSupport.h"
#include "runtime/kernels/Kernels.h"

#include <cmath>

using namespace kcc;
using namespace kcc::kernels;
using namespace kcc::kernels::detail;

namespace {

/// Python's floor division and modulo (the divisor is positive).
inline int64_t floorDiv(int64_t a, int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}
inline int64_t floorMod(int64_t a, int64_t b) { return a - floorDiv(a, b) * b; }

/// JAX's _mirror_index_fixer: a triangular wave of half-period size - 1.
inline int64_t mirror(int64_t index, int64_t size) {
  int64_t s = size - 1;
  return std::abs(floorMod(index + s, 2 * s) - s);
}

/// The index `i` of an axis of `size` reads under `mode`; `valid` is false
/// where constant mode reads the fill value instead.
inline int64_t fixIndex(int64_t i, int64_t size, ImageFillMode mode,
                        bool &valid) {
  valid = true;
  switch (mode) {
  case ImageFillMode::Constant:
    valid = i >= 0 && i < size;
    return i;
  case ImageFillMode::Nearest:
    return i < 0 ? 0 : i >= size ? size - 1 : i;
  case ImageFillMode::Wrap:
    return floorMod(i, size);
  case ImageFillMode::Reflect:
    // JAX's _reflect_index_fixer: half-sample symmetric.
    return floorDiv(mirror(2 * i + 1, 2 * size + 1) - 1, 2);
  }
  return i;
}

/// Up to two (index, weight) taps along one axis.
template <typename T> struct Taps {
  int64_t index[2];
  T weight[2];
  bool valid[2];
  int count;
};

template <typename T>
Taps<T> taps(T coord, int64_t size, const ImageTransformParams &p) {
  Taps<T> t;
  if (p.interpolation == ImageInterpolation::Nearest) {
    // lax.round: half away from zero, as std::round.
    t.count = 1;
    t.index[0] = static_cast<int64_t>(std::round(coord));
    t.weight[0] = T(1);
  } else {
    T lower = std::floor(coord);
    T upper = coord - lower;
    t.count = 2;
    t.index[0] = static_cast<int64_t>(lower);
    t.index[1] = t.index[0] + 1;
    t.weight[0] = T(1) - upper;
    t.weight[1] = upper;
  }
  for (int k = 0; k < t.count; ++k)
    t.index[k] = fixIndex(t.index[k], size, p.fillMode, t.valid[k]);
  return t;
}

struct Geom {
  int64_t batch, height, width, channels, outHeight, outWidth;
};

Geom checkShapes(const char *op, const NDArray &images,
                 const NDArray &transforms, const NDArray &out) {
  bool ok = images.rank() == 4 && out.rank() == 4 && transforms.rank() == 2 &&
            (images.dtype() == DType::F32 || images.dtype() == DType::F64) &&
            out.dtype() == images.dtype() &&
            transforms.dtype() == images.dtype() &&
            transforms.dim(0) == images.dim(0) && transforms.dim(1) == 8 &&
            out.dim(0) == images.dim(0) && out.dim(3) == images.dim(3) &&
            images.dim(1) > 0 && images.dim(2) > 0;
  if (!ok)
    fail(op, std::string("images ") + dtypeName(images.dtype()) + " " +
                 shapeToString(images.shape()) + ", transforms " +
                 dtypeName(transforms.dtype()) + " " +
                 shapeToString(transforms.shape()) + ", output " +
                 dtypeName(out.dtype()) + " " + shapeToString(out.shape()) +
                 " do not match");
  return {images.dim(0), images.dim(1), images.dim(2),
          images.dim(3), out.dim(1),    out.dim(2)};
}

/// Calls visit(outPixel, inPixel or -1 for the fill value, weight) for
/// every tap of every output pixel of image n (offsets in pixels).
template <typename T, typename Visit>
void forEachTap(const Geom &g, const T *t, const ImageTransformParams &p,
                const Visit &visit) {
  for (int64_t y = 0; y < g.outHeight; ++y)
    for (int64_t x = 0; x < g.outWidth; ++x) {
      T ty = T(y), tx = T(x);
      Taps<T> rows = taps<T>(ty * t[4] + tx * t[3] + t[5], g.height, p);
      Taps<T> cols = taps<T>(ty * t[1] + tx * t[0] + t[2], g.width, p);
      int64_t outPixel = y * g.outWidth + x;
      for (int i = 0; i < rows.count; ++i)
        for (int j = 0; j < cols.count; ++j) {
          bool valid = rows.valid[i] && cols.valid[j];
          visit(outPixel, valid ? rows.index[i] * g.width + cols.index[j] : -1,
                rows.weight[i] * cols.weight[j]);
        }
    }
}

template <typename T>
void transformT(const Geom &g, const NDArray &images, const NDArray &transforms,
                const ImageTransformParams &p, NDArray &out) {
  const T *in = images.data<T>(), *tr = transforms.data<T>();
  T *o = out.data<T>();
  T fill = static_cast<T>(p.fillValue);
  int64_t inImage = g.height * g.width * g.channels;
  int64_t outImage = g.outHeight * g.outWidth * g.channels;
  runTasks(g.batch, g.batch * outImage * 4, [&](int64_t n) {
    const T *src = in + n * inImage;
    T *dst = o + n * outImage;
    for (int64_t i = 0; i < outImage; ++i)
      dst[i] = T(0);
    forEachTap<T>(g, tr + n * 8, p,
                  [&](int64_t outPixel, int64_t inPixel, T w) {
                    T *d = dst + outPixel * g.channels;
                    if (inPixel < 0) {
                      for (int64_t c = 0; c < g.channels; ++c)
                        d[c] += w * fill;
                      return;
                    }
                    const T *s = src + inPixel * g.channels;
                    for (int64_t c = 0; c < g.channels; ++c)
                      d[c] += w * s[c];
                  });
  });
}

template <typename T>
void transformGradT(const Geom &g, const NDArray &transforms,
                    const NDArray &gradOut, const ImageTransformParams &p,
                    NDArray &out) {
  const T *go = gradOut.data<T>(), *tr = transforms.data<T>();
  T *o = out.data<T>();
  int64_t inImage = g.height * g.width * g.channels;
  int64_t outImage = g.outHeight * g.outWidth * g.channels;
  runTasks(g.batch, g.batch * outImage * 4, [&](int64_t n) {
    const T *src = go + n * outImage;
    T *dst = o + n * inImage;
    for (int64_t i = 0; i < inImage; ++i)
      dst[i] = T(0);
    forEachTap<T>(g, tr + n * 8, p,
                  [&](int64_t outPixel, int64_t inPixel, T w) {
                    if (inPixel < 0)
                      return;
                    const T *s = src + outPixel * g.channels;
                    T *d = dst + inPixel * g.channels;
                    for (int64_t c = 0; c < g.channels; ++c)
                      d[c] += w * s[c];
                  });
  });
}

} // namespace

void kcc::kernels::imageTransform(const NDArray &images,
                                  const NDArray &transforms,
                                  const ImageTransformParams &p, NDArray &out) {
  Geom g = checkShapes("image_transform", images, transforms, out);
  if (images.dtype() == DType::F64)
    transformT<double>(g, images, transforms, p, out);
  else
    transformT<float>(g, images, transforms, p, out);
}

void kcc::kernels::imageTransformGrad(const NDArray &transforms,
                                      const NDArray &gradOut,
                                      const ImageTransformParams &p,
                                      NDArray &out) {
  // out has the images' shape, gradOut the transform's output shape.
  Geom g = checkShapes("image_transform_grad", out, transforms, gradOut);
  if (out.dtype() == DType::F64)
    transformGradT<double>(g, transforms, gradOut, p, out);
  else
    transformGradT<float>(g, transforms, gradOut, p, out);
}
