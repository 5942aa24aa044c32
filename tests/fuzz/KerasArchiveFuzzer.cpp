//===- KerasArchiveFuzzer.cpp - libFuzzer target for .keras archives -----===//
//
// Feeds arbitrary bytes to kcc::keras::importKerasArchive: the zip layer
// (libzip), config.json and metadata.json, and model.weights.h5 read from
// memory. Anything but a model or a kcc::Error is a bug.
//
//===----------------------------------------------------------------------===//

#include "frontend/keras/KerasImporter.h"
#include "tests/fuzz/FuzzFile.h"

#include <zip.h>

namespace {
/// Known finding, reported to the importer's owner: ZipArchive::read
/// (frontend/keras/Files.cpp:58) allocates a member's declared size (up to
/// 4 GiB) before reading, whatever the archive's own size, so a 24 KB
/// archive can ask for 4 GB. Inputs that declare more than their bytes can
/// hold (deflate expands at most 1032:1; stored members not at all) are
/// skipped until that check lands, so the rest of the reader stays fuzzed.
bool declaresImpossibleSizes(const uint8_t *data, size_t size) {
  zip_error_t err;
  zip_error_init(&err);
  zip_source_t *src = zip_source_buffer_create(data, size, 0, &err);
  zip_t *zip = src ? zip_open_from_source(src, ZIP_RDONLY, &err) : nullptr;
  zip_error_fini(&err);
  if (!zip) {
    if (src)
      zip_source_free(src);
    return false;
  }
  bool impossible = false;
  zip_int64_t n = zip_get_num_entries(zip, 0);
  for (zip_int64_t i = 0; i < n && !impossible; ++i) {
    zip_stat_t st;
    if (zip_stat_index(zip, i, 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE) ||
        !(st.valid & ZIP_STAT_COMP_SIZE))
      continue;
    impossible = st.comp_size > size || st.size > st.comp_size * 1032 + 1024;
  }
  zip_discard(zip);
  return impossible;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (declaresImpossibleSizes(data, size))
    return -1; // not added to the corpus
  std::string path = kcc::fuzz::writeScratchFile(data, size, ".keras");
  try {
    kcc::keras::ImportedModel m = kcc::keras::importKerasArchive(path);
    (void)m.model->layers().size();
  } catch (const kcc::Error &) {
    // Expected for bad input.
  }
  return 0;
}
