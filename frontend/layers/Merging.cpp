//===- Merging.cpp - Add --------------------------------------------------===//

#include "frontend/Layers.h"
#include "frontend/Ops.h"

using namespace kcc;

namespace {

class AddImpl : public LayerImpl {
public:
  AddImpl() : LayerImpl("Add") {}

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    if (inputs.size() < 2)
      fail("expects a list of at least 2 inputs, got " +
           std::to_string(inputs.size()));
    // Keras's Add sums tensors of one shape; broadcasting here would hide a
    // wiring mistake in a residual block.
    for (const Tensor &t : inputs)
      if (t.shape() != inputs[0].shape())
        fail("expects inputs of one shape, got " + inputs[0].shapeString() +
             " and " + t.shapeString());
    Tensor sum = inputs[0];
    for (size_t i = 1; i < inputs.size(); ++i)
      sum = ops::add(sum, inputs[i]);
    return {sum};
  }
};

} // namespace

Add::Add() : Layer(std::make_shared<AddImpl>()) {}
