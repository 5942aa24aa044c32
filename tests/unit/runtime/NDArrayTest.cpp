//===- NDArrayTest.cpp - NDArray storage, conversions and AllocStats ------===//

#include "runtime/NDArray.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdint>
#include <limits>

using namespace kcc;

namespace {

TEST(NDArray, ShapeHelpers) {
  EXPECT_EQ(numElements({}), 1);
  EXPECT_EQ(numElements({2, 3, 4}), 24);
  EXPECT_EQ(numElements({5, 0}), 0);
  EXPECT_EQ(shapeToString({32, 784}), "[32, 784]");
  EXPECT_EQ(shapeToString({}), "[]");
  EXPECT_EQ(dtypeSize(DType::F32), 4u);
  EXPECT_EQ(dtypeSize(DType::F64), 8u);
  EXPECT_EQ(dtypeSize(DType::BF16), 2u);
  EXPECT_EQ(dtypeSize(DType::I1), 1u);
  EXPECT_EQ(dtypeSize(DType::I64), 8u);
  EXPECT_STREQ(dtypeName(DType::BF16), "bf16");
  EXPECT_TRUE(isFloat(DType::F16));
  EXPECT_FALSE(isFloat(DType::I32));
}

TEST(NDArray, AlignedZeroedAndScalar) {
  for (int64_t n : {1, 3, 17, 1000}) {
    NDArray a = NDArray::zeros({n}, DType::F64);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a.rawData()) % 64, 0u);
    for (int64_t i = 0; i < n; ++i)
      EXPECT_EQ(a.at(i), 0.0);
  }
  NDArray s = NDArray::scalar(2.5, DType::F64);
  EXPECT_EQ(s.rank(), 0);
  EXPECT_EQ(s.numel(), 1);
  EXPECT_EQ(s.at(0), 2.5);
  NDArray e = NDArray::empty({0, 4}, DType::F32);
  EXPECT_TRUE(e.defined());
  EXPECT_EQ(e.bytes(), 0u);
  EXPECT_FALSE(NDArray().defined());
}

