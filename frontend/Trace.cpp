//===- Trace.cpp - Tracing layer calls into a kc function -----------------===//

#include "frontend/Trace.h"
#include "frontend/Model.h"
#include "frontend/Ops.h"
#include "ir/KcAttributes.h"
#include "ir/KcDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

using namespace kcc;
using namespace mlir;

/// Output `k`'s Keras mask `mask` as the loss and metrics weigh the
/// prediction `pred` by it: of pred's shape without its last axis, float
/// (Keras casts it), a trailing axis of 1 squeezed as Keras's
/// squeeze_or_expand_to_same_rank does. A mask of another shape (a
/// Softmax's mask argument handed on) is an error, as in Keras's loss.
static Tensor lossMask(const Tensor &pred, const Tensor &mask, Model &model,
                       size_t k) {
  Shape want(pred.shape().begin(),
             pred.shape().end() - std::min<int64_t>(pred.rank(), 1));
  Shape withOne = want;
  withOne.push_back(1);
  Tensor m = mask.shape() == withOne ? ops::reshape(mask, want) : mask;
  if (pred.rank() < 2 || m.shape() != want) {
    std::vector<std::string> names = model.outputNames();
    throw Error("model '" + model.name() + "' output " + std::to_string(k) +
                (k < names.size() ? " ('" + names[k] + "')" : "") +
                " carries a Keras mask of shape " + mask.shapeString() +
                ", which Keras's loss cannot weigh predictions " +
                pred.shapeString() + " by: it needs " + shapeToString(want) +
                "; drop the mask before the output (a layer without "
                "masking, such as Dot or Flatten)");
  }
  if (m.dtype() != DType::F32)
    m = ops::cast(m, DType::F32);
  return m;
}

mlir::Type kcc::toMlirType(MLIRContext *ctx, DType dtype) {
  Builder b(ctx);
  switch (dtype) {
  case DType::F32:
    return b.getF32Type();
  case DType::F64:
    return b.getF64Type();
  case DType::F16:
    return b.getF16Type();
  case DType::BF16:
    return b.getBF16Type();
  case DType::I1:
    return b.getI1Type();
  case DType::I32:
    return b.getI32Type();
  case DType::I64:
    return b.getI64Type();
  }
  throw Error("unknown dtype");
}

RankedTensorType kcc::toTensorType(MLIRContext *ctx, const Shape &shape,
                                   DType dtype) {
  return RankedTensorType::get(shape, toMlirType(ctx, dtype));
}

//===----------------------------------------------------------------------===//
// TraceContext
//===----------------------------------------------------------------------===//

namespace {
thread_local TraceContext *activeTrace = nullptr;
} // namespace

TraceContext::TraceContext(OpBuilder &builder)
    : builder_(builder), previous_(activeTrace) {
  activeTrace = this;
}

TraceContext::~TraceContext() { activeTrace = previous_; }

TraceContext *TraceContext::current() { return activeTrace; }

Location TraceContext::location() {
  const std::string &layer = LayerScope::current();
  if (layer.empty())
    return builder_.getUnknownLoc();
  return NameLoc::get(builder_.getStringAttr(layer));
}

void TraceContext::bindWeight(const Weight *weight, const Tensor &value) {
  weights_[weight] = value;
}

const Tensor *TraceContext::lookupWeight(const Weight *weight) const {
  auto it = weights_.find(weight);
  return it == weights_.end() ? nullptr : &it->second;
}

void TraceContext::assignWeight(const Weight *weight, const Tensor &value) {
  if (weights_.count(weight))
    assignments_[weight] = value;
}

const Tensor *TraceContext::lookupAssignment(const Weight *weight) const {
  auto it = assignments_.find(weight);
  return it == assignments_.end() ? nullptr : &it->second;
}

//===----------------------------------------------------------------------===//
// traceForward
//===----------------------------------------------------------------------===//

