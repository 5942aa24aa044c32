//===- Reshaping.cpp - Keras's reshaping layers --------------------------===//
//
// Flatten, Reshape, zero padding, cropping and upsampling in 1-D, 2-D and
// 3-D (keras/src/layers/reshaping/), channels_last.
//
//===----------------------------------------------------------------------===//

#include "frontend/keras/ConfigReaders.h"
#include "frontend/keras/LayerRegistry.h"

#include <algorithm>

using namespace kcc;
using namespace kcc::keras;
namespace json = llvm::json;

namespace {

/// Keras's padding / cropping argument: an int, [h, w] or [[top, bottom],
/// [left, right]], each entry in [0, 2^31-1].
Sides2 readSides(const ObjectView &c, llvm::StringRef key, int64_t dflt) {
  const json::Value *v = c.get(key);
  if (!v)
    return Sides2(dflt);
  constexpr int64_t kMax = (int64_t(1) << 31) - 1;
  auto bad = [&]() -> int64_t {
    c.failField(key, "'" + key +
                         "' must be an int, [h, w] or [[top, bottom], [left, "
                         "right]] of values in [0, 2^31-1]");
  };
  auto entry = [&](const json::Value &e) -> int64_t {
    std::optional<int64_t> i = e.getAsInteger();
    return i && *i >= 0 && *i <= kMax ? *i : bad();
  };
  if (v->getAsInteger())
    return Sides2(entry(*v));
  const json::Array *a = v->getAsArray();
  if (!a || a->size() != 2)
    bad();
  if ((*a)[0].getAsInteger() && (*a)[1].getAsInteger())
    return Sides2(entry((*a)[0]), entry((*a)[1]));
  const json::Array *rows = (*a)[0].getAsArray();
  const json::Array *cols = (*a)[1].getAsArray();
  if (!rows || !cols || rows->size() != 2 || cols->size() != 2)
    bad();
  return Sides2({entry((*rows)[0]), entry((*rows)[1])},
                {entry((*cols)[0]), entry((*cols)[1])});
}

/// Keras's 3-D padding / cropping argument: an int, [d, h, w] or
/// [[front, back], [top, bottom], [left, right]], each in [0, 2^31-1].
Sides3 readSides3(const ObjectView &c, llvm::StringRef key, int64_t dflt) {
  const json::Value *v = c.get(key);
  if (!v)
    return Sides3(dflt);
  constexpr int64_t kMax = (int64_t(1) << 31) - 1;
  auto bad = [&]() -> int64_t {
    c.failField(key, "'" + key +
                         "' must be an int, [d, h, w] or [[front, back], "
                         "[top, bottom], [left, right]] of values in [0, "
                         "2^31-1]");
  };
  auto entry = [&](const json::Value &e) -> int64_t {
    std::optional<int64_t> i = e.getAsInteger();
    return i && *i >= 0 && *i <= kMax ? *i : bad();
  };
  if (v->getAsInteger())
    return Sides3(entry(*v));
  const json::Array *a = v->getAsArray();
  if (!a || a->size() != 3)
    bad();
  if (llvm::all_of(*a, [](const json::Value &e) { return e.getAsInteger(); }))
    return Sides3(entry((*a)[0]), entry((*a)[1]), entry((*a)[2]));
  std::vector<Sides3::Pair> pairs;
  for (const json::Value &e : *a) {
    const json::Array *p = e.getAsArray();
    if (!p || p->size() != 2)
      bad();
    pairs.push_back({entry((*p)[0]), entry((*p)[1])});
  }
  return Sides3(pairs[0], pairs[1], pairs[2]);
}

Layer buildUpSampling2D(const ObjectView &c) {
  checkChannelsLast(c);
  std::string interpolation = c.getString("interpolation", "nearest");
  if (interpolation != "nearest")
    c.failField("interpolation", "interpolation '" + interpolation +
                                     "' is not supported (only nearest)");
  return UpSampling2D(checkedSize2(c, "size", c.getSize2("size", Size2(2))));
}

/// An int (both sides) or [before, after].
Layer buildZeroPadding1D(const ObjectView &c) {
  const json::Value *v = c.get("padding");
  if (!v)
    return ZeroPadding1D(1);
  constexpr int64_t kMax = (int64_t(1) << 31) - 1;
  auto check = [&](int64_t n) {
    if (n < 0 || n > kMax)
      c.failField("padding", "'padding' entries must be in [0, 2^31-1]");
    return n;
  };
  if (std::optional<int64_t> n = v->getAsInteger())
    return ZeroPadding1D(check(*n));
  Shape p = c.getShape("padding");
  if (p.size() != 2)
    c.failField("padding", "'padding' must be an int or [before, after]");
  return ZeroPadding1D(check(p[0]), check(p[1]));
}

Layer buildPermute(const ObjectView &c) {
  Shape dims = c.getShape("dims");
  Shape sorted = dims;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i)
    if (sorted[i] != static_cast<int64_t>(i) + 1)
      c.failField("dims", "'dims' " + shapeToString(dims) +
                              " must be a permutation of 1.." +
                              std::to_string(dims.size()));
  return Permute(dims);
}

