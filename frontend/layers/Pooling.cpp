//===- Pooling.cpp - Global and adaptive pooling --------------------------===//
//
// Global pooling is a reduction over height and width (kc.reduce_mean /
// kc.reduce_max over axes 1 and 2), as Keras's call is ops.mean / ops.max.
// Adaptive pooling reduces each spatial axis in turn (Keras's JAX backend
// pools one axis after the other too): one reshape and reduction where the
// output size divides the length, else one slice and reduction per output
// position.
//
//===----------------------------------------------------------------------===//

#include "frontend/Layers.h"
#include "frontend/Ops.h"
#include "frontend/layers/NhwcLayerImpl.h"

using namespace kcc;

namespace {

class GlobalPool2DImpl : public NhwcLayerImpl {
public:
  GlobalPool2DImpl(std::string className, bool isMax, bool keepdims)
      : NhwcLayerImpl(std::move(className)), isMax_(isMax),
        keepdims_(keepdims) {}
  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{{"keepdims", keepdims_}};
  }

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    const Tensor &x = nhwcInput(inputs);
    if (isMax_)
      return {ops::reduceMax(x, {1, 2}, keepdims_)};
    return {ops::reduceMean(x, {1, 2}, keepdims_)};
  }

private:
  bool isMax_, keepdims_;
};

/// One slice per output position is one op each: a bound on what a config
/// can make kcc trace.
constexpr int64_t kMaxAdaptivePositions = 4096;

class AdaptivePoolingImpl : public LayerImpl {
public:
  AdaptivePoolingImpl(bool isMax, std::vector<int64_t> outputSize,
                      std::string dataFormat)
      : LayerImpl(classNameOf(isMax, outputSize.size())), isMax_(isMax),
        outputSize_(std::move(outputSize)), dataFormat_(std::move(dataFormat)) {
    if (outputSize_.empty() || outputSize_.size() > 3)
      throw Error(this->className() + ": output_size must have 1 to 3 sizes");
    for (int64_t n : outputSize_)
      if (n <= 0 || n > kMaxAdaptivePositions)
        throw Error(this->className() + ": output_size " + std::to_string(n) +
                    " must be in [1, " + std::to_string(kMaxAdaptivePositions) +
                    "]");
    if (dataFormat_ != "channels_last" && dataFormat_ != "channels_first")
      throw Error(this->className() + ": data_format '" + dataFormat_ +
                  "' is not channels_last or channels_first");
  }

  llvm::json::Object kerasConfig() const override {
    llvm::json::Array sizes;
    for (int64_t n : outputSize_)
      sizes.push_back(n);
    return llvm::json::Object{{"output_size", std::move(sizes)},
                              {"data_format", dataFormat_}};
  }

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    expectInputs(inputs, 1);
    Tensor x = inputs[0];
    int64_t spatial = static_cast<int64_t>(outputSize_.size());
    if (x.rank() != spatial + 2)
      fail("expects an input of rank " + std::to_string(spatial + 2) +
           " (batch, " + std::to_string(spatial) +
           " spatial axes and channels), got " + x.shapeString());
    int64_t first = dataFormat_ == "channels_last" ? 1 : 2;
    for (int64_t i = 0; i < spatial; ++i)
      x = poolAxis(x, first + i, outputSize_[i]);
    return {x};
  }

private:
  static std::string classNameOf(bool isMax, size_t rank) {
    return std::string("Adaptive") + (isMax ? "Max" : "Average") + "Pooling" +
           std::to_string(rank) + "D";
  }

  Tensor reduce(const Tensor &x, int64_t axis) const {
    return isMax_ ? ops::reduceMax(x, {axis}, /*keepdims=*/true)
                  : ops::reduceMean(x, {axis}, /*keepdims=*/true);
  }

  /// `x` with axis `axis` pooled to `n` positions.
  Tensor poolAxis(const Tensor &x, int64_t axis, int64_t n) const {
    int64_t length = x.dim(axis);
    if (length == 0)
      fail("cannot pool an empty axis: " + x.shapeString());
    if (length % n == 0) {
      Shape split = x.shape();
      split[axis] = length / n;
      split.insert(split.begin() + axis, n);
      Tensor pooled = reduce(ops::reshape(x, split), axis + 1);
      Shape out = x.shape();
      out[axis] = n;
      return ops::reshape(pooled, out);
    }
    std::vector<Tensor> positions;
    std::vector<int64_t> start(x.rank(), 0), end = x.shape(), step(x.rank(), 1);
    for (int64_t i = 0; i < n; ++i) {
      start[axis] = i * length / n;
      end[axis] = ((i + 1) * length + n - 1) / n;
      positions.push_back(reduce(ops::slice(x, start, end, step), axis));
    }
    return positions.size() == 1 ? positions[0] : ops::concat(positions, axis);
  }

  bool isMax_;
  std::vector<int64_t> outputSize_;
  std::string dataFormat_;
};

} // namespace

AdaptivePooling::AdaptivePooling(bool isMax, std::vector<int64_t> outputSize,
                                 const std::string &dataFormat)
    : Layer(std::make_shared<AdaptivePoolingImpl>(isMax, std::move(outputSize),
                                                  dataFormat)) {}

GlobalAveragePooling2D::GlobalAveragePooling2D(bool keepdims)
    : Layer(std::make_shared<GlobalPool2DImpl>("GlobalAveragePooling2D",
                                               /*isMax=*/false, keepdims)) {}

GlobalMaxPooling2D::GlobalMaxPooling2D(bool keepdims)
    : Layer(std::make_shared<GlobalPool2DImpl>("GlobalMaxPooling2D",
                                               /*isMax=*/true, keepdims)) {}
