//===- GeometricAugmentation.cpp - RandomRotation, Zoom, Translation, Crop ===//
//
// Keras's geometric augmentation layers: each training call draws one set
// of parameters per image (RandomCrop: per batch) from kc.random_uniform,
// builds Keras's affine matrix from them with kc ops, and samples the
// images through kc.image_transform (Keras's affine_transform on JAX).
// Keras's own random stream differs, so only the distributions match;
// given the same parameters the images match (tests/unit/frontend/
// GeometricAugmentationTest.cpp).
//
//  RandomRotation     angle uniform(lower, upper) turns about the centre
//                     ((W - 1) / 2, (H - 1) / 2);
//  RandomZoom         height and width scaled by 1 + uniform(lower, upper)
//                     about the centre (one draw for both without a
//                     width_factor);
//  RandomTranslation  shifted by uniform(lower, upper) * H rows and
//                     * W columns;
//  RandomShear        x' = x + sx * y, y' = y + sy * x (output to input),
//                     sx and sy uniform over their factors, one sign per
//                     image for both;
//  RandomCrop         one window at a uniform integer offset, or Keras's
//                     centred aspect crop resized; the identity at
//                     inference, as Keras 3.
//
//===----------------------------------------------------------------------===//

#include "frontend/Layers.h"
#include "frontend/layers/AugmentationImpl.h"
#include "frontend/layers/GeometricTransforms.h"
#include "frontend/layers/ImageAxes.h"

#include <algorithm>
#include <cmath>

using namespace kcc;
using layers::AugmentationImpl;

namespace {

llvm::json::Value pair(double a, double b) { return llvm::json::Array{a, b}; }

/// `x` [N, K] through a product with the identity: the same values, but a
/// library call that elementwise fusion does not copy into each user (the
/// rotation's small polynomial DAG would otherwise be copied into every
/// consumer, one fusion after another).
Tensor fusionBarrier(const Tensor &x) {
  int64_t k = x.dim(1);
  std::vector<double> eye(static_cast<size_t>(k * k), 0.0);
  for (int64_t i = 0; i < k; ++i)
    eye[static_cast<size_t>(i * k + i)] = 1.0;
  return ops::matmul(x, Tensor(NDArray::fromVector({k, k}, eye, x.dtype())));
}

/// cos(2 pi u) for u in [0, 1] as ops::cosTwoPi computes it, with the
/// shared values behind fusion barriers.
Tensor cosTwoPiSmall(const Tensor &u) {
  DType dt = u.dtype();
  auto c = [&](double v) { return ops::scalar(v, dt); };
  Tensor t = fusionBarrier(ops::abs(ops::sub(u, c(0.5))));
  Tensor past = ops::compare(ops::CompareKind::GT, t, c(0.25));
  Tensor r = ops::select(past, ops::sub(c(0.5), t), t);
  Tensor x = ops::mul(r, c(2 * M_PI));
  Tensor x2 = fusionBarrier(ops::mul(x, x));
  double coefficient = 1;
  std::vector<double> terms;
  for (int k = 0; k <= 8; ++k) {
    terms.push_back(coefficient);
    coefficient *= -1.0 / ((2 * k + 1) * (2 * k + 2));
  }
  Tensor p = c(terms.back());
  for (int k = 7; k >= 0; --k)
    p = ops::add(ops::mul(p, x2), c(terms[k]));
  p = fusionBarrier(p);
  return ops::select(past, p, ops::neg(p));
}

/// A column [N, 1] of `like`'s kind holding `v`.
Tensor column(const Tensor &like, double v) {
  return ops::fillLike(like, {like.dim(0), 1}, v);
}

/// Keras's 8-entry transforms [N, 8] from columns a0 a1 a2 b0 b1 b2 [N, 1]
/// (the projective c0 c1 zero).
Tensor affine(const Tensor &a0, const Tensor &a1, const Tensor &a2,
              const Tensor &b0, const Tensor &b1, const Tensor &b2) {
  return ops::concat({a0, a1, a2, b0, b1, b2, column(a0, 0), column(a0, 0)}, 1);
}

void checkFill(const char *className, const ImageFill &f) {
  if (f.fillMode != "reflect" && f.fillMode != "wrap" &&
      f.fillMode != "constant" && f.fillMode != "nearest")
    throw Error(std::string(className) + ": fill_mode '" + f.fillMode +
                "' is not one of reflect, wrap, constant, nearest");
  if (f.interpolation != "bilinear" && f.interpolation != "nearest")
    throw Error(std::string(className) + ": interpolation '" + f.interpolation +
                "' is not one of bilinear, nearest");
  if (!std::isfinite(f.fillValue))
    throw Error(std::string(className) + ": fill_value must be finite");
}

/// [lower, upper] with lower <= upper, both within [lo, hi] (lo itself
/// allowed when `lowClosed`).
void checkRange(const char *className, const char *what, double lower,
                double upper, double lo, double hi, bool lowClosed) {
  auto inside = [&](double v) {
    return std::isfinite(v) && (lowClosed ? v >= lo : v > lo) && v <= hi;
  };
  if (!inside(lower) || !inside(upper) || lower > upper)
    throw Error(std::string(className) + ": " + what + " (" +
                std::to_string(lower) + ", " + std::to_string(upper) +
                ") must be ordered and in " + (lowClosed ? "[" : "(") +
                std::to_string(lo) + ", " + std::to_string(hi) + "]");
}

/// An affine augmentation: one transform per image in training.
class AffineAugmentationImpl : public AugmentationImpl {
protected:
  AffineAugmentationImpl(const char *className, ImageFill fill, uint64_t seed)
      : AugmentationImpl(className, seed), fill_(std::move(fill)) {
    checkFill(className, fill_);
  }

