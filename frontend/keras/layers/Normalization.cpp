//===- Normalization.cpp - Keras's normalization layers ------------------===//
//
// BatchNormalization, LayerNormalization and GroupNormalization over the
// last axis, UnitNormalization and RMSNormalization over any
// (keras/src/layers/normalization/).
//
//===----------------------------------------------------------------------===//

#include "frontend/keras/ConfigReaders.h"
#include "frontend/keras/LayerRegistry.h"

#include <cmath>

using namespace kcc;
using namespace kcc::keras;
namespace json = llvm::json;

namespace {

/// `axis` as BatchNormalization and LayerNormalization write it: an int
/// (BatchNormalization in Keras 3, -1) or a list of one axis (Keras 3's
/// LayerNormalization, [-1]; Keras 2 after build, [3]); -1 when absent. The
/// layer checks it is the input's last.
int64_t readOneAxis(const ObjectView &c) {
  const json::Value *v = c.get("axis");
  if (!v)
    return -1;
  const json::Array *list = v->getAsArray();
  std::optional<int64_t> one =
      list ? (list->size() == 1 ? (*list)[0].getAsInteger() : std::nullopt)
           : v->getAsInteger();
  if (!one || *one < -1 || *one > (int64_t(1) << 31))
    c.failField("axis", "'axis' must be one axis (kcc normalizes over the "
                        "last axis only)");
  return *one;
}

Layer buildBatchNormalization(const ObjectView &c) {
  checkNull(c, {"beta_constraint", "gamma_constraint", "virtual_batch_size",
                "adjustment"});
  if (c.getBool("renorm", false))
    c.failField("renorm", "batch renormalization (renorm) is not supported");
  int64_t axis = readOneAxis(c);
  double momentum = c.getNumber("momentum", 0.99);
  double epsilon = c.getNumber("epsilon", 1e-3);
  if (!std::isfinite(momentum))
    c.failField("momentum", "'momentum' must be finite");
  if (!(std::isfinite(epsilon) && epsilon > 0))
    c.failField("epsilon", "'epsilon' must be finite and > 0");
  Layer bn = BatchNormalization(
      axis, momentum, epsilon, c.getBool("center", true),
      c.getBool("scale", true), readInitializer(c, "beta_initializer", "zeros"),
      readInitializer(c, "gamma_initializer", "ones"),
      readInitializer(c, "moving_mean_initializer", "zeros"),
      readInitializer(c, "moving_variance_initializer", "ones"),
      c.getBool("synchronized", false));
  return withRegularizers(c, bn, {"beta", "gamma"});
}

Layer buildLayerNormalization(const ObjectView &c) {
  checkNull(c, {"beta_regularizer", "gamma_regularizer", "beta_constraint",
                "gamma_constraint"});
  int64_t axis = readOneAxis(c);
  double epsilon = c.getNumber("epsilon", 1e-3);
  if (!(std::isfinite(epsilon) && epsilon > 0))
    c.failField("epsilon", "'epsilon' must be finite and > 0");
  return LayerNormalization(axis, epsilon, c.getBool("center", true),
                            c.getBool("scale", true),
                            readInitializer(c, "beta_initializer", "zeros"),
                            readInitializer(c, "gamma_initializer", "ones"),
                            c.getBool("rms_scaling", false));
}

Layer buildRMSNormalization(const ObjectView &c) {
  Shape axes = readIntOrShape(c, "axis");
  if (axes.empty())
    axes = {-1};
  double epsilon = c.getNumber("epsilon", 1e-6);
  if (!(std::isfinite(epsilon) && epsilon >= 0))
    c.failField("epsilon", "'epsilon' must be finite and >= 0");
  return RMSNormalization(axes, epsilon);
}

Layer buildGroupNormalization(const ObjectView &c) {
  checkNull(c, {"beta_regularizer", "gamma_regularizer", "beta_constraint",
                "gamma_constraint"});
  int64_t groups = c.getInt("groups", 32);
  if (groups == 0 || groups < -1)
    c.failField("groups", "'groups' must be positive or -1, got " +
                              std::to_string(groups));
  int64_t axis = c.getInt("axis", -1);
  double epsilon = c.getNumber("epsilon", 1e-3);
  if (!(std::isfinite(epsilon) && epsilon > 0))
    c.failField("epsilon", "'epsilon' must be finite and > 0");
  return GroupNormalization(groups, axis, epsilon, c.getBool("center", true),
                            c.getBool("scale", true),
                            readInitializer(c, "beta_initializer", "zeros"),
                            readInitializer(c, "gamma_initializer", "ones"));
}

Layer buildUnitNormalization(const ObjectView &c) {
  Shape axes = readIntOrShape(c, "axis");
  if (axes.empty())
    axes = {-1};
  return UnitNormalization(axes);
}

} // namespace

void keras::addNormalizationLayers(std::vector<LayerClass> &classes) {
  classes.push_back(
      {"BatchNormalization",
       "normalization",
       [](const ObjectView &c, const CallOptions &) {
         return buildBatchNormalization(c);
       },
       {"beta_regularizer", "gamma_regularizer", "beta_constraint",
        "gamma_constraint"},
       {},
       "`axis` (the last), `momentum`, `epsilon`, `center`, `scale`, "
       "initializers, `synchronized`, beta and gamma regularizers"});
  classes.push_back(
      {"LayerNormalization",
       "normalization",
       [](const ObjectView &c, const CallOptions &) {
         return buildLayerNormalization(c);
       },
       {"beta_regularizer", "gamma_regularizer", "beta_constraint",
        "gamma_constraint"},
       {},
       "`axis` (the last), `epsilon`, `center`, `scale`, `rms_scaling`, "
       "initializers"});
  classes.push_back({"RMSNormalization",
                     "normalization",
                     [](const ObjectView &c, const CallOptions &) {
                       return buildRMSNormalization(c);
                     },
                     {},
                     {},
                     "`axis`: one axis or a list, `epsilon`"});
  classes.push_back({"UnitNormalization",
                     "normalization",
                     [](const ObjectView &c, const CallOptions &) {
                       return buildUnitNormalization(c);
                     },
                     {},
                     {},
                     "`axis`: one axis or a list"});
  classes.push_back({"GroupNormalization",
                     "normalization",
                     [](const ObjectView &c, const CallOptions &) {
                       return buildGroupNormalization(c);
                     },
                     {"beta_regularizer", "gamma_regularizer",
                      "beta_constraint", "gamma_constraint"},
                     {},
                     "`groups`, `axis` (the last), `epsilon`, `center`, "
                     "`scale`, initializers"});
}
