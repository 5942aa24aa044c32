//===- Regularization.cpp - Keras's regularization layers ----------------===//
//
// Dropout, the spatial dropouts, the noise layers and ActivityRegularization
// (keras/src/layers/regularization/).
//
//===----------------------------------------------------------------------===//

#include "frontend/keras/ConfigReaders.h"
#include "frontend/keras/LayerRegistry.h"

#include <cmath>

using namespace kcc;
using namespace kcc::keras;

namespace {

/// Dropout (with its noise_shape) and the spatial dropouts (their noise
/// shape is fixed): `rate` and `seed`.
Layer buildDropout(const ObjectView &c, int spatialDims) {
  std::vector<int64_t> noiseShape;
  if (!spatialDims && c.has("noise_shape") &&
      !c.get("noise_shape")->getAsNull()) {
    noiseShape = readIntOrShape(c, "noise_shape");
    for (int64_t d : noiseShape)
      if (d < -1 || d == 0)
        c.failField("noise_shape",
                    "'noise_shape' entries must be positive or null");
  }
  if (spatialDims >= 2)
    checkChannelsLast(c);
  double rate = c.getNumber("rate");
  if (!(rate >= 0 && rate < 1))
    c.failField("rate", "rate must be in [0, 1), got " + std::to_string(rate));
  auto seed = static_cast<uint64_t>(c.getInt("seed", 0));
  if (spatialDims == 1)
    return SpatialDropout1D(rate, seed);
  if (spatialDims == 2)
    return SpatialDropout2D(rate, seed);
  if (spatialDims == 3)
    return SpatialDropout3D(rate, seed);
  return Dropout(rate, seed, noiseShape);
}

/// GaussianNoise (`stddev`), GaussianDropout and AlphaDropout (`rate`).
template <typename L>
Layer buildNoise(const ObjectView &c, llvm::StringRef key, bool rate) {
  if (rate)
    checkNull(c, {"noise_shape"});
  double amount = c.getNumber(key);
  if (rate ? !(amount >= 0 && amount < 1)
           : !(amount >= 0 && std::isfinite(amount)))
    c.failField(key, "'" + key.str() + "' must be " +
                         (rate ? "in [0, 1)" : "finite and >= 0") + ", got " +
                         std::to_string(amount));
  const llvm::json::Value *seed = c.get("seed");
  return L(amount, seed && !seed->getAsNull()
                       ? static_cast<uint64_t>(c.getInt("seed"))
                       : 0);
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
                     "`rate`, `seed`, `noise_shape`"});
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
  classes.push_back({"SpatialDropout3D",
                     "regularization",
                     [](const ObjectView &c, const CallOptions &) {
                       return buildDropout(c, 3);
                     },
                     {},
                     {{"data_format", "channels_last"}},
                     "`rate`, `seed`: whole channels of [batch, depth, rows, "
                     "columns, channels]"});
  classes.push_back({"GaussianNoise",
                     "regularization",
                     [](const ObjectView &c, const CallOptions &) {
                       return buildNoise<GaussianNoise>(c, "stddev", false);
                     },
                     {},
                     {},
                     "`stddev`, `seed`: normal noise added in training"});
  classes.push_back({"GaussianDropout",
                     "regularization",
                     [](const ObjectView &c, const CallOptions &) {
                       return buildNoise<GaussianDropout>(c, "rate", true);
                     },
                     {},
                     {},
                     "`rate`, `seed`: multiplicative normal noise in "
                     "training"});
  classes.push_back({"AlphaDropout",
                     "regularization",
                     [](const ObjectView &c, const CallOptions &) {
                       return buildNoise<AlphaDropout>(c, "rate", true);
                     },
                     {},
                     {},
                     "`rate`, `seed`; no `noise_shape`"});
}
