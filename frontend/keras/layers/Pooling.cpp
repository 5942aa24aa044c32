//===- Pooling.cpp - Keras's pooling layers ------------------------------===//
//
// Max and average pooling in 1-D, 2-D and 3-D, and their global forms
// (keras/src/layers/pooling/), channels_last.
//
//===----------------------------------------------------------------------===//

#include "frontend/keras/ConfigReaders.h"
#include "frontend/keras/LayerRegistry.h"

using namespace kcc;
using namespace kcc::keras;

namespace {

Layer buildPool(const ObjectView &c, bool isMax) {
  checkChannelsLast(c);
  Size2 pool = checkedSize2(c, "pool_size", c.getSize2("pool_size", Size2(2)));
  std::optional<Size2> strides = c.getOptSize2("strides");
  if (strides)
    checkedSize2(c, "strides", *strides);
  if (isMax)
    return MaxPooling2D(pool, strides, readPadding(c));
  return AveragePooling2D(pool, strides, readPadding(c));
}

Layer buildGlobalPool(const ObjectView &c, bool isMax) {
  checkChannelsLast(c);
  bool keepdims = c.getBool("keepdims", false);
  if (isMax)
    return GlobalMaxPooling2D(keepdims);
  return GlobalAveragePooling2D(keepdims);
}

Layer buildPool1D(const ObjectView &c, bool isMax) {
  checkChannelsLast(c);
  int64_t pool = readSize1(c, "pool_size", 2);
  std::optional<int64_t> strides;
  if (c.has("strides"))
    strides = readSize1(c, "strides", std::nullopt);
  if (isMax)
    return MaxPooling1D(pool, strides, readPadding(c));
  return AveragePooling1D(pool, strides, readPadding(c));
}

Layer buildGlobalPool1D(const ObjectView &c, bool isMax) {
  checkChannelsLast(c);
  bool keepdims = c.getBool("keepdims", false);
  if (isMax)
    return GlobalMaxPooling1D(keepdims);
  return GlobalAveragePooling1D(keepdims);
}

Layer buildPool3D(const ObjectView &c, bool isMax) {
  checkChannelsLast(c);
  Size3 pool = readSize3(c, "pool_size", Size3(2));
  std::optional<Size3> strides;
  if (c.has("strides"))
    strides = readSize3(c, "strides", std::nullopt);
  if (isMax)
    return MaxPooling3D(pool, strides, readPadding(c));
  return AveragePooling3D(pool, strides, readPadding(c));
}

Layer buildGlobalPool3D(const ObjectView &c, bool isMax) {
  checkChannelsLast(c);
  bool keepdims = c.getBool("keepdims", false);
  if (isMax)
    return GlobalMaxPooling3D(keepdims);
  return GlobalAveragePooling3D(keepdims);
}

} // namespace

void keras::addPoolingLayers(std::vector<LayerClass> &classes) {
  classes.push_back({"MaxPooling1D",
                     "pooling",
                     [](const ObjectView &c, const CallOptions &) {
                       return buildPool1D(c, /*isMax=*/true);
                     },
                     {},
                     {{"data_format", "channels_last"}},
                     "`pool_size`, `strides`, `padding`"});
  classes.push_back({"AveragePooling1D",
                     "pooling",
                     [](const ObjectView &c, const CallOptions &) {
                       return buildPool1D(c, /*isMax=*/false);
                     },
                     {},
                     {{"data_format", "channels_last"}},
                     "`pool_size`, `strides`, `padding`"});
  classes.push_back({"MaxPooling2D",
                     "pooling",
                     [](const ObjectView &c, const CallOptions &) {
                       return buildPool(c, /*isMax=*/true);
                     },
                     {},
                     {{"data_format", "channels_last"}},
                     "`pool_size`, `strides`, `padding`"});
  classes.push_back({"AveragePooling2D",
                     "pooling",
                     [](const ObjectView &c, const CallOptions &) {
                       return buildPool(c, /*isMax=*/false);
                     },
                     {},
                     {{"data_format", "channels_last"}},
                     "`pool_size`, `strides`, `padding`"});
  classes.push_back({"GlobalAveragePooling1D",
                     "pooling",
                     [](const ObjectView &c, const CallOptions &) {
                       return buildGlobalPool1D(c, /*isMax=*/false);
                     },
                     {},
                     {{"data_format", "channels_last"}},
                     "`keepdims`"});
  classes.push_back({"GlobalMaxPooling1D",
                     "pooling",
                     [](const ObjectView &c, const CallOptions &) {
                       return buildGlobalPool1D(c, /*isMax=*/true);
                     },
                     {},
                     {{"data_format", "channels_last"}},
                     "`keepdims`"});
  classes.push_back({"GlobalAveragePooling2D",
                     "pooling",
                     [](const ObjectView &c, const CallOptions &) {
                       return buildGlobalPool(c, /*isMax=*/false);
                     },
                     {},
                     {{"data_format", "channels_last"}},
                     "`keepdims`"});
  classes.push_back({"GlobalMaxPooling2D",
                     "pooling",
                     [](const ObjectView &c, const CallOptions &) {
                       return buildGlobalPool(c, /*isMax=*/true);
                     },
                     {},
                     {{"data_format", "channels_last"}},
                     "`keepdims`"});
  classes.push_back({"MaxPooling3D",
                     "pooling",
                     [](const ObjectView &c, const CallOptions &) {
                       return buildPool3D(c, /*isMax=*/true);
                     },
                     {},
                     {{"data_format", "channels_last"}},
                     "`pool_size`, `strides`, `padding`"});
  classes.push_back({"AveragePooling3D",
                     "pooling",
                     [](const ObjectView &c, const CallOptions &) {
                       return buildPool3D(c, /*isMax=*/false);
                     },
                     {},
                     {{"data_format", "channels_last"}},
                     "`pool_size`, `strides`, `padding`"});
  classes.push_back({"GlobalAveragePooling3D",
                     "pooling",
                     [](const ObjectView &c, const CallOptions &) {
                       return buildGlobalPool3D(c, /*isMax=*/false);
                     },
                     {},
                     {{"data_format", "channels_last"}},
                     "`keepdims`"});
  classes.push_back({"GlobalMaxPooling3D",
                     "pooling",
                     [](const ObjectView &c, const CallOptions &) {
                       return buildGlobalPool3D(c, /*isMax=*/true);
                     },
                     {},
                     {{"data_format", "channels_last"}},
                     "`keepdims`"});
}
