//===- ExampleArray.cpp - Rows of examples, in memory or mapped -----------===//

#include "runtime/data/ExampleArray.h"
#include "runtime/Error.h"
#include "runtime/data/Npz.h"

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string_view>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace kcc;

const char *kcc::elementKindName(ElementKind kind) {
  switch (kind) {
  case ElementKind::F32:
    return "float32";
  case ElementKind::F64:
    return "float64";
  case ElementKind::I32:
    return "int32";
  case ElementKind::I64:
    return "int64";
  case ElementKind::U8:
    return "uint8";
  case ElementKind::Bool:
    return "bool";
  }
  return "?";
}

/// A read-only mapping of a whole file, released as rows are gathered.
///
/// How much of it a read makes resident cannot be told from the bytes
/// read: the kernel maps whole folios of the page cache around a fault (64
/// KiB of fault-around, up to 2 MiB with large folios). So the mapping
/// measures instead: the process's resident file-backed pages
/// (/proc/self/statm, "shared"), read once per batch; when they grew by
/// more than the budget since the last release, the whole mapping is
/// released.
struct ExampleArray::Mapping {
  void *addr = MAP_FAILED;
  size_t length = 0;
  size_t budget = 0;
  int statm = -1;
  std::atomic<int64_t> residentAtRelease{0};
  std::mutex releasing;

  /// Resident file-backed bytes of the process, or -1.
  int64_t residentFileBytes() const {
    char buf[128];
    ssize_t n = statm >= 0 ? pread(statm, buf, sizeof(buf) - 1, 0) : -1;
    if (n <= 0)
      return -1;
    buf[n] = 0;
    long long size, resident, shared;
    if (std::sscanf(buf, "%lld %lld %lld", &size, &resident, &shared) != 3)
      return -1;
    return shared * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
  }
  void maybeRelease() {
    int64_t now = residentFileBytes();
    if (now < 0) {
      madvise(addr, length, MADV_DONTNEED); // cannot measure: always
      return;
    }
    if (now - residentAtRelease.load() < static_cast<int64_t>(budget))
      return;
    std::lock_guard<std::mutex> lock(releasing);
    if (residentFileBytes() - residentAtRelease.load() <
        static_cast<int64_t>(budget))
      return;
    // A page another worker is reading now is simply faulted back in.
    madvise(addr, length, MADV_DONTNEED);
    residentAtRelease = residentFileBytes();
  }
  ~Mapping() {
    if (addr != MAP_FAILED)
      munmap(addr, length);
    if (statm >= 0)
      ::close(statm);
  }
};

namespace {

size_t kindSize(ElementKind kind) {
  switch (kind) {
  case ElementKind::F32:
  case ElementKind::I32:
    return 4;
  case ElementKind::F64:
  case ElementKind::I64:
    return 8;
  case ElementKind::U8:
  case ElementKind::Bool:
    return 1;
  }
  return 1;
}

template <typename Src, typename Dst>
void convertRow(const uint8_t *src, uint8_t *dst, int64_t n) {
  Src s;
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(&s, src + i * sizeof(Src), sizeof(Src));
    Dst d;
    if constexpr (std::is_same_v<Dst, uint8_t>)
      d = s != Src(0); // bool: any non-zero value is true
    else
      d = static_cast<Dst>(s);
    std::memcpy(dst + i * sizeof(Dst), &d, sizeof(Dst));
  }
}

template <typename Src>
void convertRowFrom(const uint8_t *src, uint8_t *dst, int64_t n, DType to) {
  switch (to) {
  case DType::F32:
    return convertRow<Src, float>(src, dst, n);
  case DType::F64:
    return convertRow<Src, double>(src, dst, n);
  case DType::I32:
    return convertRow<Src, int32_t>(src, dst, n);
  case DType::I64:
    return convertRow<Src, int64_t>(src, dst, n);
  case DType::I1:
    return convertRow<Src, uint8_t>(src, dst, n);
  default:
    throw Error(std::string("cannot cast examples to ") + dtypeName(to));
  }
}

