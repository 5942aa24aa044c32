//===- SavingTestUtil.h - Shared helpers of the saving tests --------------===//

#ifndef KCC_TESTS_UNIT_SAVING_SAVINGTESTUTIL_H
#define KCC_TESTS_UNIT_SAVING_SAVINGTESTUTIL_H

#include "frontend/Layers.h"
#include "frontend/Model.h"
#include "runtime/NDArray.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace kcc {
namespace saving_test {

/// The directories tempDir() made, removed with everything in them when
/// the test program exits.
class TempDirs {
public:
  ~TempDirs() {
    for (const std::string &dir : dirs)
      llvm::sys::fs::remove_directories(dir, /*IgnoreErrors=*/true);
  }
  void add(std::string dir) { dirs.push_back(std::move(dir)); }

private:
  std::vector<std::string> dirs;
};

/// A fresh directory under the system's temporary folder.
inline std::string tempDir() {
  static TempDirs made;
  llvm::SmallString<128> dir;
  if (llvm::sys::fs::createUniqueDirectory("kcc-saving", dir))
    throw Error("cannot create a temporary directory");
  made.add(dir.str().str());
  return dir.str().str();
}

/// Every .keras archive under tests/fixtures/keras, in path order.
inline std::vector<std::string> kerasFixtures() {
  std::vector<std::string> paths;
  std::error_code ec;
  for (llvm::sys::fs::recursive_directory_iterator it(KCC_KERAS_FIXTURES, ec),
       end;
       it != end && !ec; it.increment(ec))
    if (llvm::sys::path::extension(it->path()) == ".keras")
      paths.push_back(it->path());
  std::sort(paths.begin(), paths.end());
  return paths;
}

/// A small CNN with every layer kind that has weights or randomness.
inline Sequential makeCnn(uint64_t seed = 7) {
  return Sequential({Input({8, 8, 1}), Conv2D(4, 3, 1, "same", "relu"),
                     MaxPooling2D(2), Flatten(), Dropout(0.25),
                     Dense(16, "relu"), Dense(3, "softmax")},
                    "cnn", seed);
}

/// Uniform [0, 1) floats of `shape`, reproducible from `seed`.
inline NDArray randomImages(const Shape &shape, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> v(numElements(shape));
  for (double &x : v)
    x = u(gen);
  return NDArray::fromVector(shape, v);
}

/// Class labels in [0, classes) as I32.
inline NDArray randomLabels(int64_t n, int classes, unsigned seed) {
  std::mt19937 gen(seed);
  NDArray y = NDArray::empty({n}, DType::I32);
  for (int64_t i = 0; i < n; ++i)
    y.data<int32_t>()[i] = static_cast<int32_t>(gen() % classes);
  return y;
}

/// Exact (bitwise for floats) equality of two arrays.
inline void expectIdentical(const NDArray &a, const NDArray &b,
                            const std::string &what) {
  ASSERT_EQ(a.shape(), b.shape()) << what;
  ASSERT_EQ(a.dtype(), b.dtype()) << what;
  EXPECT_EQ(0, std::memcmp(a.rawData(), b.rawData(), a.bytes())) << what;
}

} // namespace saving_test
} // namespace kcc

#endif // KCC_TESTS_UNIT_SAVING_SAVINGTESTUTIL_H
