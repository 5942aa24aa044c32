//===- Applications.cpp - The layers keras.applications defines ----------===//
//
// ConvNeXt's LayerScale (x times a learned per-channel gamma, initialized to
// a constant) and StochasticDepth (a residual branch dropped per example in
// training, the kept ones scaled by 1 / keep, as Keras computes it: x /
// keep * floor(keep + u)).
//
//===----------------------------------------------------------------------===//

#include "frontend/Initializers.h"
#include "frontend/Layers.h"
#include "frontend/Ops.h"

#include <cmath>
#include <cstdio>

using namespace kcc;

namespace {

class LayerScaleImpl : public LayerImpl {
public:
  LayerScaleImpl(double initValues, int64_t projectionDim)
      : LayerImpl("LayerScale"), initValues_(initValues),
        projectionDim_(projectionDim) {
    if (!std::isfinite(initValues))
      throw Error("LayerScale: init_values must be finite");
    if (projectionDim <= 0)
      throw Error("LayerScale: projection_dim must be positive, got " +
                  std::to_string(projectionDim));
  }
  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{{"init_values", initValues_},
                              {"projection_dim", projectionDim_}};
  }

protected:
  void build(const std::vector<Shape> &shapes) override {
    if (shapes.size() != 1 || shapes[0].empty() ||
        shapes[0].back() != projectionDim_)
      fail("expects one input whose last axis is projection_dim (" +
           std::to_string(projectionDim_) + "), got " +
           (shapes.empty() ? std::string("none") : shapeString(shapes[0])));
    // Keras's init: Constant(init_values).
    char exact[64];
    std::snprintf(exact, sizeof(exact), "constant(value=%.17g)", initValues_);
    addWeight("gamma", {projectionDim_}, exact);
  }
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    expectInputs(inputs, 1);
    return {ops::mul(inputs[0], weight(0))};
  }

private:
  double initValues_;
  int64_t projectionDim_;
};

class StochasticDepthImpl : public LayerImpl {
public:
  explicit StochasticDepthImpl(double rate)
      : LayerImpl("StochasticDepth"), rate_(rate) {
    if (!(rate >= 0 && rate < 1))
      throw Error("StochasticDepth: drop_path_rate must be in [0, 1), got " +
                  std::to_string(rate));
  }
  bool usesRandomness() const override { return rate_ > 0; }
  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{{"drop_path_rate", rate_}};
  }

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &ctx) override {
    expectInputs(inputs, 1);
    const Tensor &x = inputs[0];
    if (!ctx.training || rate_ == 0)
      return {x};
    DType dt = x.dtype();
    Shape perExample(x.rank(), 1);
    perExample[0] = x.dim(0);
    Tensor u = ops::randomUniform(
        perExample, init::deriveSeed(seed(), name() + "/stochastic_depth"),
        ctx.step, dt);
    // floor(keep + u) is 1 exactly when u >= 1 - keep = rate.
    Tensor kept = ops::compare(ops::CompareKind::GE, u, ops::scalar(rate_, dt));
    Tensor scaled = ops::div(x, ops::scalar(1 - rate_, dt));
    return {ops::select(kept, scaled, ops::scalar(0.0, dt))};
  }

private:
  double rate_;
};

} // namespace

LayerScale::LayerScale(double initValues, int64_t projectionDim)
    : Layer(std::make_shared<LayerScaleImpl>(initValues, projectionDim)) {}

StochasticDepth::StochasticDepth(double dropPathRate)
    : Layer(std::make_shared<StochasticDepthImpl>(dropPathRate)) {}
