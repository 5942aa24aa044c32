//===- Reshaping.cpp - Flatten, Reshape -----------------------------------===//

#include "frontend/Layers.h"
#include "frontend/Ops.h"
#include "runtime/MemoryBudget.h"

using namespace kcc;

namespace {

class FlattenImpl : public LayerImpl {
public:
  FlattenImpl() : LayerImpl("Flatten") {}

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    expectInputs(inputs, 1);
    const Tensor &x = inputs[0];
    if (x.rank() < 1)
      fail("expects a batched input, got " + x.describe());
    std::optional<int64_t> features =
        checkedNumElements(x.shape().data() + 1, x.shape().size() - 1);
    if (!features)
      fail("the input " + x.shapeString() +
           " has more than 2^63-1 features per example");
    return {ops::reshape(x, {x.dim(0), *features})};
  }
};

class ReshapeImpl : public LayerImpl {
public:
  explicit ReshapeImpl(Shape target)
      : LayerImpl("Reshape"), target_(std::move(target)) {}
  llvm::json::Object kerasConfig() const override {
    llvm::json::Array dims;
    for (int64_t d : target_)
      dims.push_back(d);
    return llvm::json::Object{{"target_shape", std::move(dims)}};
  }

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    expectInputs(inputs, 1);
    const Tensor &x = inputs[0];
    // The target excludes the batch dim, as in Keras.
    Shape shape{x.dim(0)};
    shape.insert(shape.end(), target_.begin(), target_.end());
    return {ops::reshape(x, shape)};
  }

private:
  Shape target_;
};

} // namespace

Flatten::Flatten() : Layer(std::make_shared<FlattenImpl>()) {}

Reshape::Reshape(Shape targetShape)
    : Layer(std::make_shared<ReshapeImpl>(std::move(targetShape))) {}
