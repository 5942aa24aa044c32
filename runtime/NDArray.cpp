//===- NDArray.cpp - Dense host arrays used by kernels and runtime --------===//
//
// Storage is 64-byte aligned (one cache line, a full AVX-512 vector) and owned
// by a shared_ptr whose deleter keeps AllocStats up to date, so reshaped views
// share storage and the bytes are released exactly once.
//
//===----------------------------------------------------------------------===//

#include "runtime/NDArray.h"
#include "runtime/Error.h"
#include "runtime/MemoryBudget.h"
#include "runtime/kernels/Kernels.h"

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>

using namespace kcc;

namespace {

constexpr size_t kAlignment = 64;

std::atomic<int64_t> gLiveBytes{0};
std::atomic<int64_t> gPeakBytes{0};
std::atomic<int64_t> gNumAllocs{0};
std::atomic<int64_t> gTotalBytes{0};

void raisePeak(int64_t live) {
  int64_t peak = gPeakBytes.load(std::memory_order_relaxed);
  while (live > peak && !gPeakBytes.compare_exchange_weak(
                            peak, live, std::memory_order_relaxed))
    ;
}

/// "an array of f32[32, 784]", for errors only.
std::string arrayName(const Shape &shape, DType dtype) {
  return std::string("an array of ") + dtypeName(dtype) + shapeToString(shape);
}

/// Allocates `bytes` (rounded up to the alignment, at least one line so even
/// empty arrays are `defined()`) for an array of `shape` and `dtype`, and
/// records it in AllocStats.
std::shared_ptr<void> allocate(size_t bytes, const Shape &shape, DType dtype) {
  // Large arrays are checked first: with overcommit, malloc succeeds and
  // the OOM killer ends the process once the pages are touched.
  if (static_cast<int64_t>(bytes) >= kCheckedAllocationBytes)
    requireMemory(static_cast<int64_t>(bytes), arrayName(shape, dtype));
  size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded == 0)
    rounded = kAlignment;
  void *ptr = std::aligned_alloc(kAlignment, rounded);
  if (!ptr)
    throw Error(arrayName(shape, dtype) + ": cannot allocate " +
                formatBytes(static_cast<int64_t>(bytes)) + " (" +
                formatBytes(availableMemoryBytes()) + " are available)");
  int64_t n = static_cast<int64_t>(bytes);
  gNumAllocs.fetch_add(1, std::memory_order_relaxed);
  gTotalBytes.fetch_add(n, std::memory_order_relaxed);
  raisePeak(gLiveBytes.fetch_add(n, std::memory_order_relaxed) + n);
  return std::shared_ptr<void>(ptr, [n](void *p) {
    gLiveBytes.fetch_sub(n, std::memory_order_relaxed);
    std::free(p);
  });
}

uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

float bitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

/// IEEE binary16 -> binary32 (exact).
float halfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  if (exp == 0) {
    // Zero or subnormal: mant * 2^-24 is exact in float.
    float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  if (exp == 31)
    return bitsFloat(sign | 0x7f800000u | (mant << 13));
  return bitsFloat(sign | ((exp + 112) << 23) | (mant << 13));
}

/// binary32 -> binary16, round to nearest even, overflow to infinity.
uint16_t floatToHalf(float f) {
  uint32_t x = floatBits(f);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  x &= 0x7fffffffu;
  if (x >= 0x7f800000u) // Inf or NaN (keep NaN quiet).
    return sign | 0x7c00 | (x > 0x7f800000u ? 0x200 : 0);
  if (x >= 0x477ff000u) // Rounds to >= 65520: infinity.
    return sign | 0x7c00;
  if (x < 0x38800000u) {
    // Subnormal half: adding 0.5f aligns the ulp to 2^-24, so the FPU does
    // the round-to-nearest-even for us.
    float t = bitsFloat(x) + 0.5f;
    return sign | static_cast<uint16_t>(floatBits(t) - floatBits(0.5f));
  }
  uint32_t odd = (x >> 13) & 1;
  x += (static_cast<uint32_t>(15 - 127) << 23) + 0xfff + odd;
  return sign | static_cast<uint16_t>(x >> 13);
}

float bf16ToFloat(uint16_t h) {
  return bitsFloat(static_cast<uint32_t>(h) << 16);
}

uint16_t floatToBf16(float f) {
  uint32_t x = floatBits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((x >> 16) | 0x40);
  x += 0x7fff + ((x >> 16) & 1);
  return static_cast<uint16_t>(x >> 16);
}

} // namespace

size_t kcc::dtypeSize(DType dt) {
  switch (dt) {
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F64:
  case DType::I64:
    return 8;
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::I1:
    return 1;
  }
  return 0;
}

const char *kcc::dtypeName(DType dt) {
  switch (dt) {
  case DType::F32:
    return "f32";
  case DType::F64:
    return "f64";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::I1:
    return "i1";
  case DType::I32:
    return "i32";
  case DType::I64:
    return "i64";
  }
  return "?";
}

void kcc::throwBadShape(const Shape &shape) {
  throw Error("shape " + shapeToString(shape) +
              " has a negative dim or more than 2^63-1 elements");
}

