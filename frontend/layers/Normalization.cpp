//===- Normalization.cpp - Keras's normalization layers -------------------===//
//
// BatchNormalization as Keras 3 computes it (keras.ops.batch_normalization
// on the JAX backend), composed of kc ops: the statistics are reduce_mean
// over every axis but the last, the normalization and scale-shift are
// elementwise ops on [C] vectors broadcast to the input, so autodiff, the
// interpreter and the compiler (which fuses the elementwise chain and the
// following activation) need nothing of their own.
//
// Training (and the layer trainable): the batch's mean and biased variance
// normalize, and the moving statistics are assigned
//   moving = moving * momentum + batch * (1 - momentum);
// traced, the assignments become results of @forward marked kc.updates,
// which @train_step returns as the new values of these non-trainable
// parameters (written in place like the optimizer slots). Inference, or a
// frozen layer (trainable false, as in Keras 3): the moving statistics.
//
//===----------------------------------------------------------------------===//

#include "frontend/Layers.h"
#include "frontend/Masks.h"
#include "frontend/Ops.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <tuple>

using namespace kcc;

namespace {

/// The normalization layers over the last axis (BatchNormalization,
/// LayerNormalization, GroupNormalization): one batched input, `axis` -1
/// or the input's last.
class LastAxisNormImpl : public LayerImpl {
protected:
  using LayerImpl::LayerImpl;
  void checkLastAxisInput(const std::vector<Shape> &shapes,
                          int64_t axis) const {
    if (shapes.size() != 1 || shapes[0].size() < 2)
      fail("expects one batched input of rank >= 2, got " +
           (shapes.empty() ? std::string("none") : shapeString(shapes[0])));
    int64_t rank = static_cast<int64_t>(shapes[0].size());
    if (axis != -1 && axis != rank - 1)
      fail("axis " + std::to_string(axis) +
           " is not supported (only the last axis, -1, of an input of rank " +
           std::to_string(rank) + ")");
  }
};

/// Keras's BatchNormalization and LayerNormalization compute in at least
/// float32 (backend.result_type(x, "float32")): a bfloat16 or float16 input
/// is upcast, the cast carrying `why`; the mask stays.
Tensor atLeastFloat32(const Tensor &x, llvm::StringRef why) {
  if (x.dtype() != DType::BF16 && x.dtype() != DType::F16)
    return x;
  Tensor y = ops::cast(x, DType::F32, why);
  return x.mask() ? y.withMask(*x.mask()) : y;
}

/// The mean over `axes` (kept) and rsqrt(variance + epsilon), the
/// variance the mean of the squared centred input (jnp.var).
std::pair<Tensor, Tensor> inverseDeviation(const Tensor &x,
                                           const std::vector<int64_t> &axes,
                                           double epsilon) {
  Tensor mean = ops::reduceMean(x, axes, /*keepdims=*/true);
  Tensor centred = ops::sub(x, mean);
  Tensor variance =
      ops::reduceMean(ops::mul(centred, centred), axes, /*keepdims=*/true);
  return {mean,
          ops::rsqrt(ops::add(variance, ops::scalar(epsilon, x.dtype())))};
}

/// keras.ops.layer_normalization's arithmetic, which GroupNormalization
/// shares: moments over `axes` with keepdims (jnp.var is the mean of the
/// squared centred input), inv = rsqrt(var + eps) [* gamma], then
/// x * inv + (-mean * inv [+ beta]).
Tensor normalizeOver(const Tensor &x, const std::vector<int64_t> &axes,
                     double epsilon, const std::optional<Tensor> &gamma,
                     const std::optional<Tensor> &beta) {
  auto [mean, inv] = inverseDeviation(x, axes, epsilon);
  if (gamma)
    inv = ops::mul(inv, *gamma);
  Tensor shift = ops::mul(ops::neg(mean), inv);
  if (beta)
    shift = ops::add(shift, *beta);
  return ops::add(ops::mul(x, inv), shift);
}

class BatchNormalizationImpl : public LastAxisNormImpl {
public:
  BatchNormalizationImpl(int64_t axis, double momentum, double epsilon,
                         bool center, bool scale, std::string betaInit,
                         std::string gammaInit, std::string movingMeanInit,
                         std::string movingVarianceInit, bool synchronized)
      : LastAxisNormImpl("BatchNormalization"), axis_(axis),
        momentum_(momentum), epsilon_(epsilon), center_(center), scale_(scale),
        synchronized_(synchronized), betaInit_(std::move(betaInit)),
        gammaInit_(std::move(gammaInit)),
        movingMeanInit_(std::move(movingMeanInit)),
        movingVarianceInit_(std::move(movingVarianceInit)) {
    if (!std::isfinite(momentum))
      throw Error("BatchNormalization: momentum must be finite, got " +
                  std::to_string(momentum));
    if (!(std::isfinite(epsilon) && epsilon > 0))
      throw Error("BatchNormalization: epsilon must be finite and > 0, got " +
                  std::to_string(epsilon));
  }

