//===- Regularization.cpp - Dropout and the noise layers ------------------===//
//
// Dropout draws its mask from kc.random_uniform, a pure function of (seed,
// step counter, element index): eager mode, the interpreter and compiled
// code produce the same mask for the same step, and a traced train step
// needs no random state besides the step argument.
//
//===----------------------------------------------------------------------===//

#include "frontend/Initializers.h"
#include "frontend/Layers.h"
#include "frontend/Ops.h"

#include <cmath>

using namespace kcc;

namespace {

/// Dropout, and the spatial dropouts: the same mask over every step
/// (SpatialDropout1D, [batch, 1, channels]), pixel (SpatialDropout2D,
/// [batch, 1, 1, channels]) or voxel (SpatialDropout3D), as Keras's
/// noise_shape; Dropout takes any
/// noise shape (-1: the input's dim, Keras's None).
class DropoutImpl : public LayerImpl {
public:
  DropoutImpl(const char *className, double rate, uint64_t seed,
              int spatialDims, std::vector<int64_t> noiseShape = {})
      : LayerImpl(className), rate_(rate), userSeed_(seed),
        spatialDims_(spatialDims), noiseShape_(std::move(noiseShape)) {
    if (!(rate >= 0.0 && rate < 1.0))
      throw Error(std::string(className) + ": rate must be in [0, 1), got " +
                  std::to_string(rate));
    for (int64_t d : noiseShape_)
      if (d < -1 || d == 0)
        throw Error(std::string(className) +
                    ": noise_shape entries must be positive or None");
  }

  bool usesRandomness() const override { return rate_ > 0.0; }
  llvm::json::Object kerasConfig() const override {
    llvm::json::Object c{{"rate", rate_}};
    if (!spatialDims_ && noiseShape_.empty())
      c["noise_shape"] = nullptr;
    if (!noiseShape_.empty()) {
      llvm::json::Array dims;
      for (int64_t d : noiseShape_)
        dims.push_back(d < 0 ? llvm::json::Value(nullptr)
                             : llvm::json::Value(d));
      c["noise_shape"] = std::move(dims);
    }
    // Keras's seed=None is kcc's 0 (a stream derived from the model's seed).
    c["seed"] = userSeed_ ? llvm::json::Value(static_cast<int64_t>(userSeed_))
                          : llvm::json::Value(nullptr);
    return c;
  }

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &ctx) override {
    expectInputs(inputs, 1);
    const Tensor &x = inputs[0];
    Shape noise = x.shape();
    if (spatialDims_) {
      if (x.rank() != spatialDims_ + 2)
        fail("expects an input of rank " + std::to_string(spatialDims_ + 2) +
             " ([batch, " +
             (spatialDims_ == 1   ? "steps"
              : spatialDims_ == 2 ? "rows, columns"
                                  : "depth, rows, columns") +
             ", channels]), got " + x.shapeString());
      for (int d = 1; d <= spatialDims_; ++d)
        noise[d] = 1;
    }
    if (!noiseShape_.empty()) {
      if (static_cast<int64_t>(noiseShape_.size()) != x.rank())
        fail("noise_shape " + shapeToString(noiseShape_) +
             " does not match the input " + x.shapeString());
      for (int64_t d = 0; d < x.rank(); ++d) {
        int64_t n = noiseShape_[d] < 0 ? x.dim(d) : noiseShape_[d];
        if (n != 1 && n != x.dim(d))
          fail("noise_shape " + shapeToString(noiseShape_) +
               " does not broadcast to the input " + x.shapeString());
        noise[d] = n;
      }
    }
    if (!ctx.training || rate_ == 0.0)
      return {x};
    // Without an explicit seed, each Dropout gets its own stream from the
    // model's seed and the layer's name.
    uint64_t seed = userSeed_
                        ? userSeed_
                        : init::deriveSeed(this->seed(), name() + "/dropout");
    Tensor u = ops::randomUniform(noise, seed, ctx.step, x.dtype());
    Tensor keep =
        ops::compare(ops::CompareKind::GE, u, ops::scalar(rate_, x.dtype()));
    Tensor scaled = ops::mul(x, ops::scalar(1.0 / (1.0 - rate_), x.dtype()));
    return {ops::select(keep, scaled, ops::scalar(0.0, x.dtype()))};
  }

private:
  double rate_;
  uint64_t userSeed_;
  int spatialDims_;
  std::vector<int64_t> noiseShape_;
};

/// The base layer's activity regularizer does the work; the saved config
/// holds l1 and l2 in its place, as Keras's get_config() writes them.
class ActivityRegularizationImpl : public LayerImpl {
public:
  ActivityRegularizationImpl(double l1, double l2)
      : LayerImpl("ActivityRegularization"), l1_(l1), l2_(l2) {
    setActivityRegularizer(Regularizer::L1L2(l1, l2));
  }
  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{{"l1", l1_}, {"l2", l2_}};
  }
  bool savesActivityRegularizer() const override { return false; }

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    expectInputs(inputs, 1);
    return {inputs[0]};
  }