  /// The transforms [N, 8] of a training call on `x`.
  virtual Tensor transforms(const Tensor &x, const CallContext &ctx) const = 0;

  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &ctx) override {
    expectInputs(inputs, 1);
    const Tensor &x = inputs[0];
    if (!ctx.training || x.isSymbolic())
      return {x};
    ops::ImageTransformSpec spec;
    spec.interpolation = fill_.interpolation;
    spec.fillMode = fill_.fillMode;
    spec.fillValue = fill_.fillValue;
    return {ops::imageTransform(x, transforms(x, ctx), spec)};
  }

  /// uniform(lo, hi) per image, [N, 1].
  Tensor draw(const Tensor &x, const CallContext &ctx, double lo, double hi,
              const std::string &stream) const {
    return uniform({x.dim(0), 1}, x.dtype(), ctx, lo, hi, stream);
  }

  llvm::json::Object fillConfig() const {
    return llvm::json::Object{{"fill_mode", fill_.fillMode},
                              {"interpolation", fill_.interpolation},
                              {"fill_value", fill_.fillValue},
                              {"seed", seedConfig()},
                              {"data_format", "channels_last"}};
  }

  ImageFill fill_;
};

class RandomRotationImpl : public AffineAugmentationImpl {
public:
  RandomRotationImpl(double lower, double upper, ImageFill fill, uint64_t seed)
      : AffineAugmentationImpl("RandomRotation", std::move(fill), seed),
        lower_(lower), upper_(upper) {
    if (!std::isfinite(lower) || !std::isfinite(upper) || lower > upper ||
        lower < -1 || upper > 1)
      throw Error("RandomRotation: factor (" + std::to_string(lower) + ", " +
                  std::to_string(upper) + ") must be ordered and in [-1, 1]");
  }
  llvm::json::Object kerasConfig() const override {
    llvm::json::Object c = fillConfig();
    c["factor"] = pair(lower_, upper_);
    return c;
  }

protected:
  Tensor transforms(const Tensor &x, const CallContext &ctx) const override {
    return layers::rotationTransforms(draw(x, ctx, lower_, upper_, "angle"),
                                      x.dim(1), x.dim(2));
  }

private:
  double lower_, upper_;
};

