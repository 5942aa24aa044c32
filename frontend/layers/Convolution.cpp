//===- Convolution.cpp - Conv2D and its variants, 2-D pooling -------------===//
//
// Every convolution layer is kc.conv2d (a `groups` attribute covers grouped
// and depthwise convolutions) or, for Conv2DTranspose, its input gradient
// kc.conv2d_backprop_input, so all of them share one set of kernels,
// gradient rules and oneDNN primitives; Conv3D's ops::conv3d folds the
// depth of its window into the channels of one kc.conv2d, and
// Conv3DTranspose's ops::conv3dTranspose into one
// kc.conv2d_backprop_input.
//
//===----------------------------------------------------------------------===//

#include "frontend/Layers.h"
#include "frontend/Ops.h"
#include "runtime/MemoryBudget.h"

using namespace kcc;

namespace {

ops::Padding parsePadding(const std::string &layer, const std::string &p) {
  if (p == "valid")
    return ops::Padding::Valid;
  if (p == "same")
    return ops::Padding::Same;
  throw Error(layer + ": padding must be \"valid\" or \"same\", got \"" + p +
              "\"");
}

const char *paddingName(ops::Padding p) {
  return p == ops::Padding::Same ? "same" : "valid";
}

void checkPositive(const std::string &layer, const std::string &what, Size2 s) {
  if (s.h <= 0 || s.w <= 0)
    throw Error(layer + ": " + what + " must be positive, got " +
                shapeToString({s.h, s.w}));
}

/// The options all convolution layers share, as Keras names them.
struct ConvOptions {
  Size2 kernel, strides, dilation;
  ops::Padding padding;
  std::string activation;
  bool useBias;
  /// 1: Keras's 1-D variant of the class: [batch, steps, channels] inputs
  /// and kernels without the height axis, run as the 2-D layer on
  /// [batch, 1, steps, channels] (kernel, strides and dilation 1 high).
  /// 3: the 3-D class: NDHWC inputs, DHWIO kernels (ops::conv3d), the
  /// depth of the window below.
  int spatialRank = 2;
  int64_t kernelDepth = 1, strideDepth = 1, dilationDepth = 1;
};

/// Validates the shared options; `layer` names the class in errors.
ConvOptions convOptions(const std::string &layer, Size2 kernel, Size2 strides,
                        const std::string &padding, Size2 dilation,
                        std::string activation, bool useBias) {
  checkPositive(layer, "kernel_size", kernel);
  checkPositive(layer, "strides", strides);
  checkPositive(layer, "dilation_rate", dilation);
  if (!ops::isActivation(activation))
    throw Error(layer + ": unknown activation '" + activation + "'");
  return {kernel,
          strides,
          dilation,
          parsePadding(layer, padding),
          std::move(activation),
          useBias};
}

void checkWidth(const std::string &layer, const std::string &what, int64_t n) {
  if (n <= 0)
    throw Error(layer + ": " + what + " must be positive, got " +
                std::to_string(n));
  // The bias, and each pixel of the output, hold n floats.
  if (TensorSize pixel = tensorSize({n}, sizeof(float), "f32"); !pixel)
    throw Error(layer + ": " + what + " " + std::to_string(n) +
                " is too large: a pixel of the output, " + pixel.error);
}

llvm::json::Array pair(Size2 s) { return llvm::json::Array{s.h, s.w}; }

/// Conv2D, DepthwiseConv2D, SeparableConv2D and Conv2DTranspose (and the
/// 1-D variants of the last three): one NHWC input, the shared options, a
/// bias and an activation after the class-specific convolution
/// (convolve()).
class ConvLayerImpl : public LayerImpl {
public:
  ConvLayerImpl(std::string className, ConvOptions o, std::string biasInit)
      : LayerImpl(className), o_(std::move(o)), biasInit_(std::move(biasInit)) {
  }

