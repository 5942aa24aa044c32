//===- Hdf5Writer.cpp - HDF5 files written for Keras ----------------------===//

#include "frontend/keras/Hdf5Writer.h"
#include "runtime/Error.h"

#include <hdf5.h>

#include <atomic>
#include <vector>

using namespace kcc;
using namespace kcc::keras;

namespace {

/// Closes an HDF5 id on scope exit.
class Id {
public:
  Id(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  ~Id() {
    if (id_ >= 0)
      close_(id_);
  }
  Id(const Id &) = delete;
  Id &operator=(const Id &) = delete;
  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }

private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

hid_t nativeType(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return H5T_NATIVE_FLOAT;
  case DType::F64:
    return H5T_NATIVE_DOUBLE;
  case DType::I32:
    return H5T_NATIVE_INT32;
  case DType::I64:
    return H5T_NATIVE_INT64;
  default:
    return -1;
  }
}

/// Little-endian file types, as h5py writes from NumPy's '<f4' etc.
hid_t fileType(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return H5T_IEEE_F32LE;
  case DType::F64:
    return H5T_IEEE_F64LE;
  case DType::I32:
    return H5T_STD_I32LE;
  case DType::I64:
    return H5T_STD_I64LE;
  default:
    return -1;
  }
}

} // namespace

Hdf5Writer::Hdf5Writer(std::string source) : source_(std::move(source)) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  Id fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  // In memory only: the image is taken with H5Fget_file_image.
  if (!fapl.valid() ||
      H5Pset_fapl_core(fapl.get(), 1 << 20, /*backing_store=*/false) < 0)
    throw Error(source_ + ": cannot set up the HDF5 writer");
  static std::atomic<uint64_t> counter{0};
  std::string name = "kcc-hdf5-out-" + std::to_string(counter++);
  file_ = H5Fcreate(name.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get());
  if (file_ < 0)
    throw Error(source_ + ": cannot create an HDF5 file in memory");
}

Hdf5Writer::~Hdf5Writer() {
  if (file_ >= 0)
    H5Fclose(file_);
}

void Hdf5Writer::fail(const std::string &path,
                      const std::string &message) const {
  throw Error(source_ + ": " + path + ": " + message);
}

void Hdf5Writer::createGroup(const std::string &path) {
  Id lcpl(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
  H5Pset_create_intermediate_group(lcpl.get(), 1);
  if (H5Lexists(file_, path.c_str(), H5P_DEFAULT) > 0)
    return;
  Id g(H5Gcreate2(file_, path.c_str(), lcpl.get(), H5P_DEFAULT, H5P_DEFAULT),
       H5Gclose);
  if (!g.valid())
    fail(path, "cannot create the group");
}

void Hdf5Writer::setStringAttr(const std::string &object,
                               const std::string &name,
                               const std::string &value) {
  Id type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), H5T_VARIABLE);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  Id space(H5Screate(H5S_SCALAR), H5Sclose);
  Id attr(H5Acreate_by_name(file_, object.c_str(), name.c_str(), type.get(),
                            space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
          H5Aclose);
  const char *data = value.c_str();
  if (!attr.valid() || H5Awrite(attr.get(), type.get(), &data) < 0)
    fail(object, "cannot write attribute '" + name + "'");
}

void Hdf5Writer::writeDataset(const std::string &path, const NDArray &value) {
  hid_t mem = nativeType(value.dtype());
  if (mem < 0)
    fail(path, std::string("cannot write a ") + dtypeName(value.dtype()) +
                   " dataset");
  std::vector<hsize_t> dims(value.shape().begin(), value.shape().end());
  Id space(dims.empty() ? H5Screate(H5S_SCALAR)
                        : H5Screate_simple(static_cast<int>(dims.size()),
                                           dims.data(), nullptr),
           H5Sclose);
  Id ds(H5Dcreate2(file_, path.c_str(), fileType(value.dtype()), space.get(),
                   H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
        H5Dclose);
  if (!space.valid() || !ds.valid())
    fail(path, "cannot create the dataset");
  if (value.numel() > 0 && H5Dwrite(ds.get(), mem, H5S_ALL, H5S_ALL,
                                    H5P_DEFAULT, value.rawData()) < 0)
    fail(path, "cannot write the dataset");
}

std::string Hdf5Writer::image() {
  if (H5Fflush(file_, H5F_SCOPE_GLOBAL) < 0)
    fail("/", "cannot flush the HDF5 file");
  ssize_t size = H5Fget_file_image(file_, nullptr, 0);
  if (size < 0)
    fail("/", "cannot take the HDF5 file image");
  std::string bytes(static_cast<size_t>(size), '\0');
  if (H5Fget_file_image(file_, bytes.data(), bytes.size()) != size)
    fail("/", "cannot take the HDF5 file image");
  return bytes;
}
