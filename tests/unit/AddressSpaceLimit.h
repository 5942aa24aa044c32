//===- AddressSpaceLimit.h - A temporary ulimit -v for tests ----*- C++ -*-===//
//
// Lowers RLIMIT_AS to the address space in use plus `headroom` bytes for
// one scope, as `ulimit -v` would, so a test can show that kcc refuses an
// allocation this process cannot make (whatever the machine's memory)
// instead of failing with std::bad_alloc or being killed. The soft limit
// goes back up on exit (an unprivileged process may raise it to the hard
// limit).
//
//===----------------------------------------------------------------------===//

#ifndef KCC_TESTS_UNIT_ADDRESSSPACELIMIT_H
#define KCC_TESTS_UNIT_ADDRESSSPACELIMIT_H

#include <sys/resource.h>

#include <cstdint>
#include <fstream>
#include <string>

namespace kcc {
namespace testing {

/// VmSize of /proc/self/status, in bytes.
inline int64_t addressSpaceInUse() {
  std::ifstream in("/proc/self/status");
  std::string key;
  int64_t kb = 0;
  while (in >> key)
    if (key == "VmSize:" && in >> kb)
      return kb * 1024;
  return 0;
}

class AddressSpaceLimit {
public:
  explicit AddressSpaceLimit(int64_t headroom) {
    getrlimit(RLIMIT_AS, &saved_);
    struct rlimit lowered = saved_;
    lowered.rlim_cur = static_cast<rlim_t>(addressSpaceInUse() + headroom);
    ok_ = setrlimit(RLIMIT_AS, &lowered) == 0;
  }
  ~AddressSpaceLimit() { setrlimit(RLIMIT_AS, &saved_); }
  AddressSpaceLimit(const AddressSpaceLimit &) = delete;
  AddressSpaceLimit &operator=(const AddressSpaceLimit &) = delete;
  /// Whether the limit took effect.
  bool ok() const { return ok_; }

private:
  struct rlimit saved_;
  bool ok_ = false;
};

} // namespace testing
} // namespace kcc

#endif // KCC_TESTS_UNIT_ADDRESSSPACELIMIT_H
