//===- ExampleArray.h - Rows of examples, in memory or mapped ---*- C++ -*-===//
//
// The arrays a fit() reads batches from: the first dimension counts
// examples, the others are one example's shape. An ExampleArray is either a
// view of an NDArray (a .npz member read into memory) or of a .npy file
// mapped with mmap and never read as a whole, so a dataset larger than
// memory can be batched. Rows are gathered (in any order) into a batch and
// cast to the step's dtype as Keras casts NumPy arrays (float64 -> float32,
// uint8 -> float32, bool -> 0/1, ...).
//
// A mapped array keeps its resident memory bounded: once the process's
// resident file-backed memory grew by more than residentBudgetBytes since
// the last release (measured per batch: the kernel maps whole page-cache
// folios around each fault, so bytes read say little), the whole mapping is
// released with madvise(MADV_DONTNEED) (the pages stay in the page cache and
// are faulted back on the next read), so RSS stays near the budget whatever
// the file's size.
//
//   ExampleArray x = ExampleArray::mapNpy("data/x.npy", "data/x.npy");
//   NDArray batch;
//   x.gather(order.data(), 32, DType::F32, batch);   // [32, 28, 28, 1]
//
//===----------------------------------------------------------------------===//

#ifndef KCC_RUNTIME_DATA_EXAMPLEARRAY_H
#define KCC_RUNTIME_DATA_EXAMPLEARRAY_H

#include "runtime/NDArray.h"

#include <cstdint>
#include <memory>
#include <string>

namespace kcc {

/// The element types of the arrays users hand kcc (NumPy's names).
enum class ElementKind : uint8_t { F32, F64, I32, I64, U8, Bool };
const char *elementKindName(ElementKind kind); ///< "float32", ...

class ExampleArray {
public:
  ExampleArray() = default;
  /// A view of `array` (rank >= 1); `name` says where it came from in
  /// errors ("train.npz: array 'x'").
  static ExampleArray fromNDArray(NDArray array, std::string name);
  /// Maps the .npy file at `path` read-only (little-endian, C order);
  /// throws kcc::Error naming it when it cannot be opened, is not a .npy
  /// file, is truncated or is big-endian.
  static ExampleArray mapNpy(const std::string &path, std::string name,
                             int64_t residentBudgetBytes = 32 << 20);

  bool defined() const { return base_ != nullptr; }
  const std::string &name() const { return name_; }
  ElementKind kind() const { return kind_; }
  bool isFloat() const;
  int64_t rows() const { return rows_; }
  /// One example's shape (the array's shape without the first dim).
  const Shape &rowShape() const { return rowShape_; }
  /// The whole shape, rows first.
  Shape shape() const;
  bool mapped() const { return mapping_ != nullptr; }

  /// Rows [begin, end) of this array (no copy).
  ExampleArray slice(int64_t begin, int64_t end) const;

  /// Copies the rows `indices[0..n)` into `out`, shaped [n, rowShape...]
  /// of `dtype` (reallocated only when its shape or dtype differs), casting
  /// each element. Thread-safe: several workers may gather at once.
  void gather(const int64_t *indices, int64_t n, DType dtype,
              NDArray &out) const;
  /// Element `i` of row `row` as a double.
  double at(int64_t row, int64_t i) const;
  /// How many elements of the array are NaN (0 for integer kinds); reads
  /// every row once (a mapped array releases its pages as it goes).
  int64_t countNaN() const;

private:
  struct Mapping;
  std::shared_ptr<const void> owner_;
  std::shared_ptr<Mapping> mapping_;
  const uint8_t *base_ = nullptr; ///< row 0 of this view
  int64_t rows_ = 0;
  Shape rowShape_;
  int64_t rowElements_ = 0;
  size_t itemSize_ = 0;
  ElementKind kind_ = ElementKind::F32;
  std::string name_;

  void touched(size_t bytes) const;
};

} // namespace kcc

#endif // KCC_RUNTIME_DATA_EXAMPLEARRAY_H
