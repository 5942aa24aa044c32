//===- Merging.cpp - Add, Concatenate, Multiply, Subtract, ... ------------===//
//
// Keras's merge layers. Each folds its list of inputs left to right with
// one kc op, in the order Keras's _merge_function does, so rounding matches.
//
//===----------------------------------------------------------------------===//

#include "frontend/Layers.h"
#include "frontend/Ops.h"

using namespace kcc;

namespace {

/// The base of the merge layers: each takes a list of 2 or more inputs.
class MergeImpl : public LayerImpl {
public:
  using LayerImpl::LayerImpl;

protected:
  /// Fails unless `inputs` holds at least 2 tensors.
  void expectList(const std::vector<Tensor> &inputs) const {
    if (inputs.size() < 2)
      fail("expects a list of at least 2 inputs, got " +
           std::to_string(inputs.size()));
  }
};

class AddImpl : public MergeImpl {
public:
  AddImpl() : MergeImpl("Add") {}

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    expectList(inputs);
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

/// Multiply, Subtract, Average, Maximum, Minimum: Keras's elementwise
/// merges, whose inputs share a rank and broadcast where a dim is 1.
class ElementwiseMergeImpl : public MergeImpl {
public:
  enum class Kind { Multiply, Subtract, Average, Maximum, Minimum };

  ElementwiseMergeImpl(std::string className, Kind kind)
      : MergeImpl(std::move(className)), kind_(kind) {}

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    if (kind_ == Kind::Subtract && inputs.size() != 2)
      fail("expects exactly 2 inputs, got " + std::to_string(inputs.size()));
    expectList(inputs);
    const Shape &first = inputs[0].shape();
    for (const Tensor &t : inputs) {
      bool ok = t.rank() == inputs[0].rank();
      for (int64_t d = 0; ok && d < t.rank(); ++d)
        ok = t.dim(d) == first[d] || t.dim(d) == 1 || first[d] == 1;
      if (!ok)
        fail("expects inputs of one rank whose dims are equal or 1, got " +
             inputs[0].shapeString() + " and " + t.shapeString());
    }
    Tensor out = inputs[0];
    for (size_t i = 1; i < inputs.size(); ++i)
      out = combine(out, inputs[i]);
    if (kind_ == Kind::Average)
      out = ops::div(out, ops::fillLike(out, out.shape(),
                                        static_cast<double>(inputs.size())));
    return {out};
  }

private:
  Tensor combine(const Tensor &a, const Tensor &b) const {
    switch (kind_) {
    case Kind::Multiply:
      return ops::mul(a, b);
    case Kind::Subtract:
      return ops::sub(a, b);
    case Kind::Average:
      return ops::add(a, b);
    case Kind::Maximum:
      return ops::maximum(a, b);
    case Kind::Minimum:
      return ops::minimum(a, b);
    }
    return a;
  }

  Kind kind_;
};

class ConcatenateImpl : public MergeImpl {
public:
  explicit ConcatenateImpl(int64_t axis)
      : MergeImpl("Concatenate"), axis_(axis) {}
  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{{"axis", axis_}};
  }

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    expectList(inputs);
    int64_t rank = inputs[0].rank();
    int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    if (axis < 1 || axis >= rank)
      fail("axis " + std::to_string(axis_) +
           " is out of range for inputs of rank " + std::to_string(rank) +
           " (the batch axis cannot be joined)");
    // ops::concat checks that the other dims agree and names the shapes.
    return {ops::concat(inputs, axis)};
  }

private:
  int64_t axis_;
};

using MergeKind = ElementwiseMergeImpl::Kind;

} // namespace

Add::Add() : Layer(std::make_shared<AddImpl>()) {}

Concatenate::Concatenate(int64_t axis)
    : Layer(std::make_shared<ConcatenateImpl>(axis)) {}

/// The constructor of the elementwise merge layer NAME: its Impl folds
/// with MergeKind::NAME.
#define KCC_ELEMENTWISE_MERGE_LAYER(NAME)                                      \
  NAME::NAME()                                                                 \
      : Layer(                                                                 \
            std::make_shared<ElementwiseMergeImpl>(#NAME, MergeKind::NAME)) {}

KCC_ELEMENTWISE_MERGE_LAYER(Multiply)
KCC_ELEMENTWISE_MERGE_LAYER(Subtract)
KCC_ELEMENTWISE_MERGE_LAYER(Average)
KCC_ELEMENTWISE_MERGE_LAYER(Maximum)
KCC_ELEMENTWISE_MERGE_LAYER(Minimum)

#undef KCC_ELEMENTWISE_MERGE_LAYER
