//===- Resizing.cpp - Resizing and CenterCrop -----------------------------===//
//
// Keras's image resizing as the JAX backend computes it (jax.image.resize,
// no antialiasing): each output row and column is a fixed weighted sum of
// input rows and columns, so a resize is two products with constant
// interpolation matrices [out, in], one over the height and one over the
// width, and autodiff, the interpreter and the compiler need nothing of
// their own. Bilinear weights are jax's scale_and_translate's, computed in
// f32 as it does: the triangle kernel at sample (i + 0.5) * in / out - 0.5,
// normalized over the inputs in range (the edges replicate); nearest picks
// input floor((i + 0.5) * in / out). crop_to_aspect_ratio (and CenterCrop
// when the image is smaller than its target: Keras's smart_resize) first
// takes the largest centred crop of the target's aspect ratio.
//
//===----------------------------------------------------------------------===//

#include "frontend/Layers.h"
#include "frontend/Ops.h"
#include "frontend/layers/ImageAxes.h"

#include <cmath>

using namespace kcc;

namespace {

/// The [out, in] matrix whose rows interpolate `in` samples to `out`.
NDArray interpolationMatrix(int64_t in, int64_t out, bool nearest,
                            DType dtype) {
  std::vector<double> m(out * in, 0.0);
  if (nearest) {
    for (int64_t i = 0; i < out; ++i) {
      float offset = (static_cast<float>(i) + 0.5f) * static_cast<float>(in) /
                     static_cast<float>(out);
      int64_t j =
          std::min<int64_t>(static_cast<int64_t>(std::floor(offset)), in - 1);
      m[i * in + j] = 1.0;
    }
    return NDArray::fromVector({out, in}, m, dtype);
  }
  float scale = static_cast<float>(out) / static_cast<float>(in);
  float invScale = 1.0f / scale;
  for (int64_t i = 0; i < out; ++i) {
    float sample = (static_cast<float>(i) + 0.5f) * invScale - 0.5f;
    std::vector<float> w(in);
    float total = 0;
    for (int64_t j = 0; j < in; ++j) {
      w[j] = std::max(0.0f, 1.0f - std::fabs(sample - static_cast<float>(j)));
      total += w[j];
    }
    bool inRange = sample >= -0.5f && sample <= static_cast<float>(in) - 0.5f;
    if (!inRange || !(std::fabs(total) > 1000.0f * 1.1920929e-7f))
      continue;
    for (int64_t j = 0; j < in; ++j)
      m[i * in + j] = w[j] / total;
  }
  return NDArray::fromVector({out, in}, m, dtype);
}

/// Interpolates axis `axis` (1: height, 2: width) of NHWC `x` to `out`.
Tensor resizeAxis(const Tensor &x, int64_t axis, int64_t out, bool nearest) {
  int64_t in = x.dim(axis);
  if (in == out)
    return x;
  return layers::mapImageAxis(x, axis,
                              interpolationMatrix(in, out, nearest, x.dtype()));
}

/// Keras's crop_to_aspect_ratio / smart_resize crop: the largest centred
/// crop with the target's aspect ratio, in Keras's f32 arithmetic.
Tensor cropToAspectRatio(const Tensor &x, int64_t height, int64_t width) {
  int64_t h = x.dim(1), w = x.dim(2);
  auto f32 = [](int64_t v) { return static_cast<float>(v); };
  int64_t cropH = static_cast<int64_t>(f32(w * height) / f32(width));
  cropH = std::max<int64_t>(std::min(h, cropH), 1);
  int64_t cropW = static_cast<int64_t>(f32(h * width) / f32(height));
  cropW = std::max<int64_t>(std::min(w, cropW), 1);
  int64_t top = static_cast<int64_t>(f32(h - cropH) / 2);
  int64_t left = static_cast<int64_t>(f32(w - cropW) / 2);
  if (cropH == h && cropW == w)
    return x;
  return ops::slice(x, {0, top, left, 0},
                    {x.dim(0), top + cropH, left + cropW, x.dim(3)},
                    {1, 1, 1, 1});
}

/// One NHWC image batch and a positive target size.
class ImageSizeImpl : public LayerImpl {
protected:
  ImageSizeImpl(const char *className, int64_t height, int64_t width)
      : LayerImpl(className), height_(height), width_(width) {
    if (height <= 0 || width <= 0 || height > (int64_t(1) << 24) ||
        width > (int64_t(1) << 24))
      throw Error(std::string(className) +
                  ": height and width must be in [1, 2^24], got " +
                  std::to_string(height) + " x " + std::to_string(width));
  }
  void build(const std::vector<Shape> &shapes) override {
    if (shapes.size() != 1 || shapes[0].size() != 4)
      fail("expects one batch of images [batch, height, width, channels], "
           "got " +
           (shapes.empty() ? std::string("none") : shapeString(shapes[0])));
  }
  int64_t height_, width_;
};

class ResizingImpl : public ImageSizeImpl {
public:
  ResizingImpl(int64_t height, int64_t width, std::string interpolation,
               bool cropToAspectRatio)
      : ImageSizeImpl("Resizing", height, width),
        interpolation_(std::move(interpolation)), crop_(cropToAspectRatio) {
    if (interpolation_ != "bilinear" && interpolation_ != "nearest")
      throw Error("Resizing: interpolation '" + interpolation_ +
                  "' is not supported (bilinear, nearest)");
  }
  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{{"height", height_},
                              {"width", width_},
                              {"interpolation", interpolation_},
                              {"crop_to_aspect_ratio", crop_},
                              {"pad_to_aspect_ratio", false},
                              {"fill_mode", "constant"},
                              {"fill_value", 0.0},
                              {"antialias", false},
                              {"data_format", "channels_last"}};
  }

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    expectInputs(inputs, 1);
    return {layers::resizeImages(inputs[0], height_, width_,
                                 interpolation_ == "nearest", crop_)};
  }

