//===- NpzWriterTest.cpp - .npy / .npz out, read back by the reader -------===//

#include "runtime/data/NpzWriter.h"
#include "runtime/Error.h"
#include "runtime/data/Npz.h"

#include "tests/unit/saving/SavingTestUtil.h"

using namespace kcc;
using namespace kcc::saving_test;

namespace {

TEST(NpzWriter, EveryDtypeRoundTrips) {
  std::string dir = tempDir();
  NDArray f = randomImages({3, 5}, 1);
  NDArray d = NDArray::fromVector({2}, {1.5, -2.25}, DType::F64);
  NDArray i = NDArray::empty({4}, DType::I32);
  NDArray l = NDArray::empty({2, 1}, DType::I64);
  NDArray b = NDArray::empty({3}, DType::I1);
  for (int k = 0; k < 4; ++k)
    i.data<int32_t>()[k] = k * 7 - 3;
  l.data<int64_t>()[0] = int64_t(1) << 40;
  l.data<int64_t>()[1] = -5;
  uint8_t bits[3] = {1, 0, 1};
  std::memcpy(b.rawData(), bits, 3);
  NDArray scalar = NDArray::scalar(0.5);
  for (const NDArray &a : {f, d, i, l, b, scalar}) {
    std::string path = dir + "/a.npy";
    writeNpy(path, a);
    expectIdentical(a, readNpy(path), "npy");
  }
  std::string npz = dir + "/all.npz";
  writeNpz(npz, {{"f", f}, {"i", i}, {"b", b}});
  std::map<std::string, NDArray> back = readNpz(npz);
  ASSERT_EQ(back.size(), 3u);
  expectIdentical(f, back["f"], "npz f");
  expectIdentical(i, back["i"], "npz i");
  expectIdentical(b, back["b"], "npz b");
}

TEST(NpzWriter, HeaderIsAlignedAsNumpyWritesIt) {
  std::string bytes = serializeNpy(randomImages({2, 3}, 2), "x");
  ASSERT_GE(bytes.size(), 10u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  size_t headerLen = uint8_t(bytes[8]) | (uint8_t(bytes[9]) << 8);
  EXPECT_EQ((10 + headerLen) % 64, 0u);
  EXPECT_EQ(bytes[10 + headerLen - 1], '\n');
  EXPECT_NE(bytes.find("'descr': '<f4', 'fortran_order': False, "
                       "'shape': (2, 3), }"),
            std::string::npos);
  EXPECT_EQ(bytes.size(), 10 + headerLen + 6 * 4);
}

TEST(NpzWriter, UnwritableOutputIsNamedAndNothingIsLeft) {
  std::string dir = tempDir();
  try {
    writeNpy(dir + "/no/such/p.npy", randomImages({2}, 3));
    ADD_FAILURE() << "expected an error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("no/such/p.npy: cannot write"),
              std::string::npos)
        << e.what();
  }
  try {
    writeNpz(dir + "/h.npz", {{"h", NDArray::zeros({2}, DType::F16)}});
    ADD_FAILURE() << "expected an error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("array 'h': cannot write a f16"),
              std::string::npos)
        << e.what();
  }
  std::error_code ec;
  EXPECT_TRUE(llvm::sys::fs::directory_iterator(dir, ec) ==
              llvm::sys::fs::directory_iterator());
}

} // namespace
