//===- Applications.cpp - Keras's own classes in keras.applications ------===//
//
// The layers keras.applications networks define for themselves and save
// under their own registered names: ConvNeXt's LayerScale and
// StochasticDepth, InceptionResNetV2's CustomScaleLayer; saved, as Keras
// saves them, under their modules and class names.
//
//===----------------------------------------------------------------------===//

#include "frontend/keras/ConfigReaders.h"
#include "frontend/keras/LayerRegistry.h"

#include <cmath>

using namespace kcc;
using namespace kcc::keras;

void keras::addApplicationLayers(std::vector<LayerClass> &classes) {
  classes.push_back(
      {"LayerScale",
       "applications",
       [](const ObjectView &c, const CallOptions &) {
         double init = c.getNumber("init_values");
         if (!std::isfinite(init))
           c.failField("init_values", "'init_values' must be finite");
         return Layer(LayerScale(init, readWidth(c, "projection_dim")));
       },
       {},
       {},
       "ConvNeXt's: `init_values`, `projection_dim`",
       "keras.src.applications.convnext",
       "LayerScale"});
  classes.push_back({"StochasticDepth",
                     "applications",
                     [](const ObjectView &c, const CallOptions &) {
                       double rate = c.getNumber("drop_path_rate");
                       if (!(rate >= 0 && rate < 1))
                         c.failField(
                             "drop_path_rate",
                             "'drop_path_rate' must be in [0, 1), got " +
                                 std::to_string(rate));
                       return Layer(StochasticDepth(rate));
                     },
                     {},
                     {},
                     "ConvNeXt's: `drop_path_rate`, per example in training",
                     "keras.src.applications.convnext",
                     "StochasticDepth"});
  classes.push_back({"CustomScaleLayer",
                     "applications",
                     [](const ObjectView &c, const CallOptions &) {
                       double scale = c.getNumber("scale");
                       if (!std::isfinite(scale))
                         c.failField("scale", "'scale' must be finite");
                       return Layer(CustomScaleLayer(scale));
                     },
                     {},
                     {},
                     "InceptionResNetV2's: `scale`",
                     "keras.src.applications.inception_resnet_v2",
                     "CustomScaleLayer"});
}
