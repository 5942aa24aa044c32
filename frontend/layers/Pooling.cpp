//===- Pooling.cpp - GlobalAveragePooling2D, GlobalMaxPooling2D -----------===//
//
// Global pooling is a reduction over height and width (kc.reduce_mean /
// kc.reduce_max over axes 1 and 2), as Keras's call is ops.mean / ops.max.
//
//===----------------------------------------------------------------------===//

#include "frontend/Layers.h"
#include "frontend/Ops.h"

using namespace kcc;

namespace {

class GlobalPool2DImpl : public LayerImpl {
public:
  GlobalPool2DImpl(std::string className, bool isMax, bool keepdims)
      : LayerImpl(std::move(className)), isMax_(isMax), keepdims_(keepdims) {}

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    expectInputs(inputs, 1);
    const Tensor &x = inputs[0];
    if (x.rank() != 4)
      fail("expects an NHWC input of rank 4, got " + x.shapeString());
    if (isMax_)
      return {ops::reduceMax(x, {1, 2}, keepdims_)};
    return {ops::reduceMean(x, {1, 2}, keepdims_)};
  }

private:
  bool isMax_, keepdims_;
};

} // namespace

GlobalAveragePooling2D::GlobalAveragePooling2D(bool keepdims)
    : Layer(std::make_shared<GlobalPool2DImpl>("GlobalAveragePooling2D",
                                               /*isMax=*/false, keepdims)) {}

GlobalMaxPooling2D::GlobalMaxPooling2D(bool keepdims)
    : Layer(std::make_shared<GlobalPool2DImpl>("GlobalMaxPooling2D",
                                               /*isMax=*/true, keepdims)) {}
