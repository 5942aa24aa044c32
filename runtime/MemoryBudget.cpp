//===- MemoryBudget.cpp - Checked tensor sizes, memory available ----------===//
//
// The memory available is read fresh at each check (a /proc read costs
// microseconds, and only allocations of kCheckedAllocationBytes or more, or
// whole models, are checked), so it follows what other processes use.
//
//===----------------------------------------------------------------------===//

#include "runtime/MemoryBudget.h"
#include "runtime/Error.h"

#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

namespace kcc {

namespace {

std::atomic<int64_t> gMaxTensorBytes{0};

std::string dimsText(const int64_t *dims, size_t rank) {
  std::string s = "[";
  for (size_t i = 0; i < rank; ++i)
    s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

/// The limit KCC_MAX_TENSOR_BYTES sets, read once.
int64_t limitFromEnvironment() {
  static const int64_t limit = [] {
    const char *text = std::getenv("KCC_MAX_TENSOR_BYTES");
    if (!text || !*text)
      return kDefaultMaxTensorBytes;
    errno = 0;
    char *end = nullptr;
    long long v = std::strtoll(text, &end, 10);
    if (errno || *end || v <= 0)
      return int64_t(-1);
    return static_cast<int64_t>(v);
  }();
  if (limit < 0)
    throw Error("KCC_MAX_TENSOR_BYTES must be a positive number of bytes, "
                "got '" +
                std::string(std::getenv("KCC_MAX_TENSOR_BYTES")) + "'");
  return limit;
}

/// The value of a "Key:   123 kB" line of a /proc file, in bytes.
std::optional<int64_t> procField(const char *path, const std::string &key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, key.size(), key) != 0 || line.size() <= key.size() ||
        line[key.size()] != ':')
      continue;
    std::istringstream fields(line.substr(key.size() + 1));
    int64_t value;
    std::string unit;
    if (!(fields >> value))
      return std::nullopt;
    fields >> unit;
    return unit == "kB" ? value * 1024 : value;
  }
  return std::nullopt;
}

/// A number from a one-line file (cgroup files); nullopt for "max" or
/// when unreadable.
std::optional<int64_t> fileNumber(const std::string &path) {
  std::ifstream in(path);
  int64_t value;
  if (in >> value)
    return value;
  return std::nullopt;
}

/// What the memory cgroup of this process still allows: v2's memory.max
/// minus memory.current, or v1's memory.limit_in_bytes minus
/// memory.usage_in_bytes (v1 writes a huge number for "no limit").
std::optional<int64_t> cgroupFree() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  std::vector<std::pair<std::string, std::string>> candidates;
  while (std::getline(in, line)) {
    if (line.compare(0, 3, "0::") == 0)
      candidates.push_back(
          {"/sys/fs/cgroup" + line.substr(3) + "/memory.max",
           "/sys/fs/cgroup" + line.substr(3) + "/memory.current"});
    size_t colon = line.find(":memory:");
    if (colon != std::string::npos) {
      // Inside a container the path may be the namespace's root.
      for (std::string dir : {"/sys/fs/cgroup/memory" + line.substr(colon + 8),
                              std::string("/sys/fs/cgroup/memory")})
        candidates.push_back(
            {dir + "/memory.limit_in_bytes", dir + "/memory.usage_in_bytes"});
    }
  }
  for (const auto &[maxPath, usedPath] : candidates) {
    std::optional<int64_t> max = fileNumber(maxPath);
    std::optional<int64_t> used = fileNumber(usedPath);
    if (max && used)
      return *max >= (int64_t(1) << 60)
                 ? std::nullopt
                 : std::optional<int64_t>(std::max<int64_t>(0, *max - *used));
  }
  return std::nullopt;
}