  llvm::json::Object kerasConfig() const override {
    auto size = [&](Size2 s, int64_t depth) {
      if (o_.spatialRank == 3)
        return llvm::json::Array{depth, s.h, s.w};
      return o_.spatialRank == 1 ? llvm::json::Array{s.w} : pair(s);
    };
    llvm::json::Object c{{"kernel_size", size(o_.kernel, o_.kernelDepth)},
                         {"strides", size(o_.strides, o_.strideDepth)},
                         {"padding", paddingName(o_.padding)},
                         {"dilation_rate", size(o_.dilation, o_.dilationDepth)},
                         {"activation", o_.activation},
                         {"use_bias", o_.useBias},
                         {"bias_initializer", biasInit_}};
    for (auto &kv : ownConfig())
      c[kv.first] = std::move(kv.second);
    return c;
  }

protected:
  /// The class's own config keys (filters, groups, initializers, ...).
  virtual llvm::json::Object ownConfig() const = 0;
  /// Adds the kernels for `channels` input channels.
  virtual void addKernels(int64_t channels) = 0;
  /// The output channels (the bias's length).
  virtual int64_t outChannels() const = 0;
  virtual Tensor convolve(const Tensor &x) = 0;

  void build(const std::vector<Shape> &shapes) override {
    size_t rank = o_.spatialRank + 2;
    if (shapes.size() != 1 || shapes[0].size() != rank)
      fail(std::string(rank == 4   ? "expects one NHWC input of rank 4"
                       : rank == 5 ? "expects one NDHWC input of rank 5"
                                   : "expects one input of rank 3 ([batch, "
                                     "steps, channels])") +
           ", got " +
           (shapes.empty() ? std::string("none") : shapeString(shapes[0])));
    channels_ = shapes[0].back();
    addKernels(channels_);
    if (o_.useBias)
      addWeight("bias", {outChannels()}, biasInit_);
  }

  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    expectInputs(inputs, 1);
    const Tensor &x = inputs[0];
    if (x.rank() != o_.spatialRank + 2 || x.dim(x.rank() - 1) != channels_)
      fail("was built for inputs with " + std::to_string(channels_) +
           " channels but is called on " + x.shapeString());
    Tensor y =
        o_.spatialRank == 1
            ? convolve(ops::reshape(x, {x.dim(0), 1, x.dim(1), x.dim(2)}))
            : convolve(x);
    if (o_.spatialRank == 1)
      y = ops::reshape(y, {y.dim(0), y.dim(2), y.dim(3)});
    if (o_.useBias)
      y = ops::add(y, weight(weights().size() - 1));
    return {ops::activation(y, o_.activation)};
  }

  /// Declares a kernel of the 2-D `shape` (in Keras's layout); the 1-D
  /// variant's has no height axis.
  size_t addKernel(std::string name, Shape shape, std::string init) {
    if (o_.spatialRank == 1)
      shape.erase(shape.begin());
    return addWeight(std::move(name), std::move(shape), std::move(init));
  }
  /// Kernel `i` in its 2-D shape.
  Tensor kernel(size_t i) {
    Tensor k = weight(i);
    if (o_.spatialRank != 1)
      return k;
    Shape s = k.shape();
    s.insert(s.begin(), 1);
    return ops::reshape(k, s);
  }

  std::vector<int64_t> strides() const { return {o_.strides.h, o_.strides.w}; }
  std::vector<int64_t> dilations() const {
    return {o_.dilation.h, o_.dilation.w};
  }
  std::vector<int64_t> strides3() const {
    return {o_.strideDepth, o_.strides.h, o_.strides.w};
  }
  std::vector<int64_t> dilations3() const {
    return {o_.dilationDepth, o_.dilation.h, o_.dilation.w};
  }

  ConvOptions o_;
  std::string biasInit_;
  int64_t channels_ = 0;
};

