//===- Merging.cpp - Add, Concatenate, Multiply, Subtract, ... ------------===//
//
// Keras's merge layers. Each folds its list of inputs left to right with
// one kc op, in the order Keras's _merge_function does, so rounding matches.
//
//===----------------------------------------------------------------------===//

#include "frontend/Layers.h"
#include "frontend/Masks.h"
#include "frontend/Ops.h"

#include <cmath>

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
    Tensor y = ops::concat(inputs, axis);
    const Tensor *mask = nullptr;
    for (const Tensor &x : inputs)
      if (x.mask() && !mask)
        mask = &*x.mask();
    if (!mask)
      return {y};
    // Keras's compute_mask: each input's mask over its features (all ones
    // for an input without one), joined along the axis, then any() over the
    // last axis: the OR of the masks when joining features, the masks one
    // after the other when joining steps.
    if (rank != 3)
      fail("joins masked inputs of rank " + std::to_string(rank) +
           "; kcc models Keras's Concatenate mask for [batch, steps, "
           "features] inputs only");
    std::vector<Tensor> masks;
    for (const Tensor &x : inputs)
      masks.push_back(
          x.mask() ? ops::broadcastTo(maskForRank(*x.mask(), 3), x.shape())
                   : ops::fillLike(*mask, x.shape(), 1.0));
    return {y.withMask(ops::reduceMax(ops::concat(masks, axis), {2}))};
  }

  MaskRule maskRule() const override { return MaskRule::Own; }

private:
  int64_t axis_;
};

using MergeKind = ElementwiseMergeImpl::Kind;

/// Keras's batch_dot for rank 2 and rank 3: the axes resolved against each
/// input's rank (a negative axis counts from the end), then one multiply
/// and sum (rank 2) or one batched matmul (rank 3).
class DotImpl : public LayerImpl {
public:
  DotImpl(int64_t axis1, int64_t axis2, bool same, bool normalize)
      : LayerImpl("Dot"), axis1_(axis1), axis2_(axis2), same_(same),
        normalize_(normalize) {}
  llvm::json::Object kerasConfig() const override {
    llvm::json::Value axes =
        same_ ? llvm::json::Value(axis1_) : llvm::json::Array{axis1_, axis2_};
    return llvm::json::Object{{"axes", std::move(axes)},
                              {"normalize", normalize_}};
  }

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    expectInputs(inputs, 2);
    Tensor x1 = inputs[0], x2 = inputs[1];
    if (x1.rank() != x2.rank() || x1.rank() < 2 || x1.rank() > 3)
      fail("expects two inputs of rank 2 or two of rank 3, got " +
           x1.shapeString() + " and " + x2.shapeString());
    int64_t rank = x1.rank();
    int64_t a1 = axis1_ < 0 ? axis1_ + rank : axis1_;
    int64_t a2 = axis2_ < 0 ? axis2_ + rank : axis2_;
    if (a1 < 1 || a1 >= rank || a2 < 1 || a2 >= rank)
      fail("axes (" + std::to_string(axis1_) + ", " + std::to_string(axis2_) +
           ") are not non-batch axes of " + x1.shapeString());
    if (x1.dim(a1) != x2.dim(a2))
      fail("axis " + std::to_string(a1) + " of " + x1.shapeString() +
           " and axis " + std::to_string(a2) + " of " + x2.shapeString() +
           " differ in size");
    if (normalize_) {
      // Keras's utils.normalize: ops.normalize at epsilon() = 1e-7.
      x1 = ops::l2Normalize(x1, {a1}, 1e-7);
      x2 = ops::l2Normalize(x2, {a2}, 1e-7);
    }
    if (rank == 2)
      return {ops::reduceSum(ops::mul(x1, x2), {1}, /*keepdims=*/true)};
    // [N, a, k] . [N, k, b] with x1's contracted axis last, x2's first.
    return {ops::batchMatmul(x1, x2, /*transposeA=*/a1 == 1,
                             /*transposeB=*/a2 == 2)};
  }

private:
  int64_t axis1_, axis2_;
  bool same_, normalize_;
};

/// A keras.src.ops node with a number operand, as Keras 3 saves x + 3.0 or
/// x * (1 / 6): the op (Add, Subtract, Multiply, Divide) of the tensor and
/// the number, in the node's order.
class ScalarArithmeticImpl : public LayerImpl {
public:
  ScalarArithmeticImpl(std::string op, double value, bool valueFirst)
      : LayerImpl(op), op_(std::move(op)), value_(value),
        valueFirst_(valueFirst) {
    if (!std::isfinite(value))
      throw Error("ScalarArithmetic: the number must be finite");
    if (op_ != "Add" && op_ != "Subtract" && op_ != "Multiply" &&
        op_ != "Divide")
      throw Error("ScalarArithmetic: unknown op '" + op_ + "'");
  }

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    expectInputs(inputs, 1);
    const Tensor &x = inputs[0];
    Tensor c = ops::scalar(value_, x.dtype());
    const Tensor &a = valueFirst_ ? c : x;
    const Tensor &b = valueFirst_ ? x : c;
    if (op_ == "Add")
      return {ops::add(a, b)};
    if (op_ == "Subtract")
      return {ops::sub(a, b)};
    if (op_ == "Multiply")
      return {ops::mul(a, b)};
    return {ops::div(a, b)};
  }

public:
  ScalarOperand operand() const { return {value_, valueFirst_}; }

private:
  std::string op_;
  double value_;
  bool valueFirst_;
};

} // namespace

Add::Add() : Layer(std::make_shared<AddImpl>()) {}

std::optional<ScalarOperand> kcc::scalarOperandOf(const Layer &layer) {
  if (auto *s = dynamic_cast<ScalarArithmeticImpl *>(layer.impl().get()))
    return s->operand();
  return std::nullopt;
}

ScalarArithmetic::ScalarArithmetic(std::string op, double value,
                                   bool valueFirst)
    : Layer(std::make_shared<ScalarArithmeticImpl>(std::move(op), value,
                                                   valueFirst)) {}

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

Dot::Dot(int64_t axes, bool normalize)
    : Layer(std::make_shared<DotImpl>(axes, axes, /*same=*/true, normalize)) {}

Dot::Dot(int64_t axis1, int64_t axis2, bool normalize)
    : Layer(
          std::make_shared<DotImpl>(axis1, axis2, /*same=*/false, normalize)) {}