void convert(ElementKind from, const uint8_t *src, uint8_t *dst, int64_t n,
             DType to) {
  switch (from) {
  case ElementKind::F32:
    return convertRowFrom<float>(src, dst, n, to);
  case ElementKind::F64:
    return convertRowFrom<double>(src, dst, n, to);
  case ElementKind::I32:
    return convertRowFrom<int32_t>(src, dst, n, to);
  case ElementKind::I64:
    return convertRowFrom<int64_t>(src, dst, n, to);
  case ElementKind::U8:
  case ElementKind::Bool:
    return convertRowFrom<uint8_t>(src, dst, n, to);
  }
}

bool sameLayout(ElementKind kind, DType dtype) {
  return (kind == ElementKind::F32 && dtype == DType::F32) ||
         (kind == ElementKind::F64 && dtype == DType::F64) ||
         (kind == ElementKind::I32 && dtype == DType::I32) ||
         (kind == ElementKind::I64 && dtype == DType::I64) ||
         (kind == ElementKind::Bool && dtype == DType::I1);
}

} // namespace

bool ExampleArray::isFloat() const {
  return kind_ == ElementKind::F32 || kind_ == ElementKind::F64;
}

Shape ExampleArray::shape() const {
  Shape s{rows_};
  s.insert(s.end(), rowShape_.begin(), rowShape_.end());
  return s;
}

ExampleArray ExampleArray::fromNDArray(NDArray array, std::string name) {
  if (!array.defined() || array.rank() < 1)
    throw Error(name + ": expected an array of examples (rank 1 or more), "
                       "got a scalar");
  ExampleArray a;
  switch (array.dtype()) {
  case DType::F32:
    a.kind_ = ElementKind::F32;
    break;
  case DType::F64:
    a.kind_ = ElementKind::F64;
    break;
  case DType::I32:
    a.kind_ = ElementKind::I32;
    break;
  case DType::I64:
    a.kind_ = ElementKind::I64;
    break;
  case DType::I1:
    a.kind_ = ElementKind::Bool;
    break;
  default:
    throw Error(name + ": unsupported dtype " + dtypeName(array.dtype()));
  }
  a.rows_ = array.dim(0);
  a.rowShape_.assign(array.shape().begin() + 1, array.shape().end());
  a.rowElements_ = numElements(a.rowShape_);
  a.itemSize_ = kindSize(a.kind_);
  a.base_ = static_cast<const uint8_t *>(array.rawData());
  a.owner_ = std::make_shared<NDArray>(std::move(array));
  a.name_ = std::move(name);
  return a;
}

ExampleArray ExampleArray::mapNpy(const std::string &path, std::string name,
                                  int64_t residentBudgetBytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw Error(path + ": cannot open: " + std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(path + ": not a regular file");
  }
  auto mapping = std::make_shared<Mapping>();
  mapping->length = static_cast<size_t>(st.st_size);
  mapping->budget =
      static_cast<size_t>(std::max<int64_t>(residentBudgetBytes, 1 << 20));
  if (mapping->length > 0)
    mapping->addr =
        mmap(nullptr, mapping->length, PROT_READ, MAP_SHARED, fd, 0);
  int mapErrno = errno;
  ::close(fd);
  if (mapping->length == 0)
    throw Error(path + ": not a .npy file: the file is empty");
  if (mapping->addr == MAP_FAILED)
    throw Error(path + ": cannot map: " + std::strerror(mapErrno));
  std::string_view bytes(static_cast<const char *>(mapping->addr),
                         mapping->length);
  NpyLayout layout = parseNpyLayout(bytes, mapping->length, path);
  if (layout.bigEndian)
    throw Error(path + ": big-endian arrays (" + layout.descr +
                ") cannot be memory-mapped; save it little-endian "
                "(array.astype('<" +
                layout.descr.substr(1) + "'))");
  if (layout.shape.empty())
    throw Error(name + ": expected an array of examples (rank 1 or more), "
                       "got a scalar");
  ExampleArray a;
  switch (layout.kind) {
  case 'f':
    a.kind_ = layout.itemSize == 4 ? ElementKind::F32 : ElementKind::F64;
    break;
  case 'i':
    a.kind_ = layout.itemSize == 4 ? ElementKind::I32 : ElementKind::I64;
    break;
  case 'u':
    a.kind_ = ElementKind::U8;
    break;
  default:
    a.kind_ = ElementKind::Bool;
    break;
  }
  a.rows_ = layout.shape[0];
  a.rowShape_.assign(layout.shape.begin() + 1, layout.shape.end());
  a.rowElements_ = numElements(a.rowShape_);
  a.itemSize_ = layout.itemSize;
  a.base_ = static_cast<const uint8_t *>(mapping->addr) + layout.dataOffset;
  // Reads are random within an epoch: no read-ahead of whole files.
  madvise(mapping->addr, mapping->length, MADV_RANDOM);
  mapping->statm = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  mapping->residentAtRelease = mapping->residentFileBytes();
  a.owner_ = mapping;
  a.mapping_ = mapping;
  a.name_ = std::move(name);
  return a;
}

