//===- IdxReader.cpp - IDX files (MNIST format) ---------------------------===//

#include "runtime/data/IdxReader.h"
#include "runtime/Error.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace kcc {

namespace {
struct GzCloser {
  void operator()(gzFile_s *f) const { gzclose(f); }
};

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
  std::unique_ptr<gzFile_s, GzCloser> file(gzopen(path.c_str(), "rb"));
  if (!file)
    throw Error(path + ": cannot open: " + std::strerror(errno));
  uint8_t magic[4];
  readExactly(file.get(), magic, 4, path);
  if (magic[0] != 0 || magic[1] != 0 || magic[2] != 0x08 || magic[3] == 0)
    throw Error(path + ": not an IDX file of unsigned bytes");
  IdxFile idx;
  int64_t count = 1;
  for (int i = 0; i < magic[3]; ++i) {
    uint8_t be[4];
    readExactly(file.get(), be, 4, path);
    int64_t dim = (int64_t(be[0]) << 24) | (be[1] << 16) | (be[2] << 8) | be[3];
    idx.shape.push_back(dim);
    count *= dim;
  }
  idx.bytes.resize(count);
  readExactly(file.get(), idx.bytes.data(), count, path);
  return idx;
}

} // namespace kcc
