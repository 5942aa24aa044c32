//===- HostileInputTest.cpp - Malformed and extreme Keras input -----------===//
//
// Inputs built to crash a reader -- JSON nested 35,000 deep, a 100,000-layer
// chain, sizes in a file larger than the file, a device instead of a file --
// must end in a kcc::Error naming the file and where in it, without a
// crash and without allocating what the file claims.
//
//===----------------------------------------------------------------------===//

#include "tests/unit/keras/KerasTestUtil.h"

#include "frontend/keras/Hdf5.h"
#include "frontend/keras/ModelSpec.h"

#include <hdf5.h>
#include <zip.h>

#include "llvm/Support/FileSystem.h"

#include <sys/resource.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>

using namespace kcc;
using namespace kcc::keras_test;
using ::testing::HasSubstr;
namespace json = llvm::json;

namespace {

std::string tempPath(const std::string &name) {
  return ::testing::TempDir() + "/kcc-hostile-" + name;
}

std::string deep(size_t n) { return std::string(n, '[') + std::string(n, ']'); }

/// Peak resident memory of this process, in bytes.
int64_t peakRss() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;
}

/// A .keras archive holding `entries` (name, text), deflated.
void writeZip(const std::string &path,
              const std::vector<std::pair<std::string, std::string>> &entries) {
  std::remove(path.c_str());
  int err = 0;
  zip_t *z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  ASSERT_NE(z, nullptr);
  for (const auto &[name, text] : entries) {
    zip_source_t *src = zip_source_buffer(z, text.data(), text.size(), 0);
    ASSERT_GE(zip_file_add(z, name.c_str(), src, ZIP_FL_OVERWRITE), 0);
  }
  ASSERT_EQ(zip_close(z), 0);
}

/// An HDF5 file with string attributes on its root.
void writeH5WithAttrs(
    const std::string &path,
    const std::vector<std::pair<std::string, std::string>> &attrs) {
  // Attributes over 64 KB need the dense storage of newer file formats.
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
  hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  H5Pclose(fapl);
  ASSERT_GE(f, 0);
  for (const auto &[name, text] : attrs) {
    hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, text.size());
    hid_t space = H5Screate(H5S_SCALAR);
    hid_t a =
        H5Acreate2(f, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT);
    ASSERT_GE(a, 0);
    H5Awrite(a, type, text.data());
    H5Aclose(a);
    H5Sclose(space);
    H5Tclose(type);
  }
  H5Fclose(f);
}

