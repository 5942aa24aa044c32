//===- NpzWriter.h - NumPy .npy files and .npz archives out -----*- C++ -*-===//
//
// The writing side of Npz.h: what numpy.load reads back. A .npy is format
// 1.0 (2.0 when the header does not fit 65535 bytes), a header dict padded
// with spaces so the data starts on a 64-byte boundary, and the C-order
// data, little-endian. A .npz is a stored (uncompressed) zip of NAME.npy
// members, as numpy.savez writes it. Files appear atomically
// (AtomicFile.h): a failed or killed write leaves no partial output.
//
// NDArray dtypes and their descr: F32 <f4, F64 <f8, I32 <i4, I64 <i8,
// I1 |b1; F16 and BF16 are errors (NumPy has no bfloat16).
//
//===----------------------------------------------------------------------===//

#ifndef KCC_RUNTIME_DATA_NPZWRITER_H
#define KCC_RUNTIME_DATA_NPZWRITER_H

#include "runtime/NDArray.h"

#include <map>
#include <string>

namespace kcc {

/// The bytes of a .npy file holding `array`; `source` names it in errors.
std::string serializeNpy(const NDArray &array, const std::string &source);

/// Writes `array` to `path` as .npy. Throws kcc::Error naming the path.
void writeNpy(const std::string &path, const NDArray &array);

/// Writes `arrays` to `path` as a .npz archive, one NAME.npy per entry.
void writeNpz(const std::string &path,
              const std::map<std::string, NDArray> &arrays);

} // namespace kcc

#endif // KCC_RUNTIME_DATA_NPZWRITER_H
