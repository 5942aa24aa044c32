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

/// Dropout (no noise_shape) and the spatial dropouts (their noise shape is
/// fixed): `rate` and `seed`.
Layer buildDropout(const ObjectView &c, int spatialDims) {
  if (!spatialDims)
    checkNull(c, {"noise_shape"});
  else if (spatialDims == 2)
    checkChannelsLast(c);
  double rate = c.getNumber("rate");
  if (!(rate >= 0 && rate < 1))
    c.failField("rate", "rate must be in [0, 1), got " + std::to_string(rate));
  auto seed = static_cast<uint64_t>(c.getInt("seed", 0));
  if (spatialDims == 1)
    return SpatialDropout1D(rate, seed);
  if (spatialDims == 2)
    return SpatialDropout2D(rate, seed);
  return Dropout(rate, seed);
}

} // namespace

void keras::addRegularizationLayers(std::vector<LayerClass> &classes) {
  classes.push_back({"Dropout",
                     "regularization",
                     [](const ObjectView &c, const CallOptions &) {
                       return buildDropout(c, 0);
                     },
                     {},
                     {},
                     "`rate`, `seed`; no `noise_shape`"});
  classes.push_back({"ActivityRegularization",
                     "regularization",
                     [](const ObjectView &c, const CallOptions &) {
                       return ActivityRegularization(
                           readNonNegative(c, "l1", 0.0),
                           readNonNegative(c, "l2", 0.0));
                     },
                     {},
                     {},
                     "`l1`, `l2`: the activity penalty of its output"});
  classes.push_back({"SpatialDropout1D",
                     "regularization",
                     [](const ObjectView &c, const CallOptions &) {
                       return buildDropout(c, 1);
                     },
                     {},
                     {},
                     "`rate`, `seed`: whole channels of [batch, steps, "
                     "channels]"});
  classes.push_back({"SpatialDropout2D",
                     "regularization",
                     [](const ObjectView &c, const CallOptions &) {
                       return buildDropout(c, 2);
                     },
                     {},
                     {{"data_format", "channels_last"}},
                     "`rate`, `seed`: whole channels of [batch, rows, "
                     "columns, channels]"});
}