class Conv2DImpl : public ConvLayerImpl {
public:
  Conv2DImpl(std::string className, int64_t filters, int64_t groups,
             ConvOptions o, std::string kernelInit, std::string biasInit)
      : ConvLayerImpl(std::move(className), std::move(o), std::move(biasInit)),
        filters_(filters), groups_(groups), kernelInit_(std::move(kernelInit)) {
    checkWidth("Conv2D", "filters", filters);
    if (groups <= 0 || filters % groups != 0)
      throw Error("Conv2D: groups (" + std::to_string(groups) +
                  ") must be positive and divide filters (" +
                  std::to_string(filters) + ")");
  }
  std::vector<std::string> regularizableWeights() const override {
    return {"kernel", "bias"};
  }

protected:
  llvm::json::Object ownConfig() const override {
    return llvm::json::Object{{"filters", filters_},
                              {"groups", groups_},
                              {"kernel_initializer", kernelInit_}};
  }
  void addKernels(int64_t channels) override {
    if (channels % groups_ != 0)
      fail("input channels (" + std::to_string(channels) +
           ") must be a multiple of groups (" + std::to_string(groups_) + ")");
    Shape kernel{o_.kernel.h, o_.kernel.w, channels / groups_, filters_};
    if (o_.spatialRank == 3)
      kernel.insert(kernel.begin(), o_.kernelDepth);
    addWeight("kernel", std::move(kernel), kernelInit_);
  }
  int64_t outChannels() const override { return filters_; }
  Tensor convolve(const Tensor &x) override {
    if (o_.spatialRank == 3)
      return ops::conv3d(x, weight(0), strides3(), o_.padding, dilations3());
    return ops::conv2d(x, weight(0), strides(), o_.padding, dilations(),
                       groups_);
  }

private:
  int64_t filters_, groups_;
  std::string kernelInit_;
};

/// The depthwise step: kernel [kh, kw, C, M] as Keras stores it is, read in
/// row-major order, the HWIO filter [kh, kw, 1, C*M] of a convolution with
/// C groups (output channel c*M + m, as Keras orders them).
Tensor depthwise(const Tensor &x, const Tensor &kernel,
                 const std::vector<int64_t> &strides, ops::Padding padding,
                 const std::vector<int64_t> &dilations) {
  const Shape &k = kernel.shape();
  Tensor filter = ops::reshape(kernel, {k[0], k[1], 1, k[2] * k[3]});
  return ops::conv2d(x, filter, strides, padding, dilations, k[2]);
}

class DepthwiseConv2DImpl : public ConvLayerImpl {
public:
  DepthwiseConv2DImpl(std::string className, int64_t multiplier, ConvOptions o,
                      std::string init, std::string biasInit)
      : ConvLayerImpl(std::move(className), std::move(o), std::move(biasInit)),
        multiplier_(multiplier), init_(std::move(init)) {
    checkWidth("DepthwiseConv2D", "depth_multiplier", multiplier);
  }
  std::vector<std::string> regularizableWeights() const override {
    return {"depthwise", "bias"};
  }
  std::string regularizedWeight(const std::string &name) const override {
    return name == "depthwise" ? "kernel" : name;
  }

protected:
  llvm::json::Object ownConfig() const override {
    return llvm::json::Object{{"depth_multiplier", multiplier_},
                              {"depthwise_initializer", init_}};
  }
  void addKernels(int64_t channels) override {
    checkWidth(className(), "input channels x depth_multiplier",
               channels * multiplier_);
    addKernel("kernel", {o_.kernel.h, o_.kernel.w, channels, multiplier_},
              init_);
  }
  int64_t outChannels() const override { return channels_ * multiplier_; }
  Tensor convolve(const Tensor &x) override {
    return depthwise(x, kernel(0), strides(), o_.padding, dilations());
  }

private:
  int64_t multiplier_;
  std::string init_;
};

