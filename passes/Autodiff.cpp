//===- Autodiff.cpp - Reverse-mode differentiation of kc functions --------===//
//
// The reverse sweep over a block of kc ops. Two passes over the block find
// the active ops (a float operand that depends on a `wrt` value, a result
// the loss depends on); the sweep then calls their gradient rules in reverse
// program order. Because the rules build the gradient of every operand,
// a listener records what they create and the gradients no `wrt` value needs
// are erased at the end (kc ops are pure, so that is plain DCE).
//
//===----------------------------------------------------------------------===//

#include "passes/Autodiff.h"

#include "ir/KcDialect.h"
#include "ir/gradients/GradientBuilder.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/ScopeExit.h"

using namespace mlir;

namespace kcc {
namespace {

bool isFloatTensor(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && isa<FloatType>(type.getElementType());
}

/// A splat constant of a tensor type (float or integer elements).
Value splat(OpBuilder &b, Location loc, Type type, double value) {
  auto tensor = cast<RankedTensorType>(type);
  Type elem = tensor.getElementType();
  Attribute scalar = isa<FloatType>(elem)
                         ? Attribute(b.getFloatAttr(elem, value))
                         : Attribute(b.getIntegerAttr(elem, (int64_t)value));
  return b.create<kc::ConstantOp>(
      loc, DenseElementsAttr::get(tensor, llvm::ArrayRef(scalar)));
}

/// Records the ops a builder inserts and forwards every notification to the
/// listener the builder had, so a rewriter driving us stays informed.
class RecordingListener : public OpBuilder::Listener {
public:
  explicit RecordingListener(OpBuilder::Listener *next) : next(next) {}

  void notifyOperationInserted(Operation *op,
                               OpBuilder::InsertPoint previous) override {
    created.push_back(op);
    if (next)
      next->notifyOperationInserted(op, previous);
  }
  void notifyBlockInserted(Block *block, Region *previous,
                           Region::iterator previousIt) override {
    if (next)
      next->notifyBlockInserted(block, previous, previousIt);
  }

  /// Erases the recorded ops that ended up unused, except `keep`.
  void eraseUnused(const llvm::DenseSet<Value> &keep) {
    for (Operation *op : llvm::reverse(created)) {
      if (!op->use_empty() || !isPure(op) ||
          llvm::any_of(op->getResults(),
                       [&](Value r) { return keep.contains(r); }))
        continue;
      if (auto *rewriter = dyn_cast_or_null<RewriterBase::Listener>(next))
        rewriter->notifyOperationErased(op);
      op->erase();
    }
    created.clear();
  }

private:
  OpBuilder::Listener *next;
  SmallVector<Operation *> created;
};

/// The ops of `block` up to `last` (inclusive) in reverse program order that
/// lie on a float data path from a `wrt` value to `loss`. `useful` gets the
/// values on such paths: the ones whose gradient is needed.
SmallVector<Operation *> findActiveOps(Block *block, Operation *last,
                                       Value loss, ValueRange wrt,
                                       llvm::DenseSet<Value> &useful) {
  // Forward: values that depend on some wrt value through float data.
  llvm::DenseSet<Value> varied;
  for (Value w : wrt)
    if (isFloatTensor(w))
      varied.insert(w);
  for (Operation &op : *block) {
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return varied.contains(v); }))
      for (Value r : op.getResults())
        if (isFloatTensor(r))
          varied.insert(r);
    if (&op == last)
      break;
  }
  // Backward: of those, the ones the loss depends on.
  SmallVector<Operation *> active;
  if (!varied.contains(loss))
    return active;
  useful.insert(loss);
  if (!last)
    return active;
  for (Operation *op = last; op; op = op->getPrevNode()) {
    // A wrt value defined by an op makes that op's result varied without
    // a varied operand: the sweep stops there.
    if (llvm::none_of(op->getResults(),
                      [&](Value r) { return useful.contains(r); }) ||
        llvm::none_of(op->getOperands(),
                      [&](Value v) { return varied.contains(v); }))
      continue;
    active.push_back(op);
    for (Value operand : op->getOperands())
      if (varied.contains(operand))
        useful.insert(operand);
  }
  return active;
}

} // namespace

FailureOr<SmallVector<Value>> buildGradients(OpBuilder &b, Value loss,
                                             ValueRange wrt) {
  Operation *lossOp = loss.getDefiningOp();
  Location lossLoc = loss.getLoc();
  if (!isFloatTensor(loss))
    return emitError(lossLoc)
           << "expects a float tensor loss, got " << loss.getType();

  llvm::DenseSet<Value> useful;
  SmallVector<Operation *> active =
      findActiveOps(loss.getParentBlock(), lossOp, loss, wrt, useful);

  // Check every rule exists before building anything, so failure leaves the
  // IR untouched.
  for (Operation *op : active) {
    if (!isa<kc::GradientOpInterface>(op))
      return op->emitError()
             << "no gradient rule for '" << op->getName() << "'";
    if (op->getNumResults() != 1)
      return op->emitError()
             << "autodiff expects one result, '" << op->getName() << "' has "
             << op->getNumResults();
  }

  OpBuilder::Listener *previousListener = b.getListener();
  RecordingListener recorder(previousListener);
  b.setListener(&recorder);
  auto restoreListener =
      llvm::make_scope_exit([&] { b.setListener(previousListener); });

  llvm::DenseMap<Value, Value> grads;
  if (!useful.empty())
    grads[loss] = splat(b, lossLoc, loss.getType(), 1.0);

  for (Operation *op : active) {
    Value resultGrad = grads.lookup(op->getResult(0));
    if (!resultGrad)
      continue; // every rule downstream gave this result no gradient
    SmallVector<Value> opGrads =
        cast<kc::GradientOpInterface>(op).buildGradients(b, resultGrad);
    if (opGrads.size() != op->getNumOperands())
      return op->emitError()
             << "gradient rule of '" << op->getName() << "' returned "
             << opGrads.size() << " gradients for " << op->getNumOperands()
             << " operands";
    Location loc = kc::gradientLoc(op);
    for (auto [operand, grad] : llvm::zip(op->getOperands(), opGrads)) {
      if (!grad || !useful.contains(operand))
        continue;
      if (grad.getType() != operand.getType())
        return op->emitError()
               << "gradient rule of '" << op->getName() << "' returned "
               << grad.getType() << " for an operand of type "
               << operand.getType();
      Value &acc = grads[operand];
      // Fan-out: a value used twice receives the sum of both gradients.
      acc = acc ? b.create<kc::AddOp>(loc, operand.getType(), acc, grad)
                      .getResult()
                : grad;
    }
  }

  SmallVector<Value> result;
  llvm::DenseSet<Value> keep;
  for (Value w : wrt) {
    Value g = grads.lookup(w);
    if (!g)
      g = splat(b, lossLoc, w.getType(), 0.0);
    result.push_back(g);
    keep.insert(g);
  }
  recorder.eraseUnused(keep);
  return result;
}

} // namespace kcc
