//===- Sequence.cpp - Embedding and the 1-D layers ------------------------===//
//
// Embedding is one kc.gather. The 1-D layers take [batch, steps, channels]
// and are their 2-D counterparts on a unit height ([N, 1, W, C], a
// reshape that moves no data): Conv1D is kc.conv2d with a [1, k, C, F]
// filter, the pools kc.max_pool2d / kc.avg_pool2d with a 1 x k window, so
// they share those ops' kernels, gradients and compiled lowering. Causal
// padding is zeros concatenated before the steps, then a valid convolution,
// as Keras computes it.
//
//===----------------------------------------------------------------------===//

#include "frontend/Layers.h"
#include "frontend/Ops.h"
#include "runtime/MemoryBudget.h"

using namespace kcc;

namespace {

void checkPositive(const std::string &layer, const std::string &what,
                   int64_t v) {
  if (v <= 0)
    throw Error(layer + ": " + what + " must be positive, got " +
                std::to_string(v));
}

/// The layers of one [batch, steps, channels] input.
class StepsLayerImpl : public LayerImpl {
public:
  using LayerImpl::LayerImpl;

protected:
  const Tensor &stepsInput(const std::vector<Tensor> &inputs) const {
    expectInputs(inputs, 1);
    const Tensor &x = inputs[0];
    if (x.rank() != 3)
      fail("expects an input of rank 3 ([batch, steps, channels]), got " +
           x.shapeString());
    return x;
  }
  /// [N, W, C] -> [N, 1, W, C].
  static Tensor toImage(const Tensor &x) {
    return ops::reshape(x, {x.dim(0), 1, x.dim(1), x.dim(2)});
  }
  /// [N, 1, W, C] -> [N, W, C].
  static Tensor fromImage(const Tensor &y) {
    return ops::reshape(y, {y.dim(0), y.dim(2), y.dim(3)});
  }
  /// Zeros before and after the steps (axis 1).
  static Tensor padSteps(const Tensor &x, int64_t before, int64_t after) {
    std::vector<Tensor> parts;
    auto zeros = [&](int64_t n) {
      Shape s = x.shape();
      s[1] = n;
      return ops::fillLike(x, s, 0.0);
    };
    if (before)
      parts.push_back(zeros(before));
    parts.push_back(x);
    if (after)
      parts.push_back(zeros(after));
    return parts.size() == 1 ? x : ops::concat(parts, 1);
  }
};

class EmbeddingImpl : public LayerImpl {
public:
  EmbeddingImpl(int64_t inputDim, int64_t outputDim, std::string init,
                bool maskZero)
      : LayerImpl("Embedding"), inputDim_(inputDim), outputDim_(outputDim),
        init_(std::move(init)), maskZero_(maskZero) {
    checkPositive("Embedding", "input_dim", inputDim);
    checkPositive("Embedding", "output_dim", outputDim);
    if (TensorSize table =
            tensorSize({inputDim, outputDim}, sizeof(float), "f32");
        !table)
      throw Error("Embedding: the table [" + std::to_string(inputDim) + ", " +
                  std::to_string(outputDim) + "] is too large: " + table.error);
  }
  std::vector<std::string> regularizableWeights() const override {
    return {"embeddings"};
  }
  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{{"input_dim", inputDim_},
                              {"output_dim", outputDim_},
                              {"embeddings_initializer", init_},
                              {"mask_zero", maskZero_}};
  }
  /// Keras's Embedding makes its own mask (or none) whatever its input's.
  MaskRule maskRule() const override { return MaskRule::Own; }
  /// Keras's Embedding sets autocast = False: float ids are truncated to
  /// int32 as they are, never rounded to bfloat16 first.
  bool autocastsInputs() const override { return false; }

protected:
  void build(const std::vector<Shape> &) override {
    addWeight("embeddings", {inputDim_, outputDim_}, init_);
  }

  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    expectInputs(inputs, 1);
    Tensor ids = inputs[0];
    // Keras casts non-integer ids to int32 (truncating) before the lookup.
    if (ids.dtype() != DType::I32 && ids.dtype() != DType::I64)
      ids = ops::cast(ids, DType::I32);
    // Keras's Embedding (autocast off): the rows of the float32 table,
    // cast to the compute dtype, so the gradient scatters in float32.
    Tensor out = ops::gather(weight(0, /*autocast=*/false), ids);
    if (computeDType() != DType::F32 && out.dtype() == DType::F32)
      out = ops::cast(out, computeDType());
    if (!maskZero_)
      return {out};
    Tensor real =
        ops::compare(ops::CompareKind::NE, ids, ops::fillLike(ids, {}, 0.0));
    return {out.withMask(ops::cast(real, DType::F32))};
  }

