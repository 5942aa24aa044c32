//===- Augmentation.cpp - Keras's random photometric image layers --------===//
//
// Keras's augmentation layers: the identity at inference, random in
// training, with one draw per image as Keras makes it. The draws come from
// kc.random_uniform (a pure function of the seed, the step and the index,
// as Dropout's), so eager mode, the interpreter and compiled code agree;
// Keras's own random stream differs, so only the distributions match.
//
//  RandomFlip        each image flipped (uniform <= 0.5) along the width,
//                    the height, or both with the same draw;
//  RandomBrightness  + uniform(lower, upper) * (range high - low), clipped
//                    to the value range;
//  RandomContrast    (x - mean over the pixels) * uniform(1 - lower,
//                    1 + upper) + that mean, per channel, clipped;
//  RandomGrayscale   each RGB image (uniform < factor) replaced by its
//                    luma 0.2989 R + 0.587 G + 0.114 B in every channel;
//  RandomColorDegeneration
//                    x + f * (luma - x), f = uniform(lower, upper) per
//                    image, clipped to the value range;
//  RandomInvert      each image (uniform(0, 1) < uniform(lower, upper))
//                    replaced by high - x;
//  Solarization      on the [0, 255] scale, x + addition clipped, and
//                    255 - that where it is at or above the threshold
//                    (addition and threshold drawn per image; the
//                    default threshold 0 inverts every image).
//
//===----------------------------------------------------------------------===//

#include "frontend/Layers.h"
#include "frontend/Ops.h"
#include "frontend/layers/AugmentationImpl.h"
#include "frontend/layers/ImageAxes.h"

#include <cmath>

using namespace kcc;

namespace {

using layers::AugmentationImpl;

llvm::json::Value pair(double a, double b) { return llvm::json::Array{a, b}; }

/// A factor pair and the value range the result is clipped to.
class RangedAugmentationImpl : public AugmentationImpl {
public:
  RangedAugmentationImpl(const char *className, double lower, double upper,
                         double low, double high, uint64_t seed)
      : AugmentationImpl(className, seed), lower_(lower), upper_(upper),
        low_(low), high_(high) {
    for (double v : {lower, upper, low, high})
      if (!std::isfinite(v))
        throw Error(std::string(className) +
                    ": factor and value_range must be finite");
    if (lower > upper)
      throw Error(std::string(className) + ": factor's lower bound " +
                  std::to_string(lower) + " is above its upper bound " +
                  std::to_string(upper));
    if (!(low < high))
      throw Error(std::string(className) +
                  ": value_range must be [low, high] with low < high");
  }

  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{{"factor", pair(lower_, upper_)},
                              {"value_range", pair(low_, high_)},
                              {"seed", seedConfig()},
                              {"data_format", "channels_last"}};
  }

protected:
  /// The images in training; at inference they pass unchanged.
  virtual Tensor augment(const Tensor &x, const CallContext &ctx) const = 0;

  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &ctx) final {
    expectInputs(inputs, 1);
    return {ctx.training ? augment(inputs[0], ctx) : inputs[0]};
  }

  Tensor clipToRange(const Tensor &x) const {
    return ops::minimum(ops::maximum(x, ops::scalar(low_, x.dtype())),
                        ops::scalar(high_, x.dtype()));
  }
  double lower_, upper_, low_, high_;
};

class RandomFlipImpl : public AugmentationImpl {
public:
  RandomFlipImpl(std::string mode, uint64_t seed)
      : AugmentationImpl("RandomFlip", seed), mode_(std::move(mode)) {
    if (mode_ != "horizontal" && mode_ != "vertical" &&
        mode_ != "horizontal_and_vertical")
      throw Error("RandomFlip: mode '" + mode_ +
                  "' is not one of horizontal, vertical, "
                  "horizontal_and_vertical");
  }
  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{{"mode", mode_},
                              {"seed", seedConfig()},
                              {"data_format", "channels_last"}};
  }

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &ctx) override {
    expectInputs(inputs, 1);
    Tensor x = inputs[0];
    if (!ctx.training)
      return {x};
    Tensor flips = ops::broadcastTo(ops::compare(ops::CompareKind::LE,
                                                 perImage(x, ctx, 0.0, 1.0),
                                                 ops::scalar(0.5, x.dtype())),
                                    x.shape());
    // Keras flips the width first, then the height, with the same draw.
    for (int64_t axis : {2, 1}) {
      bool flipped = axis == 2 ? mode_ != "vertical" : mode_ != "horizontal";
      if (flipped)
        x = ops::select(
            flips,
            layers::mapImageAxis(
                x, axis, layers::reversalMatrix(x.dim(axis), x.dtype())),
            x);
    }
    return {x};
  }

