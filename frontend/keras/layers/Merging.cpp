//===- Merging.cpp - Keras's merging layers ------------------------------===//
//
// Add, Subtract, Multiply, Average, Maximum, Minimum and Concatenate
// (keras/src/layers/merging/).
//
//===----------------------------------------------------------------------===//

#include "frontend/keras/ConfigReaders.h"
#include "frontend/keras/LayerRegistry.h"

using namespace kcc;
using namespace kcc::keras;

void keras::addMergingLayers(std::vector<LayerClass> &classes) {
  classes.push_back({"Add", "merging",
                     [](const ObjectView &c, const CallOptions &) {
                       return Layer(Add());
                     },
                     {},
                     {},
                     "no arguments"});
  classes.push_back({"Subtract", "merging",
                     [](const ObjectView &c, const CallOptions &) {
                       return Layer(Subtract());
                     },
                     {},
                     {},
                     "no arguments"});
  classes.push_back({"Multiply", "merging",
                     [](const ObjectView &c, const CallOptions &) {
                       return Layer(Multiply());
                     },
                     {},
                     {},
                     "no arguments"});
  classes.push_back({"Average", "merging",
                     [](const ObjectView &c, const CallOptions &) {
                       return Layer(Average());
                     },
                     {},
                     {},
                     "no arguments"});
  classes.push_back({"Maximum", "merging",
                     [](const ObjectView &c, const CallOptions &) {
                       return Layer(Maximum());
                     },
                     {},
                     {},
                     "no arguments"});
  classes.push_back({"Minimum", "merging",
                     [](const ObjectView &c, const CallOptions &) {
                       return Layer(Minimum());
                     },
                     {},
                     {},
                     "no arguments"});
  classes.push_back({"Concatenate", "merging",
                     [](const ObjectView &c, const CallOptions &) {
                       return Layer(Concatenate(c.getInt("axis", -1)));
                     },
                     {},
                     {},
                     "`axis`"});
}