private:
  int64_t inputDim_, outputDim_;
  std::string init_;
  bool maskZero_;
};

class Conv1DImpl : public StepsLayerImpl {
public:
  Conv1DImpl(int64_t filters, int64_t kernel, int64_t strides,
             std::string padding, int64_t dilation, std::string activation,
             bool useBias, std::string kernelInit, std::string biasInit)
      : StepsLayerImpl("Conv1D"), filters_(filters), kernel_(kernel),
        strides_(strides), dilation_(dilation), padding_(std::move(padding)),
        activation_(std::move(activation)), useBias_(useBias),
        kernelInit_(std::move(kernelInit)), biasInit_(std::move(biasInit)) {
    checkPositive("Conv1D", "filters", filters);
    checkPositive("Conv1D", "kernel_size", kernel);
    checkPositive("Conv1D", "strides", strides);
    checkPositive("Conv1D", "dilation_rate", dilation);
    if (TensorSize step = tensorSize({filters}, sizeof(float), "f32"); !step)
      throw Error("Conv1D: filters " + std::to_string(filters) +
                  " is too large: a step of the output, " + step.error);
    if (padding_ != "valid" && padding_ != "same" && padding_ != "causal")
      throw Error("Conv1D: padding must be \"valid\", \"same\" or "
                  "\"causal\", got \"" +
                  padding_ + "\"");
    if (strides > 1 && dilation > 1)
      throw Error("Conv1D: strides > 1 with dilation_rate > 1 is not "
                  "supported (as in Keras)");
    if (!ops::isActivation(activation_))
      throw Error("Conv1D: unknown activation '" + activation_ + "'");
  }
  std::vector<std::string> regularizableWeights() const override {
    return {"kernel", "bias"};
  }
  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{{"filters", filters_},
                              {"kernel_size", llvm::json::Array{kernel_}},
                              {"strides", llvm::json::Array{strides_}},
                              {"padding", padding_},
                              {"dilation_rate", llvm::json::Array{dilation_}},
                              {"activation", activation_},
                              {"use_bias", useBias_},
                              {"kernel_initializer", kernelInit_},
                              {"bias_initializer", biasInit_}};
  }

protected:
  void build(const std::vector<Shape> &shapes) override {
    if (shapes.size() != 1 || shapes[0].size() != 3)
      fail("expects one input of rank 3 ([batch, steps, channels]), got " +
           (shapes.empty() ? std::string("none") : shapeString(shapes[0])));
    channels_ = shapes[0][2];
    addWeight("kernel", {kernel_, channels_, filters_}, kernelInit_);
    if (useBias_)
      addWeight("bias", {filters_}, biasInit_);
  }

  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    Tensor x = stepsInput(inputs);
    if (x.dim(2) != channels_)
      fail("was built for inputs with " + std::to_string(channels_) +
           " channels but is called on " + x.shapeString());
    ops::Padding padding = ops::Padding::Valid;
    if (padding_ == "same")
      padding = ops::Padding::Same;
    else if (padding_ == "causal")
      x = padSteps(x, dilation_ * (kernel_ - 1), 0);
    Tensor filter = ops::reshape(weight(0), {1, kernel_, channels_, filters_});
    Tensor y = fromImage(ops::conv2d(toImage(x), filter, {1, strides_}, padding,
                                     {1, dilation_}));
    if (useBias_)
      y = ops::add(y, weight(1));
    return {ops::activation(y, activation_)};
  }

