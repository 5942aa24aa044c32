//===- FuzzFile.h - Fuzz inputs for readers that take a path ----*- C++ -*-===//
//
// The .keras and .h5 importers read from a path, so their fuzzers write each
// input to one scratch file per process first.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_TESTS_FUZZ_FUZZFILE_H
#define KCC_TESTS_FUZZ_FUZZFILE_H

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

namespace kcc {
namespace fuzz {

/// Writes `data` to a per-process file under $TMPDIR (or /tmp) with the
/// given suffix and returns its path. Aborts if it cannot: a fuzzer that
/// silently tests nothing would be worse.
inline std::string writeScratchFile(const uint8_t *data, size_t size,
                                    const char *suffix) {
  static const std::string path = [&] {
    const char *dir = std::getenv("TMPDIR");
    return std::string(dir && *dir ? dir : "/tmp") + "/kcc-fuzz-" +
           std::to_string(getpid()) + suffix;
  }();
  std::FILE *f = std::fopen(path.c_str(), "wb");
  if (!f || std::fwrite(data, 1, size, f) != size || std::fclose(f) != 0) {
    std::perror(path.c_str());
    std::abort();
  }
  return path;
}

} // namespace fuzz
} // namespace kcc

#endif // KCC_TESTS_FUZZ_FUZZFILE_H
