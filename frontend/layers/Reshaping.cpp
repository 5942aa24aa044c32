//===- Reshaping.cpp - Flatten, Reshape, padding, cropping, upsampling ----===//
//
// ZeroPadding2D, Cropping2D and UpSampling2D are layout ops composed of kc's
// concat, slice, reshape and broadcast_to (as XLA's pad, slice and
// broadcast-in-dim), so each has its gradient without a rule of its own:
// the gradient of padding is a slice, of cropping a concat with zeros, of
// nearest upsampling the sum over each repeated block.
//
//===----------------------------------------------------------------------===//

#include "frontend/Layers.h"
#include "frontend/Ops.h"
#include "frontend/layers/NhwcLayerImpl.h"
#include "runtime/MemoryBudget.h"
#include <algorithm>

using namespace kcc;

namespace {

/// ((top, bottom), (left, right)), as Keras 3 stores padding and cropping.
llvm::json::Value sidesConfig(const Sides2 &s) {
  return llvm::json::Array{llvm::json::Array{s.top, s.bottom},
                           llvm::json::Array{s.left, s.right}};
}

class FlattenImpl : public LayerImpl {
public:
  FlattenImpl() : LayerImpl("Flatten") {}

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    expectInputs(inputs, 1);
    const Tensor &x = inputs[0];
    if (x.rank() < 1)
      fail("expects a batched input, got " + x.describe());
    std::optional<int64_t> features =
        checkedNumElements(x.shape().data() + 1, x.shape().size() - 1);
    if (!features)
      fail("the input " + x.shapeString() +
           " has more than 2^63-1 features per example");
    return {ops::reshape(x, {x.dim(0), *features})};
  }
};

class ReshapeImpl : public LayerImpl {
public:
  explicit ReshapeImpl(Shape target)
      : LayerImpl("Reshape"), target_(std::move(target)) {}
  llvm::json::Object kerasConfig() const override {
    llvm::json::Array dims;
    for (int64_t d : target_)
      dims.push_back(d);
    return llvm::json::Object{{"target_shape", std::move(dims)}};
  }

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    expectInputs(inputs, 1);
    const Tensor &x = inputs[0];
    // The target excludes the batch dim, as in Keras.
    Shape shape{x.dim(0)};
    shape.insert(shape.end(), target_.begin(), target_.end());
    return {ops::reshape(x, shape)};
  }

private:
  Shape target_;
};

class ZeroPadding2DImpl : public NhwcLayerImpl {
public:
  explicit ZeroPadding2DImpl(Sides2 p) : NhwcLayerImpl("ZeroPadding2D"), p_(p) {
    if (p.top < 0 || p.bottom < 0 || p.left < 0 || p.right < 0)
      throw Error("ZeroPadding2D: padding must be >= 0, got ((" +
                  std::to_string(p.top) + ", " + std::to_string(p.bottom) +
                  "), (" + std::to_string(p.left) + ", " +
                  std::to_string(p.right) + "))");
  }
  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{{"padding", sidesConfig(p_)}};
  }

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    Tensor x = nhwcInput(inputs);
    x = padAxis(x, 1, p_.top, p_.bottom);
    return {padAxis(x, 2, p_.left, p_.right)};
  }

private:
  static Tensor padAxis(const Tensor &x, int64_t axis, int64_t before,
                        int64_t after) {
    std::vector<Tensor> parts;
    auto zeros = [&](int64_t n) {
      Shape s = x.shape();
      s[axis] = n;
      return ops::fillLike(x, s, 0.0);
    };
    if (before)
      parts.push_back(zeros(before));
    parts.push_back(x);
    if (after)
      parts.push_back(zeros(after));
    return parts.size() == 1 ? x : ops::concat(parts, axis);
  }

  Sides2 p_;
};

class Cropping2DImpl : public NhwcLayerImpl {
public:
  explicit Cropping2DImpl(Sides2 c) : NhwcLayerImpl("Cropping2D"), c_(c) {
    if (c.top < 0 || c.bottom < 0 || c.left < 0 || c.right < 0)
      throw Error("Cropping2D: cropping must be >= 0");
  }
  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{{"cropping", sidesConfig(c_)}};
  }

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    const Tensor &x = nhwcInput(inputs);
    int64_t h = x.dim(1), w = x.dim(2);
    if (c_.top + c_.bottom >= h || c_.left + c_.right >= w)
      fail("cropping ((" + std::to_string(c_.top) + ", " +
           std::to_string(c_.bottom) + "), (" + std::to_string(c_.left) + ", " +
           std::to_string(c_.right) + ")) leaves nothing of " +
           x.shapeString());
    return {ops::slice(x, {0, c_.top, c_.left, 0},
                       {x.dim(0), h - c_.bottom, w - c_.right, x.dim(3)},
                       {1, 1, 1, 1})};
  }

private:
  Sides2 c_;
};