TEST(NDArray, FromVectorReshapeClone) {
  NDArray a = NDArray::fromVector({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(a.dtype(), DType::F32);
  EXPECT_EQ(a.bytes(), 24u);
  NDArray r = a.reshaped({3, 2});
  EXPECT_EQ(r.rawData(), a.rawData()); // Shares storage.
  EXPECT_EQ(r.shape(), (Shape{3, 2}));
  EXPECT_THROW(a.reshaped({4, 2}), std::exception);
  NDArray c = a.clone();
  EXPECT_NE(c.rawData(), a.rawData());
  c.set(0, 42);
  EXPECT_EQ(a.at(0), 1.0);
  EXPECT_EQ(c.at(0), 42.0);
  EXPECT_EQ(a.toVector(), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_THROW(NDArray::fromVector({2, 2}, {1, 2, 3}), std::exception);
}

TEST(NDArray, ElementAccessAllDtypes) {
  NDArray i1 = NDArray::zeros({3}, DType::I1);
  i1.set(1, 7.0);
  EXPECT_EQ(i1.data<uint8_t>()[1], 1); // Stored as exactly 0/1.
  EXPECT_EQ(i1.at(1), 1.0);
  NDArray i32 = NDArray::zeros({2}, DType::I32);
  i32.set(0, -5.9);
  EXPECT_EQ(i32.data<int32_t>()[0], -5); // Truncates like a C cast.
  NDArray i64 = NDArray::zeros({1}, DType::I64);
  i64.set(0, 9007199254740992.0);
  EXPECT_EQ(i64.data<int64_t>()[0], int64_t(1) << 53);
}

TEST(NDArray, HalfAndBFloat16Conversions) {
  NDArray h = NDArray::zeros({1}, DType::F16);
  auto bitsOf = [&](double v) {
    h.set(0, v);
    return h.data<uint16_t>()[0];
  };
  EXPECT_EQ(bitsOf(1.0), 0x3c00);
  EXPECT_EQ(bitsOf(-2.0), 0xc000);
  EXPECT_EQ(bitsOf(65504.0), 0x7bff);
  EXPECT_EQ(bitsOf(65520.0), 0x7c00);                    // Rounds to infinity.
  EXPECT_EQ(bitsOf(std::ldexp(1.0, -24)), 0x0001);       // Smallest subnormal.
  EXPECT_EQ(bitsOf(1.0 + std::ldexp(1.0, -11)), 0x3c00); // Tie to even.
  EXPECT_EQ(bitsOf(1.0 + 3 * std::ldexp(1.0, -11)), 0x3c02);
  h.set(0, std::numeric_limits<double>::quiet_NaN());
  EXPECT_TRUE(std::isnan(h.at(0)));
  // Every finite half value survives a round trip through double.
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    if ((bits & 0x7c00) == 0x7c00)
      continue;
    h.data<uint16_t>()[0] = static_cast<uint16_t>(bits);
    double v = h.at(0);
    h.set(0, v);
    ASSERT_EQ(h.data<uint16_t>()[0], bits) << v;
  }
  NDArray b = NDArray::zeros({1}, DType::BF16);
  b.set(0, 1.0 + std::ldexp(1.0, -8)); // Tie: rounds to even (1.0).
  EXPECT_EQ(b.data<uint16_t>()[0], 0x3f80);
  b.set(0, 3.140625);
  EXPECT_EQ(b.at(0), 3.140625);
  b.set(0, -std::numeric_limits<double>::infinity());
  EXPECT_EQ(b.data<uint16_t>()[0], 0xff80);
}

TEST(NDArray, ToConvertsDtypes) {
  NDArray a = NDArray::fromVector({4}, {-1.5, 0, 2.75, 3}, DType::F64);
  NDArray f = a.to(DType::F32);
  EXPECT_EQ(f.dtype(), DType::F32);
  EXPECT_EQ(f.toVector(), (std::vector<double>{-1.5, 0, 2.75, 3}));
  EXPECT_EQ(a.to(DType::I32).toVector(), (std::vector<double>{-1, 0, 2, 3}));
  EXPECT_EQ(a.to(DType::I1).toVector(), (std::vector<double>{1, 0, 1, 1}));
  EXPECT_EQ(a.to(DType::BF16).toVector(),
            (std::vector<double>{-1.5, 0, 2.75, 3}));
  EXPECT_EQ(a.to(DType::F16).to(DType::F64).toVector(),
            (std::vector<double>{-1.5, 0, 2.75, 3}));
}

TEST(AllocStats, CountsAllocationsBytesAndPeak) {
  AllocStats::reset();
  int64_t live0 = AllocStats::liveBytes();
  EXPECT_EQ(AllocStats::numAllocs(), 0);
  EXPECT_EQ(AllocStats::totalBytes(), 0);
  EXPECT_EQ(AllocStats::peakBytes(), live0);
  {
    NDArray a = NDArray::empty({100}, DType::F32); // 400 bytes
    EXPECT_EQ(AllocStats::liveBytes(), live0 + 400);
    {
      NDArray b = NDArray::zeros({10}, DType::F64); // 80 bytes
      NDArray view = b.reshaped({2, 5});            // no allocation
      EXPECT_EQ(AllocStats::numAllocs(), 2);
      EXPECT_EQ(AllocStats::liveBytes(), live0 + 480);
    }
    EXPECT_EQ(AllocStats::liveBytes(), live0 + 400);
    EXPECT_EQ(AllocStats::peakBytes(), live0 + 480);
    AllocStats::resetPeak();
    EXPECT_EQ(AllocStats::peakBytes(), live0 + 400);
    NDArray c = a.clone();
    EXPECT_EQ(AllocStats::peakBytes(), live0 + 800);
  }
  EXPECT_EQ(AllocStats::liveBytes(), live0);
  EXPECT_EQ(AllocStats::numAllocs(), 3);
  EXPECT_EQ(AllocStats::totalBytes(), 880);
  EXPECT_EQ(AllocStats::peakBytes(), live0 + 800);
}

} // namespace
