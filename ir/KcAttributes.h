//===- KcAttributes.h - The kc.* discardable attributes ---------*- C++ -*-===//
//
// Passes and runtimes mark functions, their arguments and results, and loops
// with discardable `kc.*` attributes (a parameter's name, which argument is
// the model input, the memory plan's totals...). They are declared once in
// KcBase.td and verified by the kc dialect; this header gives each a name
// constant and a small typed accessor, so no caller spells or decodes one by
// hand.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_IR_KCATTRIBUTES_H
#define KCC_IR_KCATTRIBUTES_H

#include "ir/KcDialect.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

#include <optional>

namespace kcc::kc {

/// The attribute names, as KcBase.td declares them.
namespace attr {
#define KC_ATTR_NAME(constant, helper)                                         \
  inline constexpr llvm::StringLiteral constant =                              \
      KcDialect::helper::getNameStr();
// Arguments and results.
KC_ATTR_NAME(kName, NameAttrHelper)
KC_ATTR_NAME(kTrainable, TrainableAttrHelper)
KC_ATTR_NAME(kInput, InputAttrHelper)
KC_ATTR_NAME(kTarget, TargetAttrHelper)
KC_ATTR_NAME(kStep, StepAttrHelper)
KC_ATTR_NAME(kArena, ArenaAttrHelper)
KC_ATTR_NAME(kUpdates, UpdatesAttrHelper)
KC_ATTR_NAME(kAddedLoss, AddedLossAttrHelper)
KC_ATTR_NAME(kOutputMask, OutputMaskAttrHelper)
// Functions.
KC_ATTR_NAME(kTrainStep, TrainStepAttrHelper)
KC_ATTR_NAME(kNumInputs, NumInputsAttrHelper)
KC_ATTR_NAME(kUpdateCandidates, UpdateCandidatesAttrHelper)
KC_ATTR_NAME(kInPlace, InPlaceAttrHelper)
KC_ATTR_NAME(kKernels, KernelsAttrHelper)
KC_ATTR_NAME(kLibraryCalls, LibraryCallsAttrHelper)
KC_ATTR_NAME(kLoopNests, LoopNestsAttrHelper)
KC_ATTR_NAME(kArenaBytes, ArenaBytesAttrHelper)
KC_ATTR_NAME(kArenaLowerBound, ArenaLowerBoundAttrHelper)
KC_ATTR_NAME(kArenaSum, ArenaSumAttrHelper)
KC_ATTR_NAME(kArenaBuffers, ArenaBuffersAttrHelper)
KC_ATTR_NAME(kCold, ColdAttrHelper)
// Loops.
KC_ATTR_NAME(kFusion, FusionAttrHelper)
KC_ATTR_NAME(kParallel, ParallelAttrHelper)
// Ops.
KC_ATTR_NAME(kPrecision, PrecisionAttrHelper)
#undef KC_ATTR_NAME
} // namespace attr

//===----------------------------------------------------------------------===//
// Arguments and results
//===----------------------------------------------------------------------===//

/// `kc.name` of argument (result) `i`: a parameter's or optimizer slot's name.
std::optional<llvm::StringRef> getArgName(mlir::FunctionOpInterface f,
                                          unsigned i);
std::optional<llvm::StringRef> getResultName(mlir::FunctionOpInterface f,
                                             unsigned i);
/// An argument or result dictionary holding only `kc.name = name`.
mlir::DictionaryAttr getNameDict(mlir::MLIRContext *ctx, llvm::StringRef name);

/// `kc.trainable`: whether the optimizer updates parameter `i` (false when
/// unmarked).
bool isTrainableArg(mlir::FunctionOpInterface f, unsigned i);

/// `kc.updates`: result `i` is the new value of argument `arg` (a
/// non-trainable parameter a training-mode call assigns, such as a moving
/// mean), which @train_step returns in that parameter's place.
std::optional<unsigned> getUpdatedArg(mlir::FunctionOpInterface f, unsigned i);
void setUpdatedArg(mlir::FunctionOpInterface f, unsigned i, unsigned arg);

/// `kc.added_loss`: result `i` is a scalar that training adds to the loss
/// (Keras's sum(model.losses): weight and activity regularizers), returned
/// after the predictions and the updates.
bool isAddedLoss(mlir::FunctionOpInterface f, unsigned i);
void setAddedLoss(mlir::FunctionOpInterface f, unsigned i);

/// `kc.output_mask`: result `i` is the Keras mask of prediction `k` (0/1 of
/// the shape of its loss values, [batch, steps]), returned after the
/// predictions and the updates: the loss and the metrics of that
/// prediction count only its real steps.
std::optional<unsigned> getMaskedOutput(mlir::FunctionOpInterface f,
                                        unsigned i);
void setMaskedOutput(mlir::FunctionOpInterface f, unsigned i, unsigned k);

/// `kc.input`: argument `i` is the model input with this index.
std::optional<int64_t> getInputIndex(mlir::FunctionOpInterface f, unsigned i);
bool isInputArg(mlir::FunctionOpInterface f, unsigned i);

/// `kc.target`: argument `i` is the training target with this index.
std::optional<int64_t> getTargetIndex(mlir::FunctionOpInterface f, unsigned i);

/// `kc.step`: argument `i` is the step counter that seeds dropout.
bool isStepArg(mlir::FunctionOpInterface f, unsigned i);

/// `kc.arena`: argument `i` is the memory arena kc-plan-memory planned.
bool isArenaArg(mlir::FunctionOpInterface f, unsigned i);
void setArenaArg(mlir::FunctionOpInterface f, unsigned i);

//===----------------------------------------------------------------------===//
// Functions (func.func, and llvm.func after lowering)
//===----------------------------------------------------------------------===//

/// The non-negative integer function attributes: kc.num_inputs, kc.kernels,
/// kc.library_calls, kc.loop_nests and kc.arena_*. `name` is one of the
/// attr:: constants.
std::optional<int64_t> getCount(mlir::Operation *func, llvm::StringRef name);
void setCount(mlir::Operation *func, llvm::StringRef name, int64_t value);

/// `kc.update_candidates`: flat (result, argument) pairs that share a
/// kc.name, so the result may be written into the argument's buffer.
std::optional<llvm::ArrayRef<int64_t>>
getUpdateCandidates(mlir::Operation *func);
void setUpdateCandidates(mlir::Operation *func, llvm::ArrayRef<int64_t> pairs);

/// `kc.in_place`: the candidate pairs proven safe to update in place.
std::optional<llvm::ArrayRef<int64_t>> getInPlacePairs(mlir::Operation *func);
void setInPlacePairs(mlir::Operation *func, llvm::ArrayRef<int64_t> pairs);

/// `kc.train_step`: the layout dictionary kc-build-train-step records
/// (getTrainStepLayout decodes it); null when absent.
mlir::DictionaryAttr getTrainStep(mlir::Operation *func);
void setTrainStep(mlir::Operation *func, mlir::DictionaryAttr layout);

//===----------------------------------------------------------------------===//
// Loops
//===----------------------------------------------------------------------===//

/// `kc.fusion`: the fusion group a loop nest computes (kind, ops, layers,
/// local_bytes).
void setFusion(mlir::Operation *loop, mlir::DictionaryAttr group);

/// `kc.parallel`: the loop's iterations are independent.
bool isParallelLoop(mlir::Operation *loop);
void setParallelLoop(mlir::Operation *loop);

//===----------------------------------------------------------------------===//
// Parsed input
//===----------------------------------------------------------------------===//

/// Fails, with an error at the op, if an attribute of `root` or of an op
/// nested in it is a dense array whose storage does not hold its elements.
/// MLIR 19's parser builds one from `array<i01: 1>` and its printer then
/// reads past the storage, so a verifier's diagnostic (which prints the op)
/// crashes: parse without verifying, run this, then verify.
mlir::LogicalResult checkDenseArrayStorage(mlir::Operation *root);

} // namespace kcc::kc

#endif // KCC_IR_KCATTRIBUTES_H