class UpSampling2DImpl : public NhwcLayerImpl {
public:
  UpSampling2DImpl(Size2 size, const std::string &interpolation)
      : NhwcLayerImpl("UpSampling2D"), size_(size) {
    if (size.h <= 0 || size.w <= 0)
      throw Error("UpSampling2D: size must be positive, got " +
                  shapeToString({size.h, size.w}));
    if (interpolation != "nearest")
      throw Error("UpSampling2D: interpolation '" + interpolation +
                  "' is not supported (only nearest)");
  }
  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{{"size", llvm::json::Array{size_.h, size_.w}},
                              {"interpolation", "nearest"}};
  }

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    const Tensor &x = nhwcInput(inputs);
    int64_t n = x.dim(0), h = x.dim(1), w = x.dim(2), c = x.dim(3);
    std::optional<int64_t> oh = checkedNumElements({h, size_.h});
    std::optional<int64_t> ow = checkedNumElements({w, size_.w});
    if (!oh || !ow)
      fail("size " + shapeToString({size_.h, size_.w}) + " overflows " +
           x.shapeString());
    // [N,H,1,W,1,C] -> [N,H,sh,W,sw,C] -> [N,H*sh,W*sw,C]: Keras's repeat
    // along H then W, each pixel copied into an sh x sw block.
    Tensor y = ops::reshape(x, {n, h, 1, w, 1, c});
    y = ops::broadcastTo(y, {n, h, size_.h, w, size_.w, c});
    return {ops::reshape(y, {n, *oh, *ow, c})};
  }

private:
  Size2 size_;
};

class PermuteImpl : public LayerImpl {
public:
  explicit PermuteImpl(std::vector<int64_t> dims)
      : LayerImpl("Permute"), dims_(std::move(dims)) {
    std::vector<int64_t> sorted = dims_;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < sorted.size(); ++i)
      if (sorted[i] != static_cast<int64_t>(i) + 1)
        throw Error("Permute: dims must be a permutation of 1.." +
                    std::to_string(dims_.size()) + ", got " +
                    shapeToString(dims_));
  }
  llvm::json::Object kerasConfig() const override {
    llvm::json::Array dims;
    for (int64_t d : dims_)
      dims.push_back(d);
    return llvm::json::Object{{"dims", std::move(dims)}};
  }

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    expectInputs(inputs, 1);
    const Tensor &x = inputs[0];
    if (x.rank() != static_cast<int64_t>(dims_.size()) + 1)
      fail("dims " + shapeToString(dims_) + " permute " +
           std::to_string(dims_.size()) + " axes, the input " +
           x.shapeString() + " has " + std::to_string(x.rank() - 1));
    std::vector<int64_t> perm{0};
    perm.insert(perm.end(), dims_.begin(), dims_.end());
    return {ops::transpose(x, perm)};
  }

private:
  std::vector<int64_t> dims_;
};

class RepeatVectorImpl : public LayerImpl {
public:
  explicit RepeatVectorImpl(int64_t n) : LayerImpl("RepeatVector"), n_(n) {
    if (n <= 0)
      throw Error("RepeatVector: n must be positive, got " + std::to_string(n));
  }
  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{{"n", n_}};
  }

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    expectInputs(inputs, 1);
    const Tensor &x = inputs[0];
    if (x.rank() != 2)
      fail("expects an input of rank 2 ([batch, features]), got " +
           x.shapeString());
    if (TensorSize size =
            tensorSize({x.dim(0), n_, x.dim(1)}, dtypeSize(x.dtype()),
                       dtypeName(x.dtype()));
        !size)
      fail("n " + std::to_string(n_) + " repeats of " + x.shapeString() +
           " are too large: " + size.error);
    int64_t batch = x.dim(0), features = x.dim(1);
    return {ops::broadcastTo(ops::reshape(x, {batch, 1, features}),
                             {batch, n_, features})};
  }

private:
  int64_t n_;
};

} // namespace

ZeroPadding2D::ZeroPadding2D(Sides2 padding)
    : Layer(std::make_shared<ZeroPadding2DImpl>(padding)) {}

Cropping2D::Cropping2D(Sides2 cropping)
    : Layer(std::make_shared<Cropping2DImpl>(cropping)) {}

UpSampling2D::UpSampling2D(Size2 size, const std::string &interpolation)
    : Layer(std::make_shared<UpSampling2DImpl>(size, interpolation)) {}

Flatten::Flatten() : Layer(std::make_shared<FlattenImpl>()) {}

Reshape::Reshape(Shape targetShape)
    : Layer(std::make_shared<ReshapeImpl>(std::move(targetShape))) {}

Permute::Permute(std::vector<int64_t> dims)
    : Layer(std::make_shared<PermuteImpl>(std::move(dims))) {}

RepeatVector::RepeatVector(int64_t n)
    : Layer(std::make_shared<RepeatVectorImpl>(n)) {}