class RandomZoomImpl : public AffineAugmentationImpl {
public:
  RandomZoomImpl(double heightLower, double heightUpper,
                 std::optional<std::pair<double, double>> width, ImageFill fill,
                 uint64_t seed)
      : AffineAugmentationImpl("RandomZoom", std::move(fill), seed),
        height_(heightLower, heightUpper), width_(width) {
    checkRange("RandomZoom", "height_factor", heightLower, heightUpper, -1, 1,
               /*lowClosed=*/false);
    if (width)
      checkRange("RandomZoom", "width_factor", width->first, width->second, -1,
                 1, /*lowClosed=*/false);
  }
  llvm::json::Object kerasConfig() const override {
    llvm::json::Object c = fillConfig();
    c["height_factor"] = pair(height_.first, height_.second);
    c["width_factor"] = width_ ? pair(width_->first, width_->second)
                               : llvm::json::Value(nullptr);
    return c;
  }

protected:
  Tensor transforms(const Tensor &x, const CallContext &ctx) const override {
    Tensor zy =
        draw(x, ctx, 1.0 + height_.first, 1.0 + height_.second, "height");
    Tensor zx = width_ ? draw(x, ctx, 1.0 + width_->first, 1.0 + width_->second,
                              "width")
                       : zy;
    return layers::zoomTransforms(zy, zx, x.dim(1), x.dim(2));
  }

private:
  std::pair<double, double> height_;
  std::optional<std::pair<double, double>> width_;
};

class RandomTranslationImpl : public AffineAugmentationImpl {
public:
  RandomTranslationImpl(double heightLower, double heightUpper,
                        double widthLower, double widthUpper, ImageFill fill,
                        uint64_t seed)
      : AffineAugmentationImpl("RandomTranslation", std::move(fill), seed),
        height_(heightLower, heightUpper), width_(widthLower, widthUpper) {
    checkRange("RandomTranslation", "height_factor", heightLower, heightUpper,
               -1, 1, /*lowClosed=*/true);
    checkRange("RandomTranslation", "width_factor", widthLower, widthUpper, -1,
               1, /*lowClosed=*/true);
  }
  llvm::json::Object kerasConfig() const override {
    llvm::json::Object c = fillConfig();
    c["height_factor"] = pair(height_.first, height_.second);
    c["width_factor"] = pair(width_.first, width_.second);
    return c;
  }

protected:
  Tensor transforms(const Tensor &x, const CallContext &ctx) const override {
    // Keras: a fraction of the size.
    DType dt = x.dtype();
    Tensor dy = ops::mul(draw(x, ctx, height_.first, height_.second, "height"),
                         ops::scalar(static_cast<double>(x.dim(1)), dt));
    Tensor dx = ops::mul(draw(x, ctx, width_.first, width_.second, "width"),
                         ops::scalar(static_cast<double>(x.dim(2)), dt));
    return layers::translationTransforms(dy, dx);
  }

private:
  std::pair<double, double> height_, width_;
};

class RandomShearImpl : public AffineAugmentationImpl {
public:
  RandomShearImpl(std::pair<double, double> x, std::pair<double, double> y,
                  ImageFill fill, uint64_t seed)
      : AffineAugmentationImpl("RandomShear", std::move(fill), seed), x_(x),
        y_(y) {
    checkRange("RandomShear", "x_factor", x.first, x.second, -1, 1,
               /*lowClosed=*/true);
    checkRange("RandomShear", "y_factor", y.first, y.second, -1, 1,
               /*lowClosed=*/true);
  }
  llvm::json::Object kerasConfig() const override {
    llvm::json::Object c = fillConfig();
    // (-f, f) as the number f: Keras's constructor refuses a pair with a
    // negative entry (though its own get_config writes one).
    auto factor = [](const std::pair<double, double> &f) {
      return f.first == -f.second ? llvm::json::Value(f.second)
                                  : pair(f.first, f.second);
    };
    c["x_factor"] = factor(x_);
    c["y_factor"] = factor(y_);
    return c;
  }

protected:
  Tensor transforms(const Tensor &x, const CallContext &ctx) const override {
    // Keras: one sign per image for both factors.
    DType dt = x.dtype();
    Tensor sign = ops::select(ops::compare(ops::CompareKind::GT,
                                           draw(x, ctx, 0, 1, "sign"),
                                           ops::scalar(0.5, dt)),
                              ops::scalar(-1, dt), ops::scalar(1, dt));
    return layers::shearTransforms(
        ops::mul(draw(x, ctx, x_.first, x_.second, "x"), sign),
        ops::mul(draw(x, ctx, y_.first, y_.second, "y"), sign));
  }

private:
  std::pair<double, double> x_, y_;
};