int64_t kcc::tensorBytes(const Shape &shape, DType dtype) {
  // The common case without the message TensorSize would carry.
  int64_t bytes;
  int64_t elements = 1;
  bool valid = true;
  for (int64_t d : shape)
    valid &= d >= 0 && !__builtin_mul_overflow(elements, d, &elements);
  if (valid &&
      !__builtin_mul_overflow(elements, static_cast<int64_t>(dtypeSize(dtype)),
                              &bytes) &&
      bytes <= maxTensorBytes())
    return bytes;
  TensorSize size = tensorSize(shape, dtypeSize(dtype), dtypeName(dtype));
  if (!size)
    throw Error(size.error);
  return size.bytes;
}

std::string kcc::shapeToString(const Shape &shape) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < shape.size(); ++i)
    os << (i ? ", " : "") << shape[i];
  os << ']';
  return os.str();
}

//===----------------------------------------------------------------------===//
// AllocStats
//===----------------------------------------------------------------------===//

void AllocStats::reset() {
  gNumAllocs = 0;
  gTotalBytes = 0;
  gPeakBytes = gLiveBytes.load();
}
int64_t AllocStats::liveBytes() { return gLiveBytes.load(); }
int64_t AllocStats::peakBytes() { return gPeakBytes.load(); }
int64_t AllocStats::numAllocs() { return gNumAllocs.load(); }
int64_t AllocStats::totalBytes() { return gTotalBytes.load(); }
void AllocStats::resetPeak() { gPeakBytes = gLiveBytes.load(); }

//===----------------------------------------------------------------------===//
// NDArray
//===----------------------------------------------------------------------===//

NDArray NDArray::empty(const Shape &shape, DType dtype) {
  int64_t bytes = tensorBytes(shape, dtype);
  NDArray a;
  a.shape_ = shape;
  a.dtype_ = dtype;
  a.storage_ = allocate(static_cast<size_t>(bytes), shape, dtype);
  return a;
}

NDArray NDArray::borrow(void *data, const Shape &shape, DType dtype) {
  NDArray a;
  a.shape_ = shape;
  a.dtype_ = dtype;
  // A no-op deleter: the storage belongs to the caller. An empty array still
  // needs a non-null pointer to count as defined().
  alignas(64) static char emptyStorage;
  a.storage_ =
      std::shared_ptr<void>(data ? data : &emptyStorage, [](void *) {});
  return a;
}

NDArray NDArray::zeros(const Shape &shape, DType dtype) {
  NDArray a = empty(shape, dtype);
  std::memset(a.rawData(), 0, a.bytes());
  return a;
}

NDArray NDArray::fromVector(const Shape &shape,
                            const std::vector<double> &values, DType dtype) {
  if (static_cast<int64_t>(values.size()) != numElements(shape))
    throw Error("NDArray::fromVector: " + std::to_string(values.size()) +
                " values for shape " + shapeToString(shape));
  NDArray a = empty(shape, dtype);
  if (dtype == DType::F64) {
    std::memcpy(a.rawData(), values.data(), a.bytes());
    return a;
  }
  for (size_t i = 0; i < values.size(); ++i)
    a.set(static_cast<int64_t>(i), values[i]);
  return a;
}

NDArray NDArray::scalar(double value, DType dtype) {
  NDArray a = empty({}, dtype);
  a.set(0, value);
  return a;
}

NDArray NDArray::onStorage(std::shared_ptr<void> storage, const Shape &shape,
                           DType dtype) {
  NDArray a;
  a.shape_ = shape;
  a.dtype_ = dtype;
  a.storage_ = std::move(storage);
  return a;
}

NDArray NDArray::reshaped(const Shape &shape) const {
  if (numElements(shape) != numel())
    throw Error("NDArray::reshaped: cannot reshape " + shapeToString(shape_) +
                " to " + shapeToString(shape));
  NDArray a = *this;
  a.shape_ = shape;
  return a;
}

NDArray NDArray::clone() const {
  NDArray a = empty(shape_, dtype_);
  if (defined())
    std::memcpy(a.rawData(), rawData(), bytes());
  return a;
}

double NDArray::at(int64_t i) const {
  switch (dtype_) {
  case DType::F32:
    return data<float>()[i];
  case DType::F64:
    return data<double>()[i];
  case DType::F16:
    return halfToFloat(data<uint16_t>()[i]);
  case DType::BF16:
    return bf16ToFloat(data<uint16_t>()[i]);
  case DType::I1:
    return data<uint8_t>()[i] ? 1.0 : 0.0;
  case DType::I32:
    return data<int32_t>()[i];
  case DType::I64:
    return static_cast<double>(data<int64_t>()[i]);
  }
  return 0.0;
}

void NDArray::set(int64_t i, double v) {
  switch (dtype_) {
  case DType::F32:
    data<float>()[i] = static_cast<float>(v);
    return;
  case DType::F64:
    data<double>()[i] = v;
    return;
  case DType::F16:
    data<uint16_t>()[i] = floatToHalf(static_cast<float>(v));
    return;
  case DType::BF16:
    data<uint16_t>()[i] = floatToBf16(static_cast<float>(v));
    return;
  case DType::I1:
    data<uint8_t>()[i] = v != 0.0 ? 1 : 0;
    return;
  case DType::I32:
    data<int32_t>()[i] = static_cast<int32_t>(v);
    return;
  case DType::I64:
    data<int64_t>()[i] = static_cast<int64_t>(v);
    return;
  }
}

std::vector<double> NDArray::toVector() const {
  int64_t n = numel();
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[i] = at(i);
  return v;
}

NDArray NDArray::to(DType dtype) const {
  NDArray out = empty(shape_, dtype);
  kernels::cast(*this, out);
  return out;
}
