//===- GeometricTransforms.h - Keras's augmentation matrices ----*- C++ -*-===//
//
// The [N, 8] transforms of kc.image_transform that Keras's geometric
// augmentation layers build from their per-image draws ([N, 1] columns),
// composed of kc ops; the layers (GeometricAugmentation.cpp) and the tests
// that feed them Keras's own draws share them.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_LAYERS_GEOMETRICTRANSFORMS_H
#define KCC_FRONTEND_LAYERS_GEOMETRICTRANSFORMS_H

#include "frontend/Tensor.h"

namespace kcc {
namespace layers {

/// RandomRotation: `turns` (the angle / 360, in [-1, 1]) about the
/// centre ((width - 1) / 2, (height - 1) / 2), Keras's
/// _compute_affine_matrix with no shear, scale 1.
Tensor rotationTransforms(const Tensor &turns, int64_t height, int64_t width);
/// RandomZoom's _get_zoom_matrix: scales about the centre.
Tensor zoomTransforms(const Tensor &heightZoom, const Tensor &widthZoom,
                      int64_t height, int64_t width);
/// RandomTranslation's _get_translation_matrix: shifted down `rows` and
/// right `cols` pixels.
Tensor translationTransforms(const Tensor &rows, const Tensor &cols);
/// RandomShear's _get_shear_matrix: the output pixel (x, y) samples the
/// input at (x + shearX * y, shearY * x + y).
Tensor shearTransforms(const Tensor &shearX, const Tensor &shearY);

} // namespace layers
} // namespace kcc

#endif // KCC_FRONTEND_LAYERS_GEOMETRICTRANSFORMS_H
