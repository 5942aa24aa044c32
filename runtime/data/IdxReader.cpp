//===- IdxReader.cpp - IDX files (MNIST format) ---------------------------===//
//
// The header's dimensions are numbers from the file: their product is
// checked for overflow and against what the file can hold, and the data is
// read in chunks, so memory follows the bytes really present, never the
// size the header declares.
//
//===----------------------------------------------------------------------===//

#include "runtime/data/IdxReader.h"
#include "runtime/Error.h"

#include <zlib.h>

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <memory>

namespace kcc {

namespace {
struct GzCloser {
  void operator()(gzFile_s *f) const { gzclose(f); }
};

/// The most deflate inflates one byte to (about 1032:1): a gzip file of
/// `n` bytes holds at most this many times `n` of data.
constexpr uint64_t kMaxDeflateRatio = 1032;
/// The data is read in chunks of this size.
constexpr size_t kChunkBytes = size_t(1) << 20;

void readExactly(gzFile file, void *dst, size_t n, const std::string &path) {
  auto *out = static_cast<uint8_t *>(dst);
  while (n > 0) {
    unsigned chunk = n > (1u << 30) ? (1u << 30) : static_cast<unsigned>(n);
    int got = gzread(file, out, chunk);
    if (got <= 0)
      throw Error(path + ": truncated IDX file");
    out += got;
    n -= got;
  }
}
} // namespace

IdxFile readIdx(const std::string &path) {
  // A device or a pipe (/dev/zero) would be read until memory runs out.
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    throw Error(path + ": cannot open: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    throw Error(path + ": not a regular file");
  std::unique_ptr<gzFile_s, GzCloser> file(gzopen(path.c_str(), "rb"));
  if (!file)
    throw Error(path + ": cannot open: " + std::strerror(errno));
  uint8_t magic[4];
  readExactly(file.get(), magic, 4, path);
  if (magic[0] != 0 || magic[1] != 0 || magic[2] != 0x08 || magic[3] == 0)
    throw Error(path + ": not an IDX file of unsigned bytes");
  IdxFile idx;
  uint64_t count = 1;
  bool overflow = false;
  for (int i = 0; i < magic[3]; ++i) {
    uint8_t be[4];
    readExactly(file.get(), be, 4, path);
    uint64_t dim = (uint64_t(be[0]) << 24) | (uint64_t(be[1]) << 16) |
                   (uint64_t(be[2]) << 8) | be[3];
    idx.shape.push_back(static_cast<int64_t>(dim));
    overflow |= dim != 0 && count > std::numeric_limits<uint64_t>::max() / dim;
    count *= dim;
  }
  // gzread passes a plain file through: only a gzip file inflates.
  uint64_t fileBytes = static_cast<uint64_t>(st.st_size);
  uint64_t capacity =
      gzdirect(file.get()) ? fileBytes : fileBytes * kMaxDeflateRatio;
  if (overflow || count > capacity)
    throw Error(path + ": the IDX header declares " + shapeToString(idx.shape) +
                ", more bytes than the " + std::to_string(fileBytes) +
                "-byte file holds");
  idx.bytes.reserve(std::min<uint64_t>(count, kChunkBytes));
  while (idx.bytes.size() < count) {
    size_t chunk = std::min<uint64_t>(count - idx.bytes.size(), kChunkBytes);
    size_t at = idx.bytes.size();
    idx.bytes.resize(at + chunk);
    readExactly(file.get(), idx.bytes.data() + at, chunk, path);
  }
  return idx;
}

} // namespace kcc
