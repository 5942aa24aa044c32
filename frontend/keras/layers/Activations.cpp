//===- Activations.cpp - Keras's activation layers -----------------------===//
//
// Activation, Softmax, ReLU, LeakyReLU, PReLU and ELU
// (keras/src/layers/activations/).
//
//===----------------------------------------------------------------------===//

#include "frontend/keras/ConfigReaders.h"
#include "frontend/keras/LayerRegistry.h"

#include <cmath>

using namespace kcc;
using namespace kcc::keras;
namespace json = llvm::json;

namespace {

Layer buildReLU(const ObjectView &c) {
  std::optional<double> maxValue = c.getOptNumber("max_value");
  if (maxValue && !(*maxValue >= 0))
    c.failField("max_value", "'max_value' must be >= 0");
  return ReLU(maxValue, readNonNegative(c, "negative_slope", 0.0),
              readNonNegative(c, "threshold", 0.0));
}

Layer buildLeakyReLU(const ObjectView &c) {
  // Keras 3 writes negative_slope; Keras 2 wrote alpha (same default).
  llvm::StringRef key =
      c.has("negative_slope") || !c.has("alpha") ? "negative_slope" : "alpha";
  return LeakyReLU(readNonNegative(c, key, 0.3));
}

Layer buildPReLU(const ObjectView &c) {
  checkNull(c, {"alpha_regularizer", "alpha_constraint"});
  std::vector<int64_t> shared;
  if (const json::Value *v = c.get("shared_axes")) {
    if (std::optional<int64_t> one = v->getAsInteger())
      shared.push_back(*one);
    else
      shared = c.getShape("shared_axes");
    for (int64_t a : shared)
      if (a < 1)
        c.failField("shared_axes", "'shared_axes' entries must be >= 1 "
                                   "(axis 0 is the batch), got " +
                                       std::to_string(a));
  }
  return PReLU(readInitializer(c, "alpha_initializer", "zeros"), shared);
}

Layer buildELU(const ObjectView &c) {
  double alpha = c.getNumber("alpha", 1.0);
  if (!std::isfinite(alpha))
    c.failField("alpha", "'alpha' must be finite");
  return ELU(alpha);
}

} // namespace

void keras::addActivationLayers(std::vector<LayerClass> &classes) {
  classes.push_back({"Activation",
                     "activations",
                     [](const ObjectView &c, const CallOptions &) {
                       return Activation(readActivation(c, /*required=*/true));
                     },
                     {},
                     {},
                     "`activation`: any of kcc's activations by Keras name"});
  classes.push_back({"Softmax",
                     "activations",
                     [](const ObjectView &c, const CallOptions &) {
                       return Softmax(c.getInt("axis", -1));
                     },
                     {},
                     {},
                     "`axis`; `mask` in the call (a tensor broadcastable to "
                     "the input, kept over 0.5)"});
  classes.push_back(
      {"ReLU",
       "activations",
       [](const ObjectView &c, const CallOptions &) { return buildReLU(c); },
       {},
       {},
       "`max_value`, `negative_slope`, `threshold`"});
  classes.push_back({"LeakyReLU",
                     "activations",
                     [](const ObjectView &c, const CallOptions &) {
                       return buildLeakyReLU(c);
                     },
                     {},
                     {},
                     "`negative_slope` (Keras 2: `alpha`)"});
  classes.push_back(
      {"PReLU",
       "activations",
       [](const ObjectView &c, const CallOptions &) { return buildPReLU(c); },
       {},
       {},
       "`alpha_initializer`, `shared_axes`"});
  classes.push_back(
      {"ELU",
       "activations",
       [](const ObjectView &c, const CallOptions &) { return buildELU(c); },
       {},
       {},
       "`alpha`"});
}
