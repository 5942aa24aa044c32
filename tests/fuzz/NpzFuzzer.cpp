//===- NpzFuzzer.cpp - libFuzzer target for the .npy / .npz reader --------===//
//
// Feeds arbitrary bytes to kcc::parseNpz, and to kcc::parseNpy when they
// start like a .npy file. Every array returned must hold exactly the bytes
// its shape and dtype say (read them all, so ASan sees any overrun).
//
//===----------------------------------------------------------------------===//

#include "runtime/Error.h"
#include "runtime/data/Npz.h"

#include <cstdlib>

namespace {
void touch(const kcc::NDArray &a) {
  volatile uint8_t sink = 0;
  const uint8_t *p = static_cast<const uint8_t *>(a.rawData());
  for (size_t i = 0; i < a.bytes(); ++i)
    sink = sink ^ p[i];
  (void)sink;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char *>(data), size);
  try {
    if (bytes.substr(0, 6) == "\x93NUMPY")
      touch(kcc::parseNpy(bytes, "fuzz.npy"));
    else
      for (const auto &[name, array] : kcc::parseNpz(bytes, "fuzz.npz"))
        touch(array);
  } catch (const kcc::Error &) {
    // Expected for bad input.
  }
  return 0;
}
