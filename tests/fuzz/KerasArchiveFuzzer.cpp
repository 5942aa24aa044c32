//===- KerasArchiveFuzzer.cpp - libFuzzer target for .keras archives -----===//
//
// Feeds arbitrary bytes to kcc::keras::importKerasArchive: the zip layer
// (libzip), config.json and metadata.json, and model.weights.h5 read from
// memory (by the reader process, as in KerasH5Fuzzer.cpp). Anything but a
// model or a kcc::Error is a bug.
//
//===----------------------------------------------------------------------===//

#include "frontend/keras/KerasImporter.h"
#include "tests/fuzz/FuzzFile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = kcc::fuzz::writeScratchFile(data, size, ".keras");
  try {
    kcc::keras::ImportedModel m = kcc::keras::importKerasArchive(path);
    (void)m.model->layers().size();
  } catch (const kcc::Error &) {
    // Expected for bad input.
  }
  return 0;
}
