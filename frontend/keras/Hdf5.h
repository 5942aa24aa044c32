//===- Hdf5.h - Minimal read-only HDF5 access for Keras files ---*- C++ -*-===//
//
// The few HDF5 reads Keras files need -- float datasets, string attributes,
// group listings -- from an in-memory image (a .keras archive's
// model.weights.h5 is never written to disk). Errors are kcc::Errors naming
// the source and the object path.
//
// libhdf5 itself runs in a child process (Hdf5Process.h): a file that
// crashes it, hangs it or makes it allocate terabytes is an error naming
// the file, never a crash of kcc. Every answer of the child is checked
// against the image's size before kcc allocates for it.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_KERAS_HDF5_H
#define KCC_FRONTEND_KERAS_HDF5_H

#include "runtime/NDArray.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kcc {
namespace keras {

/// Whether `bytes` start with the HDF5 signature.
bool isHdf5(llvm::StringRef bytes);

class Hdf5Process;

/// A read-only HDF5 file opened from memory, read by a child process that
/// lives as long as the object. Not copyable; one thread at a time.
class Hdf5File {
public:
  /// `image` must outlive the object; `source` names it in errors. Starts
  /// the reader and waits until it has opened the image.
  Hdf5File(llvm::StringRef image, std::string source);
  ~Hdf5File();
  Hdf5File(const Hdf5File &) = delete;
  Hdf5File &operator=(const Hdf5File &) = delete;

  const std::string &source() const { return source_; }
  bool exists(const std::string &path) const;
  bool isGroup(const std::string &path) const;
  /// Member names of a group, in HDF5's name order.
  std::vector<std::string> members(const std::string &group) const;
  /// A string attribute (fixed or variable length), if present.
  std::optional<std::string> stringAttr(const std::string &object,
                                        const std::string &name) const;
  /// A 1-D array of strings (Keras's layer_names / weight_names); an empty
  /// non-string array reads as empty.
  std::optional<std::vector<std::string>>
  stringListAttr(const std::string &object, const std::string &name) const;
  /// A float dataset converted to F32.
  NDArray readFloat(const std::string &path) const;
  /// A dataset's dimensions (no data read).
  Shape datasetShape(const std::string &path) const;

  [[noreturn]] void fail(const std::string &path,
                         const std::string &message) const;

private:
  /// An ok reply's whole payload (at most what the image can hold) to a
  /// request that is not ReadFloat.
  std::string call(uint8_t op, const std::string &path,
                   const std::string &name = "") const;
  /// A payload's dimensions, checked; `rank` already read.
  Shape decodeShape(uint64_t rank, llvm::StringRef dims,
                    const std::string &path) const;

  std::string source_;
  /// The image's size: what no dataset or attribute can hold more than.
  uint64_t imageBytes_ = 0;
  std::unique_ptr<Hdf5Process> process_;
};

} // namespace keras
} // namespace kcc

#endif // KCC_FRONTEND_KERAS_HDF5_H