private:
  double l1_, l2_;
};

/// GaussianNoise (x + N(0, stddev)), GaussianDropout (x * N(1,
/// sqrt(rate / (1 - rate)))) and AlphaDropout (dropped entries set to
/// selu's negative saturation, then the affine map that keeps the mean and
/// variance), as Keras 3 computes them in training; the identity otherwise.
class NoiseImpl : public LayerImpl {
public:
  enum class Kind { GaussianNoise, GaussianDropout, AlphaDropout };

  NoiseImpl(Kind kind, double amount, uint64_t seed)
      : LayerImpl(kind == Kind::GaussianNoise     ? "GaussianNoise"
                  : kind == Kind::GaussianDropout ? "GaussianDropout"
                                                  : "AlphaDropout"),
        kind_(kind), amount_(amount), userSeed_(seed) {
    if (kind == Kind::GaussianNoise ? !(amount >= 0 && std::isfinite(amount))
                                    : !(amount >= 0 && amount < 1))
      throw Error(className() +
                  (kind == Kind::GaussianNoise
                       ? ": stddev must be finite and >= 0, got "
                       : ": rate must be in [0, 1), got ") +
                  std::to_string(amount));
  }

  bool usesRandomness() const override { return amount_ > 0.0; }
  llvm::json::Object kerasConfig() const override {
    llvm::json::Object c{
        {kind_ == Kind::GaussianNoise ? "stddev" : "rate", amount_}};
    if (kind_ == Kind::AlphaDropout)
      c["noise_shape"] = nullptr;
    c["seed"] = userSeed_ ? llvm::json::Value(static_cast<int64_t>(userSeed_))
                          : llvm::json::Value(nullptr);
    return c;
  }

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &ctx) override {
    expectInputs(inputs, 1);
    const Tensor &x = inputs[0];
    if (!ctx.training || amount_ == 0.0)
      return {x};
    DType dt = x.dtype();
    uint64_t seed = userSeed_
                        ? userSeed_
                        : init::deriveSeed(this->seed(), name() + "/noise");
    auto c = [&](double v) { return ops::scalar(v, dt); };
    switch (kind_) {
    case Kind::GaussianNoise:
      return {
          ops::add(x, ops::mul(ops::randomNormal(x.shape(), seed, ctx.step, dt),
                               c(amount_)))};
    case Kind::GaussianDropout: {
      double stddev = std::sqrt(amount_ / (1.0 - amount_));
      Tensor noise = ops::add(
          ops::mul(ops::randomNormal(x.shape(), seed, ctx.step, dt), c(stddev)),
          c(1.0));
      return {ops::mul(x, noise)};
    }
    case Kind::AlphaDropout: {
      const double alphaP = -1.6732632423543772848170429916717 *
                            1.0507009873554804934193349852946;
      double a =
          std::pow((1 - amount_) * (1 + amount_ * alphaP * alphaP), -0.5);
      double b = -a * alphaP * amount_;
      Tensor kept = ops::compare(
          ops::CompareKind::GE,
          ops::randomUniform(x.shape(), seed, ctx.step, dt), c(amount_));
      Tensor dropped = ops::select(kept, x, c(alphaP));
      return {ops::add(ops::mul(dropped, c(a)), c(b))};
    }
    }
    return {x};
  }

private:
  Kind kind_;
  double amount_;
  uint64_t userSeed_;
};

} // namespace

GaussianNoise::GaussianNoise(double stddev, uint64_t seed)
    : Layer(std::make_shared<NoiseImpl>(NoiseImpl::Kind::GaussianNoise, stddev,
                                        seed)) {}

GaussianDropout::GaussianDropout(double rate, uint64_t seed)
    : Layer(std::make_shared<NoiseImpl>(NoiseImpl::Kind::GaussianDropout, rate,
                                        seed)) {}

AlphaDropout::AlphaDropout(double rate, uint64_t seed)
    : Layer(std::make_shared<NoiseImpl>(NoiseImpl::Kind::AlphaDropout, rate,
                                        seed)) {}

Dropout::Dropout(double rate, uint64_t seed, std::vector<int64_t> noiseShape)
    : Layer(std::make_shared<DropoutImpl>("Dropout", rate, seed, 0,
                                          std::move(noiseShape))) {}

SpatialDropout1D::SpatialDropout1D(double rate, uint64_t seed)
    : Layer(std::make_shared<DropoutImpl>("SpatialDropout1D", rate, seed, 1)) {}

SpatialDropout2D::SpatialDropout2D(double rate, uint64_t seed)
    : Layer(std::make_shared<DropoutImpl>("SpatialDropout2D", rate, seed, 2)) {}

SpatialDropout3D::SpatialDropout3D(double rate, uint64_t seed)
    : Layer(std::make_shared<DropoutImpl>("SpatialDropout3D", rate, seed, 3)) {}

ActivityRegularization::ActivityRegularization(double l1, double l2)
    : Layer(std::make_shared<ActivityRegularizationImpl>(l1, l2)) {}
