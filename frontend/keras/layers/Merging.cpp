//===- Merging.cpp - Keras's merging layers ------------------------------===//
//
// Add, Subtract, Multiply, Average, Maximum, Minimum and Concatenate
// (keras/src/layers/merging/), and the keras.ops nodes Keras 3 saves for
// arithmetic with a number on symbolic tensors (x + 3.0).
//
//===----------------------------------------------------------------------===//

#include "frontend/keras/ConfigReaders.h"
#include "frontend/keras/LayerRegistry.h"

using namespace kcc;
using namespace kcc::keras;
namespace json = llvm::json;

namespace {

/// `axes`: one axis for both inputs or [axis1, axis2]; `normalize`.
Layer buildDot(const ObjectView &c) {
  bool normalize = c.getBool("normalize", false);
  const json::Value *v = c.get("axes");
  if (!v)
    c.failField("axes", "missing required field 'axes'");
  if (std::optional<int64_t> one = v->getAsInteger())
    return Dot(*one, normalize);
  Shape axes = c.getShape("axes");
  if (axes.size() != 2)
    c.failField("axes", "'axes' must be an int or a list of two ints");
  return Dot(axes[0], axes[1], normalize);
}

/// A merge class's keras.ops node with a number operand (x + 3.0), or the
/// merge layer itself.
template <typename Merge>
Layer orScalar(const CallOptions &call, const char *op, Merge merge) {
  if (call.scalarOperand)
    return ScalarArithmetic(op, *call.scalarOperand, call.scalarFirst);
  return merge();
}

} // namespace

void keras::addMergingLayers(std::vector<LayerClass> &classes) {
  classes.push_back({"Add",
                     "merging",
                     [](const ObjectView &c, const CallOptions &call) {
                       return orScalar(call, "Add",
                                       [] { return Layer(Add()); });
                     },
                     {},
                     {},
                     "no arguments; a keras.ops node's number operand"});
  classes.push_back({"Subtract",
                     "merging",
                     [](const ObjectView &c, const CallOptions &call) {
                       return orScalar(call, "Subtract",
                                       [] { return Layer(Subtract()); });
                     },
                     {},
                     {},
                     "no arguments; a keras.ops node's number operand"});
  classes.push_back({"Multiply",
                     "merging",
                     [](const ObjectView &c, const CallOptions &call) {
                       return orScalar(call, "Multiply",
                                       [] { return Layer(Multiply()); });
                     },
                     {},
                     {},
                     "no arguments; a keras.ops node's number operand"});
  for (const char *divide : {"Divide", "TrueDivide"})
    classes.push_back(
        {divide,
         "merging",
         [](const ObjectView &c, const CallOptions &call) {
           if (!call.scalarOperand)
             c.fail("a keras.ops division is supported with a number "
                    "operand only");
           return Layer(ScalarArithmetic("Divide", *call.scalarOperand,
                                         call.scalarFirst));
         },
         {},
         {},
         "a keras.ops node dividing by (or into) a number"});
  classes.push_back({"Average",
                     "merging",
                     [](const ObjectView &c, const CallOptions &) {
                       return Layer(Average());
                     },
                     {},
                     {},
                     "no arguments"});
  classes.push_back({"Maximum",
                     "merging",
                     [](const ObjectView &c, const CallOptions &) {
                       return Layer(Maximum());
                     },
                     {},
                     {},
                     "no arguments"});
  classes.push_back({"Minimum",
                     "merging",
                     [](const ObjectView &c, const CallOptions &) {
                       return Layer(Minimum());
                     },
                     {},
                     {},
                     "no arguments"});
  classes.push_back({"Concatenate",
                     "merging",
                     [](const ObjectView &c, const CallOptions &) {
                       return Layer(Concatenate(c.getInt("axis", -1)));
                     },
                     {},
                     {},
                     "`axis`"});
  classes.push_back(
      {"Dot",
       "merging",
       [](const ObjectView &c, const CallOptions &) { return buildDot(c); },
       {},
       {},
       "`axes` (one for both inputs, or a pair), `normalize`; "
       "inputs of rank 2 or 3"});
}
