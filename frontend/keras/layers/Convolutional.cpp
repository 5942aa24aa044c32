//===- Convolutional.cpp - Keras's convolution layers --------------------===//
//
// Conv1D, Conv2D, DepthwiseConv2D, SeparableConv2D and Conv2DTranspose, the
// 1-D variants of the last three, Conv3D and Conv3DTranspose
// (keras/src/layers/convolutional/), channels_last.
//
//===----------------------------------------------------------------------===//

#include "frontend/keras/ConfigReaders.h"
#include "frontend/keras/LayerRegistry.h"

using namespace kcc;
using namespace kcc::keras;

namespace {

/// What every convolution class reads the same way: channels_last, no
/// constraint on `kernels` (Keras's names for its kernels) or the bias, no
/// regularizer unless the class is `regularizable` (withRegularizers reads
/// them then), and the window options.
struct ConvSpec {
  Size2 kernel = 1, strides = 1, dilation = 1;
  std::string padding, activation;
  bool useBias;
};

ConvSpec readConvSpec(const ObjectView &c,
                      std::initializer_list<llvm::StringRef> kernels,
                      bool regularizable = false, bool oneD = false) {
  std::vector<llvm::StringRef> nullKeys{"bias_constraint", "lora_rank"};
  if (!regularizable)
    nullKeys.insert(nullKeys.end(),
                    {"bias_regularizer", "activity_regularizer"});
  std::vector<std::string> owned;
  for (llvm::StringRef k : kernels) {
    owned.push_back(k.str() + "_constraint");
    if (!regularizable)
      owned.push_back(k.str() + "_regularizer");
  }
  for (const std::string &k : owned)
    nullKeys.push_back(k);
  for (llvm::StringRef k : nullKeys)
    checkNull(c, {k});
  checkChannelsLast(c);
  ConvSpec s;
  if (oneD) {
    // The 1-D variants: one step high.
    s.kernel = Size2(1, readSize1(c, "kernel_size", std::nullopt));
    s.strides = Size2(1, readSize1(c, "strides", 1));
    s.dilation = Size2(1, readSize1(c, "dilation_rate", 1));
  } else {
    s.kernel =
        checkedSize2(c, "kernel_size", c.getSize2("kernel_size", std::nullopt));
    s.strides = checkedSize2(c, "strides", c.getSize2("strides", Size2(1)));
    s.dilation =
        checkedSize2(c, "dilation_rate", c.getSize2("dilation_rate", Size2(1)));
  }
  s.padding = readPadding(c);
  s.activation = readActivation(c);
  s.useBias = c.getBool("use_bias", true);
  return s;
}

Layer buildConv2D(const ObjectView &c) {
  ConvSpec s = readConvSpec(c, {"kernel"}, /*regularizable=*/true);
  int64_t filters = readWidth(c, "filters");
  int64_t groups = c.getInt("groups", 1);
  if (groups < 1 || filters % groups != 0)
    c.failField("groups", "groups (" + std::to_string(groups) +
                              ") must be positive and divide filters (" +
                              std::to_string(filters) + ")");
  Layer conv = Conv2D(
      filters, s.kernel, s.strides, s.padding, s.dilation, groups, s.activation,
      s.useBias, readInitializer(c, "kernel_initializer", "glorot_uniform"),
      readInitializer(c, "bias_initializer", "zeros"));
  return withRegularizers(c, conv, {"kernel", "bias"});
}

int64_t readDepthMultiplier(const ObjectView &c) {
  int64_t m = c.getInt("depth_multiplier", 1);
  if (m < 1)
    c.failField("depth_multiplier",
                "depth_multiplier must be positive, got " + std::to_string(m));
  return m;
}

Layer buildDepthwiseConv2D(const ObjectView &c) {
  ConvSpec s = readConvSpec(c, {"depthwise"}, /*regularizable=*/true);
  return withRegularizers(
      c,
      DepthwiseConv2D(
          s.kernel, s.strides, s.padding, readDepthMultiplier(c), s.dilation,
          s.activation, s.useBias,
          readInitializer(c, "depthwise_initializer", "glorot_uniform"),
          readInitializer(c, "bias_initializer", "zeros")),
      {"depthwise", "bias"});
}

Layer buildSeparableConv2D(const ObjectView &c) {
  ConvSpec s =
      readConvSpec(c, {"depthwise", "pointwise"}, /*regularizable=*/true);
  int64_t filters = readWidth(c, "filters");
  return withRegularizers(
      c,
      SeparableConv2D(
          filters, s.kernel, s.strides, s.padding, s.dilation,
          readDepthMultiplier(c), s.activation, s.useBias,
          readInitializer(c, "depthwise_initializer", "glorot_uniform"),
          readInitializer(c, "pointwise_initializer", "glorot_uniform"),
          readInitializer(c, "bias_initializer", "zeros")),
      {"depthwise", "pointwise", "bias"});
}

Layer buildConv2DTranspose(const ObjectView &c) {
  ConvSpec s = readConvSpec(c, {"kernel"}, /*regularizable=*/true);
  checkNull(c, {"output_padding"});
  int64_t filters = readWidth(c, "filters");
  return withRegularizers(
      c,
      Conv2DTranspose(
          filters, s.kernel, s.strides, s.padding, s.dilation, s.activation,
          s.useBias, readInitializer(c, "kernel_initializer", "glorot_uniform"),
          readInitializer(c, "bias_initializer", "zeros")),
      {"kernel", "bias"});
}

Layer buildDepthwiseConv1D(const ObjectView &c) {
  ConvSpec s = readConvSpec(c, {"depthwise"}, /*regularizable=*/true,
                            /*oneD=*/true);
  return withRegularizers(
      c,
      DepthwiseConv1D(
          s.kernel.w, s.strides.w, s.padding, readDepthMultiplier(c),
          s.dilation.w, s.activation, s.useBias,
          readInitializer(c, "depthwise_initializer", "glorot_uniform"),
          readInitializer(c, "bias_initializer", "zeros")),
      {"depthwise", "bias"});
}

Layer buildSeparableConv1D(const ObjectView &c) {
  ConvSpec s = readConvSpec(c, {"depthwise", "pointwise"},
                            /*regularizable=*/true, /*oneD=*/true);
  int64_t filters = readWidth(c, "filters");
  return withRegularizers(
      c,
      SeparableConv1D(
          filters, s.kernel.w, s.strides.w, s.padding, s.dilation.w,
          readDepthMultiplier(c), s.activation, s.useBias,
          readInitializer(c, "depthwise_initializer", "glorot_uniform"),
          readInitializer(c, "pointwise_initializer", "glorot_uniform"),
          readInitializer(c, "bias_initializer", "zeros")),
      {"depthwise", "pointwise", "bias"});
}

Layer buildConv1DTranspose(const ObjectView &c) {
  ConvSpec s = readConvSpec(c, {"kernel"}, /*regularizable=*/true,
                            /*oneD=*/true);
  checkNull(c, {"output_padding"});
  int64_t filters = readWidth(c, "filters");
  return withRegularizers(
      c,
      Conv1DTranspose(
          filters, s.kernel.w, s.strides.w, s.padding, s.dilation.w,
          s.activation, s.useBias,
          readInitializer(c, "kernel_initializer", "glorot_uniform"),
          readInitializer(c, "bias_initializer", "zeros")),
      {"kernel", "bias"});
}

Layer buildConv1D(const ObjectView &c) {
  checkNull(c, {"kernel_constraint", "bias_constraint", "lora_rank"});
  checkChannelsLast(c);
  if (c.getInt("groups", 1) != 1)
    c.failField("groups", "grouped convolutions are not supported");
  std::string padding =
      llvm::StringRef(c.getString("padding", "valid")).lower();
  if (padding != "valid" && padding != "same" && padding != "causal")
    c.failField("padding", "padding '" + padding +
                               "' is not supported (valid, same or causal)");
  int64_t filters = readWidth(c, "filters");
  Layer conv = Conv1D(
      filters, readSize1(c, "kernel_size", std::nullopt),
      readSize1(c, "strides", 1), padding, readSize1(c, "dilation_rate", 1),
      readActivation(c), c.getBool("use_bias", true),
      readInitializer(c, "kernel_initializer", "glorot_uniform"),
      readInitializer(c, "bias_initializer", "zeros"));
  return withRegularizers(c, conv, {"kernel", "bias"});
}

Layer buildConv3D(const ObjectView &c) {
  checkNull(c, {"kernel_constraint", "bias_constraint", "lora_rank"});
  checkChannelsLast(c);
  if (c.getInt("groups", 1) != 1)
    c.failField("groups", "grouped 3-D convolutions are not supported");
  int64_t filters = readWidth(c, "filters");
  Layer conv =
      Conv3D(filters, readSize3(c, "kernel_size", std::nullopt),
             readSize3(c, "strides", 1), readPadding(c),
             readSize3(c, "dilation_rate", 1), readActivation(c),
             c.getBool("use_bias", true),
             readInitializer(c, "kernel_initializer", "glorot_uniform"),
             readInitializer(c, "bias_initializer", "zeros"));
  return withRegularizers(c, conv, {"kernel", "bias"});
}

Layer buildConv3DTranspose(const ObjectView &c) {
  checkNull(c, {"kernel_constraint", "bias_constraint", "output_padding"});
  checkChannelsLast(c);
  int64_t filters = readWidth(c, "filters");
  Layer conv = Conv3DTranspose(
      filters, readSize3(c, "kernel_size", std::nullopt),
      readSize3(c, "strides", 1), readPadding(c),
      readSize3(c, "dilation_rate", 1), readActivation(c),
      c.getBool("use_bias", true),
      readInitializer(c, "kernel_initializer", "glorot_uniform"),
      readInitializer(c, "bias_initializer", "zeros"));
  return withRegularizers(c, conv, {"kernel", "bias"});
}

} // namespace

