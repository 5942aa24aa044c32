//===- AotCompiler.h - LLVM dialect to object code, ahead of time -*- C++ -*-===//
//
// The back end of `kcc --emit=llvm|obj|lib`: translate a module in the LLVM
// dialect (the output of kc-cpu-pipeline) to LLVM IR, optimize it at -O<n>
// for a TargetMachine of the host triple, and emit an object file. The code
// is position independent in every case, so one object links both into a
// PIE executable (Debian's default) and into a shared library.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_CODEGEN_AOT_AOTCOMPILER_H
#define KCC_CODEGEN_AOT_AOTCOMPILER_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
} // namespace llvm

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace kcc {
namespace aot {

/// What to compile for. The triple is always the host's.
struct TargetOptions {
  /// LLVM CPU name; empty or "native" means the host CPU.
  std::string cpu;
  /// Comma-separated +feature/-feature list; empty means the host's features
  /// when the CPU is the host's, none otherwise.
  std::string features;
  /// LLVM optimization level, 0-3.
  unsigned optLevel = 3;
};

/// A TargetMachine for the host triple with PIC relocations.
llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(const TargetOptions &options);

/// Translates `module` (LLVM dialect only) to LLVM IR in `llvmContext` and
/// sets the triple and data layout of `tm`.
llvm::Expected<std::unique_ptr<llvm::Module>>
translateToLLVMIR(mlir::ModuleOp module, llvm::LLVMContext &llvmContext,
                  llvm::TargetMachine &tm);

/// Runs LLVM's -O<optLevel> pipeline (the new pass manager) for `tm`.
llvm::Error optimize(llvm::Module &module, llvm::TargetMachine &tm,
                     unsigned optLevel);

/// translateToLLVMIR, then optimize.
llvm::Expected<std::unique_ptr<llvm::Module>>
translateAndOptimize(mlir::ModuleOp module, llvm::LLVMContext &llvmContext,
                     llvm::TargetMachine &tm, unsigned optLevel);

/// Emits `module` as an ELF object into `buffer`.
llvm::Error emitObject(llvm::Module &module, llvm::TargetMachine &tm,
                       llvm::SmallVectorImpl<char> &buffer);

/// Links the object at `objectPath` into a shared library at `outputPath`
/// (written as is; the caller renames), with the compiler driver found at
/// configure time and the kcc runtime archives (KCCLibraryCalls,
/// KCCKernels) plus what they need: oneDNN, OpenMP, libm. The linker's own
/// messages are returned in the error.
llvm::Error linkSharedLibrary(llvm::StringRef objectPath,
                              llvm::StringRef outputPath);

} // namespace aot
} // namespace kcc

#endif // KCC_CODEGEN_AOT_AOTCOMPILER_H
