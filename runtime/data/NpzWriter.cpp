//===- NpzWriter.cpp - NumPy .npy files and .npz archives out -------------===//

#include "runtime/data/NpzWriter.h"
#include "runtime/Error.h"
#include "runtime/data/AtomicFile.h"
#include "runtime/data/ZipWriter.h"

#include <cstring>

using namespace kcc;

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the .npy writer assumes a little-endian host");

namespace {

const char *descrOf(DType dtype, const std::string &source) {
  switch (dtype) {
  case DType::F32:
    return "<f4";
  case DType::F64:
    return "<f8";
  case DType::I32:
    return "<i4";
  case DType::I64:
    return "<i8";
  case DType::I1:
    return "|b1";
  case DType::F16:
  case DType::BF16:
    break;
  }
  throw Error(source + ": cannot write a " + std::string(dtypeName(dtype)) +
              " array as .npy (float32, float64, int32, int64 or bool)");
}

/// NumPy's tuple repr: "()", "(3,)", "(2, 3)".
std::string shapeTuple(const Shape &shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

} // namespace

std::string kcc::serializeNpy(const NDArray &array, const std::string &source) {
  std::string dict =
      "{'descr': '" + std::string(descrOf(array.dtype(), source)) +
      "', 'fortran_order': False, 'shape': " + shapeTuple(array.shape()) +
      ", }";
  // magic(6) + version(2) + length(2 or 4) + dict + padding + '\n' is a
  // multiple of 64.
  size_t lengthBytes = 2;
  size_t total = 8 + lengthBytes + dict.size() + 1;
  if ((total + 63) / 64 * 64 - 10 > 65535)
    lengthBytes = 4;
  total = 8 + lengthBytes + dict.size() + 1;
  size_t padded = (total + 63) / 64 * 64;
  std::string header = dict + std::string(padded - total, ' ') + "\n";
  std::string out("\x93NUMPY", 6);
  out += lengthBytes == 2 ? '\x01' : '\x02';
  out += '\0';
  uint32_t n = static_cast<uint32_t>(header.size());
  for (size_t i = 0; i < lengthBytes; ++i)
    out += static_cast<char>((n >> (8 * i)) & 0xff);
  out += header;
  size_t dataBytes =
      static_cast<size_t>(array.numel()) * dtypeSize(array.dtype());
  size_t start = out.size();
  out.resize(start + dataBytes);
  if (dataBytes)
    std::memcpy(out.data() + start, array.rawData(), dataBytes);
  return out;
}

void kcc::writeNpy(const std::string &path, const NDArray &array) {
  writeFileAtomically(path, serializeNpy(array, path));
}

void kcc::writeNpz(const std::string &path,
                   const std::map<std::string, NDArray> &arrays) {
  // Serialized first: a bad array fails before any file is created.
  std::map<std::string, std::string> members;
  for (const auto &[name, array] : arrays)
    members[name + ".npy"] =
        serializeNpy(array, path + ": array '" + name + "'");
  writeFileAtomically(path, [&](const std::string &tmp) {
    ZipWriter zip(tmp, path);
    for (auto &[name, bytes] : members)
      zip.add(name, std::move(bytes));
    zip.close();
  });
}
