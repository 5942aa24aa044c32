//===- HostLoss.cpp - A built-in loss of predictions, on the host ---------===//

#include "frontend/training/HostLoss.h"

#include "engine/interpreter/Interpreter.h"
#include "ir/KcDialect.h"
#include "passes/Losses.h"
#include "passes/Metrics.h"
#include "runtime/Error.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <algorithm>
#include <map>
#include <tuple>

using namespace kcc;
using namespace mlir;

struct HostLoss::Impl {
  LossConfig loss;
  MLIRContext context;
  /// @loss by (prediction shape, float dtype, weighted, masked): a partial
  /// last batch builds its own.
  mutable std::map<std::tuple<Shape, DType, bool, bool>, OwningOpRef<ModuleOp>>
      modules;
  mutable Interpreter interpreter;

  explicit Impl(const LossConfig &loss) : loss(loss) {
    context.loadDialect<kc::KcDialect, func::FuncDialect>();
  }
  ~Impl() { interpreter.clearConstantCache(); }

  func::FuncOp function(const Shape &shape, DType dtype, bool weighted,
                        bool masked) const;
};

/// The type of a Keras mask of predictions `pred`: its shape without the
/// last axis, in its float type.
static RankedTensorType maskType(RankedTensorType pred) {
  return RankedTensorType::get(pred.getShape().drop_back(),
                               pred.getElementType());
}

/// `mask` as the @loss and @statistics functions take it: `pred`'s shape
/// without its last axis, in `dtype`.
static NDArray maskArray(const NDArray &mask, const NDArray &pred,
                         DType dtype) {
  Shape shape(pred.shape().begin(), pred.shape().end() - 1);
  int64_t want = 1;
  for (int64_t d : shape)
    want *= d;
  if (pred.rank() < 2 || mask.numel() != want)
    throw Error("evaluate: a Keras mask " + shapeToString(mask.shape()) +
                " does not match predictions " + shapeToString(pred.shape()));
  return NDArray::fromVector(shape, mask.toVector(), dtype);
}

func::FuncOp HostLoss::Impl::function(const Shape &shape, DType dtype,
                                      bool weighted, bool masked) const {
  auto key = std::make_tuple(shape, dtype, weighted, masked);
  auto it = modules.find(key);
  if (it == modules.end()) {
    auto &ctx = const_cast<MLIRContext &>(context);
    OpBuilder b(&ctx);
    Location loc = NameLoc::get(b.getStringAttr("loss"));
    Type ft = dtype == DType::F64 ? Type(b.getF64Type()) : b.getF32Type();
    auto pred = RankedTensorType::get(shape, ft);
    RankedTensorType target = targetType(loss.kind, pred);
    if (!target)
      throw Error("evaluate: predictions " + shapeToString(shape) +
                  " cannot take the " + loss.name() + " loss");
    if (std::string why = checkLossShape(loss, pred, weighted); !why.empty())
      throw Error("evaluate: loss " + loss.str() + ": " + why);
    llvm::SmallVector<Type> args = {pred, target};
    if (weighted)
      args.push_back(RankedTensorType::get({shape[0]}, ft));
    if (masked)
      args.push_back(maskType(pred));
    OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
    b.setInsertionPointToEnd(module->getBody());
    auto f = b.create<func::FuncOp>(
        loc, "loss", b.getFunctionType(args, RankedTensorType::get({}, ft)));
    Block *body = f.addEntryBlock();
    b.setInsertionPointToEnd(body);
    Value value =
        buildLoss(b, loc, loss, body->getArgument(0), body->getArgument(1),
                  weighted ? body->getArgument(2) : Value(),
                  masked ? body->getArguments().back() : Value());
    b.create<func::ReturnOp>(loc, value);
    it = modules.emplace(key, std::move(module)).first;
  }
  return it->second->lookupSymbol<func::FuncOp>("loss");
}

HostLoss::HostLoss(const LossConfig &loss)
    : impl_(std::make_unique<Impl>(loss)) {}
HostLoss::~HostLoss() = default;
HostLoss::HostLoss(HostLoss &&) noexcept = default;
HostLoss &HostLoss::operator=(HostLoss &&) noexcept = default;

double HostLoss::operator()(const NDArray &pred, const NDArray &target,
                            const NDArray &weight, const NDArray &mask) const {
  // In float64, whatever the prediction's type: the batch losses are then
  // averaged over batches without float32 rounding, so any split of the
  // examples gives the same loss, as the former host formulas did.
  DType ft = DType::F64;
  auto as = [](const NDArray &a, DType dtype) {
    return a.dtype() == dtype
               ? a
               : NDArray::fromVector(a.shape(), a.toVector(), dtype);
  };
  // The target's shape: labels [n, ...] for the sparse loss (a trailing 1
  // squeezed, as Keras does), label sequences [n, steps] for ctc, else the
  // prediction's.
  LossKind kind = impl_->loss.kind;
  bool sparse = lossTakesLabels(kind) || kind == LossKind::CTC;
  Shape targetShape = pred.shape();
  if (kind == LossKind::CTC)
    targetShape.resize(std::min<size_t>(targetShape.size(), 2));
  else if (sparse && !targetShape.empty())
    targetShape.pop_back();
  int64_t want = 1;
  for (int64_t d : targetShape)
    want *= d;
  if (target.numel() != want)
    throw Error("evaluate: targets " + shapeToString(target.shape()) +
                " do not match predictions " + shapeToString(pred.shape()));
  std::vector<NDArray> args = {
      as(pred, ft), NDArray::fromVector(targetShape, target.toVector(),
                                        sparse ? DType::I32 : ft)};
  if (weight.defined())
    args.push_back(as(weight, ft));
  if (mask.defined())
    args.push_back(maskArray(mask, pred, ft));
  func::FuncOp f =
      impl_->function(pred.shape(), ft, weight.defined(), mask.defined());
  return impl_->interpreter.run(f, args)[0].toVector()[0];
}