  bool trainingDiffers() const override { return trainable(); }

  std::vector<std::string> regularizableWeights() const override {
    return {"beta", "gamma"};
  }
  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{
        {"axis", axis_},
        {"momentum", momentum_},
        {"epsilon", epsilon_},
        {"center", center_},
        {"scale", scale_},
        {"beta_initializer", betaInit_},
        {"gamma_initializer", gammaInit_},
        {"moving_mean_initializer", movingMeanInit_},
        {"moving_variance_initializer", movingVarianceInit_},
        {"synchronized", synchronized_}};
  }

protected:
  void build(const std::vector<Shape> &shapes) override {
    checkLastAxisInput(shapes, axis_);
    Shape channels{shapes[0].back()};
    // Keras's order: gamma, beta, moving_mean, moving_variance.
    if (scale_)
      gamma_ = addWeight("gamma", channels, gammaInit_);
    if (center_)
      beta_ = addWeight("beta", channels, betaInit_);
    movingMean_ = addWeight("moving_mean", channels, movingMeanInit_,
                            /*trainable=*/false);
    movingVariance_ = addWeight("moving_variance", channels,
                                movingVarianceInit_, /*trainable=*/false);
  }

  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &ctx) override {
    expectInputs(inputs, 1);
    // Under a mixed policy: moments, moving statistics and normalization in
    // float32 (gamma, beta and the statistics read uncast), the result cast
    // to the compute dtype.
    Tensor x = atLeastFloat32(inputs[0], "BatchNormalization moments and "
                                         "normalization: float32, as Keras");
    DType dt = x.dtype();
    Tensor mean = weight(movingMean_, /*autocast=*/false);
    Tensor variance = weight(movingVariance_, /*autocast=*/false);
    if (ctx.training && trainable()) {
      std::vector<int64_t> axes(x.rank() - 1);
      std::iota(axes.begin(), axes.end(), 0);
      // jnp.mean and jnp.var: the variance of the centred input, biased.
      // Synchronized, each is the mean of the ranks' (equal-sized) batches,
      // so N ranks get the global batch's statistics.
      auto statistic = [&](const Tensor &t) {
        Tensor m = ops::reduceMean(t, axes);
        return synchronized_ ? ops::allReduce(m, /*mean=*/true) : m;
      };
      Tensor batchMean, batchVariance;
      if (x.mask()) {
        std::tie(batchMean, batchVariance) = maskedMoments(x, *x.mask(), axes);
      } else {
        batchMean = statistic(x);
        Tensor centred = ops::sub(x, batchMean);
        batchVariance = statistic(ops::mul(centred, centred));
      }
      Tensor keep = ops::scalar(momentum_, dt);
      Tensor take = ops::scalar(1.0 - momentum_, dt);
      assignWeight(movingMean_,
                   ops::add(ops::mul(mean, keep), ops::mul(batchMean, take)));
      assignWeight(movingVariance_, ops::add(ops::mul(variance, keep),
                                             ops::mul(batchVariance, take)));
      mean = batchMean;
      variance = batchVariance;
    }
    // x * inv + (beta - mean * inv), inv = rsqrt(variance + epsilon) * gamma.
    Tensor inv = ops::rsqrt(ops::add(variance, ops::scalar(epsilon_, dt)));
    if (scale_)
      inv = ops::mul(inv, weight(*gamma_, /*autocast=*/false));
    Tensor shift = ops::mul(ops::neg(mean), inv);
    if (center_)
      shift = ops::add(shift, weight(*beta_, /*autocast=*/false));
    Tensor y = ops::add(ops::mul(x, inv), shift);
    if (computeDType() != DType::F32)
      y = ops::cast(y, computeDType());
    return {x.mask() ? y.withMask(*x.mask()) : y};
  }

  MaskRule maskRule() const override { return MaskRule::Own; }

