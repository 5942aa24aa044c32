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
    uint64_t seed =
        userSeed_ ? userSeed_
                  : init::deriveSeed(this->seed(), name() + "/augmentation");
    if (!stream.empty())
      seed = init::deriveSeed(seed, stream);
    Tensor u = ops::randomUniform(shape, seed, ctx.step, dtype);
    if (lo == 0.0 && hi == 1.0)
      return u;
    return ops::add(ops::mul(u, ops::scalar(hi - lo, dtype)),
                    ops::scalar(lo, dtype));
  }

  llvm::json::Value seedConfig() const {
    return userSeed_ ? llvm::json::Value(static_cast<int64_t>(userSeed_))
                     : llvm::json::Value(nullptr);
  }

  uint64_t userSeed_;
};

} // namespace layers
} // namespace kcc

#endif // KCC_FRONTEND_LAYERS_AUGMENTATIONIMPL_H