void kcc::registerFrontendDialects(MLIRContext &ctx) {
  ctx.loadDialect<kc::KcDialect, func::FuncDialect>();
}

OwningOpRef<ModuleOp> kcc::traceForward(MLIRContext &ctx, Model &model,
                                        const TraceOptions &options) {
  if (options.batch <= 0)
    throw Error("traceForward: batch must be positive, got " +
                std::to_string(options.batch));
  registerFrontendDialects(ctx);

  // Parameters in Model::parameters() order: layers in graph order, each
  // layer's weights in declaration order. Only shapes are needed here.
  struct Param {
    const Weight *weight;
    std::string name;
  };
  std::vector<Param> params;
  for (const Layer &layer : model.layers())
    for (const Weight &w : layer.impl()->weights())
      params.push_back({&w, layer.name() + "/" + w.name});
  std::vector<Shape> inShapes = model.inputShapes();
  std::vector<DType> inDTypes = model.inputDTypes();
  bool withStep = options.training && model.usesRandomness();

  SmallVector<Type> argTypes;
  for (const Param &p : params)
    argTypes.push_back(toTensorType(&ctx, p.weight->shape, p.weight->dtype));
  std::vector<Shape> batched;
  for (size_t i = 0; i < inShapes.size(); ++i) {
    Shape s{options.batch};
    s.insert(s.end(), inShapes[i].begin(), inShapes[i].end());
    // The batch is the first size the model has not seen: --batch 10^9
    // must be an error here, not a wrapped shape or a 3 TB allocation.
    checkTensorSize(s, inDTypes[i],
                    "traceForward: input " + std::to_string(i) + " of '" +
                        model.name() + "' at batch " +
                        std::to_string(options.batch) + ":");
    batched.push_back(s);
    argTypes.push_back(toTensorType(&ctx, s, inDTypes[i]));
  }
  if (withStep)
    argTypes.push_back(toTensorType(&ctx, {}, DType::I64));

  OpBuilder b(&ctx);
  Location loc = NameLoc::get(b.getStringAttr(model.name()));
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  auto func = b.create<func::FuncOp>(loc, options.funcName,
                                     b.getFunctionType(argTypes, {}));
  // Argument locations name what they carry, so a verifier message about an
  // argument says "dense/kernel" rather than pointing at the whole function.
  Block *entry = b.createBlock(&func.getBody());
  for (auto [i, type] : llvm::enumerate(argTypes)) {
    std::string what = i < params.size() ? params[i].name
                       : i < params.size() + inShapes.size()
                           ? "input_" + std::to_string(i - params.size())
                           : std::string("step");
    entry->addArgument(type, NameLoc::get(b.getStringAttr(what)));
  }
  b.setInsertionPointToEnd(entry);

  SmallVector<Value> results;
  SmallVector<Type> resultTypes;
  /// (result, parameter argument) of each weight update.
  SmallVector<std::pair<size_t, size_t>> updated;
  /// The kc.added_loss result, if any.
  std::optional<size_t> addedLoss;
  /// (result, prediction) of each output's mask.
  SmallVector<std::pair<size_t, size_t>> masks;
  {
    TraceContext trace(b);
    for (auto [i, p] : llvm::enumerate(params))
      trace.bindWeight(p.weight,
                       Tensor::traced(entry->getArgument(i), p.weight->shape,
                                      p.weight->dtype));
    std::vector<Tensor> inputs;
    for (size_t i = 0; i < inShapes.size(); ++i)
      inputs.push_back(Tensor::traced(entry->getArgument(params.size() + i),
                                      batched[i], inDTypes[i]));
    CallContext cc;
    cc.training = options.training;
    if (withStep)
      cc.step = Tensor::traced(entry->getArguments().back(), {}, DType::I64);
    std::vector<Tensor> outs = model.call(inputs, cc);
    // Predictions leave in float32 whatever the last layer computed in:
    // Keras's losses and metrics cast y_pred to float32, and a bfloat16
    // value is exact in float32.
    for (Tensor &out : outs)
      if (out.dtype() == DType::BF16 || out.dtype() == DType::F16) {
        Tensor wide = ops::cast(out, DType::F32);
        out = out.mask() ? wide.withMask(*out.mask()) : wide;
      }
    for (const Tensor &out : outs) {
      if (!out.isTraced())
        throw Error("traceForward: model '" + model.name() + "' returns " +
                    out.describe() + ", which does not depend on its inputs");
      results.push_back(out.value());
      resultTypes.push_back(out.value().getType());
    }
    for (auto [i, p] : llvm::enumerate(params))
      if (const Tensor *update = trace.lookupAssignment(p.weight)) {
        updated.push_back({results.size(), i});
        results.push_back(update->value());
        resultTypes.push_back(update->value().getType());
      }
    if (options.training || options.outputMasks)
      for (auto [k, out] : llvm::enumerate(outs))
        if (const Tensor *given = out.mask()) {
          Tensor mask = lossMask(out, *given, model, k);
          masks.push_back({results.size(), k});
          results.push_back(mask.value());
          resultTypes.push_back(mask.value().getType());
        }
    if (options.training) {
      // Keras's sum(model.losses): the activity penalties the calls
      // recorded, then each trainable weight's penalty.
      std::vector<Tensor> terms = trace.addedLosses();
      for (auto [i, p] : llvm::enumerate(params))
        if (p.weight->trainable && p.weight->regularizer) {
          LayerScope scope(p.name.substr(0, p.name.rfind('/')));
          terms.push_back(regularizationPenalty(*trace.lookupWeight(p.weight),
                                                *p.weight->regularizer));
        }
      if (!terms.empty()) {
        Tensor total = terms[0];
        for (size_t i = 1; i < terms.size(); ++i)
          total = ops::add(total, terms[i]);
        addedLoss = results.size();
        results.push_back(total.value());
        resultTypes.push_back(total.value().getType());
      }
    }
  }
  b.create<func::ReturnOp>(loc, results);
  func.setType(b.getFunctionType(argTypes, resultTypes));

  // Every argument's attributes at once: setting them one index at a time
  // rebuilds the function's whole argument-attribute array each time, which
  // is quadratic in the number of parameters.
  auto attr = [&](StringRef name, Attribute value) {
    return NamedAttribute(b.getStringAttr(name), value);
  };
  llvm::SmallVector<DictionaryAttr> argAttrs(argTypes.size(),
                                             b.getDictionaryAttr({}));
  for (auto [i, p] : llvm::enumerate(params))
    argAttrs[i] = b.getDictionaryAttr(
        {attr(kc::attr::kName, b.getStringAttr(p.name)),
         attr(kc::attr::kTrainable, b.getBoolAttr(p.weight->trainable))});
  for (size_t i = 0; i < inShapes.size(); ++i)
    argAttrs[params.size() + i] =
        b.getDictionaryAttr({attr(kc::attr::kInput, b.getI64IntegerAttr(i))});
  if (withStep)
    argAttrs.back() =
        b.getDictionaryAttr({attr(kc::attr::kStep, b.getUnitAttr())});
  func.setAllArgAttrs(argAttrs);
  for (auto [result, arg] : updated)
    kc::setUpdatedArg(func, result, arg);
  if (addedLoss)
    kc::setAddedLoss(func, *addedLoss);
  // An inference trace's masks are plain results: the caller knows them by
  // their place after the predictions.
  if (options.training)
    for (auto [result, k] : masks)
      kc::setMaskedOutput(func, result, k);

  // Verify before handing out: a frontend bug must not surface as a
  // confusing failure in a later pass.
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    os << d.getLocation() << ": " << d << "\n";
    return success();
  });
  if (failed(verify(*module)))
    throw Error("traceForward: the traced module of '" + model.name() +
                "' does not verify:\n" + os.str());
  return module;
}
