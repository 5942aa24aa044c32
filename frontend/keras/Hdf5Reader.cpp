//===- Hdf5Reader.cpp - libhdf5 over an in-memory image -------------------===//
//
// Runs in the reader process only (Hdf5Child.cpp).
//
//===----------------------------------------------------------------------===//

#include "frontend/keras/Hdf5Reader.h"
#include "frontend/keras/Hdf5.h"
#include "runtime/Error.h"

#include <hdf5.h>

#include "llvm/Support/CheckedArithmetic.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>

using namespace kcc;
using namespace kcc::keras;

namespace {

/// Closes an HDF5 id on scope exit.
class Handle {
public:
  Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  ~Handle() {
    if (id_ >= 0)
      close_(id_);
  }
  Handle(const Handle &) = delete;
  Handle &operator=(const Handle &) = delete;
  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }

private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

/// HDF5 prints its error stack to stderr by default; kcc reports its own.
void silenceHdf5() {
  static bool done = [] {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    return true;
  }();
  (void)done;
}

} // namespace

Hdf5Reader::Hdf5Reader(llvm::StringRef image, std::string source)
    : source_(std::move(source)), imageBytes_(image.size()) {
  silenceHdf5();
  if (!isHdf5(image))
    throw Error(source_ + ": not an HDF5 file");
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  // The core driver reads from the image; nothing touches the disk.
  if (!fapl.valid() || H5Pset_fapl_core(fapl.get(), 1 << 16, false) < 0 ||
      H5Pset_file_image(fapl.get(), const_cast<char *>(image.data()),
                        image.size()) < 0)
    throw Error(source_ + ": cannot set up the HDF5 reader");
  // The name is only the open file's identity: the core driver refuses one
  // that exists on disk, and two images must not share one.
  static std::atomic<uint64_t> counter{0};
  std::string name = "kcc-hdf5-image-" + std::to_string(counter++);
  file_ = H5Fopen(name.c_str(), H5F_ACC_RDONLY, fapl.get());
  if (file_ < 0)
    throw Error(source_ + ": not a readable HDF5 file (truncated?)");
}

Hdf5Reader::~Hdf5Reader() {
  if (file_ >= 0)
    H5Fclose(file_);
}

void Hdf5Reader::fail(const std::string &path, const std::string &msg) const {
  throw Error(source_ + ": " + (path.empty() ? "" : path + ": ") + msg);
}

bool Hdf5Reader::exists(const std::string &path) const {
  // H5Lexists needs every intermediate group to exist: walk the path.
  size_t pos = 0;
  while (pos != std::string::npos) {
    size_t next = path.find('/', pos + 1);
    std::string prefix = path.substr(0, next);
    if (!prefix.empty() && H5Lexists(file_, prefix.c_str(), H5P_DEFAULT) <= 0)
      return false;
    pos = next;
  }
  return true;
}

bool Hdf5Reader::isGroup(const std::string &path) const {
  if (!exists(path))
    return false;
  H5O_info_t info;
  if (H5Oget_info_by_name(file_, path.c_str(), &info, H5P_DEFAULT) < 0)
    return false;
  return info.type == H5O_TYPE_GROUP;
}

std::vector<std::string> Hdf5Reader::members(const std::string &group) const {
  std::vector<std::string> names;
  Handle g(H5Gopen2(file_, group.c_str(), H5P_DEFAULT), H5Gclose);
  if (!g.valid())
    fail(group, "missing group");
  H5G_info_t info;
  if (H5Gget_info(g.get(), &info) < 0)
    fail(group, "unreadable group");
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    ssize_t n = H5Lget_name_by_idx(g.get(), ".", H5_INDEX_NAME, H5_ITER_INC, i,
                                   nullptr, 0, H5P_DEFAULT);
    if (n < 0)
      fail(group, "unreadable member");
    std::string name(static_cast<size_t>(n), '\0');
    H5Lget_name_by_idx(g.get(), ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(),
                       name.size() + 1, H5P_DEFAULT);
    names.push_back(std::move(name));
  }
  return names;
}

