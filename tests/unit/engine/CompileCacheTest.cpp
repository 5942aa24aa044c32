//===- CompileCacheTest.cpp - The compile cache's disk layer --------------===//
//
// The reference MLP's train step compiled once into a temporary cache
// folder, then found there by a fresh CompileCache (as by the next process):
// nothing compiled, the same metadata, bit-equal step outputs. Truncated,
// garbled and foreign entries are misses with one note each and are
// rewritten by the next compile; writers racing readers on one key never
// let a reader see a partial entry. No test writes outside its own
// temporary folder.
//
//===----------------------------------------------------------------------===//

#include "engine/CompileCache.h"
#include "engine/DiskCache.h"
#include "frontend/Trace.h"
#include "frontend/models/ReferenceModels.h"
#include "frontend/training/Jit.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>

using namespace kcc;

namespace {

/// A fresh folder under the system's temporary directory, removed with it.
class TempDir {
public:
  TempDir() {
    llvm::SmallString<128> path;
    if (std::error_code ec =
            llvm::sys::fs::createUniqueDirectory("kcc-cache-test", path))
      ADD_FAILURE() << "cannot create a temporary folder: " << ec.message();
    path_ = std::string(path);
  }
  ~TempDir() { llvm::sys::fs::remove_directories(path_); }
  const std::string &path() const { return path_; }

  /// The files in the folder, names only.
  std::vector<std::string> files() const {
    std::vector<std::string> names;
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(path_, ec), end; it != end && !ec;
         it.increment(ec))
      names.push_back(llvm::sys::path::filename(it->path()).str());
    return names;
  }

private:
  std::string path_;
};

/// The reference MLP's @train_step at batch 8 (adam, accuracy).
struct TrainStep {
  TrainStep() {
    registerFrontendDialects(ctx);
    TrainingConfig config;
    config.batch = 8;
    config.metrics = {"accuracy"};
    std::unique_ptr<Model> model = models::buildMlp(1);
    module = buildTrainModule(ctx, *model, config);
  }
  mlir::MLIRContext ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

/// Seeded inputs for `specs`: small floats, integers (labels, the counter)
/// in [0, 10).
std::vector<NDArray> inputsFor(const std::vector<TensorSpec> &specs) {
  std::mt19937 gen(7);
  std::uniform_real_distribution<double> real(-0.1, 0.1);
  std::uniform_int_distribution<int64_t> integer(0, 9);
  std::vector<NDArray> arrays;
  for (const TensorSpec &s : specs) {
    NDArray a = NDArray::empty(s.shape, s.dtype);
    for (int64_t i = 0; i < a.numel(); ++i)
      a.set(i, isFloat(s.dtype) ? real(gen) : double(integer(gen)));
    arrays.push_back(a);
  }
  return arrays;
}

void expectBitEqual(const std::vector<NDArray> &a,
                    const std::vector<NDArray> &b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].shape(), b[i].shape()) << "result " << i;
    ASSERT_EQ(a[i].bytes(), b[i].bytes()) << "result " << i;
    EXPECT_EQ(std::memcmp(a[i].rawData(), b[i].rawData(), a[i].bytes()), 0)
        << "result " << i << " differs";
  }
}

std::string readFile(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  EXPECT_TRUE(bool(buffer)) << path;
  return buffer ? (*buffer)->getBuffer().str() : std::string();
}

void writeFile(const std::string &path, llvm::StringRef bytes) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  ASSERT_FALSE(ec) << path << ": " << ec.message();
  os << bytes;
}

/// One compile of the train step shared by the tests (compiling is the
/// slow part): its key, artifact and cold-compiled function.
class DiskCacheTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    step = new TrainStep;
    auto f = step->module->lookupSymbol<mlir::func::FuncOp>("train_step");
    ASSERT_TRUE(f);
    key = new std::string(CompileCache::keyFor(f, CpuOptions()));
    artifact = new CompiledArtifact(
        CompiledFunction::build(*step->module, "train_step", CpuOptions()));
  }
  static void TearDownTestSuite() {
    delete artifact;
    delete key;
    delete step;
  }

  static TrainStep *step;
  static std::string *key;
  static CompiledArtifact *artifact;
};

TrainStep *DiskCacheTest::step = nullptr;
std::string *DiskCacheTest::key = nullptr;
CompiledArtifact *DiskCacheTest::artifact = nullptr;