struct HostMetricStatistics::Impl {
  MetricConfig metric;
  LossKind targetLoss;
  MLIRContext context;
  /// @statistics by (prediction shape, float dtype, masked).
  mutable std::map<std::tuple<Shape, DType, bool>, OwningOpRef<ModuleOp>>
      modules;
  mutable Interpreter interpreter;

  Impl(const MetricConfig &metric, LossKind targetLoss)
      : metric(metric), targetLoss(targetLoss) {
    context.loadDialect<kc::KcDialect, func::FuncDialect>();
  }
  ~Impl() { interpreter.clearConstantCache(); }

  func::FuncOp function(const Shape &shape, DType dtype, bool masked) const {
    auto key = std::make_tuple(shape, dtype, masked);
    auto it = modules.find(key);
    if (it == modules.end()) {
      auto &ctx = const_cast<MLIRContext &>(context);
      OpBuilder b(&ctx);
      Location loc = NameLoc::get(b.getStringAttr(metric.logName()));
      Type ft = dtype == DType::F64 ? Type(b.getF64Type()) : b.getF32Type();
      auto pred = RankedTensorType::get(shape, ft);
      RankedTensorType target = targetType(targetLoss, pred);
      if (!target)
        throw Error("evaluate: predictions " + shapeToString(shape) +
                    " cannot take metric " + metric.logName());
      if (std::string why = checkMetricShape(metric, pred); !why.empty())
        throw Error("evaluate: metric " + metric.logName() + ": " + why);
      OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
      b.setInsertionPointToEnd(module->getBody());
      llvm::SmallVector<Type> args = {pred, target};
      if (masked)
        args.push_back(maskType(pred));
      auto f = b.create<func::FuncOp>(loc, "statistics",
                                      b.getFunctionType(args, {}));
      Block *body = f.addEntryBlock();
      b.setInsertionPointToEnd(body);
      Value value =
          metric.stateful()
              ? buildMetricStatistics(b, loc, metric, body->getArgument(0),
                                      body->getArgument(1))
              : buildMetric(b, loc, metric, body->getArgument(0),
                            body->getArgument(1),
                            masked ? body->getArgument(2) : Value());
      b.create<func::ReturnOp>(loc, value);
      f.setType(b.getFunctionType(args, {value.getType()}));
      it = modules.emplace(key, std::move(module)).first;
    }
    return it->second->lookupSymbol<func::FuncOp>("statistics");
  }
};

HostMetricStatistics::HostMetricStatistics(const MetricConfig &metric,
                                           LossKind targetLoss)
    : impl_(std::make_unique<Impl>(metric, targetLoss)) {}
HostMetricStatistics::~HostMetricStatistics() = default;
HostMetricStatistics::HostMetricStatistics(HostMetricStatistics &&) noexcept =
    default;
HostMetricStatistics &
HostMetricStatistics::operator=(HostMetricStatistics &&) noexcept = default;

std::vector<double>
HostMetricStatistics::operator()(const NDArray &pred, const NDArray &target,
                                 const NDArray &mask) const {
  // A batch mean in float64 (as HostLoss); statistics in the prediction's
  // type, so threshold comparisons and sums are the step's.
  DType ft = !impl_->metric.stateful() || pred.dtype() == DType::F64
                 ? DType::F64
                 : DType::F32;
  NDArray p = pred.dtype() == ft
                  ? pred
                  : NDArray::fromVector(pred.shape(), pred.toVector(), ft);
  bool sparse = lossTakesLabels(impl_->targetLoss);
  Shape targetShape = pred.shape();
  if (sparse && !targetShape.empty())
    targetShape.pop_back();
  int64_t want = 1;
  for (int64_t d : targetShape)
    want *= d;
  if (target.numel() != want)
    throw Error("evaluate: targets " + shapeToString(target.shape()) +
                " do not match predictions " + shapeToString(pred.shape()));
  std::vector<NDArray> args = {
      p, NDArray::fromVector(targetShape, target.toVector(),
                             sparse ? DType::I32 : ft)};
  if (mask.defined())
    args.push_back(maskArray(mask, pred, ft));
  func::FuncOp f = impl_->function(pred.shape(), ft, mask.defined());
  return impl_->interpreter.run(f, args)[0].toVector();
}