private:
  std::string interpolation_;
  bool crop_;
};

class CenterCropImpl : public ImageSizeImpl {
public:
  CenterCropImpl(int64_t height, int64_t width)
      : ImageSizeImpl("CenterCrop", height, width) {}
  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{{"height", height_},
                              {"width", width_},
                              {"data_format", "channels_last"}};
  }

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    expectInputs(inputs, 1);
    const Tensor &x = inputs[0];
    int64_t dh = x.dim(1) - height_, dw = x.dim(2) - width_;
    if (dh < 0 || dw < 0) // smaller than the target: smart_resize
      return {layers::resizeImages(x, height_, width_, /*nearest=*/false,
                                   /*crop=*/true)};
    return {ops::slice(x, {0, dh / 2, dw / 2, 0},
                       {x.dim(0), dh / 2 + height_, dw / 2 + width_, x.dim(3)},
                       {1, 1, 1, 1})};
  }
};

} // namespace

Tensor layers::resizeImages(const Tensor &x, int64_t height, int64_t width,
                            bool nearest, bool crop) {
  Tensor in = crop ? cropToAspectRatio(x, height, width) : x;
  return resizeAxis(resizeAxis(in, 1, height, nearest), 2, width, nearest);
}

Tensor layers::mapImageAxis(const Tensor &x, int64_t axis,
                            const NDArray &matrix) {
  // The axis last, the batch and the other axes as rows: one product
  // with the matrix, then the axis back in place.
  std::vector<int64_t> toLast = axis == 1 ? std::vector<int64_t>{0, 2, 3, 1}
                                          : std::vector<int64_t>{0, 1, 3, 2};
  std::vector<int64_t> back = axis == 1 ? std::vector<int64_t>{0, 3, 1, 2}
                                        : std::vector<int64_t>{0, 1, 3, 2};
  Tensor t = ops::transpose(x, toLast);
  Tensor rows = ops::reshape(t, {-1, x.dim(axis)});
  Tensor r = ops::matmul(rows, Tensor(matrix), /*transposeA=*/false,
                         /*transposeB=*/true);
  return ops::transpose(
      ops::reshape(r, {t.dim(0), t.dim(1), t.dim(2), matrix.dim(0)}), back);
}

NDArray layers::reversalMatrix(int64_t n, DType dtype) {
  std::vector<double> m(n * n, 0.0);
  for (int64_t i = 0; i < n; ++i)
    m[i * n + (n - 1 - i)] = 1.0;
  return NDArray::fromVector({n, n}, m, dtype);
}

Resizing::Resizing(int64_t height, int64_t width, std::string interpolation,
                   bool cropToAspectRatio)
    : Layer(std::make_shared<ResizingImpl>(
          height, width, std::move(interpolation), cropToAspectRatio)) {}

CenterCrop::CenterCrop(int64_t height, int64_t width)
    : Layer(std::make_shared<CenterCropImpl>(height, width)) {}
