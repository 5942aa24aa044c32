//===- ReferenceModels.cpp - The three reference models -------------------===//

#include "frontend/models/ReferenceModels.h"

using namespace kcc;

std::unique_ptr<Sequential> models::buildMlp(uint64_t seed) {
  return std::make_unique<Sequential>(
      std::vector<SequentialEntry>{Input({28, 28, 1}), Flatten(),
                                   Dense(128, "relu"), Dense(64, "relu"),
                                   Dense(10, "softmax")},
      "mlp", seed);
}

std::unique_ptr<Sequential> models::buildCnn(uint64_t seed) {
  return std::make_unique<Sequential>(
      std::vector<SequentialEntry>{
          Input({28, 28, 1}), Conv2D(32, 3, 1, "valid", "relu"),
          MaxPooling2D(2), Conv2D(64, 3, 1, "valid", "relu"), MaxPooling2D(2),
          Flatten(), Dense(128, "relu"), Dense(10)},
      "cnn", seed);
}

std::unique_ptr<Model> models::buildResidual(uint64_t seed) {
  Tensor x = Input({28, 28, 1});
  Tensor h = Dense(64, "relu")(Flatten()(x));
  Tensor r = Dense(64, "relu")(Dense(64, "relu")(h));
  Tensor y = Dense(10)(Add()({r, h}));
  return std::make_unique<Model>(x, y, "residual", seed);
}
