//===- ImageEnhancement.cpp - AutoContrast, sharpness and blur ------------===//
//
// Keras's contrast and sharpness enhancements of NHWC images, as their
// transform_images computes them on JAX:
//
//  AutoContrast      each image's channels stretched to the value range:
//                    on the [0, 255] scale, (x - min) * 255 / (max - min),
//                    min and max per image and channel, clipped; a
//                    channel with max == min (Keras's NaN) is kept. Not
//                    random: applied at inference too, as Keras does;
//  RandomSharpness   x + (1 - 2 f) * (blur - x), f = uniform(lower, upper)
//                    per image, blur the depthwise 3x3 kernel [1 1 1; 1 5
//                    1; 1 1 1] / 13 with zero padding, clipped to the
//                    value range (f 0.5 keeps the image, 0 blurs it, 1
//                    sharpens it);
//  RandomGaussianBlur each image, with probability uniform(lower, upper),
//                    replaced by its blur with one Gaussian kernel for the
//                    batch: sigmas drawn for the width and the height,
//                    kernel_size (width, height) taps, zero padding; all
//                    clipped to the value range.
//
//===----------------------------------------------------------------------===//

#include "frontend/Layers.h"
#include "frontend/Ops.h"
#include "frontend/layers/AugmentationImpl.h"
#include "frontend/layers/ColorOps.h"

#include <cmath>

using namespace kcc;

namespace {

class AutoContrastImpl : public LayerImpl {
public:
  AutoContrastImpl(double low, double high)
      : LayerImpl("AutoContrast"), low_(low), high_(high) {
    if (!(std::isfinite(low) && std::isfinite(high) && low < high))
      throw Error("AutoContrast: value_range must be [low, high] with "
                  "low < high");
  }
  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{{"value_range", llvm::json::Array{low_, high_}},
                              {"data_format", "channels_last"}};
  }

protected:
  void build(const std::vector<Shape> &shapes) override {
    if (shapes.size() != 1 || shapes[0].size() != 4)
      fail("expects one batch of images [batch, height, width, channels], "
           "got " +
           (shapes.empty() ? std::string("none") : shapeString(shapes[0])));
  }

  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    expectInputs(inputs, 1);
    const Tensor &x = inputs[0];
    DType t = x.dtype();
    Tensor images = layers::toRange(x, low_, high_, 0, 255);
    Tensor lo = ops::neg(ops::reduceMax(ops::neg(images), {1, 2}, true));
    Tensor hi = ops::reduceMax(images, {1, 2}, true);
    Tensor range = ops::sub(hi, lo);
    // Keras divides by zero and keeps the image where that gave NaN; the
    // division by a safe range keeps the gradient of the kept pixels
    // finite too.
    Tensor spread =
        ops::compare(ops::CompareKind::GT, range, ops::scalar(0, t));
    Tensor scale = ops::div(ops::scalar(255, t),
                            ops::select(spread, range, ops::scalar(1, t)));
    Tensor offset = ops::mul(ops::neg(lo), scale);
    Tensor stretched =
        layers::clipTo(ops::add(ops::mul(images, scale), offset), 0, 255);
    return {ops::select(spread, layers::toRange(stretched, 0, 255, low_, high_),
                        x)};
  }

private:
  double low_, high_;
};

class RandomSharpnessImpl : public layers::RangedAugmentationImpl {
public:
  using RangedAugmentationImpl::RangedAugmentationImpl;

protected:
  Tensor augment(const Tensor &x, const CallContext &ctx) const override {
    DType t = x.dtype();
    int64_t channels = x.dim(3);
    Tensor twice =
        ops::mul(perImage(x, ctx, lower_, upper_), ops::scalar(2, t));
    std::vector<double> taps;
    for (int i = 0; i < 9; ++i)
      for (int64_t c = 0; c < channels; ++c)
        taps.push_back((i == 4 ? 5.0 : 1.0) / 13.0);
    Tensor kernel =
        ops::cast(Tensor(NDArray::fromVector({3, 3, 1, channels}, taps)), t);
    Tensor blur = ops::conv2d(x, kernel, {1, 1}, ops::Padding::Same, {1, 1},
                              /*groups=*/channels);
    Tensor sharpened = ops::add(
        x, ops::mul(ops::sub(ops::scalar(1, t), twice), ops::sub(blur, x)));
    return layers::clipTo(sharpened, low_, high_);
  }
};

