//===- Pooling.cpp - GlobalAveragePooling2D, GlobalMaxPooling2D -----------===//
//
// Global pooling is a reduction over height and width (kc.reduce_mean /
// kc.reduce_max over axes 1 and 2), as Keras's call is ops.mean / ops.max.
//
//===----------------------------------------------------------------------===//

#include "frontend/Layers.h"
#include "frontend/Ops.h"
#include "frontend/layers/NhwcLayerImpl.h"

using namespace kcc;

namespace {

class GlobalPool2DImpl : public NhwcLayerImpl {
public:
  GlobalPool2DImpl(std::string className, bool isMax, bool keepdims)
      : NhwcLayerImpl(std::move(className)), isMax_(isMax),
        keepdims_(keepdims) {}
  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{{"keepdims", keepdims_}};
  }

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    const Tensor &x = nhwcInput(inputs);
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