class SeparableConv2DImpl : public ConvLayerImpl {
public:
  SeparableConv2DImpl(std::string className, int64_t filters,
                      int64_t multiplier, ConvOptions o,
                      std::string depthwiseInit, std::string pointwiseInit,
                      std::string biasInit)
      : ConvLayerImpl(std::move(className), std::move(o), std::move(biasInit)),
        filters_(filters), multiplier_(multiplier),
        depthwiseInit_(std::move(depthwiseInit)),
        pointwiseInit_(std::move(pointwiseInit)) {
    checkWidth("SeparableConv2D", "filters", filters);
    checkWidth("SeparableConv2D", "depth_multiplier", multiplier);
  }
  std::vector<std::string> regularizableWeights() const override {
    return {"depthwise", "pointwise", "bias"};
  }
  std::string regularizedWeight(const std::string &name) const override {
    return name == "bias" ? name : name + "_kernel";
  }

protected:
  llvm::json::Object ownConfig() const override {
    return llvm::json::Object{{"filters", filters_},
                              {"depth_multiplier", multiplier_},
                              {"depthwise_initializer", depthwiseInit_},
                              {"pointwise_initializer", pointwiseInit_}};
  }
  void addKernels(int64_t channels) override {
    checkWidth(className(), "input channels x depth_multiplier",
               channels * multiplier_);
    addKernel("depthwise_kernel",
              {o_.kernel.h, o_.kernel.w, channels, multiplier_},
              depthwiseInit_);
    addKernel("pointwise_kernel", {1, 1, channels * multiplier_, filters_},
              pointwiseInit_);
  }
  int64_t outChannels() const override { return filters_; }
  Tensor convolve(const Tensor &x) override {
    // Keras: the depthwise step takes strides, padding and dilation; the
    // pointwise 1x1 step none.
    Tensor d = depthwise(x, kernel(0), strides(), o_.padding, dilations());
    return ops::conv2d(d, kernel(1));
  }

private:
  int64_t filters_, multiplier_;
  std::string depthwiseInit_, pointwiseInit_;
};

class Conv2DTransposeImpl : public ConvLayerImpl {
public:
  Conv2DTransposeImpl(std::string className, int64_t filters, ConvOptions o,
                      std::string kernelInit, std::string biasInit)
      : ConvLayerImpl(std::move(className), std::move(o), std::move(biasInit)),
        filters_(filters), kernelInit_(std::move(kernelInit)) {
    checkWidth("Conv2DTranspose", "filters", filters);
  }
  std::vector<std::string> regularizableWeights() const override {
    return {"kernel", "bias"};
  }

protected:
  llvm::json::Object ownConfig() const override {
    return llvm::json::Object{{"filters", filters_},
                              {"output_padding", nullptr},
                              {"kernel_initializer", kernelInit_}};
  }
  void addKernels(int64_t channels) override {
    // Keras's layout: [kh, kw, out, in] ([kd, kh, kw, out, in] in 3-D).
    Shape kernel{o_.kernel.h, o_.kernel.w, filters_, channels};
    if (o_.spatialRank == 3)
      kernel.insert(kernel.begin(), o_.kernelDepth);
    addKernel("kernel", std::move(kernel), kernelInit_);
  }
  int64_t outChannels() const override { return filters_; }
  Tensor convolve(const Tensor &x) override {
    if (o_.spatialRank == 3)
      return ops::conv3dTranspose(x, weight(0), strides3(), o_.padding,
                                  dilations3());
    return ops::conv2dTranspose(x, kernel(0), strides(), o_.padding,
                                dilations());
  }

private:
  int64_t filters_;
  std::string kernelInit_;
};

class Pool2DImpl : public LayerImpl {
public:
  Pool2DImpl(std::string className, bool isMax, Size2 pool,
             std::optional<Size2> strides, const std::string &padding)
      : LayerImpl(className), isMax_(isMax), pool_(pool),
        strides_(strides.value_or(pool)),
        padding_(parsePadding(className, padding)) {
    checkPositive(className, "pool_size", pool_);
    checkPositive(className, "strides", strides_);
  }
  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{
        {"pool_size", llvm::json::Array{pool_.h, pool_.w}},
        {"strides", llvm::json::Array{strides_.h, strides_.w}},
        {"padding", paddingName(padding_)}};
  }

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    expectInputs(inputs, 1);
    std::vector<int64_t> window{pool_.h, pool_.w};
    std::vector<int64_t> strides{strides_.h, strides_.w};
    if (isMax_)
      return {ops::maxPool2d(inputs[0], window, strides, padding_)};
    return {ops::avgPool2d(inputs[0], window, strides, padding_)};
  }

