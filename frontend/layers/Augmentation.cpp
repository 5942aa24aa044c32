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
//  RandomSaturation  the HSV saturation times f / (1 - f + 1e-7), f =
//                    uniform(lower, upper) per image, clipped to the value
//                    range (Keras's own bound, on the saturation, not
//                    rescaled), and back to RGB;
//  RandomHue         on the [0, 1] scale, the HSV hue moved by
//                    +-uniform(lower, upper) / 2 (sign drawn per image),
//                    wrapped, back to RGB and clipped;
//  RandomColorJitter RandomBrightness, RandomContrast, RandomSaturation
//                    and RandomHue in that order, each whose factor is
//                    given, on one value range;
//  RandomPosterization
//                    on the [0, 255] scale, each image's values keep their
//                    top `bits` bits, bits drawn per image;
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
#include "frontend/layers/ColorOps.h"
#include "frontend/layers/ImageAxes.h"

#include <cmath>

using namespace kcc;

namespace {

using layers::AugmentationImpl;
using layers::RangedAugmentationImpl;

llvm::json::Value pair(double a, double b) { return llvm::json::Array{a, b}; }

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
    return layers::adjustBrightness(x, perImage(x, ctx, lower_, upper_), low_,
                                    high_);
  }
};

class RandomContrastImpl : public RangedAugmentationImpl {
public:
  using RangedAugmentationImpl::RangedAugmentationImpl;

protected:
  Tensor augment(const Tensor &x, const CallContext &ctx) const override {
    return layers::adjustContrast(
        x, perImage(x, ctx, 1.0 - lower_, 1.0 + upper_), low_, high_);
  }
};

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
    Tensor gray = layers::luma(x);
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
    Tensor gray = channels == 1 ? x : layers::luma(x);
    Tensor factor = perImage(x, ctx, lower_, upper_);
    return layers::clipTo(ops::add(x, ops::mul(factor, ops::sub(gray, x))),
                          low_, high_);
  }
};

/// HSV needs RGB.
class RgbAugmentationImpl : public RangedAugmentationImpl {
public:
  using RangedAugmentationImpl::RangedAugmentationImpl;

protected:
  void build(const std::vector<Shape> &shapes) override {
    RangedAugmentationImpl::build(shapes);
    if (shapes[0][3] != 3)
      fail("expects 3 channels (RGB), got " + shapeString(shapes[0]));
  }
};

/// RandomHue's shift: half of the draw f, negated where the draw u is
/// above 0.5.
Tensor hueShift(const Tensor &u, const Tensor &f) {
  DType t = f.dtype();
  Tensor sign =
      ops::select(ops::compare(ops::CompareKind::GT, u, ops::scalar(0.5, t)),
                  ops::scalar(-1, t), ops::scalar(1, t));
  return ops::mul(ops::mul(sign, f), ops::scalar(0.5, t));
}

class RandomSaturationImpl : public RgbAugmentationImpl {
public:
  using RgbAugmentationImpl::RgbAugmentationImpl;

protected:
  Tensor augment(const Tensor &x, const CallContext &ctx) const override {
    return layers::adjustSaturation(x, perImage(x, ctx, lower_, upper_), low_,
                                    high_);
  }
};

class RandomHueImpl : public RgbAugmentationImpl {
public:
  using RgbAugmentationImpl::RgbAugmentationImpl;

protected:
  Tensor augment(const Tensor &x, const CallContext &ctx) const override {
    Tensor u = uniform({x.dim(0), 1, 1, 1}, x.dtype(), ctx, 0, 1, "sign");
    return layers::shiftHue(x, hueShift(u, perImage(x, ctx, lower_, upper_)),
                            low_, high_);
  }
};

class RandomColorJitterImpl : public AugmentationImpl {
public:
  RandomColorJitterImpl(ColorJitterFactors factors, double low, double high,
                        uint64_t seed)
      : AugmentationImpl("RandomColorJitter", seed), factors_(factors),
        low_(low), high_(high) {
    for (const auto &f : {factors.brightness, factors.contrast,
                          factors.saturation, factors.hue})
      if (f && !(std::isfinite(f->first) && std::isfinite(f->second) &&
                 f->first <= f->second))
        throw Error("RandomColorJitter: each factor must be a finite "
                    "[lower, upper] with lower <= upper");
    if (!(std::isfinite(low) && std::isfinite(high) && low < high))
      throw Error("RandomColorJitter: value_range must be [low, high] with "
                  "low < high");
  }
  llvm::json::Object kerasConfig() const override {
    auto factor = [](const std::optional<std::pair<double, double>> &f) {
      return f ? pair(f->first, f->second) : llvm::json::Value(nullptr);
    };
    return llvm::json::Object{
        {"value_range", pair(low_, high_)},
        {"brightness_factor", factor(factors_.brightness)},
        {"contrast_factor", factor(factors_.contrast)},
        {"saturation_factor", factor(factors_.saturation)},
        {"hue_factor", factor(factors_.hue)},
        {"seed", seedConfig()},
        {"data_format", "channels_last"}};
  }

protected:
  void build(const std::vector<Shape> &shapes) override {
    AugmentationImpl::build(shapes);
    if ((factors_.saturation || factors_.hue) && shapes[0][3] != 3)
      fail("expects 3 channels (RGB) for saturation_factor or hue_factor, "
           "got " +
           shapeString(shapes[0]));
  }

  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &ctx) override {
    expectInputs(inputs, 1);
    Tensor x = inputs[0];
    if (!ctx.training)
      return {x};
    // Keras's order, each part's own draw.
    auto draw = [&](double lo, double hi, const char *stream) {
      return uniform({x.dim(0), 1, 1, 1}, x.dtype(), ctx, lo, hi, stream);
    };
    if (const auto &f = factors_.brightness)
      x = layers::adjustBrightness(x, draw(f->first, f->second, "brightness"),
                                   low_, high_);
    if (const auto &f = factors_.contrast)
      x = layers::adjustContrast(
          x, draw(1 - f->first, 1 + f->second, "contrast"), low_, high_);
    if (const auto &f = factors_.saturation)
      x = layers::adjustSaturation(x, draw(f->first, f->second, "saturation"),
                                   low_, high_);
    if (const auto &f = factors_.hue)
      x = layers::shiftHue(
          x, hueShift(draw(0, 1, "hue_sign"), draw(f->first, f->second, "hue")),
          low_, high_);
    return {x};
  }