void keras::addConvolutionalLayers(std::vector<LayerClass> &classes) {
  classes.push_back(
      {"Conv1D",
       "convolutional",
       [](const ObjectView &c, const CallOptions &) { return buildConv1D(c); },
       {"kernel_regularizer", "bias_regularizer", "kernel_constraint",
        "bias_constraint", "activity_regularizer"},
       {{"data_format", "channels_last"}, {"groups", 1}},
       "`filters`, `kernel_size`, `strides`, `padding` (valid, same, causal), "
       "`dilation_rate`, `activation`, `use_bias`, initializers, "
       "regularizers"});
  classes.push_back(
      {"Conv2D",
       "convolutional",
       [](const ObjectView &c, const CallOptions &) { return buildConv2D(c); },
       {"kernel_regularizer", "bias_regularizer", "kernel_constraint",
        "bias_constraint", "activity_regularizer"},
       {{"data_format", "channels_last"}},
       "`filters`, `kernel_size`, `strides`, `padding`, `dilation_rate`, "
       "`groups`, `activation`, `use_bias`, initializers, regularizers"});
  classes.push_back(
      {"DepthwiseConv2D",
       "convolutional",
       [](const ObjectView &c, const CallOptions &) {
         return buildDepthwiseConv2D(c);
       },
       {"depthwise_regularizer", "depthwise_constraint", "bias_regularizer",
        "activity_regularizer", "bias_constraint"},
       {{"data_format", "channels_last"}},
       "`kernel_size`, `strides`, `padding`, `depth_multiplier`, "
       "`dilation_rate`, `activation`, `use_bias`, initializers, "
       "regularizers"});
  classes.push_back(
      {"SeparableConv2D",
       "convolutional",
       [](const ObjectView &c, const CallOptions &) {
         return buildSeparableConv2D(c);
       },
       {"depthwise_regularizer", "depthwise_constraint",
        "pointwise_regularizer", "pointwise_constraint", "bias_regularizer",
        "activity_regularizer", "bias_constraint"},
       {{"data_format", "channels_last"}},
       "`filters`, `kernel_size`, `strides`, `padding`, `dilation_rate`, "
       "`depth_multiplier`, `activation`, `use_bias`, initializers, "
       "regularizers"});
  classes.push_back(
      {"Conv2DTranspose",
       "convolutional",
       [](const ObjectView &c, const CallOptions &) {
         return buildConv2DTranspose(c);
       },
       {"kernel_regularizer", "kernel_constraint", "bias_regularizer",
        "activity_regularizer", "bias_constraint"},
       {{"data_format", "channels_last"}},
       "`filters`, `kernel_size`, `strides`, `padding`, `dilation_rate`, "
       "`activation`, `use_bias`, initializers, regularizers; no "
       "`output_padding`"});
  classes.push_back(
      {"DepthwiseConv1D",
       "convolutional",
       [](const ObjectView &c, const CallOptions &) {
         return buildDepthwiseConv1D(c);
       },
       {"depthwise_regularizer", "depthwise_constraint", "bias_regularizer",
        "activity_regularizer", "bias_constraint"},
       {{"data_format", "channels_last"}},
       "as DepthwiseConv2D, over steps"});
  classes.push_back(
      {"SeparableConv1D",
       "convolutional",
       [](const ObjectView &c, const CallOptions &) {
         return buildSeparableConv1D(c);
       },
       {"depthwise_regularizer", "depthwise_constraint",
        "pointwise_regularizer", "pointwise_constraint", "bias_regularizer",
        "activity_regularizer", "bias_constraint"},
       {{"data_format", "channels_last"}},
       "as SeparableConv2D, over steps"});
  classes.push_back(
      {"Conv1DTranspose",
       "convolutional",
       [](const ObjectView &c, const CallOptions &) {
         return buildConv1DTranspose(c);
       },
       {"kernel_regularizer", "kernel_constraint", "bias_regularizer",
        "activity_regularizer", "bias_constraint"},
       {{"data_format", "channels_last"}},
       "as Conv2DTranspose, over steps"});
  classes.push_back(
      {"Conv3D",
       "convolutional",
       [](const ObjectView &c, const CallOptions &) { return buildConv3D(c); },
       {"kernel_regularizer", "bias_regularizer", "kernel_constraint",
        "bias_constraint", "activity_regularizer"},
       {{"data_format", "channels_last"}},
       "`filters`, `kernel_size`, `strides`, `padding`, `dilation_rate`, "
       "`activation`, `use_bias`, initializers, regularizers; `groups` 1"});
  classes.push_back(
      {"Conv3DTranspose",
       "convolutional",
       [](const ObjectView &c, const CallOptions &) {
         return buildConv3DTranspose(c);
       },
       {"kernel_regularizer", "kernel_constraint", "bias_regularizer",
        "activity_regularizer", "bias_constraint"},
       {{"data_format", "channels_last"}},
       "as Conv2DTranspose, over depth, height and width"});
}