std::string readBytes(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

//===----------------------------------------------------------------------===//
// Nesting
//===----------------------------------------------------------------------===//

TEST(HostileInput, DeepJsonIsALocatedErrorNotACrash) {
  // 35,000 levels overflowed the stack in llvm::json's parser/destructor.
  EXPECT_EQ(errorOf([] { keras::importModelJson(deep(35000), "deep.json"); }),
            "deep.json:1:513: JSON nested deeper than 512 levels");
  // Line and column of the first bracket past the limit.
  std::string text = "{\n  \"a\":\n" + deep(600) + "}";
  EXPECT_EQ(errorOf([&] { keras::parseJson(text, "x.json"); }),
            "x.json:3:512: JSON nested deeper than 512 levels");
}

TEST(HostileInput, JsonNestingLimitIsExact) {
  // 512 levels parse; brackets inside strings do not count.
  EXPECT_NO_THROW(keras::parseJson(deep(keras::kMaxJsonDepth), "ok.json"));
  EXPECT_THAT(errorOf([] {
                keras::parseJson(deep(keras::kMaxJsonDepth + 1), "x.json");
              }),
              HasSubstr("x.json:1:513: JSON nested deeper"));
  std::string quoted = "[\"" + std::string(5000, '[') + "\\\"[\"]";
  json::Value v = keras::parseJson(quoted, "s.json");
  EXPECT_EQ((*v.getAsArray())[0].getAsString()->size(), 5002u);
}

TEST(HostileInput, DeepJsonInsideAKerasArchive) {
  std::string path = tempPath("deep.keras");
  writeZip(path, {{"config.json", readText("mlp_keras3.json")},
                  {"metadata.json", deep(35000)}});
  EXPECT_EQ(errorOf([&] { keras::importFile(path); }),
            path + ":metadata.json:1:513: JSON nested deeper than 512 levels");
  writeZip(path, {{"config.json", deep(35000)}});
  EXPECT_EQ(errorOf([&] { keras::importFile(path); }),
            path + ":config.json:1:513: JSON nested deeper than 512 levels");
  std::remove(path.c_str());
}

TEST(HostileInput, DeepJsonInsideAnH5ModelFile) {
  std::string path = tempPath("deep.h5");
  writeH5WithAttrs(path, {{"model_config", deep(35000)}});
  EXPECT_EQ(errorOf([&] { keras::importFile(path); }),
            path + ":model_config:1:513: JSON nested deeper than 512 levels");
  writeH5WithAttrs(path, {{"model_config", readText("mlp_keras3.json")},
                          {"training_config", deep(35000)}});
  EXPECT_EQ(errorOf([&] { keras::importFile(path); }),
            path +
                ":training_config:1:513: JSON nested deeper than 512 levels");
  std::remove(path.c_str());
}

//===----------------------------------------------------------------------===//
// Long chains
//===----------------------------------------------------------------------===//

/// A Keras 3 spec: an input of 4 features and `n` relu Activations in a
/// chain, the last one reading `lastInput` and the first `firstInput` (the
/// previous layer where empty).
std::string chainSpec(int n, bool functional, std::string lastInput = "",
                      std::string firstInput = "") {
  std::string layers =
      "{\"class_name\": \"InputLayer\", \"name\": \"input_layer\", "
      "\"config\": {\"batch_shape\": [null, 4], \"name\": \"input_layer\"}, "
      "\"inbound_nodes\": []}";
  std::string prev = "input_layer";
  for (int i = 0; i < n; ++i) {
    std::string name = "activation_" + std::to_string(i);
    std::string from = prev;
    if (i == n - 1 && !lastInput.empty())
      from = lastInput;
    if (i == 0 && !firstInput.empty())
      from = firstInput;
    layers += ", {\"class_name\": \"Activation\", \"name\": \"" + name +
              "\", \"config\": {\"name\": \"" + name +
              "\", \"activation\": \"relu\"}, \"inbound_nodes\": [{\"args\": "
              "[{\"class_name\": \"__keras_tensor__\", \"config\": "
              "{\"keras_history\": [\"" +
              from + "\", 0, 0]}}], \"kwargs\": {}}]}";
    prev = name;
  }
  if (!functional)
    return "{\"class_name\": \"Sequential\", \"config\": {\"name\": "
           "\"chain\", \"layers\": [" +
           layers + "]}}";
  return "{\"class_name\": \"Functional\", \"config\": {\"name\": \"chain\", "
         "\"layers\": [" +
         layers +
         "], \"input_layers\": [\"input_layer\", 0, 0], \"output_layers\": "
         "[\"" +
         prev + "\", 0, 0]}}";
}

/// CPU seconds (user and system) `fn` takes: steadier than the wall clock
/// on a loaded machine.
double cpuSecondsOf(const std::function<void()> &fn) {
  auto now = [] {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_stime.tv_sec +
           1e-6 * (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
  };
  double start = now();
  fn();
  return now() - start;
}

TEST(HostileInput, FunctionalChainOf100000LayersImports) {
  // The graph reader, the model's topological sort and the graph's
  // destruction all recursed once per layer: a segfault at this length.
  // Now each is a loop, linear in the layers.
  std::string spec = chainSpec(100000, /*functional=*/true);
  double seconds = cpuSecondsOf([&] {
    keras::ImportedModel imported = keras::importModelJson(spec, "chain.json");
    ASSERT_EQ(imported.model->layers().size(), 100000u);
    EXPECT_EQ(imported.model->layers().back().name(), "activation_99999");
    EXPECT_EQ(imported.specLayerOrder.size(), 100000u);
    // Eagerly: relu of relu of ... of x is relu(x).
    NDArray x = NDArray::empty({2, 4}, DType::F32);
    for (int i = 0; i < 8; ++i)
      x.data<float>()[i] = i - 4.0f;
    std::vector<double> y = (*imported.model)(Tensor(x)).toVector();
    EXPECT_EQ(y, (std::vector<double>{0, 0, 0, 0, 0, 1, 2, 3}));
  });
  std::printf("100,000-layer functional chain: imported, run and freed in "
              "%.2f CPU s\n",
              seconds);
  // Linear work (about 5 s); quadratic name lookups would take minutes.
  EXPECT_LT(seconds, 60.0);
}

TEST(HostileInput, SequentialChainOf100000LayersImports) {
  std::string spec = chainSpec(100000, /*functional=*/false);
  double seconds = cpuSecondsOf([&] {
    keras::ImportedModel imported = keras::importModelJson(spec, "seq.json");
    ASSERT_EQ(imported.model->layers().size(), 100000u);
  });
  std::printf("100,000-layer Sequential: imported and freed in %.2f CPU s\n",
              seconds);
  EXPECT_LT(seconds, 60.0);
}

TEST(HostileInput, ErrorAtTheEndOfALongChainFreesItsGraph) {
  // The 100,000 nodes built before the error have no model to own them.
  std::string spec = chainSpec(100000, /*functional=*/true, "nope");
  EXPECT_THAT(errorOf([&] { keras::importModelJson(spec, "chain.json"); }),
              HasSubstr("chain.json: $.config.layers[100000].inbound_nodes[0]"
                        ".args[0].config.keras_history: model 'chain': "
                        "refers to layer 'nope', which is not in the model"));
  // A cycle through a whole (shorter) chain is found without recursion.
  std::string cycle = chainSpec(10000, true, "", "activation_9999");
  EXPECT_THAT(errorOf([&] { keras::importModelJson(cycle, "cycle.json"); }),
              HasSubstr("the graph has a cycle through layer "
                        "'activation_9999'"));
}

//===----------------------------------------------------------------------===//
// Sizes the file declares
//===----------------------------------------------------------------------===//

TEST(HostileInput, ZipEntryDeclaringMoreThanItHoldsAllocatesNothing) {
  // A 1 KB archive whose config.json declares 200 MB: the reader allocated
  // the declared size before failing.
  std::string path = tempPath("lie.keras");
  writeZip(path, {{"config.json", "{}"}});
  std::string bytes = readBytes(path);
  ASSERT_LT(bytes.size(), 1024u);
  auto patch = [&](size_t at) {
    uint32_t lie = 200u << 20;
    for (int i = 0; i < 4; ++i)
      bytes[at + i] = static_cast<char>((lie >> (8 * i)) & 0xff);
  };
  patch(22);                            // The local header's uncompressed size.
  patch(bytes.find("PK\x01\x02") + 24); // The central directory's.
  std::ofstream(path, std::ios::binary) << bytes;
  uint32_t compressed = 0;
  for (int i = 3; i >= 0; --i)
    compressed = compressed << 8 | static_cast<uint8_t>(bytes[18 + i]);
  int64_t before = peakRss();
  EXPECT_EQ(errorOf([&] { keras::importFile(path); }),
            path + ":config.json: declares 209715200 bytes from " +
                std::to_string(compressed) +
                " compressed ones; the archive is corrupt");
  EXPECT_LT(peakRss() - before, int64_t(32) << 20);
  std::remove(path.c_str());
}

TEST(HostileInput, Hdf5DatasetLargerThanItsStorageOrOutsideTheFile) {
  // A chunked dataset declaring 2^20 x 2^20 floats (4 TiB) with no chunk
  // written: the extent must not size an allocation.
  std::string path = tempPath("big.h5");
  hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hsize_t dims[2] = {1u << 20, 1u << 20}, chunk[2] = {64, 64};
  hid_t space = H5Screate_simple(2, dims, nullptr);
  hid_t plist = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(plist, 2, chunk);
  hid_t ds = H5Dcreate2(f, "big", H5T_IEEE_F32LE, space, H5P_DEFAULT, plist,
                        H5P_DEFAULT);
  ASSERT_GE(ds, 0);
  H5Dclose(ds);
  H5Pclose(plist);
  H5Sclose(space);
  // A dataset whose data the file says is in another file.
  hsize_t four[1] = {4};
  space = H5Screate_simple(1, four, nullptr);
  plist = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_external(plist, "/etc/hostname", 0, 16);
  ds = H5Dcreate2(f, "ext", H5T_IEEE_F32LE, space, H5P_DEFAULT, plist,
                  H5P_DEFAULT);
  ASSERT_GE(ds, 0);
  H5Dclose(ds);
  H5Pclose(plist);
  H5Sclose(space);
  H5Fclose(f);
  std::string image = readBytes(path);
  keras::Hdf5File file(image, "big.h5");
  EXPECT_EQ(file.datasetShape("big"), (Shape{1 << 20, 1 << 20}));
  int64_t before = peakRss();
  EXPECT_EQ(errorOf([&] { file.readFloat("big"); }),
            "big.h5: big: the dataset declares [1048576, 1048576] "
            "(4398046511104 bytes) but stores 0 bytes of a " +
                std::to_string(image.size()) + "-byte file");
  EXPECT_LT(peakRss() - before, int64_t(32) << 20);
  EXPECT_EQ(errorOf([&] { file.readFloat("ext"); }),
            "big.h5: ext: the dataset is stored outside the file");
  std::remove(path.c_str());
}

//===----------------------------------------------------------------------===//
// Files that break libhdf5 (tests/fuzz/findings)
//===----------------------------------------------------------------------===//

/// Sets an environment variable for a scope.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const char *value) : name_(name) {
    if (const char *old = std::getenv(name))
      old_ = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

private:
  const char *name_;
  std::optional<std::string> old_;
};

std::string finding(const std::string &name) {
  return std::string(KCC_FUZZ_FINDINGS) + "/" + name;
}

TEST(HostileInput, FuzzFindingsAreErrors) {
  // libhdf5 1.10.8 segfaults, loops forever, overflows its buffers or asks
  // for 7 TiB on these; in its reader process each is an error naming the
  // file, and kcc goes on.
  ScopedEnv timeout("KCC_HDF5_TIMEOUT_SECONDS", "2");
  std::string segv = finding("keras-archive-libhdf5-segv.keras");
  EXPECT_EQ(errorOf([&] { keras::importFile(segv); }),
            segv + ":model.weights.h5: layers/dense/vars: libhdf5 crashed "
                   "(SIGSEGV); the file is corrupt");
  std::string hang = finding("keras-h5-libhdf5-hang-H5HG_read.h5");
  EXPECT_EQ(errorOf([&] { keras::importFile(hang); }),
            hang + ": /: libhdf5 did not answer within 2 s "
                   "(KCC_HDF5_TIMEOUT_SECONDS); the file is corrupt");
  // A 7 TiB malloc, a heap overflow and a use-after-free: a release
  // libhdf5 goes on with whatever the memory holds, into the error the
  // damaged file gives; under ASan (scripts/sanitize.sh) the reader's report
  // ends it (exit status 1).
#ifdef __SANITIZE_ADDRESS__
  auto stoppedOr = [](const std::string &) {
    return HasSubstr("the HDF5 reader failed (exit status 1); the file is "
                     "corrupt");
  };
#else
  auto stoppedOr = [](const std::string &release) {
    return HasSubstr(release);
  };
#endif
  // A memcpy out of bounds in H5HG_read (found by the keras-h5 target with
  // the reader in its own process): SIGSEGV in release, ASan's report.
  std::string heap = finding("keras-h5-libhdf5-segv-H5HG_read.h5");
  EXPECT_THAT(errorOf([&] { keras::importFile(heap); }),
              stoppedOr(heap + ": /: libhdf5 crashed (SIGSEGV); the file is "
                               "corrupt"));
  std::string alloc = finding("keras-h5-libhdf5-7tib-alloc-H5C_protect.h5");
  EXPECT_THAT(errorOf([&] { keras::importFile(alloc); }),
              stoppedOr(alloc + ": model_weights: layer 'dense_1' (Dense): no "
                                "weights for this layer in the file"));
  std::string overflow = finding("keras-h5-libhdf5-overflow-H5A__read.h5");
  EXPECT_THAT(errorOf([&] { keras::importFile(overflow); }),
              stoppedOr(overflow + ":training_config:1:23: invalid JSON"));
  // After a use-after-free, what a release libhdf5 reads is not fixed:
  // only that the error names the weights.
  std::string uaf =
      finding("keras-archive-libhdf5-uaf-H5O__msg_iterate_real.keras");
  EXPECT_THAT(errorOf([&] { keras::importFile(uaf); }),
              HasSubstr(uaf + ":model.weights.h5: layers/"));
  // kcc's own findings, fixed.
  std::string vlen = finding("keras-h5-hdf5cpp146-vlen-leak.h5");
  EXPECT_EQ(errorOf([&] { keras::importFile(vlen); }),
            vlen + ": model_weights: unreadable attribute 'layer_names'");
  std::string zip = finding("keras-archive-files58-4gib-alloc.keras");
  EXPECT_EQ(errorOf([&] { keras::importFile(zip); }),
            zip + ":config.json: declares 4294963116 bytes, more than the "
                  "limit of 268435456");
  // The process is intact: a good file imports.
  keras::ImportedModel m = keras::importFile(fixture("mlp_keras2.h5"));
  EXPECT_TRUE(m.weightsLoaded);
}

TEST(HostileInput, Hdf5ReaderErrorsRepeatAfterItsCrash) {
  // After the reader died, every later call says why, without a new one.
  std::string segv = finding("keras-archive-libhdf5-segv.keras");
  keras::ImportedModel imported =
      keras::importModelJson(readText("mlp_keras3.json"));
  std::string weights;
  {
    zip_t *z = zip_open(segv.c_str(), ZIP_RDONLY, nullptr);
    ASSERT_NE(z, nullptr);
    zip_stat_t st;
    ASSERT_EQ(zip_stat(z, "model.weights.h5", 0, &st), 0);
    weights.resize(st.size);
    zip_file_t *f = zip_fopen(z, "model.weights.h5", 0);
    ASSERT_EQ(zip_fread(f, weights.data(), st.size),
              static_cast<zip_int64_t>(st.size));
    zip_fclose(f);
    zip_discard(z);
  }
  keras::Hdf5File file(weights, "w.h5");
  std::string crash = "w.h5: layers/dense/vars: libhdf5 crashed (SIGSEGV); "
                      "the file is corrupt";
  EXPECT_EQ(errorOf([&] { file.stringAttr("layers/dense/vars", "name"); }),
            crash);
  EXPECT_EQ(errorOf([&] { file.members("layers"); }), crash);
}

TEST(HostileInput, Hdf5ReaderMemoryIsLimited) {
  // A deflated dataset of 2^25 zeros: a 140 KB file whose f32 values need
  // 128 MiB, more than the reader's budget of 64 MiB here.
  std::string path = tempPath("zeros.h5");
  hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hsize_t dims[1] = {hsize_t(1) << 25}, chunk[1] = {hsize_t(1) << 20};
  hid_t space = H5Screate_simple(1, dims, nullptr);
  hid_t plist = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(plist, 1, chunk);
  H5Pset_deflate(plist, 9);
  hid_t ds = H5Dcreate2(f, "zeros", H5T_IEEE_F32LE, space, H5P_DEFAULT, plist,
                        H5P_DEFAULT);
  ASSERT_GE(ds, 0);
  std::vector<float> zeros(size_t(1) << 25, 0.0f);
  H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, zeros.data());
  H5Dclose(ds);
  H5Pclose(plist);
  H5Sclose(space);
  H5Fclose(f);
  std::string image = readBytes(path);
  std::remove(path.c_str());
  {
    ScopedEnv memory("KCC_HDF5_MEMORY_BYTES", "67108864");
    keras::Hdf5File file(image, "zeros.h5");
    EXPECT_THAT(errorOf([&] { file.readFloat("zeros"); }),
                HasSubstr("would need 128.0 MiB"));
  }
  keras::Hdf5File file(image, "zeros.h5");
  NDArray a = file.readFloat("zeros");
  EXPECT_EQ(a.shape(), Shape{int64_t(1) << 25});
  EXPECT_EQ(a.data<float>()[12345], 0.0f);
}

