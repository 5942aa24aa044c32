//===- Core.cpp - Dense, Activation, Softmax ------------------------------===//

#include "frontend/Layers.h"
#include "frontend/Ops.h"
#include "runtime/MemoryBudget.h"

using namespace kcc;

namespace {

void checkActivation(const std::string &layer, const std::string &name) {
  if (!ops::isActivation(name))
    throw Error(layer + ": unknown activation '" + name + "' (expected " +
                ops::activationNames() + ")");
}

class DenseImpl : public LayerImpl {
public:
  DenseImpl(int64_t units, std::string activation, bool useBias,
            std::string kernelInit, std::string biasInit)
      : LayerImpl("Dense"), units_(units), activation_(std::move(activation)),
        useBias_(useBias), kernelInit_(std::move(kernelInit)),
        biasInit_(std::move(biasInit)) {
    if (units <= 0)
      throw Error("Dense: units must be positive, got " +
                  std::to_string(units));
    // The bias, and each row of the output, hold `units` floats.
    if (TensorSize row = tensorSize({units}, sizeof(float), "f32"); !row)
      throw Error("Dense: units " + std::to_string(units) +
                  " is too large: a row of the output, " + row.error);
    checkActivation("Dense", activation_);
  }

  std::vector<std::string> regularizableWeights() const override {
    return {"kernel", "bias"};
  }
  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{{"units", units_},
                              {"activation", activation_},
                              {"use_bias", useBias_},
                              {"kernel_initializer", kernelInit_},
                              {"bias_initializer", biasInit_}};
  }

protected:
  void build(const std::vector<Shape> &shapes) override {
    if (shapes.size() != 1 || shapes[0].size() < 2)
      fail("expects one input of rank >= 2 ([batch, features]), got " +
           (shapes.empty() ? std::string("none") : shapeString(shapes[0])));
    inFeatures_ = shapes[0].back();
    addWeight("kernel", {inFeatures_, units_}, kernelInit_);
    if (useBias_)
      addWeight("bias", {units_}, biasInit_);
  }

  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    expectInputs(inputs, 1);
    const Tensor &x = inputs[0];
    if (x.rank() < 2 || x.dim(-1) != inFeatures_)
      fail("was built for inputs of shape [None, " +
           std::to_string(inFeatures_) + "] but is called on " +
           x.shapeString() + " (kernel " +
           shapeToString({inFeatures_, units_}) + ")");
    // kc.matmul is 2-D: fold leading dims into rows (Keras's Dense applies
    // to the last axis of any rank).
    Tensor rows = x.rank() == 2 ? x : ops::reshape(x, {-1, inFeatures_});
    Tensor y = ops::matmul(rows, weight(0));
    if (useBias_)
      y = ops::add(y, weight(1));
    if (x.rank() != 2) {
      Shape out = x.shape();
      out.back() = units_;
      y = ops::reshape(y, out);
    }
    return {ops::activation(y, activation_)};
  }

private:
  int64_t units_;
  std::string activation_;
  bool useBias_;
  std::string kernelInit_, biasInit_;
  int64_t inFeatures_ = 0;
};

class ActivationImpl : public LayerImpl {
public:
  explicit ActivationImpl(std::string activation)
      : LayerImpl("Activation"), activation_(std::move(activation)) {
    checkActivation("Activation", activation_);
  }
  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{{"activation", activation_}};
  }

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    expectInputs(inputs, 1);
    return {ops::activation(inputs[0], activation_)};
  }

private:
  std::string activation_;
};

class SoftmaxImpl : public LayerImpl {
public:
  explicit SoftmaxImpl(int64_t axis) : LayerImpl("Softmax"), axis_(axis) {}
  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{{"axis", axis_}};
  }

  MaskRule maskRule() const override { return MaskRule::Apply; }