private:
  /// Keras's _moments with a mask ([batch, steps] on a [batch, steps,
  /// channels] input): the masked steps count for nothing, each sum is
  /// divided by the real steps' count plus backend.epsilon().
  std::pair<Tensor, Tensor> maskedMoments(const Tensor &x, const Tensor &mask,
                                          const std::vector<int64_t> &axes) {
    if (x.rank() != 3)
      fail("receives a mask with an input of rank " + std::to_string(x.rank()) +
           "; Keras's masked moments take [batch, steps, channels]");
    if (synchronized_)
      fail("synchronized batch statistics of a masked input are not "
           "supported");
    Tensor real =
        ops::broadcastTo(maskForRank(maskAsCondition(mask), 3), x.shape());
    Tensor zeros = ops::fillLike(x, x.shape(), 0.0);
    Tensor count = ops::add(
        ops::reduceSum(ops::broadcastTo(maskForRank(mask, 3), x.shape()), axes),
        ops::scalar(1e-7, x.dtype()));
    Tensor mean =
        ops::div(ops::reduceSum(ops::select(real, x, zeros), axes), count);
    Tensor difference = ops::select(real, ops::sub(x, mean), zeros);
    Tensor variance =
        ops::div(ops::reduceSum(ops::mul(difference, difference), axes), count);
    return {mean, variance};
  }

  int64_t axis_;
  double momentum_, epsilon_;
  bool center_, scale_, synchronized_;
  std::string betaInit_, gammaInit_, movingMeanInit_, movingVarianceInit_;
  std::optional<size_t> gamma_, beta_;
  size_t movingMean_ = 0, movingVariance_ = 0;
};

/// LayerNormalization composes the same way over the last axis, the
/// statistics kept as [..., 1] so they broadcast back: the reduction and
/// the elementwise chain fuse in compiled code, and autodiff derives the
/// backward (the mean and variance gradients included) from kc's rules.
class LayerNormalizationImpl : public LastAxisNormImpl {
public:
  LayerNormalizationImpl(int64_t axis, double epsilon, bool center, bool scale,
                         std::string betaInit, std::string gammaInit,
                         bool rmsScaling)
      : LastAxisNormImpl("LayerNormalization"), axis_(axis), epsilon_(epsilon),
        center_(center), scale_(scale), rmsScaling_(rmsScaling),
        betaInit_(std::move(betaInit)), gammaInit_(std::move(gammaInit)) {
    if (!(std::isfinite(epsilon) && epsilon > 0))
      throw Error("LayerNormalization: epsilon must be finite and > 0, got " +
                  std::to_string(epsilon));
  }

  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{{"axis", llvm::json::Array{axis_}},
                              {"epsilon", epsilon_},
                              {"center", center_},
                              {"scale", scale_},
                              {"rms_scaling", rmsScaling_},
                              {"beta_initializer", betaInit_},
                              {"gamma_initializer", gammaInit_}};
  }

