//===- Files.cpp - .keras archives, legacy .h5 files, dispatch ------------===//
//
// A .keras file is a zip (read with libzip) of config.json (the to_json
// spec plus compile_config), metadata.json (keras_version) and
// model.weights.h5. A legacy .h5 model file keeps the spec in its
// model_config attribute and compile() in training_config.
//
//===----------------------------------------------------------------------===//

#include "frontend/keras/Hdf5.h"
#include "frontend/keras/KerasImporter.h"
#include "frontend/keras/ModelSpec.h"

#include "llvm/Support/MemoryBuffer.h"

#include <zip.h>

using namespace kcc;
using namespace kcc::keras;
namespace json = llvm::json;

namespace {

/// Entries larger than this are not Keras files (and would exhaust memory).
constexpr zip_uint64_t kMaxEntryBytes = zip_uint64_t(4) << 30;

class ZipArchive {
public:
  explicit ZipArchive(const std::string &path) : path_(path) {
    int err = 0;
    zip_ = zip_open(path.c_str(), ZIP_RDONLY, &err);
    if (!zip_) {
      zip_error_t e;
      zip_error_init_with_code(&e, err);
      std::string msg = zip_error_strerror(&e);
      zip_error_fini(&e);
      throw Error(path + ": not a .keras archive (zip): " + msg);
    }
  }
  ~ZipArchive() { zip_discard(zip_); }
  ZipArchive(const ZipArchive &) = delete;
  ZipArchive &operator=(const ZipArchive &) = delete;

  bool has(const char *name) const {
    return zip_name_locate(zip_, name, 0) >= 0;
  }

  std::string read(const char *name) const {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat(zip_, name, 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE))
      throw Error(path_ + ": not a Keras archive: " + name + " is missing");
    if (st.size > kMaxEntryBytes)
      throw Error(path_ + ": " + name + " is too large");
    zip_file_t *f = zip_fopen(zip_, name, 0);
    if (!f)
      throw Error(path_ + ": cannot open " + name + ": " + zip_strerror(zip_));
    std::string data(static_cast<size_t>(st.size), '\0');
    zip_int64_t n = zip_fread(f, data.data(), st.size);
    zip_fclose(f);
    if (n < 0 || static_cast<zip_uint64_t>(n) != st.size)
      throw Error(path_ + ": " + name + " is truncated or corrupt");
    return data;
  }

private:
  std::string path_;
  zip_t *zip_ = nullptr;
};

std::unique_ptr<llvm::MemoryBuffer> readFile(const std::string &path) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!buf)
    throw Error(path + ": cannot read: " + buf.getError().message());
  return std::move(*buf);
}

} // namespace

ImportedModel keras::importKerasArchive(const std::string &path,
                                        uint64_t seed) {
  ZipArchive zip(path);
  std::string configName = path + ":config.json";
  ImportedModel imported =
      importModelJson(zip.read("config.json"), configName, seed);
  if (zip.has("metadata.json")) {
    std::string metaName = path + ":metadata.json";
    json::Value meta = parseJson(zip.read("metadata.json"), metaName);
    if (const json::Object *o = meta.getAsObject())
      if (std::optional<llvm::StringRef> v = o->getString("keras_version")) {
        imported.kerasVersion = v->str();
        imported.kerasMajorVersion = v->starts_with("2") ? 2 : 3;
      }
  }
  if (zip.has("model.weights.h5")) {
    std::string weights = zip.read("model.weights.h5");
    loadWeightsH5(imported, weights, path + ":model.weights.h5");
  }
  return imported;
}

ImportedModel keras::importKerasH5(const std::string &path, uint64_t seed) {
  std::unique_ptr<llvm::MemoryBuffer> buf = readFile(path);
  Hdf5File file(buf->getBuffer(), path);
  std::optional<std::string> config = file.stringAttr("/", "model_config");
  if (!config)
    file.fail("/", "no model_config attribute: a weights-only file; import "
                   "the model spec and call loadWeightsH5File");
  ImportedModel imported =
      importModelJson(*config, path + ":model_config", seed);
  if (std::optional<std::string> v = file.stringAttr("/", "keras_version")) {
    imported.kerasVersion = *v;
    imported.kerasMajorVersion = llvm::StringRef(*v).starts_with("2") ? 2 : 3;
  }
  if (std::optional<std::string> tc = file.stringAttr("/", "training_config")) {
    std::string name = path + ":training_config";
    json::Value v = parseJson(*tc, name);
    SpecReader reader(name);
    readCompileConfig(
        ObjectView::of(reader, v, JsonPath(), "", "a training_config"),
        imported);
  }
  loadWeightsH5(imported, buf->getBuffer(), path);
  return imported;
}

ImportedModel keras::importFile(const std::string &path, uint64_t seed) {
  std::unique_ptr<llvm::MemoryBuffer> buf = readFile(path);
  llvm::StringRef bytes = buf->getBuffer();
  if (bytes.starts_with("PK\x03\x04") || bytes.starts_with("PK\x05\x06"))
    return importKerasArchive(path, seed);
  if (isHdf5(bytes))
    return importKerasH5(path, seed);
  return importModelJson(bytes, path, seed);
}
