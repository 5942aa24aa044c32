//===- ZipWriter.cpp - Zip archives written from memory -------------------===//

#include "runtime/data/ZipWriter.h"
#include "runtime/Error.h"

#include <zip.h>

using namespace kcc;

ZipWriter::ZipWriter(const std::string &file, std::string source)
    : source_(std::move(source)) {
  int err = 0;
  zip_ = zip_open(file.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  if (!zip_) {
    zip_error_t e;
    zip_error_init_with_code(&e, err);
    std::string msg = zip_error_strerror(&e);
    zip_error_fini(&e);
    throw Error(source_ + ": cannot create the archive: " + msg);
  }
}

ZipWriter::~ZipWriter() {
  if (zip_)
    zip_discard(zip_);
}

void ZipWriter::add(const std::string &name, std::string bytes) {
  buffers_.push_back(std::make_unique<std::string>(std::move(bytes)));
  const std::string &data = *buffers_.back();
  zip_source_t *src =
      zip_source_buffer(zip_, data.data(), data.size(), /*freep=*/0);
  if (!src)
    throw Error(source_ + ": " + name + ": " + zip_strerror(zip_));
  zip_int64_t index = zip_file_add(zip_, name.c_str(), src,
                                   ZIP_FL_OVERWRITE | ZIP_FL_ENC_UTF_8);
  if (index < 0) {
    zip_source_free(src);
    throw Error(source_ + ": " + name + ": " + zip_strerror(zip_));
  }
  if (zip_set_file_compression(zip_, static_cast<zip_uint64_t>(index),
                               ZIP_CM_STORE, 0) != 0)
    throw Error(source_ + ": " + name + ": " + zip_strerror(zip_));
}

void ZipWriter::close() {
  if (zip_close(zip_) != 0)
    throw Error(source_ + ": cannot write the archive: " + zip_strerror(zip_));
  zip_ = nullptr;
  buffers_.clear();
}