/// Keras's _get_gaussian_kernel1d: exp(-(i - (size - 1) / 2)^2 / (2
/// sigma^2)) over `size` taps, normalized; `sigma` [1].
Tensor gaussianTaps(int64_t size, const Tensor &sigma) {
  DType t = sigma.dtype();
  std::vector<double> offsets;
  for (int64_t i = 0; i < size; ++i)
    offsets.push_back(static_cast<double>(i) - (size - 1) / 2.0);
  Tensor z = ops::div(
      ops::cast(Tensor(NDArray::fromVector({size}, offsets)), t), sigma);
  Tensor taps = ops::exp(ops::mul(ops::scalar(-0.5, t), ops::mul(z, z)));
  return ops::div(taps, ops::reduceSum(taps, {0}, /*keepdims=*/true));
}

class RandomGaussianBlurImpl : public layers::AugmentationImpl {
public:
  RandomGaussianBlurImpl(std::pair<double, double> factor,
                         std::pair<int64_t, int64_t> kernelSize,
                         std::pair<double, double> sigma, double low,
                         double high, uint64_t seed)
      : AugmentationImpl("RandomGaussianBlur", seed), factor_(factor),
        kernel_(kernelSize), sigma_(sigma), low_(low), high_(high) {
    auto bad = [](const std::string &m) {
      throw Error("RandomGaussianBlur: " + m);
    };
    if (!(factor.first >= 0 && factor.first <= factor.second &&
          factor.second <= 1))
      bad("factor must be an ordered pair in [0, 1]");
    if (!(sigma.first >= 0 && sigma.first <= sigma.second &&
          std::isfinite(sigma.second)))
      bad("sigma must be an ordered pair of finite numbers >= 0");
    for (int64_t k : {kernelSize.first, kernelSize.second})
      if (k <= 0 || k % 2 == 0 || k > (int64_t(1) << 20))
        bad("kernel_size must be odd and positive, got " + std::to_string(k));
    if (!(std::isfinite(low) && std::isfinite(high) && low < high))
      bad("value_range must be [low, high] with low < high");
  }
  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{
        {"factor", llvm::json::Array{factor_.first, factor_.second}},
        {"kernel_size", llvm::json::Array{kernel_.first, kernel_.second}},
        {"sigma", llvm::json::Array{sigma_.first, sigma_.second}},
        {"value_range", llvm::json::Array{low_, high_}},
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
    int64_t channels = x.dim(3);
    Tensor probability = perImage(x, ctx, factor_.first, factor_.second);
    Tensor threshold = uniform({x.dim(0), 1, 1, 1}, t, ctx, 0, 1, "threshold");
    Tensor apply = ops::compare(ops::CompareKind::LT, threshold, probability);
    // One pair of sigmas for the batch (width, height), as Keras draws.
    Tensor sigma =
        ops::add(uniform({2}, t, ctx, sigma_.first, sigma_.second, "sigma"),
                 ops::scalar(1e-6, t));
    int64_t kw = kernel_.first, kh = kernel_.second;
    Tensor across = gaussianTaps(kw, ops::slice(sigma, {0}, {1}, {1}));
    Tensor down = gaussianTaps(kh, ops::slice(sigma, {1}, {2}, {1}));
    Tensor kernel =
        ops::broadcastTo(ops::mul(ops::reshape(down, {kh, 1, 1, 1}),
                                  ops::reshape(across, {1, kw, 1, 1})),
                         {kh, kw, 1, channels});
    Tensor blurred = ops::conv2d(x, kernel, {1, 1}, ops::Padding::Same, {1, 1},
                                 /*groups=*/channels);
    return {layers::clipTo(ops::select(apply, blurred, x), low_, high_)};
  }

private:
  std::pair<double, double> factor_;
  std::pair<int64_t, int64_t> kernel_;
  std::pair<double, double> sigma_;
  double low_, high_;
};

} // namespace

RandomGaussianBlur::RandomGaussianBlur(std::pair<double, double> factor,
                                       std::pair<int64_t, int64_t> kernelSize,
                                       std::pair<double, double> sigma,
                                       double low, double high, uint64_t seed)
    : Layer(std::make_shared<RandomGaussianBlurImpl>(factor, kernelSize, sigma,
                                                     low, high, seed)) {}

AutoContrast::AutoContrast(double low, double high)
    : Layer(std::make_shared<AutoContrastImpl>(low, high)) {}

RandomSharpness::RandomSharpness(double lower, double upper, double low,
                                 double high, uint64_t seed)
    : Layer(std::make_shared<RandomSharpnessImpl>("RandomSharpness", lower,
                                                  upper, low, high, seed)) {}