std::optional<int64_t> rlimitFree(int resource, const char *usageKey) {
  struct rlimit limit;
  if (getrlimit(resource, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
    return std::nullopt;
  auto cap = static_cast<int64_t>(
      std::min<rlim_t>(limit.rlim_cur, std::numeric_limits<int64_t>::max()));
  int64_t used = procField("/proc/self/status", usageKey).value_or(0);
  return std::max<int64_t>(0, cap - used);
}

} // namespace

int64_t maxTensorBytes() {
  int64_t set = gMaxTensorBytes.load(std::memory_order_relaxed);
  return set > 0 ? set : limitFromEnvironment();
}

void setMaxTensorBytes(int64_t bytes) {
  gMaxTensorBytes.store(bytes > 0 ? bytes : 0, std::memory_order_relaxed);
}

std::optional<int64_t> checkedNumElements(const int64_t *dims, size_t rank) {
  int64_t n = 1;
  for (size_t i = 0; i < rank; ++i)
    if (dims[i] < 0 || __builtin_mul_overflow(n, dims[i], &n))
      return std::nullopt;
  return n;
}

std::optional<int64_t> addChecked(int64_t a, int64_t b) {
  int64_t sum;
  if (__builtin_add_overflow(a, b, &sum))
    return std::nullopt;
  return sum;
}

TensorSize tensorSize(const int64_t *dims, size_t rank, size_t elementBytes,
                      const std::string &typeName) {
  TensorSize size;
  // The type's text is built only for an error: this runs for every array
  // the interpreter allocates.
  auto type = [&] { return typeName + dimsText(dims, rank); };
  for (size_t i = 0; i < rank; ++i)
    if (dims[i] < 0) {
      size.error = type() + " has a negative dimension";
      return size;
    }
  std::optional<int64_t> elements = checkedNumElements(dims, rank);
  if (!elements) {
    size.error = type() + " has more than 2^63-1 elements";
    return size;
  }
  size.elements = *elements;
  if (__builtin_mul_overflow(*elements, static_cast<int64_t>(elementBytes),
                             &size.bytes)) {
    size.error = type() + " needs more than 2^63-1 bytes";
    return size;
  }
  int64_t limit = maxTensorBytes();
  if (size.bytes > limit)
    size.error = type() + " needs " + formatBytes(size.bytes) +
                 ", over the limit of " + formatBytes(limit) +
                 " per tensor (KCC_MAX_TENSOR_BYTES)";
  return size;
}

std::string formatBytes(int64_t bytes) {
  static const char *const units[] = {"B",   "KiB", "MiB", "GiB",
                                      "TiB", "PiB", "EiB"};
  if (bytes < 1024)
    return std::to_string(bytes) + " B";
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 6) {
    v /= 1024;
    ++u;
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f %s", v, units[u]);
  return text;
}

MemoryLimits readMemoryLimits() {
  MemoryLimits m;
  m.memAvailable = procField("/proc/meminfo", "MemAvailable");
  m.cgroupFree = cgroupFree();
  m.addressSpaceFree = rlimitFree(RLIMIT_AS, "VmSize");
  m.dataFree = rlimitFree(RLIMIT_DATA, "VmData");
  return m;
}

namespace {
/// The least bound and what sets it.
std::pair<int64_t, const char *> leastBound() {
  MemoryLimits m = readMemoryLimits();
  std::pair<int64_t, const char *> least{std::numeric_limits<int64_t>::max(),
                                         nullptr};
  auto consider = [&](const std::optional<int64_t> &v, const char *what) {
    if (v && *v < least.first)
      least = {*v, what};
  };
  consider(m.memAvailable, "MemAvailable");
  consider(m.cgroupFree, "the memory cgroup's limit");
  consider(m.addressSpaceFree, "RLIMIT_AS, ulimit -v");
  consider(m.dataFree, "RLIMIT_DATA, ulimit -d");
  return least;
}
} // namespace

int64_t availableMemoryBytes() { return leastBound().first; }

void requireMemory(int64_t bytes, const std::string &what) {
  auto [available, bound] = leastBound();
  if (bytes <= available)
    return;
  throw Error(what + " would need " + formatBytes(bytes) + "; " +
              formatBytes(available) + " are available (" + bound + ")");
}

} // namespace kcc