private:
  std::string mode_;
};

class RandomBrightnessImpl : public RangedAugmentationImpl {
public:
  using RangedAugmentationImpl::RangedAugmentationImpl;

protected:
  Tensor augment(const Tensor &x, const CallContext &ctx) const override {
    Tensor delta = ops::mul(perImage(x, ctx, lower_, upper_),
                            ops::scalar(high_ - low_, x.dtype()));
    return clipToRange(ops::add(x, delta));
  }
};

class RandomContrastImpl : public RangedAugmentationImpl {
public:
  using RangedAugmentationImpl::RangedAugmentationImpl;

protected:
  Tensor augment(const Tensor &x, const CallContext &ctx) const override {
    Tensor factor = perImage(x, ctx, 1.0 - lower_, 1.0 + upper_);
    // Keras's two means: over the height, then over the width.
    Tensor mean = ops::reduceMean(ops::reduceMean(x, {1}, /*keepdims=*/true),
                                  {2}, /*keepdims=*/true);
    return clipToRange(ops::add(ops::mul(ops::sub(x, mean), factor), mean));
  }
};

/// tf.image.rgb_to_grayscale's luma of NHWC RGB images, [N, H, W, 1].
Tensor luma(const Tensor &x) {
  Tensor weights = ops::cast(
      Tensor(NDArray::fromVector({3, 1}, {0.2989, 0.5870, 0.1140})), x.dtype());
  int64_t pixels = x.dim(0) * x.dim(1) * x.dim(2);
  return ops::reshape(ops::matmul(ops::reshape(x, {pixels, 3}), weights),
                      {x.dim(0), x.dim(1), x.dim(2), 1});
}

class RandomGrayscaleImpl : public AugmentationImpl {
public:
  RandomGrayscaleImpl(double factor, uint64_t seed)
      : AugmentationImpl("RandomGrayscale", seed), factor_(factor) {
    if (!(factor >= 0 && factor <= 1))
      throw Error("RandomGrayscale: factor must be in [0, 1], got " +
                  std::to_string(factor));
  }
  // Keras's get_config writes no seed.
  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{{"factor", factor_},
                              {"data_format", "channels_last"}};
  }

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &ctx) override {
    expectInputs(inputs, 1);
    const Tensor &x = inputs[0];
    int64_t channels = x.dim(3);
    if (channels != 1 && channels != 3)
      fail("expects 1 or 3 channels (RGB), got " + x.shapeString());
    if (!ctx.training || channels == 1)
      return {x};
    Tensor gray = luma(x);
    Tensor apply = ops::compare(ops::CompareKind::LT, perImage(x, ctx, 0, 1),
                                ops::scalar(factor_, x.dtype()));
    return {ops::select(ops::broadcastTo(apply, x.shape()),
                        ops::broadcastTo(gray, x.shape()), x)};
  }

private:
  double factor_;
};

class RandomColorDegenerationImpl : public RangedAugmentationImpl {
public:
  using RangedAugmentationImpl::RangedAugmentationImpl;

protected:
  void build(const std::vector<Shape> &shapes) override {
    RangedAugmentationImpl::build(shapes);
    int64_t channels = shapes[0][3];
    if (channels != 1 && channels != 3)
      fail("expects 1 or 3 channels (RGB), got " + shapeString(shapes[0]));
  }

  Tensor augment(const Tensor &x, const CallContext &ctx) const override {
    int64_t channels = x.dim(3);
    // Keras: x + factor * (grayscale - x), one factor per image (a
    // negative one moves away from gray), clipped; a one-channel image is
    // its own grayscale.
    Tensor gray = channels == 1 ? x : luma(x);
    Tensor factor = perImage(x, ctx, lower_, upper_);
    return clipToRange(ops::add(x, ops::mul(factor, ops::sub(gray, x))));
  }
};

class RandomInvertImpl : public RangedAugmentationImpl {
public:
  using RangedAugmentationImpl::RangedAugmentationImpl;

protected:
  Tensor augment(const Tensor &x, const CallContext &ctx) const override {
    // Keras draws the probability and a threshold per image (so factor
    // 1.0, (-1, 1), inverts a quarter of the images).
    Shape perImageShape{x.dim(0), 1, 1, 1};
    Tensor probability = perImage(x, ctx, lower_, upper_);
    Tensor threshold =
        uniform(perImageShape, x.dtype(), ctx, 0.0, 1.0, "threshold");
    Tensor apply = ops::compare(ops::CompareKind::LT, threshold, probability);
    return ops::select(ops::broadcastTo(apply, x.shape()),
                       ops::sub(ops::scalar(high_, x.dtype()), x), x);
  }
};