class RandomCropImpl : public AugmentationImpl {
public:
  RandomCropImpl(int64_t height, int64_t width, uint64_t seed)
      : AugmentationImpl("RandomCrop", seed), height_(height), width_(width) {
    if (height <= 0 || width <= 0 || height > (int64_t(1) << 24) ||
        width > (int64_t(1) << 24))
      throw Error("RandomCrop: height and width must be in [1, 2^24], got " +
                  std::to_string(height) + " x " + std::to_string(width));
  }
  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{{"height", height_},
                              {"width", width_},
                              {"seed", seedConfig()},
                              {"data_format", "channels_last"}};
  }

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &ctx) override {
    expectInputs(inputs, 1);
    const Tensor &x = inputs[0];
    // Keras's compute_output_shape for the model's graph; its inference
    // call returns the images as they are.
    if (x.isSymbolic())
      return {
          Tensor::symbolic({x.dim(0), height_, width_, x.dim(3)}, x.dtype())};
    if (!ctx.training)
      return {x};
    int64_t h = x.dim(1), w = x.dim(2);
    if (h <= height_ || w <= width_)
      return {deterministicCrop(x)};
    // One offset for the batch: int(uniform(0, size - crop + 1)).
    DType dt = x.dtype();
    auto offset = [&](int64_t slack, const char *stream) {
      Tensor u =
          uniform({1, 1}, dt, ctx, 0.0, static_cast<double>(slack + 1), stream);
      return ops::cast(ops::cast(u, DType::I64), dt);
    };
    Tensor top = offset(h - height_, "top"), left = offset(w - width_, "left");
    Tensor one = ops::full({1, 1}, 1.0, dt), zero = ops::full({1, 1}, 0.0, dt);
    Tensor t = ops::broadcastTo(
        ops::concat({one, zero, left, zero, one, top, zero, zero}, 1),
        {x.dim(0), 8});
    ops::ImageTransformSpec spec;
    spec.interpolation = "nearest";
    spec.outHeight = height_;
    spec.outWidth = width_;
    return {ops::imageTransform(x, t, spec)};
  }

private:
  /// Keras's training call where the input is not larger both ways: the
  /// offsets of the centred crop to the target's aspect ratio, but the slice
  /// from them is the target's size (clipped by the input), not the aspect
  /// crop's; what it gives is resized (bilinear, no aspect crop) when it is
  /// not the target's size.
  Tensor deterministicCrop(const Tensor &x) const {
    int64_t h = x.dim(1), w = x.dim(2);
    auto aspect = [](int64_t size, int64_t other, int64_t num, int64_t den) {
      int64_t crop = static_cast<int64_t>(static_cast<double>(other * num) /
                                          static_cast<double>(den));
      return std::max<int64_t>(std::min(size, crop), 1);
    };
    int64_t top = (h - aspect(h, w, height_, width_)) / 2;
    int64_t left = (w - aspect(w, h, width_, height_)) / 2;
    Tensor crop = ops::slice(x, {0, top, left, 0},
                             {x.dim(0), std::min(h, top + height_),
                              std::min(w, left + width_), x.dim(3)},
                             {1, 1, 1, 1});
    if (crop.dim(1) == height_ && crop.dim(2) == width_)
      return crop;
    return layers::resizeImages(crop, height_, width_, /*nearest=*/false,
                                /*crop=*/false);
  }

  int64_t height_, width_;
};

} // namespace

