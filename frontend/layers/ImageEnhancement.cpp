//===- ImageEnhancement.cpp - AutoContrast and RandomSharpness ------------===//
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
//                    sharpens it).
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

} // namespace

AutoContrast::AutoContrast(double low, double high)
    : Layer(std::make_shared<AutoContrastImpl>(low, high)) {}

RandomSharpness::RandomSharpness(double lower, double upper, double low,
                                 double high, uint64_t seed)
    : Layer(std::make_shared<RandomSharpnessImpl>("RandomSharpness", lower,
                                                  upper, low, high, seed)) {}
