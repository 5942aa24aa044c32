//===- MemoryBudget.h - Checked tensor sizes, memory available --*- C++ -*-===//
//
// Sizes computed from user input (a Keras spec, --batch, a .mlir type) can
// overflow int64 or ask for more memory than the machine has. Two helpers
// keep both from becoming a wrapped shape, std::bad_alloc or the OOM killer:
//
//  - tensorSize(): the element count and bytes of a shape and element size,
//    checked for int64 overflow and against a per-tensor limit (2^40 bytes,
//    1 TiB, unless KCC_MAX_TENSOR_BYTES or setMaxTensorBytes() says
//    otherwise), with a message when the tensor cannot exist;
//  - availableMemoryBytes() / requireMemory(): what this process may still
//    allocate (MemAvailable, the memory cgroup's limit, RLIMIT_AS and
//    RLIMIT_DATA, whichever is least), checked before a large allocation so
//    the error can say how much is needed and how much there is.
//
// No MLIR, no LLVM: the runtime stands alone.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_RUNTIME_MEMORYBUDGET_H
#define KCC_RUNTIME_MEMORYBUDGET_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kcc {

/// The default per-tensor limit: 2^40 bytes (1 TiB).
constexpr int64_t kDefaultMaxTensorBytes = int64_t(1) << 40;

/// The per-tensor byte limit: setMaxTensorBytes()'s value, else the
/// environment's KCC_MAX_TENSOR_BYTES (a positive byte count), else
/// kDefaultMaxTensorBytes. Throws kcc::Error for a malformed variable.
int64_t maxTensorBytes();
/// Overrides the limit for this process; 0 goes back to the default rules.
void setMaxTensorBytes(int64_t bytes);

/// The product of `dims`, or nullopt when a dim is negative or the product
/// overflows int64.
std::optional<int64_t> checkedNumElements(const int64_t *dims, size_t rank);
inline std::optional<int64_t>
checkedNumElements(const std::vector<int64_t> &dims) {
  return checkedNumElements(dims.data(), dims.size());
}

/// A dense tensor's size, or why it cannot exist.
struct TensorSize {
  int64_t elements = 0;
  int64_t bytes = 0;
  /// Empty when the tensor is valid: e.g. "f32[1000000000, 784] needs
  /// 2.9 TiB, over the limit of 1.0 TiB per tensor (KCC_MAX_TENSOR_BYTES)".
  std::string error;
  explicit operator bool() const { return error.empty(); }
};

/// The size of a `dims` tensor of `elementBytes`-byte elements named
/// `typeName` in messages ("f32"): an error when a dim is negative, the
/// element count or byte size overflows int64, or the bytes exceed
/// maxTensorBytes().
TensorSize tensorSize(const int64_t *dims, size_t rank, size_t elementBytes,
                      const std::string &typeName);
inline TensorSize tensorSize(const std::vector<int64_t> &dims,
                             size_t elementBytes, const std::string &typeName) {
  return tensorSize(dims.data(), dims.size(), elementBytes, typeName);
}

/// `a + b`, or nullopt on int64 overflow (for sums of tensor sizes).
std::optional<int64_t> addChecked(int64_t a, int64_t b);

/// "6.3 GiB", "512 B".
std::string formatBytes(int64_t bytes);

/// What bounds the memory this process may still allocate, in bytes;
/// nullopt where that bound is not set or not readable.
struct MemoryLimits {
  /// MemAvailable of /proc/meminfo.
  std::optional<int64_t> memAvailable;
  /// The memory cgroup's limit minus its usage (v2 or v1), when limited.
  std::optional<int64_t> cgroupFree;
  /// RLIMIT_AS minus the address space in use (VmSize).
  std::optional<int64_t> addressSpaceFree;
  /// RLIMIT_DATA minus the data segment in use (VmData).
  std::optional<int64_t> dataFree;
};
MemoryLimits readMemoryLimits();

/// The least of readMemoryLimits()'s bounds (INT64_MAX when none is known).
int64_t availableMemoryBytes();

/// Throws kcc::Error "WHAT would need N; M are available (BOUND)" when
/// `bytes` exceed availableMemoryBytes(). `what` names the allocation:
/// "the weights of layer 'dense' (Dense)", "the arena of @train_step".
void requireMemory(int64_t bytes, const std::string &what);

/// Allocations of at least this many bytes are checked against the
/// available memory before they are made (smaller ones are cheap to try).
constexpr int64_t kCheckedAllocationBytes = int64_t(64) << 20;

} // namespace kcc

#endif // KCC_RUNTIME_MEMORYBUDGET_H
