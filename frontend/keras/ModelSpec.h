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

namespace kcc {
namespace keras {

/// Builds the model of a parsed spec (Keras 2 or 3, Sequential or
/// functional), with its compile_config if present.
ImportedModel readModelSpec(SpecReader &reader, const llvm::json::Value &spec,
                            uint64_t seed);

/// Reads a Keras 3 compile_config ({optimizer, loss, metrics}) or a legacy
/// .h5's training_config ({optimizer_config, loss, metrics}) into
/// `out.training`; an optimizer or loss kcc cannot train with goes to
/// `out.trainingError` instead of failing the import.
void readCompileConfig(const ObjectView &config, ImportedModel &out);

} // namespace keras
} // namespace kcc

#endif // KCC_FRONTEND_KERAS_MODELSPEC_H
