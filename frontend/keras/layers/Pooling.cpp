//===- Pooling.cpp - Keras's pooling layers ------------------------------===//
//
// Max and average pooling in 1-D, 2-D and 3-D, their global forms
// (channels_last) and their adaptive forms (keras/src/layers/pooling/).
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

/// AdaptiveAveragePooling1D/2D/3D and AdaptiveMaxPooling1D/2D/3D: an
/// output_size of `rank` sizes (or one for every axis), either data_format.
Layer buildAdaptivePool(const ObjectView &c, bool isMax, size_t rank) {
  if (!c.has("output_size"))
    c.failField("output_size", "an adaptive pooling layer needs "
                               "'output_size'");
  Shape sizes = readIntOrShape(c, "output_size");
  if (sizes.size() == 1)
    sizes.assign(rank, sizes[0]);
  if (sizes.size() != rank)
    c.failField("output_size",
                "'output_size' must be one size or " + std::to_string(rank));
  for (int64_t n : sizes)
    if (n <= 0 || n > 4096)
      c.failField("output_size", "'output_size' " + std::to_string(n) +
                                     " must be in [1, 4096]");
  std::string format = "channels_last";
  const llvm::json::Value *f = c.get("data_format");
  if (f && f->kind() != llvm::json::Value::Null)
    format = c.getString("data_format");
  if (format != "channels_last" && format != "channels_first")
    c.failField("data_format", "'data_format' must be channels_last or "
                               "channels_first, got '" +
                                   format + "'");
  return AdaptivePooling(isMax, sizes, format);
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
  for (size_t rank : {1, 2, 3})
    for (bool isMax : {false, true})
      classes.push_back(
          {std::string("Adaptive") + (isMax ? "Max" : "Average") + "Pooling" +
               std::to_string(rank) + "D",
           "pooling",
           [isMax, rank](const ObjectView &c, const CallOptions &) {
             return buildAdaptivePool(c, isMax, rank);
           },
           {},
           {},
           "`output_size` (one size or one per axis; windows "
           "[floor(i L / n), ceil((i + 1) L / n))), `data_format`"});
}