std::optional<std::vector<std::string>>
Hdf5Reader::stringListAttr(const std::string &object,
                           const std::string &name) const {
  if (!exists(object) ||
      H5Aexists_by_name(file_, object.c_str(), name.c_str(), H5P_DEFAULT) <= 0)
    return std::nullopt;
  Handle attr(H5Aopen_by_name(file_, object.c_str(), name.c_str(), H5P_DEFAULT,
                              H5P_DEFAULT),
              H5Aclose);
  Handle type(H5Aget_type(attr.get()), H5Tclose);
  Handle space(H5Aget_space(attr.get()), H5Sclose);
  if (!attr.valid() || !type.valid() || !space.valid())
    fail(object, "unreadable attribute '" + name + "'");
  hssize_t count = H5Sget_simple_extent_npoints(space.get());
  std::vector<std::string> out;
  if (count <= 0)
    return out;
  if (H5Tget_class(type.get()) != H5T_STRING)
    fail(object, "attribute '" + name + "' is not a string list");
  // Buffers below are sized by the attribute's header: no larger than the
  // file that holds it.
  std::optional<uint64_t> bytes =
      llvm::checkedMulUnsigned<uint64_t>(count, H5Tget_size(type.get()));
  if (!bytes || *bytes > imageBytes_ ||
      static_cast<uint64_t>(count) > imageBytes_)
    fail(object, "attribute '" + name + "' declares " + std::to_string(count) +
                     " strings, more than the " + std::to_string(imageBytes_) +
                     "-byte file holds");
  if (H5Tis_variable_str(type.get()) > 0) {
    std::vector<char *> ptrs(static_cast<size_t>(count), nullptr);
    Handle mem(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(mem.get(), H5T_VARIABLE);
    H5Tset_cset(mem.get(), H5Tget_cset(type.get()));
    bool read = H5Aread(attr.get(), mem.get(), ptrs.data()) >= 0;
    if (read)
      for (char *p : ptrs)
        out.emplace_back(p ? p : "");
    // Frees what the library allocated, also after a read that failed
    // part-way (the strings converted before the failure).
    H5Dvlen_reclaim(mem.get(), space.get(), H5P_DEFAULT, ptrs.data());
    if (!read)
      fail(object, "unreadable attribute '" + name + "'");
    return out;
  }
  size_t size = H5Tget_size(type.get());
  std::vector<char> buf(size * static_cast<size_t>(count));
  if (H5Aread(attr.get(), type.get(), buf.data()) < 0)
    fail(object, "unreadable attribute '" + name + "'");
  for (hssize_t i = 0; i < count; ++i) {
    const char *p = buf.data() + i * size;
    out.emplace_back(p, strnlen(p, size));
  }
  return out;
}

Shape Hdf5Reader::datasetShape(const std::string &path) const {
  if (!exists(path))
    fail(path, "missing dataset");
  Handle ds(H5Dopen2(file_, path.c_str(), H5P_DEFAULT), H5Dclose);
  if (!ds.valid())
    fail(path, "not a dataset");
  Handle space(H5Dget_space(ds.get()), H5Sclose);
  int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0 || rank > 16)
    fail(path, "unsupported dataspace");
  hsize_t dims[16];
  H5Sget_simple_extent_dims(space.get(), dims, nullptr);
  Shape shape;
  int64_t numel = 1;
  for (int i = 0; i < rank; ++i) {
    std::optional<int64_t> n =
        dims[i] > static_cast<hsize_t>(INT64_MAX)
            ? std::nullopt
            : llvm::checkedMul<int64_t>(numel, static_cast<int64_t>(dims[i]));
    if (!n)
      fail(path, "the dataset's extent overflows 64 bits");
    numel = *n;
    shape.push_back(static_cast<int64_t>(dims[i]));
  }
  return shape;
}

void Hdf5Reader::checkStorage(int64_t dataset, int64_t type, const Shape &shape,
                              const std::string &path) const {
  // The extent is a number in the file; the data must be in it too, before
  // the extent sizes an allocation.
  std::optional<uint64_t> declared = llvm::checkedMulUnsigned<uint64_t>(
      static_cast<uint64_t>(numElements(shape)), H5Tget_size(type));
  Handle plist(H5Dget_create_plist(dataset), H5Pclose);
  H5D_layout_t layout =
      plist.valid() ? H5Pget_layout(plist.get()) : H5D_LAYOUT_ERROR;
  // External and virtual datasets read other files, named by this one.
  if ((layout != H5D_COMPACT && layout != H5D_CONTIGUOUS &&
       layout != H5D_CHUNKED) ||
      H5Pget_external_count(plist.get()) != 0)
    fail(path, "the dataset is stored outside the file");
  bool chunked = layout == H5D_CHUNKED;
  uint64_t stored = H5Dget_storage_size(dataset);
  // Chunks may be compressed (deflate: at most about 1032:1); other layouts
  // store every byte.
  uint64_t ratio = chunked ? 1032 : 1;
  std::optional<uint64_t> holds = llvm::checkedMulUnsigned<uint64_t>(
      std::min<uint64_t>(stored, imageBytes_), ratio);
  if (!declared || !holds || *declared > *holds || stored > imageBytes_)
    fail(path, "the dataset declares " + shapeToString(shape) + " (" +
                   (declared ? std::to_string(*declared) : "too many") +
                   " bytes) but stores " + std::to_string(stored) +
                   " bytes of a " + std::to_string(imageBytes_) + "-byte file");
}

NDArray Hdf5Reader::readFloat(const std::string &path) const {
  Shape shape = datasetShape(path);
  Handle ds(H5Dopen2(file_, path.c_str(), H5P_DEFAULT), H5Dclose);
  Handle type(H5Dget_type(ds.get()), H5Tclose);
  // Integers too: Keras's optimizer `iterations` counter is an int64.
  H5T_class_t cls = H5Tget_class(type.get());
  if (cls != H5T_FLOAT && cls != H5T_INTEGER)
    fail(path, "expected a float dataset");
  checkStorage(ds.get(), type.get(), shape, path);
  NDArray out = NDArray::empty(shape, DType::F32);
  // HDF5 converts f64, integer (or big-endian) storage to native f32 while
  // reading.
  if (out.numel() > 0 && H5Dread(ds.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL,
                                 H5P_DEFAULT, out.rawData()) < 0)
    fail(path, "unreadable dataset");
  return out;
}
