//===- ColorOps.h - Keras's colour adjustments of NHWC images ---*- C++ -*-===//
//
// The arithmetic of Keras's photometric augmentation layers, given their
// draws (one per image, [N, 1, 1, 1]): the layers draw, these compute, so
// that RandomColorJitter composes the same functions its parts use.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_LAYERS_COLOROPS_H
#define KCC_FRONTEND_LAYERS_COLOROPS_H

#include "frontend/Tensor.h"

namespace kcc {
namespace layers {

/// x clipped to [low, high].
Tensor clipTo(const Tensor &x, double low, double high);

/// Keras's _transform_value_range: x on [fromLow, fromHigh] mapped to
/// [toLow, toHigh] (the identity between equal ranges).
Tensor toRange(const Tensor &x, double fromLow, double fromHigh, double toLow,
               double toHigh);

/// tf.image.rgb_to_grayscale's luma of NHWC RGB images, [N, H, W, 1].
Tensor luma(const Tensor &x);

/// RandomBrightness: x + delta * (high - low), clipped.
Tensor adjustBrightness(const Tensor &x, const Tensor &delta, double low,
                        double high);

/// RandomContrast: (x - mean) * factor + mean, the mean per image and
/// channel, clipped.
Tensor adjustContrast(const Tensor &x, const Tensor &factor, double low,
                      double high);

/// RandomSaturation: the HSV saturation times f / (1 - f + 1e-7), clipped
/// to [low, high] as Keras clips it (the saturation is not rescaled).
Tensor adjustSaturation(const Tensor &x, const Tensor &f, double low,
                        double high);

/// RandomHue: on the [0, 1] scale of [low, high], the HSV hue plus
/// `shift`, wrapped into [0, 1]; back to RGB, clipped, and rescaled.
Tensor shiftHue(const Tensor &x, const Tensor &shift, double low, double high);

} // namespace layers
} // namespace kcc

#endif // KCC_FRONTEND_LAYERS_COLOROPS_H
