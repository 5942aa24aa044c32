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
#include "runtime/MemoryBudget.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <zip.h>

using namespace kcc;
using namespace kcc::keras;
namespace json = llvm::json;

namespace {

/// The most a zip entry inflates to per compressed byte: deflate's limit
/// (258 bytes from one 2-bit code, about 1032:1). A declared size beyond it
/// is a lie, and no read is sized by it.
constexpr zip_uint64_t kMaxDeflateRatio = 1032;
/// Zip entries are read in chunks of this size: memory follows the bytes
/// that really come out, never the size an entry declares.
constexpr size_t kZipChunkBytes = size_t(1) << 20;

class ZipArchive {
public:
  ZipArchive(const std::string &path, uint64_t fileBytes)
      : path_(path), fileBytes_(fileBytes) {
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

  /// Entry `name`, at most `limit` bytes and no more than memory can hold.
  std::string read(const char *name, uint64_t limit) const {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat(zip_, name, 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE))
      throw Error(path_ + ": not a Keras archive: " + name + " is missing");
    std::string where = path_ + ":" + name;
    if (st.size > limit)
      throw Error(where + ": declares " + std::to_string(st.size) +
                  " bytes, more than the limit of " + std::to_string(limit));
    if (!(st.valid & ZIP_STAT_COMP_SIZE) || st.comp_size > fileBytes_)
      throw Error(where + ": declares more compressed bytes than the " +
                  std::to_string(fileBytes_) + "-byte archive holds");
    bool stored =
        (st.valid & ZIP_STAT_COMP_METHOD) && st.comp_method == ZIP_CM_STORE;
    if (stored ? st.size != st.comp_size
               : st.size / kMaxDeflateRatio > st.comp_size)
      throw Error(where + ": declares " + std::to_string(st.size) +
                  " bytes from " + std::to_string(st.comp_size) +
                  " compressed ones; the archive is corrupt");
    // Bounded by the archive's size times the deflate ratio, so in int64.
    if (st.size >= static_cast<zip_uint64_t>(kCheckedAllocationBytes))
      requireMemory(static_cast<int64_t>(st.size), "reading " + where);
    zip_file_t *f = zip_fopen(zip_, name, 0);
    if (!f)
      throw Error(where + ": cannot open: " + zip_strerror(zip_));
    std::string data;
    data.reserve(std::min<zip_uint64_t>(st.size, kZipChunkBytes));
    std::string chunk(kZipChunkBytes, '\0');
    zip_int64_t n;
    while ((n = zip_fread(f, chunk.data(), chunk.size())) > 0 &&
           data.size() + n <= st.size)
      data.append(chunk.data(), n);
    zip_fclose(f);
    if (n != 0 || data.size() != st.size)
      throw Error(where + " is truncated or corrupt");
    return data;
  }

private:
  std::string path_;
  uint64_t fileBytes_;
  zip_t *zip_ = nullptr;
};

} // namespace

uint64_t keras::modelFileSize(const std::string &path) {
  llvm::sys::fs::file_status st;
  if (std::error_code ec = llvm::sys::fs::status(path, st))
    throw Error(path + ": cannot read: " + ec.message());
  if (st.type() != llvm::sys::fs::file_type::regular_file)
    throw Error(path + ": not a regular file");
  if (st.getSize() >= static_cast<uint64_t>(kCheckedAllocationBytes))
    requireMemory(
        static_cast<int64_t>(std::min<uint64_t>(st.getSize(), INT64_MAX)),
        "reading " + path);
  return st.getSize();
}

std::unique_ptr<llvm::MemoryBuffer>
keras::readModelFile(const std::string &path) {
  modelFileSize(path);
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!buf)
    throw Error(path + ": cannot read: " + buf.getError().message());
  return std::move(*buf);
}

std::optional<std::string> keras::readArchiveMember(const std::string &path,
                                                    const char *name,
                                                    uint64_t limit) {
  ZipArchive zip(path, modelFileSize(path));
  if (!zip.has(name))
    return std::nullopt;
  return zip.read(name, limit);
}

ImportedModel keras::importKerasArchive(const std::string &path,
                                        uint64_t seed) {
  ZipArchive zip(path, modelFileSize(path));
  std::string configName = path + ":config.json";
  ImportedModel imported =
      importModelJson(zip.read("config.json", kMaxJsonBytes), configName, seed);
  if (zip.has("metadata.json")) {
    std::string metaName = path + ":metadata.json";
    json::Value meta =
        parseJson(zip.read("metadata.json", kMaxJsonBytes), metaName);
    if (const json::Object *o = meta.getAsObject())
      if (std::optional<llvm::StringRef> v = o->getString("keras_version")) {
        imported.kerasVersion = v->str();
        imported.kerasMajorVersion = v->starts_with("2") ? 2 : 3;
      }
  }
  if (zip.has("model.weights.h5")) {
    std::string weights =
        zip.read("model.weights.h5", std::numeric_limits<uint64_t>::max());
    loadWeightsH5(imported, weights, path + ":model.weights.h5");
  }
  return imported;
}

ImportedModel keras::importKerasH5(const std::string &path, uint64_t seed) {
  std::unique_ptr<llvm::MemoryBuffer> buf = readModelFile(path);
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
  loadWeightsFromHdf5(file, imported);
  return imported;
}

ImportedModel keras::importFile(const std::string &path, uint64_t seed) {
  std::unique_ptr<llvm::MemoryBuffer> buf = readModelFile(path);
  llvm::StringRef bytes = buf->getBuffer();
  if (bytes.starts_with("PK\x03\x04") || bytes.starts_with("PK\x05\x06"))
    return importKerasArchive(path, seed);
  if (isHdf5(bytes))
    return importKerasH5(path, seed);
  if (bytes.size() > kMaxJsonBytes)
    throw Error(path + ": " + std::to_string(bytes.size()) +
                " bytes of JSON, more than the limit of " +
                std::to_string(kMaxJsonBytes));
  return importModelJson(bytes, path, seed);
}