protected:
  void build(const std::vector<Shape> &shapes) override {
    checkLastAxisInput(shapes, axis_);
    Shape features{shapes[0].back()};
    // Keras: gamma with scale or rms_scaling, beta with center and not
    // rms_scaling.
    if (scale_ || rmsScaling_)
      gamma_ = addWeight("gamma", features, gammaInit_);
    if (center_ && !rmsScaling_)
      beta_ = addWeight("beta", features, betaInit_);
  }

  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    expectInputs(inputs, 1);
    if (!isFloat(inputs[0].dtype()))
      fail("expects a float input, got " +
           std::string(dtypeName(inputs[0].dtype())));
    // Keras's layer_normalization: in at least float32, gamma and beta read
    // uncast, the result cast to the compute dtype.
    Tensor x = atLeastFloat32(inputs[0], "LayerNormalization moments and "
                                         "normalization: float32, as Keras");
    std::optional<Tensor> gamma, beta;
    if (gamma_)
      gamma = weight(*gamma_, /*autocast=*/false);
    if (beta_)
      beta = weight(*beta_, /*autocast=*/false);
    Tensor y = rmsScaling_ ? rmsScaleOver(x, epsilon_, *gamma)
                           : normalizeOver(x, {-1}, epsilon_, gamma, beta);
    if (computeDType() != DType::F32)
      y = ops::cast(y, computeDType());
    return {y};
  }

  /// Keras's LayerNormalization sets autocast = False: its inputs arrive in
  /// their own dtype (and it upcasts them itself).
  bool autocastsInputs() const override { return false; }

private:
  /// keras.ops.layer_normalization with rms_scaling: the input scaled by
  /// the inverse standard deviation (the variance is centred, the input
  /// is not) and gamma, no shift.
  static Tensor rmsScaleOver(const Tensor &x, double epsilon,
                             const Tensor &gamma) {
    Tensor inv = inverseDeviation(x, {-1}, epsilon).second;
    return ops::mul(ops::mul(x, inv), gamma);
  }

  int64_t axis_;
  double epsilon_;
  bool center_, scale_, rmsScaling_;
  std::string betaInit_, gammaInit_;
  std::optional<size_t> gamma_, beta_;
};

/// Keras's RMSNormalization (keras.ops.rms_normalization): x *
/// rsqrt(mean(x^2 over `axes`) + epsilon) * scale, in at least float32.
/// The scale has the sizes of the axes and multiplies the input from its
/// last axis, as Keras broadcasts it.
class RMSNormalizationImpl : public LayerImpl {
public:
  RMSNormalizationImpl(std::vector<int64_t> axes, double epsilon)
      : LayerImpl("RMSNormalization"), axes_(std::move(axes)),
        epsilon_(epsilon) {
    if (axes_.empty())
      throw Error("RMSNormalization: axis must name at least one axis");
    if (!(std::isfinite(epsilon) && epsilon >= 0))
      throw Error("RMSNormalization: epsilon must be finite and >= 0, got " +
                  std::to_string(epsilon));
  }