ExampleArray ExampleArray::slice(int64_t begin, int64_t end) const {
  if (begin < 0 || end < begin || end > rows_)
    throw Error(name_ + ": rows [" + std::to_string(begin) + ", " +
                std::to_string(end) + ") out of range (" +
                std::to_string(rows_) + " rows)");
  ExampleArray a = *this;
  a.base_ = base_ + static_cast<size_t>(begin) * rowElements_ * itemSize_;
  a.rows_ = end - begin;
  return a;
}

void ExampleArray::touched(size_t) const {
  if (mapping_)
    mapping_->maybeRelease();
}

void ExampleArray::gather(const int64_t *indices, int64_t n, DType dtype,
                          NDArray &out) const {
  Shape outShape{n};
  outShape.insert(outShape.end(), rowShape_.begin(), rowShape_.end());
  if (!out.defined() || out.shape() != outShape || out.dtype() != dtype)
    out = NDArray::empty(outShape, dtype);
  size_t srcRow = rowElements_ * itemSize_;
  size_t dstRow = rowElements_ * dtypeSize(dtype);
  auto *dst = static_cast<uint8_t *>(out.rawData());
  bool copy = sameLayout(kind_, dtype);
  for (int64_t r = 0; r < n; ++r) {
    int64_t i = indices[r];
    if (i < 0 || i >= rows_)
      throw Error(name_ + ": row " + std::to_string(i) + " out of range (" +
                  std::to_string(rows_) + " rows)");
    const uint8_t *src = base_ + static_cast<size_t>(i) * srcRow;
    if (copy)
      std::memcpy(dst + r * dstRow, src, srcRow);
    else
      convert(kind_, src, dst + r * dstRow, rowElements_, dtype);
    // Each fault may map a whole folio: measure every few rows.
    if (r % 16 == 15)
      touched(16 * srcRow);
  }
  touched(n * srcRow);
}

double ExampleArray::at(int64_t row, int64_t i) const {
  const uint8_t *p =
      base_ + (static_cast<size_t>(row) * rowElements_ + i) * itemSize_;
  switch (kind_) {
  case ElementKind::F32: {
    float v;
    std::memcpy(&v, p, 4);
    return v;
  }
  case ElementKind::F64: {
    double v;
    std::memcpy(&v, p, 8);
    return v;
  }
  case ElementKind::I32: {
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  case ElementKind::I64: {
    int64_t v;
    std::memcpy(&v, p, 8);
    return static_cast<double>(v);
  }
  case ElementKind::U8:
    return *p;
  case ElementKind::Bool:
    return *p != 0;
  }
  return 0;
}

int64_t ExampleArray::countNaN() const {
  if (!isFloat())
    return 0;
  int64_t nans = 0;
  size_t rowBytes = rowElements_ * itemSize_;
  for (int64_t r = 0; r < rows_; ++r) {
    const uint8_t *p = base_ + static_cast<size_t>(r) * rowBytes;
    for (int64_t i = 0; i < rowElements_; ++i) {
      if (kind_ == ElementKind::F32) {
        float v;
        std::memcpy(&v, p + i * 4, 4);
        nans += std::isnan(v);
      } else {
        double v;
        std::memcpy(&v, p + i * 8, 8);
        nans += std::isnan(v);
      }
    }
    if (r % 16 == 15)
      touched(16 * rowBytes);
  }
  return nans;
}