private:
  bool isMax_;
  Size2 pool_, strides_;
  ops::Padding padding_;
};

} // namespace

Conv2D::Conv2D(int64_t filters, Size2 kernelSize, Size2 strides,
               const std::string &padding, const std::string &activation,
               bool useBias, const std::string &kernelInitializer,
               const std::string &biasInitializer)
    : Conv2D(filters, kernelSize, strides, padding, /*dilationRate=*/1,
             /*groups=*/1, activation, useBias, kernelInitializer,
             biasInitializer) {}

Conv2D::Conv2D(int64_t filters, Size2 kernelSize, Size2 strides,
               const std::string &padding, Size2 dilationRate, int64_t groups,
               const std::string &activation, bool useBias,
               const std::string &kernelInitializer,
               const std::string &biasInitializer)
    : Layer(std::make_shared<Conv2DImpl>(
          "Conv2D", filters, groups,
          convOptions("Conv2D", kernelSize, strides, padding, dilationRate,
                      activation, useBias),
          kernelInitializer, biasInitializer)) {}

DepthwiseConv2D::DepthwiseConv2D(Size2 kernelSize, Size2 strides,
                                 const std::string &padding,
                                 int64_t depthMultiplier, Size2 dilationRate,
                                 const std::string &activation, bool useBias,
                                 const std::string &depthwiseInitializer,
                                 const std::string &biasInitializer)
    : Layer(std::make_shared<DepthwiseConv2DImpl>(
          "DepthwiseConv2D", depthMultiplier,
          convOptions("DepthwiseConv2D", kernelSize, strides, padding,
                      dilationRate, activation, useBias),
          depthwiseInitializer, biasInitializer)) {}

SeparableConv2D::SeparableConv2D(int64_t filters, Size2 kernelSize,
                                 Size2 strides, const std::string &padding,
                                 Size2 dilationRate, int64_t depthMultiplier,
                                 const std::string &activation, bool useBias,
                                 const std::string &depthwiseInitializer,
                                 const std::string &pointwiseInitializer,
                                 const std::string &biasInitializer)
    : Layer(std::make_shared<SeparableConv2DImpl>(
          "SeparableConv2D", filters, depthMultiplier,
          convOptions("SeparableConv2D", kernelSize, strides, padding,
                      dilationRate, activation, useBias),
          depthwiseInitializer, pointwiseInitializer, biasInitializer)) {}

Conv2DTranspose::Conv2DTranspose(int64_t filters, Size2 kernelSize,
                                 Size2 strides, const std::string &padding,
                                 Size2 dilationRate,
                                 const std::string &activation, bool useBias,
                                 const std::string &kernelInitializer,
                                 const std::string &biasInitializer)
    : Layer(std::make_shared<Conv2DTransposeImpl>(
          "Conv2DTranspose", filters,
          convOptions("Conv2DTranspose", kernelSize, strides, padding,
                      dilationRate, activation, useBias),
          kernelInitializer, biasInitializer)) {}

namespace {

/// The shared options of a 1-D variant: one step high.
ConvOptions convOptions1D(const std::string &layer, int64_t kernelSize,
                          int64_t strides, const std::string &padding,
                          int64_t dilationRate, std::string activation,
                          bool useBias) {
  ConvOptions o =
      convOptions(layer, Size2(1, kernelSize), Size2(1, strides), padding,
                  Size2(1, dilationRate), std::move(activation), useBias);
  o.spatialRank = 1;
  return o;
}

} // namespace

DepthwiseConv1D::DepthwiseConv1D(int64_t kernelSize, int64_t strides,
                                 const std::string &padding,
                                 int64_t depthMultiplier, int64_t dilationRate,
                                 const std::string &activation, bool useBias,
                                 const std::string &depthwiseInitializer,
                                 const std::string &biasInitializer)
    : Layer(std::make_shared<DepthwiseConv2DImpl>(
          "DepthwiseConv1D", depthMultiplier,
          convOptions1D("DepthwiseConv1D", kernelSize, strides, padding,
                        dilationRate, activation, useBias),
          depthwiseInitializer, biasInitializer)) {}

