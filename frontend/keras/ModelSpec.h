//===- ModelSpec.h - Keras model specs, internal entry points ---*- C++ -*-===//
//
// Shared by the JSON, .keras and .h5 readers: the model-level reader and the
// compile_config / training_config reader.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_KERAS_MODELSPEC_H
#define KCC_FRONTEND_KERAS_MODELSPEC_H

#include "frontend/keras/KerasImporter.h"
#include "frontend/keras/SpecReader.h"

#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <optional>
#include <string>

namespace kcc {
namespace keras {

class Hdf5File;

/// Builds the model of a parsed spec (Keras 2 or 3, Sequential or
/// functional), with its compile_config if present.
ImportedModel readModelSpec(SpecReader &reader, const llvm::json::Value &spec,
                            uint64_t seed);

/// Reads a Keras 3 compile_config ({optimizer, loss, metrics}) or a legacy
/// .h5's training_config ({optimizer_config, loss, metrics}) into
/// `out.training`; an optimizer or loss kcc cannot train with goes to
/// `out.trainingError` instead of failing the import.
void readCompileConfig(const ObjectView &config, ImportedModel &out);

/// Loads the weights of an opened HDF5 file (either layout) into
/// `imported`: what loadWeightsH5 does once it has opened the image, for a
/// reader that has already opened it for its attributes.
void loadWeightsFromHdf5(const Hdf5File &file, ImportedModel &imported);

/// The largest model file (.keras, .h5) and .keras weights entry kcc reads:
/// a Keras model kcc trains is megabytes; this keeps a hostile or sparse
/// file, read whole into memory, well inside a 4 GB address space.
constexpr uint64_t kMaxModelFileBytes = uint64_t(1) << 30;
/// The largest JSON text (a spec, config.json): a chain of 100,000 layers
/// is about 60 MB.
constexpr uint64_t kMaxJsonBytes = uint64_t(256) << 20;

/// The size of `path`, which must be a regular file of at most `limit`
/// bytes: a device or a pipe (/dev/zero) would be read until memory runs
/// out. Throws otherwise.
uint64_t modelFileSize(const std::string &path,
                       uint64_t limit = kMaxModelFileBytes);
/// Member `name` of the .keras archive `path` (at most `limit` bytes), or
/// std::nullopt when the archive has no such member.
std::optional<std::string> readArchiveMember(const std::string &path,
                                             const char *name, uint64_t limit);

/// The bytes of `path`, checked by modelFileSize.
std::unique_ptr<llvm::MemoryBuffer>
readModelFile(const std::string &path, uint64_t limit = kMaxModelFileBytes);

} // namespace keras
} // namespace kcc

#endif // KCC_FRONTEND_KERAS_MODELSPEC_H
