//===- Preprocessing.cpp - Keras's preprocessing layers -------------------===//
//
// Preprocessing inside the model, traced into the step like any layer:
// Rescaling (x * scale + offset) and Normalization (standardization by a
// mean and variance, or its inverse).
//
//===----------------------------------------------------------------------===//

#include "frontend/Layers.h"
#include "frontend/Ops.h"

#include <algorithm>
#include <cmath>

using namespace kcc;

namespace {

/// `values` as nested lists of `shape` (a number for rank 0), as numpy's
/// tolist() writes them.
llvm::json::Value nested(llvm::ArrayRef<int64_t> shape,
                         llvm::ArrayRef<double> values) {
  if (shape.empty())
    return values.front();
  llvm::json::Array list;
  size_t stride = shape[0] ? values.size() / shape[0] : 0;
  for (int64_t i = 0; i < shape[0]; ++i)
    list.push_back(
        nested(shape.drop_front(), values.slice(i * stride, stride)));
  return list;
}

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

/// Keras's backend.epsilon(): the floor of Normalization's deviation.
constexpr double kKerasEpsilon = 1e-7;

class NormalizationImpl : public LayerImpl {
public:
  NormalizationImpl(std::vector<int64_t> axes, NormalizationStatistics given,
                    bool invert)
      : LayerImpl("Normalization"), axes_(std::move(axes)),
        given_(std::move(given)), invert_(invert) {
    if (given_.mean.size() != given_.variance.size() ||
        (!adapted() &&
         given_.mean.size() != static_cast<size_t>(numElements(given_.shape))))
      throw Error("Normalization: mean and variance must have the same "
                  "shape, one value per element");
    for (double v : given_.variance)
      if (!(v >= 0) || !std::isfinite(v))
        throw Error("Normalization: variance must be finite and >= 0");
    for (double v : given_.mean)
      if (!std::isfinite(v))
        throw Error("Normalization: mean must be finite");
  }

  llvm::json::Object kerasConfig() const override {
    llvm::json::Array axis;
    for (int64_t a : axes_)
      axis.push_back(a);
    auto values = [&](const std::vector<double> &v) -> llvm::json::Value {
      if (adapted())
        return nullptr;
      return nested(given_.shape, v);
    };
    return llvm::json::Object{{"axis", std::move(axis)},
                              {"invert", invert_},
                              {"mean", values(given_.mean)},
                              {"variance", values(given_.variance)}};
  }

protected:
  void build(const std::vector<Shape> &shapes) override {
    if (shapes.size() != 1 || shapes[0].empty())
      fail("expects one batched input");
    int64_t rank = static_cast<int64_t>(shapes[0].size());
    // Keras's build: the kept axes sorted, the statistics broadcast over
    // the others.
    std::vector<int64_t> keep;
    for (int64_t a : axes_) {
      if (a < -rank || a >= rank)
        fail("axis " + std::to_string(a) + " is out of range for an input " +
             shapeString(shapes[0]));
      keep.push_back(a < 0 ? a + rank : a);
    }
    std::sort(keep.begin(), keep.end());
    keep.erase(std::unique(keep.begin(), keep.end()), keep.end());
    if (!keep.empty() && keep.front() == 0)
      fail("axis 0 (the batch) cannot be kept");
    broadcast_.assign(rank - 1, 1);
    Shape kept;
    for (int64_t a : keep) {
      broadcast_[a - 1] = shapes[0][a];
      kept.push_back(shapes[0][a]);
    }
    if (!adapted()) {
      // Keras aligns the given statistics' dims with the kept axes from
      // the right.
      if (given_.shape.size() > keep.size())
        fail("mean of rank " + std::to_string(given_.shape.size()) + " for " +
             std::to_string(keep.size()) + " kept axes");
      Shape expanded(rank - 1, 1);
      for (size_t i = 1; i <= given_.shape.size(); ++i) {
        int64_t axis = keep[keep.size() - i];
        int64_t dim = given_.shape[given_.shape.size() - i];
        if (dim != 1 && dim != shapes[0][axis])
          fail("mean " + shapeToString(given_.shape) +
               " does not broadcast to the kept axes of " +
               shapeString(shapes[0]));
        expanded[axis - 1] = dim;
      }
      givenShape_ = expanded;
      return;
    }
    // Keras's weights and their order; count is what adapt() saw.
    mean_ = addWeight("mean", kept, "zeros", /*trainable=*/false);
    variance_ = addWeight("variance", kept, "ones", /*trainable=*/false);
    addWeight("count", {}, "zeros", /*trainable=*/false);
  }

  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    expectInputs(inputs, 1);
    const Tensor &x = inputs[0];
    Tensor mean, variance;
    if (adapted()) {
      mean = ops::reshape(weight(mean_), broadcast_);
      variance = ops::reshape(weight(variance_), broadcast_);
    } else {
      mean = constant(given_.mean, x.dtype());
      variance = constant(given_.variance, x.dtype());
    }
    Tensor deviation = ops::maximum(ops::sqrt(variance),
                                    ops::scalar(kKerasEpsilon, x.dtype()));
    if (invert_)
      return {ops::add(mean, ops::mul(x, deviation))};
    return {ops::div(ops::sub(x, mean), deviation)};
  }

private:
  bool adapted() const { return given_.mean.empty(); }

  /// The given statistics in their broadcast shape (batch axis left out).
  Tensor constant(const std::vector<double> &values, DType dtype) const {
    return Tensor(NDArray::fromVector(givenShape_, values, dtype));
  }

  std::vector<int64_t> axes_;
  NormalizationStatistics given_;
  bool invert_;
  Shape broadcast_, givenShape_;
  size_t mean_ = 0, variance_ = 0;
};

} // namespace

Normalization::Normalization(std::vector<int64_t> axis,
                             NormalizationStatistics statistics, bool invert)
    : Layer(std::make_shared<NormalizationImpl>(
          std::move(axis), std::move(statistics), invert)) {}

Rescaling::Rescaling(std::vector<double> scale, std::vector<double> offset)
    : Layer(std::make_shared<RescalingImpl>(std::move(scale),
                                            std::move(offset))) {}