  llvm::json::Object kerasConfig() const override {
    llvm::json::Array axes;
    for (int64_t a : axes_)
      axes.push_back(a);
    return llvm::json::Object{{"axis", std::move(axes)}, {"epsilon", epsilon_}};
  }

protected:
  void build(const std::vector<Shape> &shapes) override {
    if (shapes.size() != 1)
      fail("expects one input");
    const Shape &in = shapes[0];
    int64_t rank = static_cast<int64_t>(in.size());
    for (int64_t a : axes_) {
      int64_t axis = a < 0 ? a + rank : a;
      if (axis <= 0 || axis >= rank)
        fail("axis " + std::to_string(a) + " is not a non-batch axis of " +
             shapeString(in));
      inputAxes_.push_back(axis);
    }
    std::sort(inputAxes_.begin(), inputAxes_.end());
    Shape scale;
    for (int64_t axis : inputAxes_)
      scale.push_back(in[axis]);
    // Keras multiplies by the scale from the input's last axis.
    for (size_t i = 0; i < scale.size(); ++i)
      if (scale[scale.size() - 1 - i] != in[in.size() - 1 - i] &&
          scale[scale.size() - 1 - i] != 1)
        fail("a scale of shape " + shapeString(scale) + " (the sizes of " +
             "its axes) does not broadcast to the input " + shapeString(in) +
             " from its last axis, where Keras multiplies by it");
    addWeight("scale", scale, "ones");
  }

  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    expectInputs(inputs, 1);
    if (!isFloat(inputs[0].dtype()))
      fail("expects a float input, got " +
           std::string(dtypeName(inputs[0].dtype())));
    DType original = inputs[0].dtype();
    Tensor x = atLeastFloat32(inputs[0], "RMSNormalization: float32, as "
                                         "Keras");
    Tensor scale = weight(0);
    if (scale.dtype() != x.dtype())
      scale = ops::cast(scale, x.dtype());
    Tensor rrms = ops::rsqrt(
        ops::add(ops::reduceMean(ops::mul(x, x), inputAxes_, /*keepdims=*/true),
                 ops::scalar(epsilon_, x.dtype())));
    Tensor y = ops::mul(ops::mul(x, rrms), scale);
    return {y.dtype() != original ? ops::cast(y, original) : y};
  }

private:
  std::vector<int64_t> axes_;
  double epsilon_;
  /// The input's axes, non-negative and sorted (at build).
  std::vector<int64_t> inputAxes_;
};

/// Keras's ops.normalize(x, axis, order=2, epsilon=1e-12).
class UnitNormalizationImpl : public LayerImpl {
public:
  explicit UnitNormalizationImpl(std::vector<int64_t> axes)
      : LayerImpl("UnitNormalization"), axes_(std::move(axes)) {
    if (axes_.empty())
      throw Error("UnitNormalization: axis must name at least one axis");
  }
  llvm::json::Object kerasConfig() const override {
    if (axes_.size() == 1)
      return llvm::json::Object{{"axis", axes_[0]}};
    llvm::json::Array axes;
    for (int64_t a : axes_)
      axes.push_back(a);
    return llvm::json::Object{{"axis", std::move(axes)}};
  }

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    expectInputs(inputs, 1);
    const Tensor &x = inputs[0];
    std::vector<int64_t> axes;
    for (int64_t a : axes_) {
      int64_t axis = a < 0 ? a + x.rank() : a;
      if (axis <= 0 || axis >= x.rank())
        fail("axis " + std::to_string(a) + " is not a non-batch axis of " +
             x.shapeString());
      axes.push_back(axis);
    }
    return {ops::l2Normalize(x, axes, /*epsilon=*/1e-12)};
  }

private:
  std::vector<int64_t> axes_;
};

/// Keras's GroupNormalization over the last axis: the channels split into
/// `groups` groups of C / groups, each example's group normalized by its
/// mean and variance over every other axis, then gamma and beta per channel,
/// as Keras computes it (inv = rsqrt(var + eps) * gamma,
/// x * inv + (beta - mean * inv)).
class GroupNormalizationImpl : public LastAxisNormImpl {
public:
  GroupNormalizationImpl(int64_t groups, int64_t axis, double epsilon,
                         bool center, bool scale, std::string betaInit,
                         std::string gammaInit)
      : LastAxisNormImpl("GroupNormalization"), groups_(groups), axis_(axis),
        epsilon_(epsilon), center_(center), scale_(scale),
        betaInit_(std::move(betaInit)), gammaInit_(std::move(gammaInit)) {
    if (!(std::isfinite(epsilon) && epsilon > 0))
      throw Error("GroupNormalization: epsilon must be finite and > 0, got " +
                  std::to_string(epsilon));
    if (groups == 0 || groups < -1)
      throw Error("GroupNormalization: groups must be positive (or -1, one "
                  "group per channel), got " +
                  std::to_string(groups));
  }

  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{{"groups", groups_},
                              {"axis", axis_},
                              {"epsilon", epsilon_},
                              {"center", center_},
                              {"scale", scale_},
                              {"beta_initializer", betaInit_},
                              {"gamma_initializer", gammaInit_}};
  }

