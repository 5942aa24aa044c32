//===- Hdf5Writer.h - HDF5 files written for Keras --------------*- C++ -*-===//
//
// The writing side of Hdf5.h, kept apart from the reader: an HDF5 file
// built in memory (the core driver, no backing store) with the few objects
// Keras's H5IOStore writes -- groups, a string attribute per group, float
// and integer datasets -- and handed out as bytes, to go into a .keras
// archive or, through writeFileAtomically, to a .weights.h5 file. Strings
// are variable-length UTF-8 as h5py writes them. Errors are kcc::Errors
// naming the destination and the object path.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_KERAS_HDF5WRITER_H
#define KCC_FRONTEND_KERAS_HDF5WRITER_H

#include "runtime/NDArray.h"

#include <cstdint>
#include <string>

namespace kcc {
namespace keras {

class Hdf5Writer {
public:
  /// An empty file; `source` names the destination in errors.
  explicit Hdf5Writer(std::string source);
  ~Hdf5Writer();
  Hdf5Writer(const Hdf5Writer &) = delete;
  Hdf5Writer &operator=(const Hdf5Writer &) = delete;

  /// Creates group `path` ("layers/dense/vars") and any missing parents.
  void createGroup(const std::string &path);
  /// Sets the scalar string attribute `name` of the group `object`.
  void setStringAttr(const std::string &object, const std::string &name,
                     const std::string &value);
  /// Writes dataset `path` (its group must exist) with `value`'s shape and
  /// dtype (F32, F64, I32, I64).
  void writeDataset(const std::string &path, const NDArray &value);

  /// Flushes and returns the file's bytes.
  std::string image();

private:
  [[noreturn]] void fail(const std::string &path,
                         const std::string &message) const;

  int64_t file_ = -1;
  std::string source_;
};

} // namespace keras
} // namespace kcc

#endif // KCC_FRONTEND_KERAS_HDF5WRITER_H
