//===- Hdf5Reader.h - libhdf5 over an in-memory image ------------*- C++
//-*-===//
//
// The few HDF5 reads Keras files need -- float datasets, string attributes,
// group listings -- over the HDF5 C library, opened from an in-memory image.
// Errors are kcc::Errors naming the source and the object path.
//
// libhdf5 1.10 crashes, hangs and asks for terabytes on some corrupt files,
// so only the reader process (Hdf5Child.cpp) uses this class: kcc's own
// process reads HDF5 through Hdf5File (Hdf5.h), never through libhdf5.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_KERAS_HDF5READER_H
#define KCC_FRONTEND_KERAS_HDF5READER_H

#include "runtime/NDArray.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kcc {
namespace keras {

/// A read-only HDF5 file opened from memory with libhdf5, in this process.
/// Not copyable. The methods are those of Hdf5File, which forwards to them.
class Hdf5Reader {
public:
  /// `image` must outlive the object; `source` names it in errors.
  Hdf5Reader(llvm::StringRef image, std::string source);
  ~Hdf5Reader();
  Hdf5Reader(const Hdf5Reader &) = delete;
  Hdf5Reader &operator=(const Hdf5Reader &) = delete;

  bool exists(const std::string &path) const;
  bool isGroup(const std::string &path) const;
  std::vector<std::string> members(const std::string &group) const;
  std::optional<std::vector<std::string>>
  stringListAttr(const std::string &object, const std::string &name) const;
  NDArray readFloat(const std::string &path) const;
  Shape datasetShape(const std::string &path) const;

  [[noreturn]] void fail(const std::string &path,
                         const std::string &message) const;

private:
  /// Fails unless `dataset` (of HDF5 type `type`) stores the bytes `shape`
  /// declares.
  void checkStorage(int64_t dataset, int64_t type, const Shape &shape,
                    const std::string &path) const;

  int64_t file_ = -1;
  std::string source_;
  /// The image's size: what no dataset or attribute can hold more than.
  uint64_t imageBytes_ = 0;
};

} // namespace keras
} // namespace kcc

#endif // KCC_FRONTEND_KERAS_HDF5READER_H