TEST_F(DiskCacheTest, AFreshCacheLoadsWhatAnotherCompiled) {
  TempDir dir;
  std::string log;
  llvm::raw_string_ostream os(log);

  CompileCache first;
  first.setDiskCache(DiskCache(dir.path()));
  CompileCache::Result cold =
      first.getOrCompile(*step->module, "train_step", CpuOptions(), &os);
  EXPECT_FALSE(cold.hit);
  EXPECT_EQ(first.compiles(), 1);
  ASSERT_EQ(dir.files().size(), 1u) << "one entry, no temporary left";
  EXPECT_TRUE(llvm::StringRef(dir.files()[0]).ends_with(".kcc"));

  // A new cache over the same folder: what the next process sees.
  CompileCache second;
  second.setDiskCache(DiskCache(dir.path()));
  CompileCache::Result warm =
      second.getOrCompile(*step->module, "train_step", CpuOptions(), &os);
  EXPECT_TRUE(warm.hit);
  EXPECT_TRUE(warm.fromDisk);
  EXPECT_EQ(second.compiles(), 0);
  EXPECT_EQ(second.diskHits(), 1);
  os.flush();
  EXPECT_NE(log.find("kcc: loaded train_step for batch 8 from the cache in "),
            std::string::npos)
      << log;
  EXPECT_EQ(log.find("note"), std::string::npos) << log;

  // The same function: metadata and bits.
  const CompiledFunction &a = *cold.function, &b = *warm.function;
  ASSERT_EQ(a.argSpecs().size(), b.argSpecs().size());
  for (size_t i = 0; i < a.argSpecs().size(); ++i) {
    EXPECT_EQ(a.argSpecs()[i].shape, b.argSpecs()[i].shape);
    EXPECT_EQ(a.argSpecs()[i].dtype, b.argSpecs()[i].dtype);
  }
  ASSERT_EQ(a.resultSpecs().size(), b.resultSpecs().size());
  EXPECT_EQ(a.inPlaceResults(), b.inPlaceResults());
  EXPECT_FALSE(a.inPlaceResults().empty()) << "adam updates in place";
  EXPECT_EQ(a.kernelCount().libraryCalls, b.kernelCount().libraryCalls);
  EXPECT_EQ(a.kernelCount().loopNests, b.kernelCount().loopNests);
  EXPECT_GT(a.kernelCount().total(), 0);
  EXPECT_EQ(a.arenaBytes(), b.arenaBytes());
  EXPECT_GT(a.arenaBytes(), 0);
  ASSERT_TRUE(a.memoryPlan() && b.memoryPlan());
  EXPECT_EQ(a.memoryPlan()->lowerBoundBytes, b.memoryPlan()->lowerBoundBytes);
  EXPECT_EQ(a.memoryPlan()->sumBytes, b.memoryPlan()->sumBytes);

  std::vector<NDArray> args = inputsFor(a.argSpecs());
  expectBitEqual(a.run(args), b.run(args));

  // The second lookup of the same cache is in memory.
  CompileCache::Result again =
      second.getOrCompile(*step->module, "train_step", CpuOptions(), &os);
  EXPECT_TRUE(again.hit);
  EXPECT_FALSE(again.fromDisk);
  EXPECT_EQ(again.function, warm.function);
}

TEST_F(DiskCacheTest, OtherOptionsAreAnotherEntry) {
  TempDir dir;
  DiskCache disk(dir.path());
  disk.store(*key, *artifact, nullptr);
  CpuOptions o1;
  o1.target.optLevel = 1;
  auto f = step->module->lookupSymbol<mlir::func::FuncOp>("train_step");
  std::string otherKey = CompileCache::keyFor(f, o1);
  EXPECT_NE(disk.pathFor(otherKey), disk.pathFor(*key));
  std::string log;
  llvm::raw_string_ostream os(log);
  EXPECT_FALSE(disk.load(otherKey, &os));
  EXPECT_TRUE(disk.load(*key, &os));
  os.flush();
  EXPECT_TRUE(log.empty()) << "a plain miss is silent: " << log;
}