protected:
  /// Keras's Softmax.call: the mask (the second input, else the input's
  /// own) keeps the entries where it is over 0.5 (true for a boolean);
  /// the others get -1e9 (-3e4 in float16) before the softmax and 0 after
  /// it, so a fully masked row is zeros. The mask passes on unchanged.
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    if (inputs.empty() || inputs.size() > 2)
      fail("expects its input and optionally a mask, got " +
           std::to_string(inputs.size()) + " inputs");
    const Tensor &x = inputs[0];
    const Tensor *mask = inputs.size() == 2 ? &inputs[1] : x.mask();
    if (!mask)
      return {ops::softmax(x, axis_)};
    // Broadcastable as numpy aligns shapes: from the last axis, each of
    // the mask's dims 1 or the input's, and no more axes than the input.
    bool broadcasts = mask->rank() <= x.rank();
    for (int64_t i = 1; broadcasts && i <= mask->rank(); ++i) {
      int64_t m = mask->dim(mask->rank() - i);
      broadcasts = m == 1 || m == x.dim(x.rank() - i);
    }
    if (!broadcasts)
      fail("the mask " + mask->shapeString() +
           " is not broadcastable to the input " + x.shapeString() +
           " (Keras requires each mask dim, from the last, to be 1 or the "
           "input's)");
    Shape aligned(x.rank() - mask->rank(), 1);
    aligned.insert(aligned.end(), mask->shape().begin(), mask->shape().end());
    Tensor m = ops::reshape(*mask, aligned);
    if (m.dtype() != DType::F32)
      m = ops::cast(m, DType::F32);
    Tensor keep = ops::broadcastTo(
        ops::compare(ops::CompareKind::GT, m, ops::fillLike(m, {}, 0.5)),
        x.shape());
    double lowest = x.dtype() == DType::F16 ? -3e4 : -1e9;
    Tensor y =
        ops::softmax(ops::select(keep, x, ops::fillLike(x, {}, lowest)), axis_);
    return {ops::select(keep, y, ops::fillLike(y, {}, 0)).withMask(*mask)};
  }

private:
  int64_t axis_;
};

class IdentityImpl : public LayerImpl {
public:
  IdentityImpl() : LayerImpl("Identity") {}

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    expectInputs(inputs, 1);
    return {inputs[0]};
  }
};

/// Keras's Masking: steps whose every feature equals the mask value are
/// zeroed and masked.
class MaskingImpl : public LayerImpl {
public:
  explicit MaskingImpl(double maskValue)
      : LayerImpl("Masking"), maskValue_(maskValue) {}
  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{{"mask_value", maskValue_}};
  }
  MaskRule maskRule() const override { return MaskRule::Own; }

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    expectInputs(inputs, 1);
    const Tensor &x = inputs[0];
    if (x.rank() < 2)
      fail("expects an input of rank >= 2 ([batch, steps, ...]), got " +
           x.shapeString());
    // any(x != mask_value, axis=-1), as 0/1.
    Tensor differs = ops::cast(
        ops::compare(ops::CompareKind::NE, x, ops::fillLike(x, {}, maskValue_)),
        DType::F32);
    Tensor keep = ops::reduceMax(differs, {x.rank() - 1}, /*keepdims=*/true);
    Tensor out = ops::select(maskAsCondition(keep), x, ops::fillLike(x, {}, 0));
    Shape maskShape(x.shape().begin(), x.shape().end() - 1);
    return {out.withMask(ops::reshape(keep, maskShape))};
  }

private:
  double maskValue_;
};

} // namespace

Masking::Masking(double maskValue)
    : Layer(std::make_shared<MaskingImpl>(maskValue)) {}

Dense::Dense(int64_t units, const std::string &activation, bool useBias,
             const std::string &kernelInitializer,
             const std::string &biasInitializer)
    : Layer(std::make_shared<DenseImpl>(units, activation, useBias,
                                        kernelInitializer, biasInitializer)) {}

Activation::Activation(const std::string &activation)
    : Layer(std::make_shared<ActivationImpl>(activation)) {}

Softmax::Softmax(int64_t axis) : Layer(std::make_shared<SoftmaxImpl>(axis)) {}

Identity::Identity() : Layer(std::make_shared<IdentityImpl>()) {}
