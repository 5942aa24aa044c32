//===- SizeLimitsTest.cpp - Hostile sizes in the layer API ---------------===//
//
// Every size a user hands the layer API (units, filters, input shapes, the
// traced batch) is checked: an element count or byte size over int64 or
// over the per-tensor limit, and weights or eager results the process has
// no memory for, are kcc::Errors naming the layer -- not a wrapped shape,
// std::bad_alloc or the OOM killer.
//
//===----------------------------------------------------------------------===//

#include "kcc/kcc.h"
#include "tests/unit/AddressSpaceLimit.h"
#include "tests/unit/ErrorOf.h"

#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

using namespace kcc;
using kcc::testing::AddressSpaceLimit;
using kcc::testing::errorOf;

namespace {

constexpr int64_t k32 = int64_t(1) << 32;

TEST(SizeLimits, UnitsAndFilters) {
  EXPECT_EQ(errorOf([] { Dense(1000000000000); }),
            "Dense: units 1000000000000 is too large: a row of the output, "
            "f32[1000000000000] needs 3.6 TiB, over the limit of 1.0 TiB per "
            "tensor (KCC_MAX_TENSOR_BYTES)");
  EXPECT_EQ(errorOf([] { Conv2D(int64_t(1) << 40, Size2(3)); }),
            "Conv2D: filters 1099511627776 is too large: a pixel of the "
            "output, f32[1099511627776] needs 4.0 TiB, over the limit of "
            "1.0 TiB per tensor (KCC_MAX_TENSOR_BYTES)");
}

TEST(SizeLimits, InputsAndWeights) {
  // 2^64 elements: a plain product wraps to 0 (Flatten gave [32, 0]).
  EXPECT_EQ(errorOf([] { Input({k32, k32}); }),
            "Input: f32[1, 4294967296, 4294967296] has more than 2^63-1 "
            "elements");
  // 2^32 features fit one row (16 GiB); a 4096-unit kernel on them does not.
  Tensor in = Input({k32}, DType::F32, "in");
  Dense dense(4096);
  dense.named("wide");
  EXPECT_EQ(errorOf([&] { dense(in); }),
            "layer 'wide' (Dense): weight 'kernel' f32[4294967296, 4096] "
            "needs 64.0 TiB, over the limit of 1.0 TiB per tensor "
            "(KCC_MAX_TENSOR_BYTES)");
}

TEST(SizeLimits, SymbolicAndEagerResults) {
  // Broadcasting [1, 2^20, 1] with [1, 1, 2^20] makes 4 TiB.
  Tensor a = Input({1 << 20, 1}), b = Input({1, 1 << 20});
  EXPECT_EQ(errorOf([&] { ops::add(a, b); }),
            "f32[1, 1048576, 1048576] needs 4.0 TiB, over the limit of "
            "1.0 TiB per tensor (KCC_MAX_TENSOR_BYTES)");
  // Eagerly, from two 4 MiB arrays.
  Tensor x = NDArray::zeros({1 << 20, 1}, DType::F32);
  Tensor y = NDArray::zeros({1, 1 << 20}, DType::F32);
  EXPECT_EQ(errorOf([&] { ops::add(x, y); }),
            "the result f32[1048576, 1048576] needs 4.0 TiB, over the limit "
            "of 1.0 TiB per tensor (KCC_MAX_TENSOR_BYTES)");
}

TEST(SizeLimits, TracedBatch) {
  Tensor in = Input({784});
  Model model(in, Dense(10)(in), "mlp");
  mlir::MLIRContext ctx;
  EXPECT_EQ(errorOf([&] { traceForward(ctx, model, {1000000000}); }),
            "traceForward: input 0 of 'mlp' at batch 1000000000: "
            "f32[1000000000, 784] needs 2.9 TiB, over the limit of 1.0 TiB "
            "per tensor (KCC_MAX_TENSOR_BYTES)");
  // Within the limit it traces.
  EXPECT_TRUE(traceForward(ctx, model, {1000000}));
}

TEST(SizeLimits, WeightsNeedTheMemoryFirst) {
  // A 2^14 x 2^16 kernel is 4 GiB: within the per-tensor limit, beyond
  // what 256 MiB more address space holds.
  Tensor in = Input({1 << 14});
  Dense dense(1 << 16);
  dense.named("big");
  dense(in);
  AddressSpaceLimit limit(256 << 20);
  ASSERT_TRUE(limit.ok());
  int64_t before = AllocStats::liveBytes();
  std::string msg = errorOf([&] { dense.getWeights(); });
  EXPECT_EQ(
      msg.rfind("layer 'big' (Dense): its weights would need 4.0 GiB; ", 0), 0u)
      << msg;
  EXPECT_NE(msg.find("are available (RLIMIT_AS, ulimit -v)"), std::string::npos)
      << msg;
  // Refused before anything was allocated, the bias included.
  EXPECT_EQ(AllocStats::liveBytes(), before);
  EXPECT_FALSE(dense.impl()->weights()[1].value.defined());
}

TEST(SizeLimits, EagerResultsNeedTheMemoryFirst) {
  Tensor x = NDArray::zeros({1 << 14, 1}, DType::F32);
  Tensor y = NDArray::zeros({1, 1 << 14}, DType::F32);
  AddressSpaceLimit limit(256 << 20);
  ASSERT_TRUE(limit.ok());
  std::string msg = errorOf([&] { ops::add(x, y); });
  EXPECT_EQ(msg.rfind("an array of f32[16384, 16384] would need 1.0 GiB; ", 0),
            0u)
      << msg;
}

} // namespace
