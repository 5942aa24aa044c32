//===- Hdf5.cpp - Read-only HDF5 access for Keras files -------------------===//
//
// kcc's side of the HDF5 reader: each call is one request to the child
// (Hdf5Process), each reply decoded with every count and length bounded by
// what the image can hold.
//
//===----------------------------------------------------------------------===//

#include "frontend/keras/Hdf5.h"
#include "frontend/keras/Hdf5Process.h"
#include "frontend/keras/Hdf5Wire.h"
#include "runtime/Error.h"
#include "runtime/MemoryBudget.h"

#include "llvm/Support/CheckedArithmetic.h"

using namespace kcc;
using namespace kcc::keras;
using namespace kcc::keras::wire;

namespace {

/// An error message of the reader's, or a reply's overhead: slack over the
/// bytes of the image.
constexpr uint64_t kSlackBytes = 64 << 10;
/// Chunked datasets may be deflated: at most about 1032:1.
constexpr uint64_t kMaxDeflateRatio = 1032;

constexpr const char *kMalformed = "the HDF5 reader's reply is malformed";

} // namespace

bool keras::isHdf5(llvm::StringRef bytes) {
  return bytes.starts_with(llvm::StringRef("\x89HDF\r\n\x1a\n", 8));
}

Hdf5File::Hdf5File(llvm::StringRef image, std::string source)
    : source_(std::move(source)), imageBytes_(image.size()) {
  if (!isHdf5(image))
    throw Error(source_ + ": not an HDF5 file");
  process_ = std::make_unique<Hdf5Process>(image, source_);
}

Hdf5File::~Hdf5File() = default;

void Hdf5File::fail(const std::string &path, const std::string &msg) const {
  throw Error(source_ + ": " + (path.empty() ? "" : path + ": ") + msg);
}

std::string Hdf5File::call(uint8_t op, const std::string &path,
                           const std::string &name) const {
  uint64_t n = process_->request(static_cast<Hdf5Op>(op), path, name);
  // Strings are at most the image, each with an 8-byte length; a string
  // takes at least one byte of the file.
  std::optional<uint64_t> bound =
      llvm::checkedMulAddUnsigned<uint64_t>(imageBytes_, 9, kSlackBytes);
  if (!bound || n > *bound)
    process_->abandon("the HDF5 reader answered " + std::to_string(n) +
                      " bytes, more than the " + std::to_string(imageBytes_) +
                      "-byte file holds; the file is corrupt");
  std::string payload(n, '\0');
  process_->receive(payload.data(), n);
  return payload;
}

bool Hdf5File::exists(const std::string &path) const {
  std::string p = call(static_cast<uint8_t>(Hdf5Op::Exists), path);
  if (p.size() != 1)
    process_->abandon(kMalformed);
  return p[0] != 0;
}

bool Hdf5File::isGroup(const std::string &path) const {
  std::string p = call(static_cast<uint8_t>(Hdf5Op::IsGroup), path);
  if (p.size() != 1)
    process_->abandon(kMalformed);
  return p[0] != 0;
}

std::vector<std::string> Hdf5File::members(const std::string &group) const {
  std::string p = call(static_cast<uint8_t>(Hdf5Op::Members), group);
  Decoder d(p);
  std::vector<std::string> names;
  if (!d.getStrings(names) || !d.atEnd())
    process_->abandon(kMalformed);
  return names;
}

std::optional<std::vector<std::string>>
Hdf5File::stringListAttr(const std::string &object,
                         const std::string &name) const {
  std::string p =
      call(static_cast<uint8_t>(Hdf5Op::StringListAttr), object, name);
  Decoder d(p);
  uint8_t present;
  std::vector<std::string> list;
  if (!d.get(present) || present > 1 || (present && !d.getStrings(list)) ||
      !d.atEnd())
    process_->abandon(kMalformed);
  if (!present)
    return std::nullopt;
  return list;
}

std::optional<std::string> Hdf5File::stringAttr(const std::string &object,
                                                const std::string &name) const {
  std::optional<std::vector<std::string>> list = stringListAttr(object, name);
  if (!list)
    return std::nullopt;
  if (list->size() != 1)
    fail(object, "attribute '" + name + "' is not a single string");
  return (*list)[0];
}

Shape Hdf5File::decodeShape(uint64_t rank, llvm::StringRef dims,
                            const std::string &path) const {
  Decoder d(dims);
  Shape shape(rank);
  for (int64_t &dim : shape)
    if (!d.get(dim) || dim < 0)
      process_->abandon(kMalformed);
  if (!d.atEnd())
    process_->abandon(kMalformed);
  if (!checkedNumElements(shape))
    fail(path, "the dataset's extent overflows 64 bits");
  return shape;
}

Shape Hdf5File::datasetShape(const std::string &path) const {
  std::string p = call(static_cast<uint8_t>(Hdf5Op::DatasetShape), path);
  Decoder d(p);
  uint64_t rank;
  if (!d.get(rank) || rank > kMaxRank || p.size() != 8 + 8 * rank)
    process_->abandon(kMalformed);
  return decodeShape(rank, llvm::StringRef(p).drop_front(8), path);
}

NDArray Hdf5File::readFloat(const std::string &path) const {
  uint64_t n = process_->request(Hdf5Op::ReadFloat, path, "");
  uint64_t rank;
  if (n < sizeof(rank))
    process_->abandon(kMalformed);
  process_->receive(&rank, sizeof(rank));
  if (rank > kMaxRank || n < 8 + 8 * rank)
    process_->abandon(kMalformed);
  std::string dims(8 * rank, '\0');
  process_->receive(dims.data(), dims.size());
  Shape shape = decodeShape(rank, dims, path);
  // The elements, as f32, of data stored in the image (deflated at most
  // 1032:1, in elements of at least one byte).
  std::optional<uint64_t> bytes = llvm::checkedMulUnsigned<uint64_t>(
      static_cast<uint64_t>(numElements(shape)), 4);
  std::optional<uint64_t> bound =
      llvm::checkedMulUnsigned<uint64_t>(imageBytes_, 4 * kMaxDeflateRatio);
  if (!bytes || n - 8 - 8 * rank != *bytes || (bound && *bytes > *bound))
    process_->abandon(kMalformed);
  // The reply is still in the socket: a failed allocation must end the
  // child too, or the next request would read this reply's data.
  NDArray out;
  try {
    out = NDArray::empty(shape, DType::F32);
  } catch (const Error &e) {
    process_->stop(e.what());
  }
  process_->receive(out.rawData(), *bytes);
  return out;
}
