//===- Diagnostics.h - How the kcc commands report errors -------*- C++ -*-===//
//
// Every command reports a failure as `kcc: error: <message>` on stderr and
// returns the process exit code 1; these helpers do both.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_TOOLS_KCC_DIAGNOSTICS_H
#define KCC_TOOLS_KCC_DIAGNOSTICS_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

namespace kcc {
namespace driver {

inline int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "kcc") << message << "\n";
  return 1;
}

inline int fail(llvm::Error err) {
  std::string message = llvm::toString(std::move(err));
  return fail(message);
}

} // namespace driver
} // namespace kcc

#endif // KCC_TOOLS_KCC_DIAGNOSTICS_H