private:
  int64_t filters_, kernel_, strides_, dilation_;
  std::string padding_, activation_;
  bool useBias_;
  std::string kernelInit_, biasInit_;
  int64_t channels_ = 0;
};

class Pool1DImpl : public StepsLayerImpl {
public:
  Pool1DImpl(std::string className, bool isMax, int64_t pool,
             std::optional<int64_t> strides, const std::string &padding)
      : StepsLayerImpl(className), isMax_(isMax), pool_(pool),
        strides_(strides.value_or(pool)) {
    checkPositive(className, "pool_size", pool_);
    checkPositive(className, "strides", strides_);
    if (padding == "same")
      padding_ = ops::Padding::Same;
    else if (padding != "valid")
      throw Error(className +
                  ": padding must be \"valid\" or \"same\", got \"" + padding +
                  "\"");
  }
  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{
        {"pool_size", llvm::json::Array{pool_}},
        {"strides", llvm::json::Array{strides_}},
        {"padding", padding_ == ops::Padding::Same ? "same" : "valid"}};
  }

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    Tensor x = toImage(stepsInput(inputs));
    std::vector<int64_t> window{1, pool_}, strides{1, strides_};
    return {fromImage(isMax_ ? ops::maxPool2d(x, window, strides, padding_)
                             : ops::avgPool2d(x, window, strides, padding_))};
  }

private:
  bool isMax_;
  int64_t pool_, strides_;
  ops::Padding padding_ = ops::Padding::Valid;
};

/// The mean or maximum over the steps (Keras's ops.mean / ops.max, axis 1).
class GlobalPool1DImpl : public StepsLayerImpl {
public:
  GlobalPool1DImpl(std::string className, bool isMax, bool keepdims)
      : StepsLayerImpl(std::move(className)), isMax_(isMax),
        keepdims_(keepdims) {}
  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{{"keepdims", keepdims_}};
  }

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    const Tensor &x = stepsInput(inputs);
    if (isMax_)
      return {ops::reduceMax(x, {1}, keepdims_)};
    if (const Tensor *mask = inputs[0].mask()) {
      // Keras: the sum of the real steps over their count.
      Tensor m = maskForRank(*mask, 3);
      Tensor real = ops::select(maskAsCondition(m), x, ops::fillLike(x, {}, 0));
      return {ops::div(ops::reduceSum(real, {1}, keepdims_),
                       ops::reduceSum(m, {1}, keepdims_))};
    }
    return {ops::reduceMean(x, {1}, keepdims_)};
  }
  /// GlobalAveragePooling1D averages the real steps; GlobalMaxPooling1D
  /// drops the mask (Keras's does not support masking).
  MaskRule maskRule() const override {
    return isMax_ ? MaskRule::Drop : MaskRule::Own;
  }

private:
  bool isMax_, keepdims_;
};

class ZeroPadding1DImpl : public StepsLayerImpl {
public:
  ZeroPadding1DImpl(int64_t before, int64_t after)
      : StepsLayerImpl("ZeroPadding1D"), before_(before), after_(after) {
    if (before < 0 || after < 0)
      throw Error("ZeroPadding1D: padding must be >= 0, got (" +
                  std::to_string(before) + ", " + std::to_string(after) + ")");
  }
  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{{"padding", llvm::json::Array{before_, after_}}};
  }

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    return {padSteps(stepsInput(inputs), before_, after_)};
  }

private:
  int64_t before_, after_;
};

