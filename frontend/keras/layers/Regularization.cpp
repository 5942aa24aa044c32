//===- Regularization.cpp - Keras's regularization layers ----------------===//
//
// Dropout (keras/src/layers/regularization/).
//
//===----------------------------------------------------------------------===//

#include "frontend/keras/ConfigReaders.h"
#include "frontend/keras/LayerRegistry.h"

using namespace kcc;
using namespace kcc::keras;

namespace {

Layer buildDropout(const ObjectView &c) {
  checkNull(c, {"noise_shape"});
  double rate = c.getNumber("rate");
  if (!(rate >= 0 && rate < 1))
    c.failField("rate", "rate must be in [0, 1), got " + std::to_string(rate));
  int64_t seed = c.getInt("seed", 0);
  return Dropout(rate, static_cast<uint64_t>(seed));
}

} // namespace

void keras::addRegularizationLayers(std::vector<LayerClass> &classes) {
  classes.push_back({"Dropout", "regularization",
                     [](const ObjectView &c, const CallOptions &) {
                       return buildDropout(c);
                     },
                     {},
                     {},
                     "`rate`, `seed`; no `noise_shape`"});
  classes.push_back({"ActivityRegularization", "regularization",
                     [](const ObjectView &c, const CallOptions &) {
                       return ActivityRegularization(readNonNegative(c, "l1", 0.0), readNonNegative(c, "l2", 0.0));
                     },
                     {},
                     {},
                     "`l1`, `l2`: the activity penalty of its output"});
}
