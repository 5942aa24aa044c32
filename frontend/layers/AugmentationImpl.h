//===- AugmentationImpl.h - Base of Keras's random image layers -*- C++ -*-===//
//
// The identity at inference, random in training: one NHWC batch, draws
// from kc.random_uniform (a pure function of the seed, the step and the
// index), so eager mode, the interpreter and compiled code agree.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_LAYERS_AUGMENTATIONIMPL_H
#define KCC_FRONTEND_LAYERS_AUGMENTATIONIMPL_H

#include "frontend/Initializers.h"
#include "frontend/Layer.h"
#include "frontend/Ops.h"

#include <cmath>
#include <string>

namespace kcc {
namespace layers {

/// One NHWC image batch; a draw per image in training.
class AugmentationImpl : public LayerImpl {
public:
  bool usesRandomness() const override { return true; }
  bool trainingDiffers() const override { return true; }

protected:
  AugmentationImpl(const char *className, uint64_t seed)
      : LayerImpl(className), userSeed_(seed) {}

  void build(const std::vector<Shape> &shapes) override {
    if (shapes.size() != 1 || shapes[0].size() != 4)
      fail("expects one batch of images [batch, height, width, channels], "
           "got " +
           (shapes.empty() ? std::string("none") : shapeString(shapes[0])));
  }

  /// uniform [lo, hi) per image: [batch, 1, 1, 1].
  Tensor perImage(const Tensor &x, const CallContext &ctx, double lo,
                  double hi) const {
    return uniform({x.dim(0), 1, 1, 1}, x.dtype(), ctx, lo, hi);
  }

  /// uniform [lo, hi) of `shape`; each `stream` an independent one.
  Tensor uniform(const Shape &shape, DType dtype, const CallContext &ctx,
                 double lo, double hi, const std::string &stream = "") const {
    Tensor u = ops::randomUniform(shape, streamSeed(stream), ctx.step, dtype);
    if (lo == 0.0 && hi == 1.0)
      return u;
    return ops::add(ops::mul(u, ops::scalar(hi - lo, dtype)),
                    ops::scalar(lo, dtype));
  }

  /// Standard normal draws of `shape` from stream `stream`.
  Tensor normal(const Shape &shape, DType dtype, const CallContext &ctx,
                const std::string &stream) const {
    return ops::randomNormal(shape, streamSeed(stream), ctx.step, dtype);
  }

  uint64_t streamSeed(const std::string &stream) const {
    uint64_t seed =
        userSeed_ ? userSeed_
                  : init::deriveSeed(this->seed(), name() + "/augmentation");
    return stream.empty() ? seed : init::deriveSeed(seed, stream);
  }

  llvm::json::Value seedConfig() const {
    return userSeed_ ? llvm::json::Value(static_cast<int64_t>(userSeed_))
                     : llvm::json::Value(nullptr);
  }

  uint64_t userSeed_;
};

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
    return llvm::json::Object{{"factor", llvm::json::Array{lower_, upper_}},
                              {"value_range", llvm::json::Array{low_, high_}},
                              {"seed", seedConfig()},
                              {"data_format", "channels_last"}};
  }

protected:
  /// The images in training; at inference they pass unchanged.
  virtual Tensor augment(const Tensor &x, const CallContext &ctx) const = 0;

  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &ctx) override {
    expectInputs(inputs, 1);
    return {ctx.training ? augment(inputs[0], ctx) : inputs[0]};
  }

  double lower_, upper_, low_, high_;
};

} // namespace layers
} // namespace kcc

#endif // KCC_FRONTEND_LAYERS_AUGMENTATIONIMPL_H
