//===- Error.h - The error type of kcc's public C++ API ---------*- C++ -*-===//
//
// kcc's user-facing C++ API (layers, models, data, the runtime) reports a
// user error by throwing kcc::Error, whose message names what is wrong and
// where (the layer, the file, both shapes). Inside the compiler, MLIR
// diagnostics and llvm::Error carry errors; they become a kcc::Error at the
// public boundary. The tools catch kcc::Error, print it and exit non-zero.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_RUNTIME_ERROR_H
#define KCC_RUNTIME_ERROR_H

#include <stdexcept>
#include <string>

namespace kcc {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

} // namespace kcc

#endif // KCC_RUNTIME_ERROR_H
