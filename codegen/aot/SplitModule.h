//===- SplitModule.h - An LLVM-dialect module in parts ------------*- C++
//-*-===//
//
// LLVM's -O<n> and machine-code emission take most of a compile, and they
// work one function at a time: kc-outline-kernels has put the kernels in
// functions of their own, so the parts of a module compile on as many
// threads as there are parts (IREE compiles its executables the same way).
// splitModule deals the function bodies of a module out to parts of about
// equal size; each part declares what it calls in another, and a function
// called across parts becomes a hidden external one (it stays internal to
// the part when nothing outside calls it).
//
// Functions marked kc.cold (kc-mark-cold-functions) go to parts of their
// own, themselves marked kc.cold: the part compiler emits their machine code
// unoptimized. The functions of every part lose the mark.
//
// The number of parts depends on the module alone, never on the machine, so
// a model compiles to the same objects everywhere.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_CODEGEN_AOT_SPLITMODULE_H
#define KCC_CODEGEN_AOT_SPLITMODULE_H

#include "ir/KcAttributes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

namespace kcc {
namespace aot {

/// About how many LLVM-dialect operations one part holds: below two parts'
/// worth a module compiles whole, where threads would cost more than they
/// save.
constexpr int64_t kOpsPerPart = 1000;
constexpr unsigned kMaxParts = 8;

/// The mark of a cold function (kc-mark-cold-functions) and of a part that
/// holds only cold functions.
constexpr llvm::StringLiteral kColdAttrName = kc::attr::kCold;

/// The parts of `module` (LLVM dialect only) that together define what it
/// defines: one (a copy of the module, never cold) when it is small or holds
/// anything but functions and private constants, else up to kMaxParts.
llvm::SmallVector<mlir::OwningOpRef<mlir::ModuleOp>>
splitModule(mlir::ModuleOp module);

} // namespace aot
} // namespace kcc

#endif // KCC_CODEGEN_AOT_SPLITMODULE_H
