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

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    expectInputs(inputs, 1);
    return {ops::softmax(inputs[0], axis_)};
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