TEST_F(DiskCacheTest, CorruptEntriesAreMissesWithANote) {
  TempDir dir;
  DiskCache disk(dir.path());
  disk.store(*key, *artifact, nullptr);
  std::string path = disk.pathFor(*key);
  std::string good = readFile(path);
  ASSERT_GT(good.size(), 1000u);
  ASSERT_TRUE(disk.load(*key, nullptr));

  struct Case {
    const char *what;
    std::string bytes;
    const char *reason;
  };
  std::string flippedObject = good, flippedMetadata = good, magic = good;
  flippedObject[good.size() - 100] ^= 0x5a;
  flippedMetadata[60] ^= 0x01;
  magic[0] = 'X';
  std::vector<Case> cases = {
      {"empty", "", "truncated"},
      {"a partial header", good.substr(0, 20), "truncated"},
      {"half an entry", good.substr(0, good.size() / 2), "truncated"},
      {"one byte short", good.substr(0, good.size() - 1), "truncated"},
      {"trailing bytes", good + "junk", "trailing bytes"},
      {"a garbled object", flippedObject, "checksum mismatch"},
      {"garbled metadata", flippedMetadata, "checksum mismatch"},
      {"another file", magic, "not a kcc cache entry"},
  };
  for (const Case &c : cases) {
    writeFile(path, c.bytes);
    std::string log;
    llvm::raw_string_ostream os(log);
    EXPECT_FALSE(disk.load(*key, &os)) << c.what;
    os.flush();
    EXPECT_NE(log.find("kcc: note: compile cache: ignoring " + path),
              std::string::npos)
        << c.what << ": " << log;
    EXPECT_NE(log.find(c.reason), std::string::npos) << c.what << ": " << log;
    EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 1)
        << c.what << ": one line: " << log;
  }

  // A well-formed entry of another format version is refused too.
  std::string version = good;
  version[8] = 99;
  writeFile(path, version);
  EXPECT_FALSE(disk.load(*key, nullptr));

  // The next compile replaces a corrupt entry with a whole one.
  writeFile(path, good.substr(0, good.size() / 3));
  CompileCache cache;
  cache.setDiskCache(disk);
  std::string log;
  llvm::raw_string_ostream os(log);
  CompileCache::Result r =
      cache.getOrCompile(*step->module, "train_step", CpuOptions(), &os);
  EXPECT_FALSE(r.hit);
  EXPECT_EQ(cache.compiles(), 1);
  os.flush();
  EXPECT_NE(log.find("truncated"), std::string::npos) << log;
  EXPECT_NE(log.find("kcc: compiled train_step"), std::string::npos) << log;
  EXPECT_TRUE(disk.load(*key, nullptr)) << "rewritten";
}

TEST_F(DiskCacheTest, ConcurrentWritersNeverShowAPartialEntry) {
  TempDir dir;
  DiskCache disk(dir.path());
  constexpr int writers = 4, readers = 4, stores = 15;
  std::atomic<int> writing{writers};
  std::atomic<int> hits{0}, corrupt{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < writers; ++w)
    threads.emplace_back([&] {
      for (int i = 0; i < stores; ++i)
        disk.store(*key, *artifact, nullptr);
      --writing;
    });
  for (int r = 0; r < readers; ++r)
    threads.emplace_back([&] {
      while (writing > 0) {
        std::string log;
        llvm::raw_string_ostream os(log);
        std::optional<CompiledArtifact> a = disk.load(*key, &os);
        os.flush();
        if (a) {
          ++hits;
          if (a->objects != artifact->objects)
            ++corrupt;
        }
        if (!log.empty())
          ++corrupt; // a reader saw a partial or garbled entry
      }
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(corrupt, 0);
  EXPECT_GT(hits, 0);
  std::vector<std::string> files = dir.files();
  ASSERT_EQ(files.size(), 1u) << "no temporary file left behind";
  std::optional<CompiledArtifact> a = disk.load(*key, nullptr);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->objects, artifact->objects);
  EXPECT_EQ(a->inPlace, artifact->inPlace);
}

TEST(DiskCacheFolder, FromTheEnvironment) {
  const char *saved = std::getenv("KCC_CACHE_DIR");
  std::string savedValue = saved ? saved : "";
  const char *savedXdg = std::getenv("XDG_CACHE_HOME");
  std::string savedXdgValue = savedXdg ? savedXdg : "";

  setenv("KCC_CACHE_DIR", "off", 1);
  EXPECT_FALSE(DiskCache::folderFromEnvironment());
  setenv("KCC_CACHE_DIR", "OFF", 1);
  EXPECT_FALSE(DiskCache::folderFromEnvironment());
  setenv("KCC_CACHE_DIR", "", 1);
  EXPECT_FALSE(DiskCache::folderFromEnvironment());
  setenv("KCC_CACHE_DIR", "/some/where", 1);
  EXPECT_EQ(DiskCache::folderFromEnvironment(), "/some/where");
  unsetenv("KCC_CACHE_DIR");
  setenv("XDG_CACHE_HOME", "/xdg/cache", 1);
  EXPECT_EQ(DiskCache::folderFromEnvironment(), "/xdg/cache/kcc");

  if (saved)
    setenv("KCC_CACHE_DIR", savedValue.c_str(), 1);
  else
    unsetenv("KCC_CACHE_DIR");
  if (savedXdg)
    setenv("XDG_CACHE_HOME", savedXdgValue.c_str(), 1);
  else
    unsetenv("XDG_CACHE_HOME");
}

TEST(DiskCacheKey, NamesTheCompilerAndTheHost) {
  const std::string &key = DiskCache::environmentKey();
  EXPECT_NE(key.find("kcc " KCC_VERSION), std::string::npos) << key;
  EXPECT_NE(key.find("LLVM "), std::string::npos) << key;
  // kcc links with the linker's build IDs on (Debian's default): a rebuilt
  // compiler is another key.
  EXPECT_NE(key.find("build-id:"), std::string::npos) << key;
}

} // namespace
