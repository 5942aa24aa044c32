//===- DatasetTest.cpp - IDX reading and Fashion-MNIST batching -----------===//

#include "runtime/data/Dataset.h"
#include "runtime/Error.h"
#include "runtime/data/IdxReader.h"
#include "tests/unit/ErrorOf.h"

#include "gtest/gtest.h"

#include <zlib.h>

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <set>

using namespace kcc;
using kcc::testing::errorOf;

namespace {

TEST(Dataset, ReadsAPlainIdxFile) {
  std::string path = ::testing::TempDir() + "/kcc-small.idx";
  {
    std::ofstream f(path, std::ios::binary);
    const unsigned char header[] = {0, 0, 8, 2, 0, 0, 0, 2, 0, 0, 0, 3};
    const unsigned char data[] = {1, 2, 3, 4, 5, 255};
    f.write(reinterpret_cast<const char *>(header), sizeof(header));
    f.write(reinterpret_cast<const char *>(data), sizeof(data));
  }
  IdxFile idx = readIdx(path);
  EXPECT_EQ(idx.shape, (Shape{2, 3}));
  EXPECT_EQ(idx.bytes, (std::vector<uint8_t>{1, 2, 3, 4, 5, 255}));
  std::remove(path.c_str());
}

TEST(Dataset, TruncatedIdxFileIsAnError) {
  std::string path = ::testing::TempDir() + "/kcc-truncated.idx";
  {
    std::ofstream f(path, std::ios::binary);
    const unsigned char header[] = {0, 0, 8, 1, 0, 0, 0, 9, 1, 2};
    f.write(reinterpret_cast<const char *>(header), sizeof(header));
  }
  try {
    readIdx(path);
    FAIL() << "expected an error";
  } catch (const Error &e) {
    EXPECT_EQ(std::string(e.what()), path + ": truncated IDX file");
  }
  std::remove(path.c_str());
}

/// Writes an IDX file of unsigned bytes: the header for `dims`, then `data`.
void writeIdx(const std::string &path, const std::vector<uint32_t> &dims,
              const std::vector<uint8_t> &data = {}) {
  std::ofstream f(path, std::ios::binary);
  const unsigned char magic[] = {0, 0, 8,
                                 static_cast<unsigned char>(dims.size())};
  f.write(reinterpret_cast<const char *>(magic), 4);
  for (uint32_t d : dims) {
    const unsigned char be[] = {static_cast<unsigned char>(d >> 24),
                                static_cast<unsigned char>(d >> 16),
                                static_cast<unsigned char>(d >> 8),
                                static_cast<unsigned char>(d)};
    f.write(reinterpret_cast<const char *>(be), 4);
  }
  f.write(reinterpret_cast<const char *>(data.data()), data.size());
}

TEST(Dataset, IdxHeaderLargerThanTheFileIsAnError) {
  // 2^31 x 2^31 x 2 bytes ended in std::length_error from the vector.
  std::string path = ::testing::TempDir() + "/kcc-huge.idx";
  writeIdx(path, {1u << 31, 1u << 31, 2}, {1, 2, 3});
  EXPECT_EQ(errorOf([&] { readIdx(path); }),
            path + ": the IDX header declares [2147483648, 2147483648, 2], "
                   "more bytes than the 19-byte file holds");
  // A product past 64 bits.
  writeIdx(path, {0xffffffffu, 0xffffffffu, 0xffffffffu});
  EXPECT_EQ(errorOf([&] { readIdx(path); }),
            path + ": the IDX header declares [4294967295, 4294967295, "
                   "4294967295], more bytes than the 16-byte file holds");
  // A gzip file holds at most about 1032 bytes of data per byte.
  gzFile gz = gzopen(path.c_str(), "wb");
  const unsigned char header[] = {0, 0, 8, 1, 0x40, 0, 0, 0}; // 2^30 bytes
  gzwrite(gz, header, sizeof(header));
  gzclose(gz);
  std::string msg = errorOf([&] { readIdx(path); });
  EXPECT_EQ(msg.rfind(path + ": the IDX header declares [1073741824], more "
                             "bytes than the ",
                      0),
            0u)
      << msg;
  std::remove(path.c_str());
}

TEST(Dataset, DevicesAreNotReadAsIdxFiles) {
  EXPECT_EQ(errorOf([] { readIdx("/dev/zero"); }),
            "/dev/zero: not a regular file");
}

TEST(Dataset, EmptySplitIsAnErrorNamingTheFile) {
  // No examples ended in SIGFPE (a division by the example count).
  std::string dir = ::testing::TempDir() + "/kcc-empty-mnist";
  ::mkdir(dir.c_str(), 0755);
  for (const char *split : {"train", "t10k"}) {
    writeIdx(dir + "/" + split + "-images-idx3-ubyte.gz", {0, 28, 28});
    writeIdx(dir + "/" + split + "-labels-idx1-ubyte.gz", {0});
  }
  EXPECT_EQ(errorOf([&] { loadFashionMnist(dir); }),
            dir + "/train-images-idx3-ubyte.gz: no examples (images "
                  "[0, 28, 28])");
  Dataset empty;
  EXPECT_EQ(errorOf([&] { BatchIterator(empty, 32, true, 0); }),
            "the dataset has 0 examples, fewer than one batch of 32");
}

TEST(Dataset, MissingFileIsNamed) {
  try {
    loadFashionMnist("/nonexistent-kcc-dir");
    FAIL() << "expected an error";
  } catch (const Error &e) {
    EXPECT_NE(
        std::string(e.what()).find(
            "/nonexistent-kcc-dir/train-images-idx3-ubyte.gz: cannot open"),
        std::string::npos)
        << e.what();
  }
}

TEST(Dataset, LoadsFashionMnist) {
  FashionMnist data = loadFashionMnist();
  ASSERT_EQ(data.train.x.shape(), (Shape{60000, 28, 28, 1}));
  ASSERT_EQ(data.test.x.shape(), (Shape{10000, 28, 28, 1}));
  // Scaled to [0, 1] with every class present in balanced numbers.
  const float *x = data.train.x.data<float>();
  float lo = 1, hi = 0;
  for (int64_t i = 0; i < data.train.x.numel(); ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
  EXPECT_EQ(lo, 0.0f);
  EXPECT_EQ(hi, 1.0f);
  std::vector<int> counts(10, 0);
  for (int64_t i = 0; i < data.test.size(); ++i)
    ++counts.at(data.test.y.data<int32_t>()[i]);
  for (int c : counts)
    EXPECT_EQ(c, 1000);
}

TEST(Dataset, BatchesAreAShuffledPartition) {
  Dataset d;
  d.x = NDArray::empty({10, 2}, DType::F32);
  d.y = NDArray::empty({10}, DType::I32);
  for (int i = 0; i < 10; ++i) {
    d.x.data<float>()[2 * i] = i;
    d.x.data<float>()[2 * i + 1] = -i;
    d.y.data<int32_t>()[i] = i;
  }
  BatchIterator it(d, 3, /*shuffle=*/true, /*seed=*/5);
  ASSERT_EQ(it.numBatches(), 3);
  std::set<int> seen;
  std::vector<int> firstEpoch;
  NDArray x, y;
  for (int64_t b = 0; b < it.numBatches(); ++b) {
    it.batch(b, x, y);
    for (int i = 0; i < 3; ++i) {
      int label = y.data<int32_t>()[i];
      EXPECT_EQ(x.data<float>()[2 * i], label); // rows stay with labels
      seen.insert(label);
      firstEpoch.push_back(label);
    }
  }
  EXPECT_EQ(seen.size(), 9u); // one example dropped: no partial batch
  it.startEpoch(1);
  std::vector<int> secondEpoch;
  for (int64_t b = 0; b < it.numBatches(); ++b) {
    it.batch(b, x, y);
    for (int i = 0; i < 3; ++i)
      secondEpoch.push_back(y.data<int32_t>()[i]);
  }
  EXPECT_NE(firstEpoch, secondEpoch);
}

} // namespace
