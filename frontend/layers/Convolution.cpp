//===- Convolution.cpp - Conv2D, MaxPooling2D, AveragePooling2D -----------===//

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

void checkPositive(const std::string &layer, const std::string &what,
                   Size2 s) {
  if (s.h <= 0 || s.w <= 0)
    throw Error(layer + ": " + what + " must be positive, got " +
                shapeToString({s.h, s.w}));
}

class Conv2DImpl : public LayerImpl {
public:
  Conv2DImpl(int64_t filters, Size2 kernel, Size2 strides,
             const std::string &padding, std::string activation, bool useBias,
             std::string kernelInit, std::string biasInit)
      : LayerImpl("Conv2D"), filters_(filters), kernel_(kernel),
        strides_(strides), padding_(parsePadding("Conv2D", padding)),
        activation_(std::move(activation)), useBias_(useBias),
        kernelInit_(std::move(kernelInit)), biasInit_(std::move(biasInit)) {
    if (filters <= 0)
      throw Error("Conv2D: filters must be positive, got " +
                  std::to_string(filters));
    // The bias, and each pixel of the output, hold `filters` floats.
    if (TensorSize pixel = tensorSize({filters}, sizeof(float), "f32"); !pixel)
      throw Error("Conv2D: filters " + std::to_string(filters) +
                  " is too large: a pixel of the output, " + pixel.error);
    checkPositive("Conv2D", "kernel_size", kernel);
    checkPositive("Conv2D", "strides", strides);
    if (!ops::isActivation(activation_))
      throw Error("Conv2D: unknown activation '" + activation_ + "'");
  }
  std::vector<std::string> regularizableWeights() const override {
    return {"kernel", "bias"};
  }
  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{{"filters", filters_},
            {"kernel_size", llvm::json::Array{kernel_.h, kernel_.w}},
            {"strides", llvm::json::Array{strides_.h, strides_.w}},
            {"padding", paddingName(padding_)},
            {"activation", activation_},
            {"use_bias", useBias_},
            {"kernel_initializer", kernelInit_},
            {"bias_initializer", biasInit_}};
  }

protected:
  void build(const std::vector<Shape> &shapes) override {
    if (shapes.size() != 1 || shapes[0].size() != 4)
      fail("expects one NHWC input of rank 4, got " +
           (shapes.empty() ? std::string("none") : shapeString(shapes[0])));
    channels_ = shapes[0][3];
    addWeight("kernel", {kernel_.h, kernel_.w, channels_, filters_},
              kernelInit_);
    if (useBias_)
      addWeight("bias", {filters_}, biasInit_);
  }

  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    expectInputs(inputs, 1);
    const Tensor &x = inputs[0];
    if (x.rank() != 4 || x.dim(3) != channels_)
      fail("was built for NHWC inputs with " + std::to_string(channels_) +
           " channels but is called on " + x.shapeString());
    Tensor y = ops::conv2d(x, weight(0), {strides_.h, strides_.w}, padding_);
    if (useBias_)
      y = ops::add(y, weight(1));
    return {ops::activation(y, activation_)};
  }

private:
  int64_t filters_;
  Size2 kernel_, strides_;
  ops::Padding padding_;
  std::string activation_;
  bool useBias_;
  std::string kernelInit_, biasInit_;
  int64_t channels_ = 0;
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
    : Layer(std::make_shared<Conv2DImpl>(filters, kernelSize, strides, padding,
                                         activation, useBias,
                                         kernelInitializer, biasInitializer)) {}

MaxPooling2D::MaxPooling2D(Size2 poolSize, std::optional<Size2> strides,
                           const std::string &padding)
    : Layer(std::make_shared<Pool2DImpl>("MaxPooling2D", true, poolSize,
                                         strides, padding)) {}

AveragePooling2D::AveragePooling2D(Size2 poolSize, std::optional<Size2> strides,
                                   const std::string &padding)
    : Layer(std::make_shared<Pool2DImpl>("AveragePooling2D", false, poolSize,
                                         strides, padding)) {}