Layer buildRepeatVector(const ObjectView &c) {
  int64_t n = c.getInt("n");
  if (n <= 0 || n > (int64_t(1) << 31))
    c.failField("n", "'n' must be in [1, 2^31], got " + std::to_string(n));
  return RepeatVector(n);
}

/// An int (both ends) or [before, after], each in [0, 2^31-1].
Layer buildCropping1D(const ObjectView &c) {
  const json::Value *v = c.get("cropping");
  if (!v)
    return Cropping1D(1);
  constexpr int64_t kMax = (int64_t(1) << 31) - 1;
  auto check = [&](int64_t n) {
    if (n < 0 || n > kMax)
      c.failField("cropping", "'cropping' entries must be in [0, 2^31-1]");
    return n;
  };
  if (std::optional<int64_t> n = v->getAsInteger())
    return Cropping1D(check(*n));
  Shape p = c.getShape("cropping");
  if (p.size() != 2)
    c.failField("cropping", "'cropping' must be an int or [before, after]");
  return Cropping1D(check(p[0]), check(p[1]));
}

} // namespace

void keras::addReshapingLayers(std::vector<LayerClass> &classes) {
  classes.push_back({"Flatten",
                     "reshaping",
                     [](const ObjectView &c, const CallOptions &) {
                       return (checkChannelsLast(c), Layer(Flatten()));
                     },
                     {},
                     {{"data_format", "channels_last"}},
                     "channels_last only"});
  classes.push_back({"Reshape",
                     "reshaping",
                     [](const ObjectView &c, const CallOptions &) {
                       return Layer(Reshape(c.getShape("target_shape")));
                     },
                     {},
                     {},
                     "`target_shape`"});
  classes.push_back({"ZeroPadding1D",
                     "reshaping",
                     [](const ObjectView &c, const CallOptions &) {
                       return buildZeroPadding1D(c);
                     },
                     {},
                     {},
                     "`padding`: an int or [before, after]"});
  classes.push_back(
      {"ZeroPadding2D",
       "reshaping",
       [](const ObjectView &c, const CallOptions &) {
         return (checkChannelsLast(c),
                 Layer(ZeroPadding2D(readSides(c, "padding", 1))));
       },
       {},
       {{"data_format", "channels_last"}},
       "`padding`: an int, [h, w] or [[top, bottom], [left, right]]"});
  classes.push_back(
      {"Cropping2D",
       "reshaping",
       [](const ObjectView &c, const CallOptions &) {
         return (checkChannelsLast(c),
                 Layer(Cropping2D(readSides(c, "cropping", 0))));
       },
       {},
       {{"data_format", "channels_last"}},
       "`cropping`: an int, [h, w] or [[top, bottom], [left, right]]"});
  classes.push_back({"UpSampling1D",
                     "reshaping",
                     [](const ObjectView &c, const CallOptions &) {
                       return Layer(UpSampling1D(readSize1(c, "size", 2)));
                     },
                     {},
                     {},
                     "`size`"});
  classes.push_back({"UpSampling2D",
                     "reshaping",
                     [](const ObjectView &c, const CallOptions &) {
                       return buildUpSampling2D(c);
                     },
                     {},
                     {{"data_format", "channels_last"}},
                     "`size`, `interpolation` (nearest)"});
  classes.push_back(
      {"Permute",
       "reshaping",
       [](const ObjectView &c, const CallOptions &) { return buildPermute(c); },
       {},
       {},
       "`dims`: a permutation of the non-batch axes, from 1"});
  classes.push_back({"RepeatVector",
                     "reshaping",
                     [](const ObjectView &c, const CallOptions &) {
                       return buildRepeatVector(c);
                     },
                     {},
                     {},
                     "`n`"});
  classes.push_back({"Cropping1D",
                     "reshaping",
                     [](const ObjectView &c, const CallOptions &) {
                       return buildCropping1D(c);
                     },
                     {},
                     {},
                     "`cropping`: an int or [before, after]"});
  classes.push_back(
      {"ZeroPadding3D",
       "reshaping",
       [](const ObjectView &c, const CallOptions &) {
         return (checkChannelsLast(c),
                 Layer(ZeroPadding3D(readSides3(c, "padding", 1))));
       },
       {},
       {{"data_format", "channels_last"}},
       "`padding`: an int, [d, h, w] or [[front, back], [top, bottom], "
       "[left, right]]"});
  classes.push_back(
      {"Cropping3D",
       "reshaping",
       [](const ObjectView &c, const CallOptions &) {
         return (checkChannelsLast(c),
                 Layer(Cropping3D(readSides3(c, "cropping", 0))));
       },
       {},
       {{"data_format", "channels_last"}},
       "`cropping`: an int, [d, h, w] or [[front, back], [top, bottom], "
       "[left, right]]"});
  classes.push_back({"UpSampling3D",
                     "reshaping",
                     [](const ObjectView &c, const CallOptions &) {
                       return (
                           checkChannelsLast(c),
                           Layer(UpSampling3D(readSize3(c, "size", Size3(2)))));
                     },
                     {},
                     {{"data_format", "channels_last"}},
                     "`size`"});
}