class SolarizationImpl : public AugmentationImpl {
public:
  SolarizationImpl(std::pair<double, double> addition,
                   std::pair<double, double> threshold, double low, double high,
                   uint64_t seed)
      : AugmentationImpl("Solarization", seed), addition_(addition),
        threshold_(threshold), low_(low), high_(high) {
    for (auto [lo, hi] : {addition, threshold})
      if (!(lo >= 0 && lo <= hi && hi <= 1))
        throw Error("Solarization: addition_factor and threshold_factor "
                    "must be sorted pairs in [0, 1]");
    if (!(std::isfinite(low) && std::isfinite(high) && low < high))
      throw Error("Solarization: value_range must be [low, high] with "
                  "low < high");
  }
  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{
        {"value_range", pair(low_, high_)},
        {"addition_factor", pair(addition_.first, addition_.second)},
        {"threshold_factor", pair(threshold_.first, threshold_.second)},
        {"seed", seedConfig()},
        {"data_format", "channels_last"}};
  }

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &ctx) override {
    expectInputs(inputs, 1);
    const Tensor &x = inputs[0];
    if (!ctx.training)
      return {x};
    DType t = x.dtype();
    Shape perImageShape{x.dim(0), 1, 1, 1};
    // Keras draws from factor[0] to factor[1] * 255 (the lower bound is
    // not scaled).
    Tensor addition = uniform(perImageShape, t, ctx, addition_.first,
                              addition_.second * 255, "addition");
    Tensor threshold = uniform(perImageShape, t, ctx, threshold_.first,
                               threshold_.second * 255, "threshold");
    Tensor scaled = toRange(x, low_, high_, 0, 255);
    Tensor r = ops::minimum(
        ops::maximum(ops::add(scaled, addition), ops::scalar(0, t)),
        ops::scalar(255, t));
    Tensor solarized =
        ops::select(ops::compare(ops::CompareKind::LT, r, threshold), r,
                    ops::sub(ops::scalar(255, t), r));
    return {toRange(solarized, 0, 255, low_, high_)};
  }

private:
  /// Keras's _transform_value_range: the identity between equal ranges.
  static Tensor toRange(const Tensor &x, double fromLow, double fromHigh,
                        double toLow, double toHigh) {
    if (fromLow == toLow && fromHigh == toHigh)
      return x;
    DType t = x.dtype();
    Tensor unit = ops::div(ops::sub(x, ops::scalar(fromLow, t)),
                           ops::scalar(fromHigh - fromLow, t));
    return ops::add(ops::mul(unit, ops::scalar(toHigh - toLow, t)),
                    ops::scalar(toLow, t));
  }

  std::pair<double, double> addition_, threshold_;
  double low_, high_;
};

} // namespace

Solarization::Solarization(std::pair<double, double> additionFactor,
                           std::pair<double, double> thresholdFactor,
                           double low, double high, uint64_t seed)
    : Layer(std::make_shared<SolarizationImpl>(additionFactor, thresholdFactor,
                                               low, high, seed)) {}

RandomGrayscale::RandomGrayscale(double factor, uint64_t seed)
    : Layer(std::make_shared<RandomGrayscaleImpl>(factor, seed)) {}

RandomColorDegeneration::RandomColorDegeneration(double lower, double upper,
                                                 double low, double high,
                                                 uint64_t seed)
    : Layer(std::make_shared<RandomColorDegenerationImpl>(
          "RandomColorDegeneration", lower, upper, low, high, seed)) {}

RandomInvert::RandomInvert(double lower, double upper, double low, double high,
                           uint64_t seed)
    : Layer(std::make_shared<RandomInvertImpl>("RandomInvert", lower, upper,
                                               low, high, seed)) {}

RandomFlip::RandomFlip(std::string mode, uint64_t seed)
    : Layer(std::make_shared<RandomFlipImpl>(std::move(mode), seed)) {}

RandomBrightness::RandomBrightness(double lower, double upper, double low,
                                   double high, uint64_t seed)
    : Layer(std::make_shared<RandomBrightnessImpl>("RandomBrightness", lower,
                                                   upper, low, high, seed)) {}

RandomContrast::RandomContrast(double lower, double upper, double low,
                               double high, uint64_t seed)
    : Layer(std::make_shared<RandomContrastImpl>("RandomContrast", lower, upper,
                                                 low, high, seed)) {}