SeparableConv1D::SeparableConv1D(int64_t filters, int64_t kernelSize,
                                 int64_t strides, const std::string &padding,
                                 int64_t dilationRate, int64_t depthMultiplier,
                                 const std::string &activation, bool useBias,
                                 const std::string &depthwiseInitializer,
                                 const std::string &pointwiseInitializer,
                                 const std::string &biasInitializer)
    : Layer(std::make_shared<SeparableConv2DImpl>(
          "SeparableConv1D", filters, depthMultiplier,
          convOptions1D("SeparableConv1D", kernelSize, strides, padding,
                        dilationRate, activation, useBias),
          depthwiseInitializer, pointwiseInitializer, biasInitializer)) {}

Conv1DTranspose::Conv1DTranspose(int64_t filters, int64_t kernelSize,
                                 int64_t strides, const std::string &padding,
                                 int64_t dilationRate,
                                 const std::string &activation, bool useBias,
                                 const std::string &kernelInitializer,
                                 const std::string &biasInitializer)
    : Layer(std::make_shared<Conv2DTransposeImpl>(
          "Conv1DTranspose", filters,
          convOptions1D("Conv1DTranspose", kernelSize, strides, padding,
                        dilationRate, activation, useBias),
          kernelInitializer, biasInitializer)) {}

MaxPooling2D::MaxPooling2D(Size2 poolSize, std::optional<Size2> strides,
                           const std::string &padding)
    : Layer(std::make_shared<Pool2DImpl>("MaxPooling2D", true, poolSize,
                                         strides, padding)) {}

AveragePooling2D::AveragePooling2D(Size2 poolSize, std::optional<Size2> strides,
                                   const std::string &padding)
    : Layer(std::make_shared<Pool2DImpl>("AveragePooling2D", false, poolSize,
                                         strides, padding)) {}

namespace {

/// The shared options of the 3-D class: the 2-D ones and the depth.
ConvOptions convOptions3D(const std::string &layer, Size3 kernel, Size3 strides,
                          const std::string &padding, Size3 dilation,
                          std::string activation, bool useBias) {
  for (auto [what, s] : {std::pair<const char *, Size3>{"kernel_size", kernel},
                         {"strides", strides},
                         {"dilation_rate", dilation}})
    if (s.d <= 0 || s.h <= 0 || s.w <= 0)
      throw Error(layer + ": " + what + " must be positive, got " +
                  shapeToString({s.d, s.h, s.w}));
  ConvOptions o = convOptions(
      layer, Size2(kernel.h, kernel.w), Size2(strides.h, strides.w), padding,
      Size2(dilation.h, dilation.w), std::move(activation), useBias);
  o.spatialRank = 3;
  o.kernelDepth = kernel.d;
  o.strideDepth = strides.d;
  o.dilationDepth = dilation.d;
  return o;
}

} // namespace

Conv3D::Conv3D(int64_t filters, Size3 kernelSize, Size3 strides,
               const std::string &padding, Size3 dilationRate,
               const std::string &activation, bool useBias,
               const std::string &kernelInitializer,
               const std::string &biasInitializer)
    : Layer(std::make_shared<Conv2DImpl>(
          "Conv3D", filters, /*groups=*/1,
          convOptions3D("Conv3D", kernelSize, strides, padding, dilationRate,
                        activation, useBias),
          kernelInitializer, biasInitializer)) {}

Conv3DTranspose::Conv3DTranspose(int64_t filters, Size3 kernelSize,
                                 Size3 strides, const std::string &padding,
                                 Size3 dilationRate,
                                 const std::string &activation, bool useBias,
                                 const std::string &kernelInitializer,
                                 const std::string &biasInitializer)
    : Layer(std::make_shared<Conv2DTransposeImpl>(
          "Conv3DTranspose", filters,
          convOptions3D("Conv3DTranspose", kernelSize, strides, padding,
                        dilationRate, activation, useBias),
          kernelInitializer, biasInitializer)) {}
