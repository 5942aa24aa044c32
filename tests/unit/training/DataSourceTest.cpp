//===- DataSourceTest.cpp - Mapped data, prefetching, users' arrays -------===//
//
// A dataset four times the memory the test allows itself trains through
// memory-mapped .npy files with its peak RSS growth (VmHWM, reset through
// /proc/self/clear_refs) under that limit; the prefetcher hands out every
// batch once, in order, and passes a worker's error on; arrays are cast as
// Keras casts them; and a folder that lacks an array is refused by name.
//
//===----------------------------------------------------------------------===//

#include "tests/unit/ErrorOf.h"

#include "frontend/Layers.h"
#include "frontend/training/Prefetcher.h"
#include "frontend/training/Trainer.h"
#include "frontend/training/UserData.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

using namespace kcc;
using kcc::testing::errorOf;

namespace {

/// A .npy 1.0 header for `descr` and `shape`, padded to 64 bytes.
std::string npyHeader(const std::string &descr, const Shape &shape) {
  std::string dims;
  for (size_t i = 0; i < shape.size(); ++i)
    dims += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1)
    dims += ",";
  std::string h = "{'descr': '" + descr +
                  "', 'fortran_order': False, 'shape': (" + dims + "), }";
  size_t total = 10 + h.size() + 1;
  h += std::string((64 - total % 64) % 64, ' ') + "\n";
  std::string out = "\x93NUMPY\x01";
  out += '\0';
  out += static_cast<char>(h.size() & 0xff);
  out += static_cast<char>(h.size() >> 8);
  return out + h;
}

int64_t statusKb(const char *key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key, 0) == 0)
      return std::stoll(line.substr(std::strlen(key)));
  return -1;
}

