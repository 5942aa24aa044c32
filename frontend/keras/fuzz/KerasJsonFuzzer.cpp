//===- KerasJsonFuzzer.cpp - libFuzzer target for the JSON importer -------===//
//
// Feeds arbitrary bytes to kcc::keras::importModelJson. Any outcome but a
// model or a kcc::Error (a crash, a sanitizer report, another exception) is
// a bug. Built as kcc-fuzz-keras-json by tests/fuzz/CMakeLists.txt where
// clang-19 is installed; run by scripts/fuzz.sh keras-json.
//
//===----------------------------------------------------------------------===//

#include "frontend/keras/KerasImporter.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  try {
    kcc::keras::ImportedModel m = kcc::keras::importModelJson(text, "fuzz");
    // Walk the result: layer order and input shapes must be readable.
    (void)m.model->layers().size();
    (void)m.model->inputShapes();
  } catch (const kcc::Error &) {
    // Expected for bad input.
  }
  return 0;
}
