//===- ColorOps.cpp - Keras's colour adjustments of NHWC images -----------===//
//
// Each function is the formula of Keras's layer on the JAX backend, in its
// order of operations; the HSV conversions are dm_pix's rgb_to_hsv and
// hsv_to_rgb as keras/src/backend/jax/image.py writes them.
//
//===----------------------------------------------------------------------===//

#include "frontend/layers/ColorOps.h"
#include "frontend/Ops.h"

using namespace kcc;
using ops::CompareKind;

Tensor layers::clipTo(const Tensor &x, double low, double high) {
  return ops::minimum(ops::maximum(x, ops::scalar(low, x.dtype())),
                      ops::scalar(high, x.dtype()));
}

Tensor layers::toRange(const Tensor &x, double fromLow, double fromHigh,
                       double toLow, double toHigh) {
  if (fromLow == toLow && fromHigh == toHigh)
    return x;
  DType t = x.dtype();
  Tensor unit = ops::div(ops::sub(x, ops::scalar(fromLow, t)),
                         ops::scalar(fromHigh - fromLow, t));
  return ops::add(ops::mul(unit, ops::scalar(toHigh - toLow, t)),
                  ops::scalar(toLow, t));
}

Tensor layers::luma(const Tensor &x) {
  Tensor weights = ops::cast(
      Tensor(NDArray::fromVector({3, 1}, {0.2989, 0.5870, 0.1140})), x.dtype());
  int64_t pixels = x.dim(0) * x.dim(1) * x.dim(2);
  return ops::reshape(ops::matmul(ops::reshape(x, {pixels, 3}), weights),
                      {x.dim(0), x.dim(1), x.dim(2), 1});
}

Tensor layers::adjustBrightness(const Tensor &x, const Tensor &delta,
                                double low, double high) {
  return clipTo(
      ops::add(x, ops::mul(delta, ops::scalar(high - low, x.dtype()))), low,
      high);
}

Tensor layers::adjustContrast(const Tensor &x, const Tensor &factor, double low,
                              double high) {
  // Keras's two means: over the height, then over the width.
  Tensor mean = ops::reduceMean(ops::reduceMean(x, {1}, /*keepdims=*/true), {2},
                                /*keepdims=*/true);
  return clipTo(ops::add(ops::mul(ops::sub(x, mean), factor), mean), low, high);
}

namespace {

/// Hue, saturation and value planes, each [N, H, W, 1].
struct HsvPlanes {
  Tensor hue, saturation, value;
};

Tensor channel(const Tensor &x, int64_t c) {
  return ops::slice(x, {0, 0, 0, c}, {x.dim(0), x.dim(1), x.dim(2), c + 1},
                    {1, 1, 1, 1});
}

/// The hue in [0, 1], the saturation range / max, the value max (on the
/// images' own scale).
HsvPlanes rgbToHsv(Tensor x) {
  DType t = x.dtype();
  // Keras first flushes |x| below float32's epsilon to zero.
  x = ops::select(ops::compare(CompareKind::LT, ops::abs(x),
                               ops::scalar(1.1920928955078125e-7, t)),
                  ops::scalar(0, t), x);
  Tensor r = channel(x, 0), g = channel(x, 1), b = channel(x, 2);
  Tensor value = ops::maximum(ops::maximum(r, g), b);
  Tensor range = ops::sub(value, ops::minimum(ops::minimum(r, g), b));
  Tensor zero = ops::scalar(0, t), one = ops::scalar(1, t);
  Tensor lit = ops::compare(CompareKind::GT, value, zero);
  Tensor colored = ops::compare(CompareKind::GT, range, zero);
  Tensor saturation =
      ops::select(lit, ops::div(range, ops::select(lit, value, one)), zero);
  Tensor norm = ops::div(
      one, ops::mul(ops::scalar(6, t), ops::select(colored, range, one)));
  auto sector = [&](const Tensor &a, const Tensor &c, double offset) {
    return ops::add(ops::mul(norm, ops::sub(a, c)), ops::scalar(offset, t));
  };
  Tensor hue = ops::select(ops::compare(CompareKind::EQ, value, g),
                           sector(b, r, 2.0 / 6.0), sector(r, g, 4.0 / 6.0));
  hue = ops::select(ops::compare(CompareKind::EQ, value, r),
                    ops::mul(norm, ops::sub(g, b)), hue);
  hue = ops::add(ops::select(colored, hue, zero),
                 ops::cast(ops::compare(CompareKind::LT, hue, zero), t));
  return {hue, saturation, value};
}

/// For a hue in [0, 1]. Keras takes the hue modulo 1 first; at 1 that gives
/// 0, and each channel's weight below is the same at 0 and at 6, so the hue
/// is used as it is.
Tensor hsvToRgb(const HsvPlanes &hsv) {
  DType t = hsv.hue.dtype();
  Tensor dh = ops::mul(hsv.hue, ops::scalar(6, t));
  auto distance = [&](double center) {
    return ops::abs(ops::sub(dh, ops::scalar(center, t)));
  };
  Tensor dr = layers::clipTo(ops::sub(distance(3), ops::scalar(1, t)), 0, 1);
  Tensor dg = layers::clipTo(ops::sub(ops::scalar(2, t), distance(2)), 0, 1);
  Tensor db = layers::clipTo(ops::sub(ops::scalar(2, t), distance(4)), 0, 1);
  Tensor gray = ops::sub(ops::scalar(1, t), hsv.saturation);
  auto plane = [&](const Tensor &weight) {
    return ops::mul(hsv.value,
                    ops::add(gray, ops::mul(hsv.saturation, weight)));
  };
  return ops::concat({plane(dr), plane(dg), plane(db)}, 3);
}

} // namespace

Tensor layers::adjustSaturation(const Tensor &x, const Tensor &f, double low,
                                double high) {
  DType t = x.dtype();
  Tensor scale = ops::div(
      f, ops::add(ops::sub(ops::scalar(1, t), f), ops::scalar(1e-7, t)));
  HsvPlanes hsv = rgbToHsv(x);
  hsv.saturation = clipTo(ops::mul(hsv.saturation, scale), low, high);
  return hsvToRgb(hsv);
}

Tensor layers::shiftHue(const Tensor &x, const Tensor &shift, double low,
                        double high) {
  DType t = x.dtype();
  Tensor one = ops::scalar(1, t);
  HsvPlanes hsv = rgbToHsv(toRange(x, low, high, 0, 1));
  Tensor hue = ops::add(hsv.hue, shift);
  hue = ops::select(ops::compare(CompareKind::GT, hue, one), ops::sub(hue, one),
                    hue);
  hsv.hue = ops::select(ops::compare(CompareKind::LT, hue, ops::scalar(0, t)),
                        ops::add(hue, one), hue);
  return toRange(clipTo(hsvToRgb(hsv), 0, 1), 0, 1, low, high);
}
