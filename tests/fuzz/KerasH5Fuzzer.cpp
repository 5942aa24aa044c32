//===- KerasH5Fuzzer.cpp - libFuzzer target for legacy .h5 model files ----===//
//
// Feeds arbitrary bytes to kcc::keras::importKerasH5: HDF5 opened from
// memory, the model_config and training_config attributes and the Keras 2
// weight layout. Anything but a model or a kcc::Error is a bug. libhdf5
// runs in the importer's reader process (frontend/keras/Hdf5Process.h): its
// crashes and hangs there are kcc::Errors; the fuzzer sees kcc's side.
//
//===----------------------------------------------------------------------===//

#include "frontend/keras/KerasImporter.h"
#include "tests/fuzz/FuzzFile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = kcc::fuzz::writeScratchFile(data, size, ".h5");
  try {
    kcc::keras::ImportedModel m = kcc::keras::importKerasH5(path);
    (void)m.model->layers().size();
  } catch (const kcc::Error &) {
    // Expected for bad input.
  }
  return 0;
}
