//===- VolumeLayers.h - Keras's 3-D layers and TimeDistributed --*- C++ -*-===//
//
// The layers of NDHWC volumes ([batch, depth, height, width, channels]:
// video clips, scans) and TimeDistributed, which runs a layer on every step
// of a sequence. Included by Layers.h; implementations in
// frontend/layers/Volume.cpp, Convolution.cpp and TimeDistributed.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_VOLUMELAYERS_H
#define KCC_FRONTEND_VOLUMELAYERS_H

#include "frontend/Layer.h"

#include <optional>
#include <utility>

namespace kcc {

/// A {depth, height, width} triple that also accepts a single int.
struct Size3 {
  Size3(int64_t all) : d(all), h(all), w(all) {} // NOLINT: as in Keras.
  Size3(int64_t d, int64_t h, int64_t w) : d(d), h(h), w(w) {}
  int64_t d, h, w;
};

/// NDHWC convolution with a DHWIO kernel [kd, kh, kw, cin, filters].
class Conv3D : public Layer {
public:
  Conv3D(int64_t filters, Size3 kernelSize, Size3 strides = 1,
         const std::string &padding = "valid", Size3 dilationRate = 1,
         const std::string &activation = "linear", bool useBias = true,
         const std::string &kernelInitializer = "glorot_uniform",
         const std::string &biasInitializer = "zeros");
};

/// The transposed 3-D convolution, kernel [kd, kh, kw, filters, cin] as
/// Keras's; output_padding None.
class Conv3DTranspose : public Layer {
public:
  Conv3DTranspose(int64_t filters, Size3 kernelSize, Size3 strides = 1,
                  const std::string &padding = "valid", Size3 dilationRate = 1,
                  const std::string &activation = "linear", bool useBias = true,
                  const std::string &kernelInitializer = "glorot_uniform",
                  const std::string &biasInitializer = "zeros");
};

/// Max and average pooling over depth, height and width; strides default
/// to the pool size. Same padding: padded positions never win the max and
/// are left out of the average's count, as in Keras.
class MaxPooling3D : public Layer {
public:
  explicit MaxPooling3D(Size3 poolSize = 2,
                        std::optional<Size3> strides = std::nullopt,
                        const std::string &padding = "valid");
};

class AveragePooling3D : public Layer {
public:
  explicit AveragePooling3D(Size3 poolSize = 2,
                            std::optional<Size3> strides = std::nullopt,
                            const std::string &padding = "valid");
};

/// The mean (maximum) over depth, height and width: [N, C], or
/// [N, 1, 1, 1, C] with `keepdims`.
class GlobalAveragePooling3D : public Layer {
public:
  explicit GlobalAveragePooling3D(bool keepdims = false);
};

class GlobalMaxPooling3D : public Layer {
public:
  explicit GlobalMaxPooling3D(bool keepdims = false);
};

/// Slices added (ZeroPadding3D) or removed (Cropping3D) at each side of
/// each spatial axis: `1` (all sides), `{d, h, w}` (symmetric) or
/// `{{front, back}, {top, bottom}, {left, right}}`.
struct Sides3 {
  using Pair = std::pair<int64_t, int64_t>;
  Sides3(int64_t all) // NOLINT: implicit as in Keras.
      : depth(all, all), rows(all, all), cols(all, all) {}
  Sides3(int64_t d, int64_t h, int64_t w)
      : depth(d, d), rows(h, h), cols(w, w) {}
  Sides3(Pair depth, Pair rows, Pair cols)
      : depth(depth), rows(rows), cols(cols) {}
  Pair depth, rows, cols;
};

class ZeroPadding3D : public Layer {
public:
  explicit ZeroPadding3D(Sides3 padding = 1);
};

class Cropping3D : public Layer {
public:
  explicit Cropping3D(Sides3 cropping = 0);
};

/// Repeats each depth slice, row and column `size` times (nearest).
class UpSampling3D : public Layer {
public:
  explicit UpSampling3D(Size3 size = 2);
};

/// Applies `layers` in order (one layer, or the layers of a Sequential) to
/// every step of its input [batch, steps, ...], as one call on
/// [batch * steps, ...]: one set of weights for all steps. The weights
/// belong to the TimeDistributed, named as Keras 3 stores them: "layer/..."
/// for one layer, "layer/layers/<group>/..." for a Sequential's (`group`
/// dense, dense_1, ...). `sequentialName`: the Sequential's name when
/// `layers` are one (kept for saving), empty for a single layer.
class TimeDistributed : public Layer {
public:
  explicit TimeDistributed(const Layer &layer);
  TimeDistributed(std::vector<Layer> layers, std::string sequentialName);
};

/// The layers a TimeDistributed runs and, for a Sequential's, its name;
/// nullopt for other layers.
std::optional<std::pair<std::vector<Layer>, std::string>>
timeDistributedLayers(const Layer &layer);

} // namespace kcc

#endif // KCC_FRONTEND_VOLUMELAYERS_H
