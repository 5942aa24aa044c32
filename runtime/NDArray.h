//===- NDArray.h - Dense host arrays for kernels and runtime -*- C++ -*-===//
//
// An NDArray is a dense, row-major, 64-byte aligned host array with a static
// shape and a dtype. It is what the kernel library reads and writes, what the
// interpreter keeps per SSA value and what eager tensors hold. It depends on
// nothing but the C++ standard library so the runtime can be linked without
// MLIR (the AOT path).
//
// Every allocation goes through AllocStats so the interpreter and eager mode
// can report how many buffers and bytes a step allocated.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_RUNTIME_NDARRAY_H
#define KCC_RUNTIME_NDARRAY_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kcc {

/// Element types. I1 is stored as one byte per element (0 or 1).
enum class DType : uint8_t { F32, F64, F16, BF16, I1, I32, I64 };

size_t dtypeSize(DType dt);
const char *dtypeName(DType dt);
inline bool isFloat(DType dt) {
  return dt == DType::F32 || dt == DType::F64 || dt == DType::F16 ||
         dt == DType::BF16;
}

using Shape = std::vector<int64_t>;
/// Throws the kcc::Error numElements() gives for a negative or overflowing
/// shape.
[[noreturn]] void throwBadShape(const Shape &shape);
/// The element count; throws kcc::Error when it overflows int64 (every
/// NDArray and frontend tensor is checked when made, so only a shape
/// computed by hand can). Inline: kernels ask for it on every call.
inline int64_t numElements(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(n, d, &n))
      throwBadShape(shape);
  return n;
}
/// The bytes of a `dtype` tensor of `shape`, checked: throws kcc::Error
/// naming the type when the size overflows or exceeds maxTensorBytes()
/// (runtime/MemoryBudget.h).
int64_t tensorBytes(const Shape &shape, DType dtype);
/// "[32, 784]" style, for diagnostics.
std::string shapeToString(const Shape &shape);

/// Process-wide allocation counters (bytes currently live, peak, number of
/// allocations). Thread-safe.
struct AllocStats {
  static void reset();
  static int64_t liveBytes();
  static int64_t peakBytes();
  static int64_t numAllocs();
  static int64_t totalBytes();
  /// Resets the peak to the bytes live now (to measure one region).
  static void resetPeak();
};

class NDArray {
public:
  NDArray() = default;

  /// Uninitialized storage of the given shape and dtype. Throws kcc::Error,
  /// never std::bad_alloc, when the size is invalid (tensorBytes) or the
  /// memory is not there (checked beforehand for large arrays).
  static NDArray empty(const Shape &shape, DType dtype);
  /// Zero-filled.
  static NDArray zeros(const Shape &shape, DType dtype);
  /// Copies `values` (converted) into a new F32 or F64 array.
  static NDArray fromVector(const Shape &shape,
                            const std::vector<double> &values,
                            DType dtype = DType::F32);
  /// A scalar (rank 0).
  static NDArray scalar(double value, DType dtype = DType::F32);
  /// A non-owning view of `data` (caller keeps it alive and aligned for
  /// `dtype`). Not counted in AllocStats: compiled code hands its arena and
  /// argument buffers to the kernel library this way, without copies.
  static NDArray borrow(void *data, const Shape &shape, DType dtype);

  const Shape &shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t dim(int64_t i) const { return shape_[i]; }
  DType dtype() const { return dtype_; }
  int64_t numel() const { return numElements(shape_); }
  /// Checked when the array was made, so plain arithmetic is exact here.
  size_t bytes() const {
    return static_cast<size_t>(numel()) * dtypeSize(dtype_);
  }
  bool defined() const { return storage_ != nullptr; }

  void *rawData() { return storage_.get(); }
  const void *rawData() const { return storage_.get(); }
  template <typename T> T *data() { return static_cast<T *>(storage_.get()); }
  template <typename T> const T *data() const {
    return static_cast<const T *>(storage_.get());
  }

  /// Same storage, new shape (numel must match). No allocation.
  NDArray reshaped(const Shape &shape) const;

  /// The shared storage, for a buffer pool that hands it out again once no
  /// array holds it (use_count() == 1).
  const std::shared_ptr<void> &storage() const { return storage_; }
  /// An array over `storage`, which holds at least tensorBytes(shape, dtype)
  /// bytes, 64-byte aligned (storage() of an array at least that large).
  static NDArray onStorage(std::shared_ptr<void> storage, const Shape &shape,
                           DType dtype);
  /// Deep copy.
  NDArray clone() const;
  /// Element `i` (flat index) converted to double, any dtype.
  double at(int64_t flatIndex) const;
  /// Sets element `i` (flat index) from a double, any dtype.
  void set(int64_t flatIndex, double value);
  /// All elements converted to double.
  std::vector<double> toVector() const;
  /// Conversion to another dtype (new storage).
  NDArray to(DType dtype) const;

private:
  std::shared_ptr<void> storage_;
  Shape shape_;
  DType dtype_ = DType::F32;
};

} // namespace kcc

#endif // KCC_RUNTIME_NDARRAY_H
