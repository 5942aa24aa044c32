//===- ReferenceModels.h - The three reference models -----------*- C++ -*-===//
//
// Small Keras-style models on 28x28x1 images (Fashion-MNIST), built with the
// public API exactly as a user would. Tests compare eager and interpreted
// runs of them; benchmarks time them. Same seed, same weights.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_MODELS_REFERENCEMODELS_H
#define KCC_FRONTEND_MODELS_REFERENCEMODELS_H

#include "frontend/Layers.h"
#include "frontend/Model.h"

#include <memory>

namespace kcc {
namespace models {

/// Input(28,28,1) -> Flatten -> Dense(128, relu) -> Dense(64, relu)
/// -> Dense(10, softmax): 784-128-64-10.
std::unique_ptr<Sequential> buildMlp(uint64_t seed);

/// Input(28,28,1) -> Conv2D(32, 3x3, relu) -> MaxPool 2 -> Conv2D(64, 3x3,
/// relu) -> MaxPool 2 -> Flatten -> Dense(128, relu) -> Dense(10) (logits).
std::unique_ptr<Sequential> buildCnn(uint64_t seed);

/// Functional: Input(28,28,1) -> Flatten -> Dense(64, relu) = h;
/// Dense(64, relu)(Dense(64, relu)(h)) + h -> Dense(10) (logits).
std::unique_ptr<Model> buildResidual(uint64_t seed);

} // namespace models
} // namespace kcc

#endif // KCC_FRONTEND_MODELS_REFERENCEMODELS_H