private:
  ColorJitterFactors factors_;
  double low_, high_;
};

class RandomPosterizationImpl : public AugmentationImpl {
public:
  RandomPosterizationImpl(int64_t lower, int64_t upper, double low, double high,
                          uint64_t seed)
      : AugmentationImpl("RandomPosterization", seed), lower_(lower),
        upper_(upper), low_(low), high_(high) {
    if (!(1 <= lower && lower <= upper && upper <= 8))
      throw Error("RandomPosterization: factor must be an ordered pair of "
                  "bit counts in [1, 8], got (" +
                  std::to_string(lower) + ", " + std::to_string(upper) + ")");
    if (!(std::isfinite(low) && std::isfinite(high) && low < high))
      throw Error("RandomPosterization: value_range must be [low, high] "
                  "with low < high");
  }
  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{{"factor", llvm::json::Array{lower_, upper_}},
                              {"value_range", pair(low_, high_)},
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
    auto floorOf = [&](const Tensor &v) { // v >= 0
      return ops::cast(ops::cast(v, DType::I32), t);
    };
    // Keras: randint(lower, upper) bits (upper excluded) unless they are
    // equal; the values keep their top bits: floor(x / 2^(8 - bits)).
    Tensor bits = ops::scalar(static_cast<double>(lower_), t);
    if (lower_ != upper_)
      bits = ops::add(
          floorOf(perImage(x, ctx, 0.0, static_cast<double>(upper_ - lower_))),
          ops::scalar(static_cast<double>(lower_), t));
    Tensor shift = ops::sub(ops::scalar(8, t), bits);
    Tensor step = ops::scalar(1, t);
    for (int k = 1; k < 8; ++k)
      step = ops::select(
          ops::compare(ops::CompareKind::EQ, shift, ops::scalar(k, t)),
          ops::scalar(std::ldexp(1.0, k), t), step);
    // On the [0, 255] scale, as Keras's uint8 cast (values outside the
    // range clamp here; Keras leaves them to its backend's cast).
    Tensor bytes =
        layers::clipTo(layers::toRange(x, low_, high_, 0, 255), 0, 255);
    Tensor kept = ops::mul(floorOf(ops::div(floorOf(bytes), step)), step);
    return {layers::toRange(kept, 0, 255, low_, high_)};
  }

private:
  int64_t lower_, upper_;
  double low_, high_;
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
    Tensor scaled = layers::toRange(x, low_, high_, 0, 255);
    Tensor r = ops::minimum(
        ops::maximum(ops::add(scaled, addition), ops::scalar(0, t)),
        ops::scalar(255, t));
    Tensor solarized =
        ops::select(ops::compare(ops::CompareKind::LT, r, threshold), r,
                    ops::sub(ops::scalar(255, t), r));
    return {layers::toRange(solarized, 0, 255, low_, high_)};
  }

private:
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

RandomSaturation::RandomSaturation(double lower, double upper, double low,
                                   double high, uint64_t seed)
    : Layer(std::make_shared<RandomSaturationImpl>("RandomSaturation", lower,
                                                   upper, low, high, seed)) {}

RandomHue::RandomHue(double lower, double upper, double low, double high,
                     uint64_t seed)
    : Layer(std::make_shared<RandomHueImpl>("RandomHue", lower, upper, low,
                                            high, seed)) {}

RandomColorJitter::RandomColorJitter(ColorJitterFactors factors, double low,
                                     double high, uint64_t seed)
    : Layer(std::make_shared<RandomColorJitterImpl>(factors, low, high, seed)) {
}

RandomPosterization::RandomPosterization(int64_t lower, int64_t upper,
                                         double low, double high, uint64_t seed)
    : Layer(std::make_shared<RandomPosterizationImpl>(lower, upper, low, high,
                                                      seed)) {}

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
