//===- Npz.h - NumPy .npy files and .npz archives ---------------*- C++ -*-===//
//
// Reads what numpy.save / numpy.savez / numpy.savez_compressed write into
// kcc::NDArrays. A .npy file is a magic string, a format version (1.0, 2.0
// or 3.0), a Python dict literal header ('descr', 'fortran_order', 'shape')
// and the raw C-order data; a .npz archive is a zip (stored or deflated
// members, read with libzip) of one <name>.npy per array.
//
// Supported dtypes, little- or big-endian, and the NDArray dtype each is
// stored as:
//   float32 -> F32    float64 -> F64    int32 -> I32    int64 -> I64
//   uint8   -> I32 (widened: NDArray has no unsigned byte type)
//   bool    -> I1  (any non-zero byte reads as 1)
// Fortran-order arrays, other dtypes and structured dtypes are errors.
//
// Every size is checked against the bytes present: the shape's element
// count (with overflow checks) times the item size must equal the data
// bytes exactly, and an archive member may not claim more bytes than its
// archive can hold. Errors are kcc::Errors naming the file and the array:
//
//   data.npz: array 'x' (x.npy): shape (1000, 1000) of <f4 needs 4000000
//   data bytes, the member holds 96
//
//===----------------------------------------------------------------------===//

#ifndef KCC_RUNTIME_DATA_NPZ_H
#define KCC_RUNTIME_DATA_NPZ_H

#include "runtime/NDArray.h"

#include <map>
#include <string>
#include <string_view>

namespace kcc {

/// Where the data of a .npy file lies and how to read it, without reading
/// it (a memory-mapped file is read through this).
struct NpyLayout {
  std::string descr; ///< "<f4"
  char kind = 0;     ///< 'f', 'i', 'u' or 'b'
  size_t itemSize = 0;
  bool bigEndian = false;
  Shape shape;
  /// The data's first byte, from the start of the file.
  size_t dataOffset = 0;
};

/// Parses the header of a .npy file whose first bytes are `header` (the
/// whole file, or at least its header) and checks that `fileBytes` is what
/// the shape and dtype need; `source` names the file in errors.
NpyLayout parseNpyLayout(std::string_view header, uint64_t fileBytes,
                         const std::string &source);

/// Parses the bytes of one .npy file; `source` names them in errors.
NDArray parseNpy(std::string_view bytes, const std::string &source);

/// Reads a .npy file.
NDArray readNpy(const std::string &path);

/// Every array of a .npz archive held in memory, by name (the member's name
/// without ".npy"); members not ending in ".npy" are skipped. `source`
/// names the archive in errors.
std::map<std::string, NDArray> parseNpz(std::string_view bytes,
                                        const std::string &source);

/// Reads every array of a .npz archive.
std::map<std::string, NDArray> readNpz(const std::string &path);

/// Reads the array `name` of a .npz archive; a missing array is an error
/// that lists the ones present.
NDArray readNpzArray(const std::string &path, const std::string &name);

} // namespace kcc

#endif // KCC_RUNTIME_DATA_NPZ_H