protected:
  void build(const std::vector<Shape> &shapes) override {
    checkLastAxisInput(shapes, axis_);
    int64_t channels = shapes[0].back();
    int64_t groups = groups_ == -1 ? channels : groups_;
    if (groups > channels || channels % groups != 0)
      fail("groups (" + std::to_string(groups) + ") must divide the " +
           std::to_string(channels) + " channels");
    Shape features{channels};
    if (scale_)
      gamma_ = addWeight("gamma", features, gammaInit_);
    if (center_)
      beta_ = addWeight("beta", features, betaInit_);
  }

  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    expectInputs(inputs, 1);
    const Tensor &x = inputs[0];
    if (!isFloat(x.dtype()))
      fail("expects a float input, got " + std::string(dtypeName(x.dtype())));
    int64_t channels = x.dim(x.rank() - 1);
    int64_t groups = groups_ == -1 ? channels : groups_;
    // [N, ..., C] -> [N, ..., G, C / G]; moments over every axis but the
    // batch and the group; gamma and beta as [1, ..., G, C / G].
    Shape grouped = x.shape();
    grouped.back() = groups;
    grouped.push_back(channels / groups);
    Tensor g = ops::reshape(x, grouped);
    std::vector<int64_t> axes;
    for (int64_t a = 1; a < g.rank(); ++a)
      if (a != g.rank() - 2)
        axes.push_back(a);
    Shape perChannel(g.rank(), 1);
    perChannel[g.rank() - 2] = groups;
    perChannel.back() = channels / groups;
    std::optional<Tensor> gamma, beta;
    if (scale_)
      gamma = ops::reshape(weight(*gamma_), perChannel);
    if (center_)
      beta = ops::reshape(weight(*beta_), perChannel);
    return {
        ops::reshape(normalizeOver(g, axes, epsilon_, gamma, beta), x.shape())};
  }

private:
  int64_t groups_, axis_;
  double epsilon_;
  bool center_, scale_;
  std::string betaInit_, gammaInit_;
  std::optional<size_t> gamma_, beta_;
};

} // namespace

LayerNormalization::LayerNormalization(int64_t axis, double epsilon,
                                       bool center, bool scale,
                                       const std::string &betaInitializer,
                                       const std::string &gammaInitializer,
                                       bool rmsScaling)
    : Layer(std::make_shared<LayerNormalizationImpl>(
          axis, epsilon, center, scale, betaInitializer, gammaInitializer,
          rmsScaling)) {}

RMSNormalization::RMSNormalization(std::vector<int64_t> axes, double epsilon)
    : Layer(std::make_shared<RMSNormalizationImpl>(std::move(axes), epsilon)) {}

BatchNormalization::BatchNormalization(
    int64_t axis, double momentum, double epsilon, bool center, bool scale,
    const std::string &betaInitializer, const std::string &gammaInitializer,
    const std::string &movingMeanInitializer,
    const std::string &movingVarianceInitializer, bool synchronized)
    : Layer(std::make_shared<BatchNormalizationImpl>(
          axis, momentum, epsilon, center, scale, betaInitializer,
          gammaInitializer, movingMeanInitializer, movingVarianceInitializer,
          synchronized)) {}

UnitNormalization::UnitNormalization(std::vector<int64_t> axes)
    : Layer(std::make_shared<UnitNormalizationImpl>(std::move(axes))) {}

GroupNormalization::GroupNormalization(int64_t groups, int64_t axis,
                                       double epsilon, bool center, bool scale,
                                       const std::string &betaInitializer,
                                       const std::string &gammaInitializer)
    : Layer(std::make_shared<GroupNormalizationImpl>(
          groups, axis, epsilon, center, scale, betaInitializer,
          gammaInitializer)) {}
