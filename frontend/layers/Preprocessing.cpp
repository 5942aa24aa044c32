//===- Preprocessing.cpp - Keras's preprocessing layers -------------------===//
//
// Preprocessing inside the model, traced into the step like any layer:
// Rescaling (x * scale + offset).
//
//===----------------------------------------------------------------------===//

#include "frontend/Layers.h"
#include "frontend/Ops.h"

#include <cmath>

using namespace kcc;

namespace {

llvm::json::Value scalarOrList(const std::vector<double> &values) {
  if (values.size() == 1)
    return values[0];
  llvm::json::Array list;
  for (double v : values)
    list.push_back(v);
  return list;
}

class RescalingImpl : public LayerImpl {
public:
  RescalingImpl(std::vector<double> scale, std::vector<double> offset)
      : LayerImpl("Rescaling"), scale_(std::move(scale)),
        offset_(std::move(offset)) {
    for (const std::vector<double> *values : {&scale_, &offset_}) {
      if (values->empty())
        throw Error("Rescaling: scale and offset need at least one value");
      for (double v : *values)
        if (!std::isfinite(v))
          throw Error("Rescaling: scale and offset must be finite");
    }
  }
  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{{"scale", scalarOrList(scale_)},
                              {"offset", scalarOrList(offset_)}};
  }

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    expectInputs(inputs, 1);
    const Tensor &x = inputs[0];
    return {ops::add(ops::mul(x, values(x, scale_, "scale")),
                     values(x, offset_, "offset"))};
  }

private:
  /// A scalar, or a vector along the last axis (numpy broadcasting).
  Tensor values(const Tensor &x, const std::vector<double> &v,
                const char *what) const {
    if (v.size() == 1)
      return ops::fillLike(x, {}, v[0]);
    if (x.rank() < 2 || x.dim(x.rank() - 1) != static_cast<int64_t>(v.size()))
      fail(std::string(what) + " has " + std::to_string(v.size()) +
           " values, the input " + x.shapeString() + " " +
           std::to_string(x.rank() < 2 ? 0 : x.dim(x.rank() - 1)) +
           " channels");
    // A concrete operand of a traced op becomes a kc.constant.
    return Tensor(
        NDArray::fromVector({static_cast<int64_t>(v.size())}, v, x.dtype()));
  }

  std::vector<double> scale_, offset_;
};

} // namespace

Rescaling::Rescaling(std::vector<double> scale, std::vector<double> offset)
    : Layer(std::make_shared<RescalingImpl>(std::move(scale),
                                            std::move(offset))) {}