TEST(HostileInput, Hdf5ReadersAreReapedAndLimitsChecked) {
  // Readers that open, fail to open or are left mid-file leave no process
  // and no descriptor behind.
  auto openDescriptors = [] {
    int n = 0;
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it("/proc/self/fd", ec), end;
         it != end && !ec; it.increment(ec))
      ++n;
    return n;
  };
  std::string good = readBytes(fixture("mlp_keras2.h5"));
  int before = openDescriptors();
  for (int i = 0; i < 20; ++i) {
    keras::Hdf5File file(good, "good.h5");
    EXPECT_TRUE(file.isGroup("model_weights"));
    EXPECT_THAT(errorOf([&] {
                  keras::Hdf5File(llvm::StringRef(good).take_front(600),
                                  "cut.h5");
                }),
                HasSubstr("cut.h5: not a readable HDF5 file"));
  }
  EXPECT_EQ(openDescriptors(), before);
  errno = 0;
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
  ScopedEnv timeout("KCC_HDF5_TIMEOUT_SECONDS", "soon");
  EXPECT_EQ(errorOf([&] { keras::Hdf5File(good, "good.h5"); }),
            "KCC_HDF5_TIMEOUT_SECONDS must be a positive number of seconds, "
            "got 'soon'");
}

TEST(HostileInput, DevicesAreNotReadAsModelFiles) {
  // /dev/zero never ends: reading it whole exhausted memory.
  EXPECT_EQ(errorOf([] { keras::importFile("/dev/zero"); }),
            "/dev/zero: not a regular file");
  keras::ImportedModel imported =
      keras::importModelJson(readText("mlp_keras3.json"));
  EXPECT_EQ(errorOf([&] { keras::loadWeightsH5File(imported, "/dev/zero"); }),
            "/dev/zero: not a regular file");
  EXPECT_EQ(errorOf([] { keras::importFile("/nonexistent/x.keras"); }),
            "/nonexistent/x.keras: cannot read: No such file or directory");
}

} // namespace
