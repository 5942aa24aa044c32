//===- CHeader.h - The C header of an AOT-compiled module -------*- C++ -*-===//
//
// `kcc --emit=obj -o foo.o` also writes foo.h, which declares every public
// function of the module as the object defines it and documents the ABI:
//
//   void train_step(const float *arg0, ..., float *res0, ...);
//
// - One bare pointer per argument, in the kc function's argument order, then
//   one per result. Each points to a dense, row-major array of the listed
//   element type and shape (rank 0: one element). Element alignment is
//   enough; 64 bytes is best for vector loads.
// - Results are written into caller-provided buffers, which must not alias
//   an argument; arguments are only read.
// - Per function the header has #defines (argument and result counts, and
//   for a @train_step its layout: where the params, optimizer state,
//   iteration count, learning rate, inputs and target sit), a const table of
//   kcc_tensor_desc (kc.name, dtype, rank, shape, element and byte counts),
//   and an inline `<fn>_packed(void *const *args, void *const *results)`
//   that makes the call from pointer arrays.
//
// The names and shapes come from the kc-level module (after the train step,
// before lowering): lowering erases them.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_CODEGEN_AOT_CHEADER_H
#define KCC_CODEGEN_AOT_CHEADER_H

#include "llvm/Support/Error.h"

#include <optional>
#include <string>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace kcc {
namespace aot {

struct HeaderOptions {
  /// The include guard, e.g. MLP_STEP_H.
  std::string guard;
  /// Prefix of the model-wide #defines, e.g. "MLP_" (MLP_LEARNING_RATE).
  /// Per-function ones are named after the symbol: MLP_TRAIN_STEP_NUM_ARGS
  /// for mlp_train_step.
  std::string macroPrefix = "KCC_";
  /// What the header says it was made from (model or file name).
  std::string source;
  /// The learning rate the step was built for (a runtime argument; written
  /// as <PREFIX>LEARNING_RATE for callers that want the configured value).
  std::optional<double> learningRate;
};

/// The header for every public func.func of `module` (kc level: statically
/// shaped tensors). Errors name the function and argument that cannot be
/// expressed (a dynamic shape, an element type with no C type).
/// The header of the public functions of `module` (kc level, for the
/// signatures and names) as `lowered` (the same module after
/// kc-cpu-pipeline) compiled them: its arena argument and the results it
/// writes over their arguments come from there.
llvm::Expected<std::string> emitCHeader(mlir::ModuleOp module,
                                        mlir::ModuleOp lowered,
                                        const HeaderOptions &options);

/// An include guard or macro prefix from a file or symbol name:
/// "out/mlp_step.h" -> "MLP_STEP_H".
std::string toMacroName(llvm::StringRef name);

} // namespace aot
} // namespace kcc

#endif // KCC_CODEGEN_AOT_CHEADER_H
