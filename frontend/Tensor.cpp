//===- Tensor.cpp - The frontend's tensor handle, layer scopes ------------===//

#include "frontend/Tensor.h"
#include "frontend/Ops.h"
#include "runtime/MemoryBudget.h"

#include <atomic>

using namespace kcc;

Tensor::Tensor(NDArray array)
    : kind_(array.defined() ? Kind::Concrete : Kind::Undefined),
      shape_(array.shape()), dtype_(array.dtype()), array_(std::move(array)) {}

void kcc::checkTensorSize(const Shape &shape, DType dtype,
                          const std::string &what) {
  TensorSize size = tensorSize(shape, dtypeSize(dtype), dtypeName(dtype));
  if (!size)
    throwInLayer(what.empty() ? size.error : what + " " + size.error);
}

Tensor Tensor::traced(mlir::Value value, Shape shape, DType dtype) {
  checkTensorSize(shape, dtype);
  Tensor t;
  t.kind_ = Kind::Traced;
  t.shape_ = std::move(shape);
  t.dtype_ = dtype;
  t.value_ = value;
  return t;
}

Tensor Tensor::symbolic(Shape shape, DType dtype,
                        std::shared_ptr<SymbolicNode> node, int outputIndex) {
  checkTensorSize(shape, dtype);
  Tensor t;
  t.kind_ = Kind::Symbolic;
  t.shape_ = std::move(shape);
  t.dtype_ = dtype;
  t.node_ = std::move(node);
  t.outputIndex_ = outputIndex;
  return t;
}

const NDArray &Tensor::array() const {
  if (kind_ != Kind::Concrete)
    throw Error("expected a concrete tensor, got " + describe() +
                " (symbolic and traced tensors hold no values)");
  return array_;
}

mlir::Value Tensor::value() const {
  if (kind_ != Kind::Traced)
    throw Error("expected a traced tensor, got " + describe());
  return value_;
}

std::string Tensor::shapeString() const {
  std::string s = shapeToString(shape_);
  if (kind_ != Kind::Symbolic || shape_.empty())
    return s;
  size_t end = s.find_first_of(",]");
  return "[None" + s.substr(end);
}

std::string Tensor::describe() const {
  static const char *kinds[] = {"undefined", "concrete", "traced", "symbolic"};
  if (kind_ == Kind::Undefined)
    return "an undefined tensor";
  return std::string(dtypeName(dtype_)) + shapeString() + " (" +
         kinds[static_cast<int>(kind_)] + ")";
}

Tensor Tensor::withMask(const Tensor &mask) const {
  Tensor t = *this;
  t.mask_ = mask.defined() ? std::make_shared<const Tensor>(mask.withoutMask())
                           : nullptr;
  return t;
}

Tensor kcc::Input(const Shape &shape, DType dtype, const std::string &name) {
  for (int64_t d : shape)
    if (d <= 0)
      throw Error("Input: dims must be positive (the batch dim is implicit), "
                  "got " +
                  shapeToString(shape));
  Shape full{kSymbolicBatch};
  full.insert(full.end(), shape.begin(), shape.end());
  // One row must fit; the batch is checked when the model is traced.
  checkTensorSize(full, dtype,
                  "Input" + (name.empty() ? std::string() : " '" + name + "'") +
                      ":");
  auto node = std::make_shared<SymbolicNode>();
  node->outputShapes = {full};
  node->outputDTypes = {dtype};
  node->inputName = name;
  return Tensor::symbolic(full, dtype, node, 0);
}

//===----------------------------------------------------------------------===//
// Layer scopes
//===----------------------------------------------------------------------===//

namespace {
/// Scopes are per thread: eager calls on different threads do not mix.
thread_local std::vector<std::string> scopeStack;
const std::string kNoLayer;
} // namespace

LayerScope::LayerScope(std::string layerName) {
  scopeStack.push_back(std::move(layerName));
}

LayerScope::~LayerScope() { scopeStack.pop_back(); }

const std::string &LayerScope::current() {
  return scopeStack.empty() ? kNoLayer : scopeStack.back();
}

void kcc::throwInLayer(const std::string &message) {
  const std::string &layer = LayerScope::current();
  if (layer.empty())
    throw Error(message);
  throw Error("layer '" + layer + "': " + message);
}
