//===- Activations.cpp - ReLU, LeakyReLU, PReLU, ELU ----------------------===//
//
// The activation layers with arguments, each the keras.activations function
// its Keras call() applies (frontend/ops/Activations.cpp composes them).
//
//===----------------------------------------------------------------------===//

#include "frontend/Layers.h"
#include "frontend/Ops.h"

#include <cmath>

using namespace kcc;

namespace {

/// Keras rejects negative (and None) values of these arguments.
void checkNonNegative(const std::string &layer, const std::string &what,
                      double v) {
  if (!(v >= 0) || !std::isfinite(v))
    throw Error(layer + ": " + what + " must be a finite value >= 0, got " +
                std::to_string(v));
}

class ReLUImpl : public LayerImpl {
public:
  ReLUImpl(std::optional<double> maxValue, double negativeSlope,
           double threshold)
      : LayerImpl("ReLU"), maxValue_(maxValue), negativeSlope_(negativeSlope),
        threshold_(threshold) {
    if (maxValue)
      checkNonNegative("ReLU", "max_value", *maxValue);
    checkNonNegative("ReLU", "negative_slope", negativeSlope);
    checkNonNegative("ReLU", "threshold", threshold);
  }
  llvm::json::Object kerasConfig() const override {
    llvm::json::Value maxValue = nullptr;
    if (maxValue_)
      maxValue = *maxValue_;
    return llvm::json::Object{{"max_value", std::move(maxValue)},
                              {"negative_slope", negativeSlope_},
                              {"threshold", threshold_}};
  }

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    expectInputs(inputs, 1);
    return {ops::kerasRelu(inputs[0], negativeSlope_, maxValue_, threshold_)};
  }

private:
  std::optional<double> maxValue_;
  double negativeSlope_, threshold_;
};

class LeakyReLUImpl : public LayerImpl {
public:
  explicit LeakyReLUImpl(double negativeSlope)
      : LayerImpl("LeakyReLU"), negativeSlope_(negativeSlope) {
    checkNonNegative("LeakyReLU", "negative_slope", negativeSlope);
  }
  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{{"negative_slope", negativeSlope_}};
  }

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    expectInputs(inputs, 1);
    return {ops::leakyRelu(inputs[0], negativeSlope_)};
  }

private:
  double negativeSlope_;
};

class PReLUImpl : public LayerImpl {
public:
  PReLUImpl(std::string alphaInit, std::vector<int64_t> sharedAxes)
      : LayerImpl("PReLU"), alphaInit_(std::move(alphaInit)),
        sharedAxes_(std::move(sharedAxes)) {}
  llvm::json::Object kerasConfig() const override {
    llvm::json::Value shared = nullptr;
    if (!sharedAxes_.empty())
      shared = llvm::json::Array(sharedAxes_);
    return llvm::json::Object{{"alpha_initializer", alphaInit_},
                              {"alpha_regularizer", nullptr},
                              {"alpha_constraint", nullptr},
                              {"shared_axes", std::move(shared)}};
  }

protected:
  void build(const std::vector<Shape> &shapes) override {
    if (shapes.size() != 1 || shapes[0].size() < 2)
      fail("expects one batched input of rank >= 2, got " +
           (shapes.empty() ? std::string("none") : shapeString(shapes[0])));
    // Keras: alpha has input_shape[1:], with 1 on each shared axis.
    Shape alpha(shapes[0].begin() + 1, shapes[0].end());
    for (int64_t axis : sharedAxes_) {
      if (axis < 1 || axis > static_cast<int64_t>(alpha.size()))
        fail("shared_axes entry " + std::to_string(axis) +
             " is out of range for an input of rank " +
             std::to_string(shapes[0].size()) + " (1.." +
             std::to_string(alpha.size()) + ")");
      alpha[axis - 1] = 1;
    }
    addWeight("alpha", alpha, alphaInit_);
  }

  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    expectInputs(inputs, 1);
    const Tensor &x = inputs[0];
    // Keras's call: relu(x) + (-alpha) * relu(-x).
    Tensor negAlpha = ops::neg(weight(0));
    return {ops::add(ops::relu(x), ops::mul(negAlpha, ops::relu(ops::neg(x))))};
  }

private:
  std::string alphaInit_;
  std::vector<int64_t> sharedAxes_;
};

class ELUImpl : public LayerImpl {
public:
  explicit ELUImpl(double alpha) : LayerImpl("ELU"), alpha_(alpha) {
    if (!std::isfinite(alpha))
      throw Error("ELU: alpha must be finite, got " + std::to_string(alpha));
  }
  /// Keras 3's ELU.get_config() drops alpha (its __init__ takes it, so
  /// writing it loses nothing on reload).
  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{{"alpha", alpha_}};
  }

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    expectInputs(inputs, 1);
    return {ops::elu(inputs[0], alpha_)};
  }

private:
  double alpha_;
};

} // namespace

ReLU::ReLU(std::optional<double> maxValue, double negativeSlope,
           double threshold)
    : Layer(std::make_shared<ReLUImpl>(maxValue, negativeSlope, threshold)) {}

LeakyReLU::LeakyReLU(double negativeSlope)
    : Layer(std::make_shared<LeakyReLUImpl>(negativeSlope)) {}

PReLU::PReLU(const std::string &alphaInitializer,
             std::vector<int64_t> sharedAxes)
    : Layer(std::make_shared<PReLUImpl>(alphaInitializer,
                                        std::move(sharedAxes))) {}

ELU::ELU(double alpha) : Layer(std::make_shared<ELUImpl>(alpha)) {}