class UpSampling1DImpl : public StepsLayerImpl {
public:
  explicit UpSampling1DImpl(int64_t size)
      : StepsLayerImpl("UpSampling1D"), size_(size) {
    checkPositive("UpSampling1D", "size", size);
  }
  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{{"size", size_}};
  }

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    const Tensor &x = stepsInput(inputs);
    int64_t n = x.dim(0), w = x.dim(1), c = x.dim(2);
    std::optional<int64_t> ow = checkedNumElements({w, size_});
    if (!ow)
      fail("size " + std::to_string(size_) + " overflows " + x.shapeString());
    // Keras's repeat along the steps: [N,W,1,C] -> [N,W,s,C] -> [N,W*s,C].
    Tensor y =
        ops::broadcastTo(ops::reshape(x, {n, w, 1, c}), {n, w, size_, c});
    return {ops::reshape(y, {n, *ow, c})};
  }

private:
  int64_t size_;
};

class Cropping1DImpl : public StepsLayerImpl {
public:
  Cropping1DImpl(int64_t before, int64_t after)
      : StepsLayerImpl("Cropping1D"), before_(before), after_(after) {
    if (before < 0 || after < 0)
      throw Error("Cropping1D: cropping must be >= 0, got (" +
                  std::to_string(before) + ", " + std::to_string(after) + ")");
  }
  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{{"cropping", llvm::json::Array{before_, after_}}};
  }

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    const Tensor &x = stepsInput(inputs);
    int64_t steps = x.dim(1);
    if (before_ >= steps || after_ >= steps - before_)
      fail("cropping (" + std::to_string(before_) + ", " +
           std::to_string(after_) + ") leaves no step of " + x.shapeString());
    return {ops::slice(x, {0, before_, 0}, {x.dim(0), steps - after_, x.dim(2)},
                       {1, 1, 1})};
  }

private:
  int64_t before_, after_;
};

} // namespace

Embedding::Embedding(int64_t inputDim, int64_t outputDim,
                     const std::string &embeddingsInitializer, bool maskZero)
    : Layer(std::make_shared<EmbeddingImpl>(inputDim, outputDim,
                                            embeddingsInitializer, maskZero)) {}

Conv1D::Conv1D(int64_t filters, int64_t kernelSize, int64_t strides,
               const std::string &padding, int64_t dilationRate,
               const std::string &activation, bool useBias,
               const std::string &kernelInitializer,
               const std::string &biasInitializer)
    : Layer(std::make_shared<Conv1DImpl>(filters, kernelSize, strides, padding,
                                         dilationRate, activation, useBias,
                                         kernelInitializer, biasInitializer)) {}

MaxPooling1D::MaxPooling1D(int64_t poolSize, std::optional<int64_t> strides,
                           const std::string &padding)
    : Layer(std::make_shared<Pool1DImpl>("MaxPooling1D", true, poolSize,
                                         strides, padding)) {}

AveragePooling1D::AveragePooling1D(int64_t poolSize,
                                   std::optional<int64_t> strides,
                                   const std::string &padding)
    : Layer(std::make_shared<Pool1DImpl>("AveragePooling1D", false, poolSize,
                                         strides, padding)) {}

GlobalAveragePooling1D::GlobalAveragePooling1D(bool keepdims)
    : Layer(std::make_shared<GlobalPool1DImpl>("GlobalAveragePooling1D",
                                               /*isMax=*/false, keepdims)) {}

GlobalMaxPooling1D::GlobalMaxPooling1D(bool keepdims)
    : Layer(std::make_shared<GlobalPool1DImpl>("GlobalMaxPooling1D",
                                               /*isMax=*/true, keepdims)) {}

ZeroPadding1D::ZeroPadding1D(int64_t padding)
    : ZeroPadding1D(padding, padding) {}

ZeroPadding1D::ZeroPadding1D(int64_t before, int64_t after)
    : Layer(std::make_shared<ZeroPadding1DImpl>(before, after)) {}

UpSampling1D::UpSampling1D(int64_t size)
    : Layer(std::make_shared<UpSampling1DImpl>(size)) {}

Cropping1D::Cropping1D(int64_t cropping) : Cropping1D(cropping, cropping) {}

Cropping1D::Cropping1D(int64_t before, int64_t after)
    : Layer(std::make_shared<Cropping1DImpl>(before, after)) {}
