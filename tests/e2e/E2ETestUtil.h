//===- E2ETestUtil.h - Shared helpers of the end-to-end tests ---*- C++ -*-===//

#ifndef KCC_TESTS_E2E_E2ETESTUTIL_H
#define KCC_TESTS_E2E_E2ETESTUTIL_H

#include "frontend/models/ReferenceModels.h"
#include "runtime/data/Dataset.h"

#include <memory>
#include <string>

namespace kcc {
namespace e2e {

/// Fashion-MNIST, loaded once per process.
inline const FashionMnist &fashionMnist() {
  static const FashionMnist data = loadFashionMnist();
  return data;
}

/// "mlp", "cnn" or "residual" from frontend/models.
inline std::unique_ptr<Model> buildModel(const std::string &name,
                                         uint64_t seed) {
  if (name == "mlp")
    return models::buildMlp(seed);
  if (name == "cnn")
    return models::buildCnn(seed);
  return models::buildResidual(seed);
}

/// The MLP ends in softmax; the CNN and the residual model return logits.
inline bool returnsLogits(const std::string &name) { return name != "mlp"; }

} // namespace e2e
} // namespace kcc

#endif // KCC_TESTS_E2E_E2ETESTUTIL_H
