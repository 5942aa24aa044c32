//===- KcAttributes.cpp - Accessors for the kc.* attributes ---------------===//
//
// Each accessor reads the attribute at the type the dialect verifies, so a
// missing attribute and a malformed one (in unverified IR) both read as
// absent.
//
//===----------------------------------------------------------------------===//

#include "ir/KcAttributes.h"

using namespace mlir;
using namespace kcc;

//===----------------------------------------------------------------------===//
// Arguments and results
//===----------------------------------------------------------------------===//

std::optional<StringRef> kc::getArgName(FunctionOpInterface f, unsigned i) {
  if (auto name = f.getArgAttrOfType<StringAttr>(i, attr::kName))
    return name.getValue();
  return std::nullopt;
}

std::optional<StringRef> kc::getResultName(FunctionOpInterface f, unsigned i) {
  if (auto name = f.getResultAttrOfType<StringAttr>(i, attr::kName))
    return name.getValue();
  return std::nullopt;
}

DictionaryAttr kc::getNameDict(MLIRContext *ctx, StringRef name) {
  return DictionaryAttr::get(ctx,
                             {NamedAttribute(StringAttr::get(ctx, attr::kName),
                                             StringAttr::get(ctx, name))});
}

bool kc::isTrainableArg(FunctionOpInterface f, unsigned i) {
  auto trainable = f.getArgAttrOfType<BoolAttr>(i, attr::kTrainable);
  return trainable && trainable.getValue();
}

std::optional<unsigned> kc::getUpdatedArg(FunctionOpInterface f, unsigned i) {
  if (auto arg = f.getResultAttrOfType<IntegerAttr>(i, attr::kUpdates))
    return static_cast<unsigned>(arg.getInt());
  return std::nullopt;
}

void kc::setUpdatedArg(FunctionOpInterface f, unsigned i, unsigned arg) {
  f.setResultAttr(i, attr::kUpdates,
                  IntegerAttr::get(IntegerType::get(f.getContext(), 64), arg));
}

bool kc::isAddedLoss(FunctionOpInterface f, unsigned i) {
  return static_cast<bool>(f.getResultAttr(i, attr::kAddedLoss));
}

void kc::setAddedLoss(FunctionOpInterface f, unsigned i) {
  f.setResultAttr(i, attr::kAddedLoss, UnitAttr::get(f.getContext()));
}

std::optional<unsigned> kc::getMaskedOutput(FunctionOpInterface f, unsigned i) {
  if (auto k = f.getResultAttrOfType<IntegerAttr>(i, attr::kOutputMask))
    return static_cast<unsigned>(k.getInt());
  return std::nullopt;
}

void kc::setMaskedOutput(FunctionOpInterface f, unsigned i, unsigned k) {
  f.setResultAttr(i, attr::kOutputMask,
                  IntegerAttr::get(IntegerType::get(f.getContext(), 64), k));
}

/// An index attribute (kc.input, kc.target) of argument `i`.
static std::optional<int64_t> getArgIndex(FunctionOpInterface f, unsigned i,
                                          StringRef name) {
  if (auto index = f.getArgAttrOfType<IntegerAttr>(i, name))
    return index.getInt();
  return std::nullopt;
}

std::optional<int64_t> kc::getInputIndex(FunctionOpInterface f, unsigned i) {
  return getArgIndex(f, i, attr::kInput);
}

bool kc::isInputArg(FunctionOpInterface f, unsigned i) {
  return getInputIndex(f, i).has_value();
}

std::optional<int64_t> kc::getTargetIndex(FunctionOpInterface f, unsigned i) {
  return getArgIndex(f, i, attr::kTarget);
}

bool kc::isStepArg(FunctionOpInterface f, unsigned i) {
  return static_cast<bool>(f.getArgAttrOfType<UnitAttr>(i, attr::kStep));
}

bool kc::isArenaArg(FunctionOpInterface f, unsigned i) {
  return static_cast<bool>(f.getArgAttrOfType<UnitAttr>(i, attr::kArena));
}

void kc::setArenaArg(FunctionOpInterface f, unsigned i) {
  f.setArgAttr(i, attr::kArena, UnitAttr::get(f.getContext()));
}

//===----------------------------------------------------------------------===//
// Functions
//===----------------------------------------------------------------------===//

std::optional<int64_t> kc::getCount(Operation *func, StringRef name) {
  if (auto count = func->getAttrOfType<IntegerAttr>(name))
    return count.getInt();
  return std::nullopt;
}

void kc::setCount(Operation *func, StringRef name, int64_t value) {
  func->setAttr(
      name, IntegerAttr::get(IntegerType::get(func->getContext(), 64), value));
}

/// A flat list of (result, argument) pairs.
static std::optional<ArrayRef<int64_t>> getPairs(Operation *func,
                                                 StringRef name) {
  if (auto pairs = func->getAttrOfType<DenseI64ArrayAttr>(name))
    return pairs.asArrayRef();
  return std::nullopt;
}

std::optional<ArrayRef<int64_t>> kc::getUpdateCandidates(Operation *func) {
  return getPairs(func, attr::kUpdateCandidates);
}

void kc::setUpdateCandidates(Operation *func, ArrayRef<int64_t> pairs) {
  assert(pairs.size() % 2 == 0 && "expects (result, argument) pairs");
  func->setAttr(attr::kUpdateCandidates,
                DenseI64ArrayAttr::get(func->getContext(), pairs));
}

std::optional<ArrayRef<int64_t>> kc::getInPlacePairs(Operation *func) {
  return getPairs(func, attr::kInPlace);
}

void kc::setInPlacePairs(Operation *func, ArrayRef<int64_t> pairs) {
  assert(pairs.size() % 2 == 0 && "expects (result, argument) pairs");
  func->setAttr(attr::kInPlace,
                DenseI64ArrayAttr::get(func->getContext(), pairs));
}

DictionaryAttr kc::getTrainStep(Operation *func) {
  return func->getAttrOfType<DictionaryAttr>(attr::kTrainStep);
}

void kc::setTrainStep(Operation *func, DictionaryAttr layout) {
  func->setAttr(attr::kTrainStep, layout);
}

//===----------------------------------------------------------------------===//
// Loops
//===----------------------------------------------------------------------===//

void kc::setFusion(Operation *loop, DictionaryAttr group) {
  loop->setAttr(attr::kFusion, group);
}

bool kc::isParallelLoop(Operation *loop) {
  return loop->hasAttrOfType<UnitAttr>(attr::kParallel);
}

void kc::setParallelLoop(Operation *loop) {
  loop->setAttr(attr::kParallel, UnitAttr::get(loop->getContext()));
}

//===----------------------------------------------------------------------===//
// Parsed input
//===----------------------------------------------------------------------===//

LogicalResult kc::checkDenseArrayStorage(Operation *root) {
  WalkResult result = root->walk([](Operation *op) {
    WalkResult inner = op->getAttrDictionary().walk([&](DenseArrayAttr a) {
      Type element = a.getElementType();
      // Storage is one byte per i1, the type's bytes otherwise.
      int64_t bytes = element.isIntOrFloat()
                          ? (element.getIntOrFloatBitWidth() + 7) / 8
                          : 0;
      if (bytes == 0 ||
          static_cast<int64_t>(a.getRawData().size()) != a.getSize() * bytes) {
        mlir::emitError(op->getLoc())
            << "malformed dense array attribute in '" << op->getName()
            << "' (its storage does not match " << a.getSize() << " elements)";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    return inner.wasInterrupted() ? WalkResult::interrupt()
                                  : WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}
