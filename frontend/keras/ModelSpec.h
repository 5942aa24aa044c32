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

#include <limits>
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

/// The largest JSON text (a spec, config.json): a chain of 100,000 layers
/// is about 60 MB.
constexpr uint64_t kMaxJsonBytes = uint64_t(256) << 20;

/// The size of `path`, which must be a regular file (a device or a pipe,
/// /dev/zero, would be read until memory runs out) that fits in the memory
/// this process may still allocate (requireMemory: a sparse file or one
/// larger than the machine is an error saying so, never the OOM killer).
/// Model files and a .keras archive's weights are read whole, so memory is
/// their only bound: ConvNeXtXLarge's archive is 1.4 GB. Throws otherwise.
uint64_t modelFileSize(const std::string &path);
/// Member `name` of the .keras archive `path`, or std::nullopt when the
/// archive has no such member. At most `limit` bytes (kMaxJsonBytes for
/// JSON); any member must fit in the memory available.
std::optional<std::string>
readArchiveMember(const std::string &path, const char *name,
                  uint64_t limit = std::numeric_limits<uint64_t>::max());

/// The bytes of `path`, checked by modelFileSize.
std::unique_ptr<llvm::MemoryBuffer> readModelFile(const std::string &path);

} // namespace keras
} // namespace kcc

#endif // KCC_FRONTEND_KERAS_MODELSPEC_H
