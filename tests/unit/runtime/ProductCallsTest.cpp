//===- ProductCallsTest.cpp - Recording and replaying product calls -------===//
//
// `kcc bench`'s library_ms replays the product calls one compiled step
// made. The entry points must report every f32 and bf16 GEMM, batched GEMM
// and convolution (and nothing else, and nothing in f64) while a recording is
// alive, and a replayed call must compute what the original computed, on
// the operands it is handed.
//
//===----------------------------------------------------------------------===//

#include "runtime/ProductCalls.h"
#include "runtime/LibraryCalls.h"

#include "gtest/gtest.h"

#include <vector>

namespace {

using kcc::rt::ProductCall;
using kcc::rt::ProductCallRecording;
using kcc::rt::ProductCallReplay;

std::vector<float> ramp(int64_t n, float scale) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = scale * static_cast<float>(i % 7 - 3);
  return v;
}

TEST(ProductCalls, RecordsF32ProductsOnlyWhileARecordingIsAlive) {
  std::vector<float> a = ramp(6, 0.5f), b = ramp(12, 0.25f), out(8);
  std::vector<float> x = ramp(2 * 4 * 4 * 3, 0.1f), w = ramp(3 * 3 * 3 * 2, 1);
  std::vector<float> y(2 * 4 * 4 * 2), pooled(2 * 2 * 2 * 3);
  std::vector<double> ad(6, 1.0), bd(12, 1.0), outd(8);
  kcc_rt_matmul_f32(a.data(), b.data(), out.data(), 2, 3, 3, 4, 2, 4, 0, 0);
  std::vector<ProductCall> calls;
  {
    ProductCallRecording recording;
    kcc_rt_matmul_f32(a.data(), b.data(), out.data(), 2, 3, 3, 4, 2, 4, 0, 0);
    kcc_rt_matmul_f64(ad.data(), bd.data(), outd.data(), 2, 3, 3, 4, 2, 4, 0,
                      0);
    kcc_rt_conv2d_f32(x.data(), w.data(), y.data(), 2, 4, 4, 3, 3, 3, 3, 2, 2,
                      4, 4, 2, 1, 1, 1, 1, /*same*/ 1, 1);
    kcc_rt_max_pool2d_f32(x.data(), pooled.data(), 2, 4, 4, 3, 2, 2, 2, 3, 2, 2,
                          2, 2, 0);
    calls = recording.take();
  }
  kcc_rt_matmul_f32(a.data(), b.data(), out.data(), 2, 3, 3, 4, 2, 4, 0, 0);
  ASSERT_EQ(calls.size(), 2u); // the f32 GEMM and the convolution
  EXPECT_EQ(calls[0].elements, (std::array<int64_t, 4>{6, 12, 0, 8}));
  EXPECT_EQ(calls[1].elements, (std::array<int64_t, 4>{96, 54, 0, 64}));
}

TEST(ProductCalls, ABF16CallReplaysOnTheScratchBits) {
  // bfloat16 bits of small integers: 1.0 is 0x3f80, 2.0 0x4000, 0.0 0x0000.
  std::vector<uint16_t> a = {0x3f80, 0x4000, 0x0000, 0x4000, 0x3f80, 0x3f80};
  std::vector<uint16_t> b(3 * 4, 0x3f80), expected(2 * 4), replayed(2 * 4);
  std::vector<ProductCall> calls;
  {
    ProductCallRecording recording;
    kcc_rt_matmul_bf16(a.data(), b.data(), expected.data(), 2, 3, 3, 4, 2, 4, 0,
                       0);
    calls = recording.take();
  }
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].elements, (std::array<int64_t, 4>{6, 12, 0, 8}));
  // Row sums: 1 + 2 + 0 = 3 (0x4040) and 2 + 1 + 1 = 4 (0x4080).
  EXPECT_EQ(expected[0], 0x4040);
  EXPECT_EQ(expected[7], 0x4080);
  calls[0].run(reinterpret_cast<const float *>(a.data()),
               reinterpret_cast<const float *>(b.data()), nullptr,
               reinterpret_cast<float *>(replayed.data()));
  EXPECT_EQ(replayed, expected);
}

TEST(ProductCalls, AReplayedCallComputesTheOriginalProduct) {
  // A GEMM with bias and relu: the replay keeps both (the library's part).
  std::vector<float> a = ramp(3 * 5, 0.5f), b = ramp(5 * 4, 0.25f),
                     bias = ramp(4, 2), expected(3 * 4), replayed(3 * 4, 9);
  std::vector<ProductCall> calls;
  {
    ProductCallRecording recording;
    kcc_rt_matmul_epilogue_f32(a.data(), b.data(), bias.data(), expected.data(),
                               3, 5, 5, 4, 3, 4, 0, 0, /*hasBias=*/1,
                               int64_t(kcc::EpilogueActivation::Relu), 0.0);
    calls = recording.take();
  }
  ASSERT_EQ(calls.size(), 1u);
  calls[0].run(a.data(), b.data(), bias.data(), replayed.data());
  EXPECT_EQ(replayed, expected);
  int negatives = 0;
  for (float v : expected)
    negatives += v < 0;
  EXPECT_EQ(negatives, 0);

  // The replay as a whole runs every call on its own scratch operands.
  ProductCallReplay replay(std::move(calls));
  EXPECT_EQ(replay.size(), 1u);
  EXPECT_GE(replay.runMs(), 0.0);
}

} // namespace
