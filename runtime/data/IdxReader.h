//===- IdxReader.h - IDX files (MNIST format), gzip or plain ----*- C++ -*-===//

#ifndef KCC_RUNTIME_DATA_IDXREADER_H
#define KCC_RUNTIME_DATA_IDXREADER_H

#include "runtime/NDArray.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kcc {

/// The contents of one IDX file of unsigned bytes.
struct IdxFile {
  Shape shape;
  std::vector<uint8_t> bytes;
};

/// Reads an IDX file of type 0x08 (unsigned byte), gzip-compressed or not
/// (zlib's gzread handles both). Throws kcc::Error naming the file when it is
/// missing, truncated or not IDX.
IdxFile readIdx(const std::string &path);

} // namespace kcc

#endif // KCC_RUNTIME_DATA_IDXREADER_H