std::string tempDir(const std::string &name) {
  std::string dir = ::testing::TempDir() + "/" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(MappedData, TrainsADatasetFourTimesTheMemoryLimitWithBoundedRss) {
  constexpr int64_t kLimitBytes = 96ll << 20;
  constexpr int64_t kRows = 98304, kFeatures = 1024; // 384 MiB of float32
  std::string dir = tempDir("kcc-mapped");
  {
    std::ofstream x(dir + "/x.npy", std::ios::binary);
    x << npyHeader("<f4", {kRows, kFeatures});
    std::vector<float> row(kFeatures);
    for (int64_t r = 0; r < kRows; ++r) {
      for (int64_t j = 0; j < kFeatures; ++j)
        row[j] = static_cast<float>((r * 31 + j * 7) % 97) / 97.0f;
      x.write(reinterpret_cast<const char *>(row.data()), row.size() * 4);
    }
    std::ofstream y(dir + "/y.npy", std::ios::binary);
    y << npyHeader("<i8", {kRows});
    for (int64_t r = 0; r < kRows; ++r) {
      int64_t label = r % 10;
      y.write(reinterpret_cast<const char *>(&label), 8);
    }
  }
  ASSERT_GT(static_cast<int64_t>(std::filesystem::file_size(dir + "/x.npy")),
            4 * kLimitBytes - (1 << 20));

  Sequential model({Input({kFeatures}), Dense(10, "softmax")}, "wide", 1);
  TrainingConfig config;
  config.metrics = {"accuracy"};
  Trainer trainer(model, config, nullptr);
  DataSpec spec = dataSpecOf(model, config);
  EXPECT_EQ(spec.inputs[0].row, Shape{kFeatures});
  EXPECT_EQ(spec.targets[0].row, Shape{});
  EXPECT_EQ(spec.targets[0].type, DType::I32);
  EXPECT_EQ(spec.targets[0].classes, 10);
  trainer.inputSpec(256); // compiles the step before RSS is measured
  Examples e = loadExamples(dir, spec, nullptr);
  ASSERT_TRUE(e.x[0].mapped());
  EXPECT_EQ(e.x[0].kind(), ElementKind::F32);
  EXPECT_EQ(e.y[0].kind(), ElementKind::I64);
  ArrayDataSource source(e.x[0], e.y[0], 256, spec.inputs[0].type,
                         spec.targets[0].type);
  source.setShuffle(true, 1);
  // One step first: the kernels' own first-run buffers (oneDNN, OpenMP)
  // are not the data's.
  Batch first = source.batch(0);
  trainer.trainOnBatch(first.x, first.y);
  first = Batch();

  {
    std::ofstream reset("/proc/self/clear_refs");
    reset << "5"; // resets VmHWM to the current RSS
  }
  int64_t baselineKb = statusKb("VmRSS:");
  ASSERT_GT(baselineKb, 0);
  FitOptions fit;
  fit.verbose = 0;
  fit.batchSize = 256;
  fit.workers = 2;
  History h = trainer.fit(source, fit);
  int64_t peakKb = statusKb("VmHWM:");
  int64_t growth = (peakKb - baselineKb) << 10;
  std::printf("[ mapped ] %lld MiB of x.npy trained in %lld steps: RSS %lld "
              "MiB before, peak %lld MiB (growth %.1f MiB, limit %lld MiB)\n",
              static_cast<long long>((kRows * kFeatures * 4) >> 20),
              static_cast<long long>(h.epochs[0].steps),
              static_cast<long long>(baselineKb >> 10),
              static_cast<long long>(peakKb >> 10), growth / 1048576.0,
              static_cast<long long>(kLimitBytes >> 20));
  EXPECT_EQ(h.epochs[0].steps, kRows / 256);
  EXPECT_EQ(trainer.iterations(), kRows / 256 + 1);
  EXPECT_LT(growth, kLimitBytes);
  std::filesystem::remove_all(dir);
}

/// Batch i holds the scalar i; counts the reads.
class CountingSource : public DataSource {
public:
  int64_t numBatches() const override { return 50; }
  Batch batch(int64_t i) const override {
    ++reads;
    if (i == failAt)
      throw Error("batch " + std::to_string(i) + " is unreadable");
    Batch b;
    b.x = NDArray::scalar(static_cast<double>(i)).reshaped({1});
    return b;
  }
  mutable std::atomic<int> reads{0};
  int64_t failAt = -1;
};

TEST(Prefetcher, EveryBatchOnceInOrder) {
  for (int workers : {0, 1, 3}) {
    CountingSource source;
    {
      Prefetcher ahead(source, 0, source.numBatches(), workers, 4);
      for (int64_t i = 0; i < source.numBatches(); ++i)
        ASSERT_EQ(ahead.next().x.at(0), i) << workers << " workers";
    }
    EXPECT_EQ(source.reads, 50);
  }
  CountingSource failing;
  failing.failAt = 5;
  Prefetcher ahead(failing, 0, failing.numBatches(), 2, 4);
  for (int i = 0; i < 5; ++i)
    ahead.next();
  EXPECT_EQ(errorOf([&] { ahead.next(); }), "batch 5 is unreadable");
  // Destroying it mid-epoch stops the workers (no hang, no crash).
}

TEST(ExampleArray, CastsAsKerasDoes) {
  NDArray d = NDArray::fromVector({2, 2}, {0.5, -1.25, 3, 4}, DType::F64);
  ExampleArray a = ExampleArray::fromNDArray(d, "d");
  NDArray out;
  int64_t order[] = {1, 0};
  a.gather(order, 2, DType::F32, out);
  EXPECT_EQ(out.dtype(), DType::F32);
  EXPECT_EQ(out.toVector(), (std::vector<double>{3, 4, 0.5, -1.25}));

  std::string dir = tempDir("kcc-u8");
  {
    std::ofstream f(dir + "/x.npy", std::ios::binary);
    f << npyHeader("|u1", {3}) << '\x00' << '\x07' << '\xff';
  }
  ExampleArray u = ExampleArray::mapNpy(dir + "/x.npy", "u8");
  EXPECT_EQ(u.kind(), ElementKind::U8);
  int64_t all[] = {0, 1, 2};
  u.gather(all, 3, DType::F32, out);
  EXPECT_EQ(out.toVector(), (std::vector<double>{0, 7, 255}));
  u.gather(all, 3, DType::I32, out);
  EXPECT_EQ(out.toVector(), (std::vector<double>{0, 7, 255}));

  {
    std::ofstream f(dir + "/big.npy", std::ios::binary);
    f << npyHeader(">f4", {1}) << std::string(4, '\0');
  }
  EXPECT_EQ(errorOf([&] { ExampleArray::mapNpy(dir + "/big.npy", "b"); }),
            dir + "/big.npy: big-endian arrays (>f4) cannot be memory-mapped; "
                  "save it little-endian (array.astype('<f4'))");
  {
    std::ofstream f(dir + "/short.npy", std::ios::binary);
    f << npyHeader("<f4", {4, 2}) << std::string(12, '\0');
  }
  EXPECT_EQ(errorOf([&] { ExampleArray::mapNpy(dir + "/short.npy", "s"); }),
            dir + "/short.npy: shape (4, 2) of <f4 needs 32 data bytes, the "
                  "file holds 12");
  std::filesystem::remove_all(dir);
}

TEST(UserData, FolderErrorsNameTheArray) {
  DataSpec spec;
  spec.inputs = {{"pixels", {3}, DType::F32}};
  spec.targets = {{"dense_2", {}, DType::I32, /*sparseLabels=*/true, 4}};
  std::string dir = tempDir("kcc-userdata");
  auto write = [&](const std::string &name, const std::string &descr,
                   const Shape &shape, const std::string &bytes) {
    std::ofstream f(dir + "/" + name, std::ios::binary);
    f << npyHeader(descr, shape) << bytes;
  };
  write("x.npy", "<f4", {2, 3}, std::string(24, '\0'));
  EXPECT_EQ(errorOf([&] { loadExamples(dir, spec, nullptr); }),
            dir + ": no target file 'y.npy' (or 'dense_2.npy') in the folder; "
                  "it holds: x.npy");
  std::string labels(8, '\0');
  labels[4] = 4; // example 1: label 4 of 4 classes
  write("dense_2.npy", "<i4", {2}, labels);
  EXPECT_EQ(errorOf([&] { loadExamples(dir, spec, nullptr); }),
            dir + "/dense_2.npy: label 4 of example 1 is not a class: "
                  "sparse_categorical_crossentropy takes integers in [0, 4)");
  write("dense_2.npy", "<i4", {3}, std::string(12, '\0'));
  EXPECT_EQ(errorOf([&] { loadExamples(dir, spec, nullptr); }),
            dir + ": x has 2 examples (" + dir + "/x.npy) but y has 3 (" + dir +
                "/dense_2.npy): they must have as many");
  write("x.npy", "<f4", {3, 2}, std::string(24, '\0'));
  EXPECT_EQ(errorOf([&] { loadExamples(dir, spec, nullptr); }),
            dir + "/x.npy: expected inputs of shape [N, 3], found [3, 2] "
                  "(float32)");
  write("x.npy", "<f4", {3, 3}, std::string(36, '\0'));
  Examples ok = loadExamples(dir, spec, nullptr);
  EXPECT_EQ(ok.size(), 3);
  write("sample_weight.npy", "<f4", {3}, std::string(12, '\0'));
  EXPECT_TRUE(loadExamples(dir, spec, nullptr).sampleWeight.defined());
  // float32 NaN, little-endian, for the second example.
  write("sample_weight.npy", "<f4", {3},
        std::string(4, '\0') + std::string("\x00\x00\xc0\x7f", 4) +
            std::string(4, '\0'));
  EXPECT_EQ(errorOf([&] { loadExamples(dir, spec, nullptr); }),
            dir + "/sample_weight.npy: the weight of example 1 is nan, not a "
                  "finite number");
  std::filesystem::remove_all(dir);
}

} // namespace
