//===- MemoryBudgetTest.cpp - Checked sizes, the memory-available check ---===//

#include "runtime/MemoryBudget.h"
#include "runtime/Error.h"
#include "runtime/NDArray.h"
#include "tests/unit/AddressSpaceLimit.h"
#include "tests/unit/ErrorOf.h"

#include "gtest/gtest.h"

#include <limits>

using namespace kcc;
using kcc::testing::AddressSpaceLimit;
using kcc::testing::errorOf;

namespace {

constexpr int64_t kGiB = int64_t(1) << 30;

/// Restores the default per-tensor limit after a test changes it.
struct LimitGuard {
  ~LimitGuard() { setMaxTensorBytes(0); }
};

TEST(MemoryBudget, CheckedElementCounts) {
  EXPECT_EQ(checkedNumElements(std::vector<int64_t>{}), 1);
  EXPECT_EQ(checkedNumElements({32, 784}), 25088);
  EXPECT_EQ(checkedNumElements({0, int64_t(1) << 62, 4}), 0);
  // 2^32 * 2^32 wraps to 0 in plain arithmetic.
  EXPECT_EQ(checkedNumElements({int64_t(1) << 32, int64_t(1) << 32}),
            std::nullopt);
  EXPECT_EQ(checkedNumElements({std::numeric_limits<int64_t>::max(), 1}),
            std::numeric_limits<int64_t>::max());
  EXPECT_EQ(checkedNumElements({3, -1}), std::nullopt);
  EXPECT_EQ(addChecked(std::numeric_limits<int64_t>::max(), 1), std::nullopt);
  EXPECT_EQ(addChecked(40, 2), 42);
}

TEST(MemoryBudget, TensorSizes) {
  TensorSize ok = tensorSize({32, 784}, 4, "f32");
  EXPECT_TRUE(ok);
  EXPECT_EQ(ok.elements, 25088);
  EXPECT_EQ(ok.bytes, 100352);

  EXPECT_EQ(tensorSize({int64_t(1) << 32, int64_t(1) << 32}, 4, "f32").error,
            "f32[4294967296, 4294967296] has more than 2^63-1 elements");
  // 2^62 elements fit; their 2^65 bytes do not.
  EXPECT_EQ(tensorSize({int64_t(1) << 62}, 8, "f64").error,
            "f64[4611686018427387904] needs more than 2^63-1 bytes");
  EXPECT_EQ(tensorSize({2, -3}, 4, "f32").error,
            "f32[2, -3] has a negative dimension");

  // The default limit is 2^40 bytes: exactly 2^40 passes, one more fails.
  EXPECT_EQ(maxTensorBytes(), kDefaultMaxTensorBytes);
  EXPECT_TRUE(tensorSize({int64_t(1) << 38}, 4, "f32"));
  EXPECT_EQ(tensorSize({(int64_t(1) << 38) + 1}, 4, "f32").error,
            "f32[274877906945] needs 1.0 TiB, over the limit of 1.0 TiB per "
            "tensor (KCC_MAX_TENSOR_BYTES)");
  EXPECT_EQ(tensorSize({1000000000, 784}, 4, "f32").error,
            "f32[1000000000, 784] needs 2.9 TiB, over the limit of 1.0 TiB "
            "per tensor (KCC_MAX_TENSOR_BYTES)");
}

TEST(MemoryBudget, ConfigurableLimit) {
  LimitGuard guard;
  setMaxTensorBytes(1 << 20);
  EXPECT_EQ(maxTensorBytes(), 1 << 20);
  EXPECT_TRUE(tensorSize({512, 512}, 4, "f32"));
  EXPECT_EQ(tensorSize({512, 513}, 4, "f32").error,
            "f32[512, 513] needs 1.0 MiB, over the limit of 1.0 MiB per "
            "tensor (KCC_MAX_TENSOR_BYTES)");
  // NDArray goes through the same check.
  EXPECT_EQ(errorOf([] { NDArray::empty({512, 513}, DType::F32); }),
            "f32[512, 513] needs 1.0 MiB, over the limit of 1.0 MiB per "
            "tensor (KCC_MAX_TENSOR_BYTES)");
  setMaxTensorBytes(0);
  EXPECT_EQ(maxTensorBytes(), kDefaultMaxTensorBytes);
}

TEST(MemoryBudget, FormatBytes) {
  EXPECT_EQ(formatBytes(0), "0 B");
  EXPECT_EQ(formatBytes(1023), "1023 B");
  EXPECT_EQ(formatBytes(1536), "1.5 KiB");
  EXPECT_EQ(formatBytes(int64_t(63) << 29), "31.5 GiB");
  EXPECT_EQ(formatBytes(std::numeric_limits<int64_t>::max()), "8.0 EiB");
}

TEST(MemoryBudget, AvailableMemoryFollowsRlimitAs) {
  MemoryLimits before = readMemoryLimits();
  ASSERT_TRUE(before.memAvailable.has_value()) << "no /proc/meminfo";
  EXPECT_GT(*before.memAvailable, 0);
  EXPECT_LE(availableMemoryBytes(), *before.memAvailable);

  AddressSpaceLimit limit(256 << 20);
  ASSERT_TRUE(limit.ok());
  MemoryLimits m = readMemoryLimits();
  ASSERT_TRUE(m.addressSpaceFree.has_value());
  // 256 MiB of headroom, less what reading /proc itself mapped.
  EXPECT_LE(*m.addressSpaceFree, int64_t(256) << 20);
  EXPECT_GT(*m.addressSpaceFree, int64_t(200) << 20);
  EXPECT_EQ(availableMemoryBytes(), *m.addressSpaceFree);

  std::string msg = errorOf([] { requireMemory(2 * kGiB, "the weights"); });
  EXPECT_EQ(msg.rfind("the weights would need 2.0 GiB; ", 0), 0u) << msg;
  EXPECT_NE(msg.find(" MiB are available (RLIMIT_AS, ulimit -v)"),
            std::string::npos)
      << msg;
  requireMemory(64 << 20, "a small array"); // fits: no throw
}

TEST(MemoryBudget, NDArrayRefusesWhatItCannotAllocate) {
  AddressSpaceLimit limit(256 << 20);
  ASSERT_TRUE(limit.ok());
  int64_t allocsBefore = AllocStats::numAllocs();
  // Large: refused by the check, before malloc is tried.
  std::string big = errorOf([] { NDArray::empty({kGiB}, DType::F32); });
  EXPECT_EQ(big.rfind("an array of f32[1073741824] would need 4.0 GiB; ", 0),
            0u)
      << big;
  // Below the checked size but still too big for what is left: malloc
  // fails, and that too is a kcc::Error, not std::bad_alloc.
  std::vector<NDArray> held;
  std::string small = errorOf([&] {
    for (int i = 0; i < 16; ++i)
      held.push_back(NDArray::empty({32 << 20}, DType::I1));
  });
  EXPECT_EQ(
      small.rfind("an array of i1[33554432]: cannot allocate 32.0 MiB", 0), 0u)
      << small;
  EXPECT_LT(held.size(), 16u);
  EXPECT_EQ(AllocStats::numAllocs() - allocsBefore,
            static_cast<int64_t>(held.size()));
}

TEST(MemoryBudget, NDArrayShapesAreChecked) {
  EXPECT_EQ(errorOf([] {
              NDArray::empty({int64_t(1) << 32, int64_t(1) << 32}, DType::F32);
            }),
            "f32[4294967296, 4294967296] has more than 2^63-1 elements");
  EXPECT_EQ(errorOf([] { NDArray::empty({2, -1}, DType::F32); }),
            "f32[2, -1] has a negative dimension");
  EXPECT_EQ(errorOf([] { numElements({int64_t(1) << 40, int64_t(1) << 40}); }),
            "shape [1099511627776, 1099511627776] has a negative dim or more "
            "than 2^63-1 elements");
  EXPECT_EQ(tensorBytes({3, 5}, DType::F64), 120);
}

} // namespace