Tensor layers::rotationTransforms(const Tensor &turns, int64_t height,
                                  int64_t width) {
  DType dt = turns.dtype();
  auto c = [&](double v) { return ops::scalar(v, dt); };
  // cos and sin of 2 pi turns in one polynomial on [0, 1] turns: cos is
  // even (|turns|), sin(t) = cos(t - pi / 2), and |turns - 1/4| past one
  // turn is brought back by one (turns in [-1, 1]).
  Tensor shifted = ops::abs(ops::sub(turns, c(0.25)));
  shifted = ops::select(ops::compare(ops::CompareKind::GT, shifted, c(1.0)),
                        ops::sub(shifted, c(1.0)), shifted);
  Tensor cosSin =
      cosTwoPiSmall(fusionBarrier(ops::concat({ops::abs(turns), shifted}, 1)));
  double cx = 0.5 * static_cast<double>(width - 1);
  double cy = 0.5 * static_cast<double>(height - 1);
  // The matrix is linear in (cos, sin, 1): a0 = cos, a1 = -sin,
  // a2 = cx - cx cos + cy sin, b0 = sin, b1 = cos, b2 = cy - cx sin - cy cos.
  // One product keeps the step's graph small (a library call, where each
  // entry composed of its own elementwise ops would copy the polynomial).
  NDArray m = NDArray::fromVector({3, 8}, {1, 0,  -cx, 0, 1, -cy, 0, 0,  // cos
                                           0, -1, cy,  1, 0, -cx, 0, 0,  // sin
                                           0, 0,  cx,  0, 0, cy,  0, 0}, // 1
                                  dt);
  return ops::matmul(ops::concat({cosSin, column(turns, 1)}, 1), Tensor(m));
}

Tensor layers::zoomTransforms(const Tensor &heightZoom, const Tensor &widthZoom,
                              int64_t height, int64_t width) {
  DType dt = heightZoom.dtype();
  auto c = [&](double v) { return ops::scalar(v, dt); };
  // Offsets (size - 1) / 2 * (1 - zoom).
  auto offset = [&](int64_t size, const Tensor &z) {
    return ops::mul(c((static_cast<double>(size) - 1.0) / 2.0),
                    ops::sub(c(1.0), z));
  };
  Tensor zero = column(heightZoom, 0);
  return affine(widthZoom, zero, offset(width, widthZoom), zero, heightZoom,
                offset(height, heightZoom));
}

Tensor layers::translationTransforms(const Tensor &rows, const Tensor &cols) {
  Tensor one = column(rows, 1), zero = column(rows, 0);
  return affine(one, zero, ops::neg(cols), zero, one, ops::neg(rows));
}

Tensor layers::shearTransforms(const Tensor &x, const Tensor &y) {
  Tensor one = column(x, 1), zero = column(x, 0);
  return affine(one, x, zero, y, one, zero);
}

RandomShear::RandomShear(std::pair<double, double> xFactor,
                         std::pair<double, double> yFactor, ImageFill fill,
                         uint64_t seed)
    : Layer(std::make_shared<RandomShearImpl>(xFactor, yFactor, std::move(fill),
                                              seed)) {}

RandomRotation::RandomRotation(double lower, double upper, ImageFill fill,
                               uint64_t seed)
    : Layer(std::make_shared<RandomRotationImpl>(lower, upper, std::move(fill),
                                                 seed)) {}

RandomZoom::RandomZoom(double heightLower, double heightUpper,
                       std::optional<std::pair<double, double>> width,
                       ImageFill fill, uint64_t seed)
    : Layer(std::make_shared<RandomZoomImpl>(heightLower, heightUpper, width,
                                             std::move(fill), seed)) {}

RandomTranslation::RandomTranslation(double heightLower, double heightUpper,
                                     double widthLower, double widthUpper,
                                     ImageFill fill, uint64_t seed)
    : Layer(std::make_shared<RandomTranslationImpl>(heightLower, heightUpper,
                                                    widthLower, widthUpper,
                                                    std::move(fill), seed)) {}

RandomCrop::RandomCrop(int64_t height, int64_t width, uint64_t seed)
    : Layer(std::make_shared<RandomCropImpl>(height, width, seed)) {}
