//===- Volume.cpp - 3-D pooling, padding, cropping and upsampling ---------===//
//
// The layers of NDHWC volumes besides Conv3D (Convolution.cpp). Pooling is
// ops::maxPool3d / avgPool3d; padding, cropping and upsampling are concat,
// slice, reshape and broadcast_to, as their 2-D forms in Reshaping.cpp, so
// none needs a gradient rule of its own.
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

llvm::json::Array triple(Size3 s) { return llvm::json::Array{s.d, s.h, s.w}; }

void checkPositive(const std::string &layer, const std::string &what, Size3 s) {
  if (s.d <= 0 || s.h <= 0 || s.w <= 0)
    throw Error(layer + ": " + what + " must be positive, got " +
                shapeToString({s.d, s.h, s.w}));
}

/// ((front, back), (top, bottom), (left, right)), as Keras 3 stores them.
llvm::json::Value sidesConfig(const Sides3 &s) {
  llvm::json::Array a;
  for (const Sides3::Pair &p : {s.depth, s.rows, s.cols})
    a.push_back(llvm::json::Array{p.first, p.second});
  return a;
}

void checkSides(const std::string &layer, const std::string &what,
                const Sides3 &s) {
  for (const Sides3::Pair &p : {s.depth, s.rows, s.cols})
    if (p.first < 0 || p.second < 0)
      throw Error(layer + ": " + what + " must be >= 0");
}

/// The base of the layers of one NDHWC input.
class VolumeLayerImpl : public LayerImpl {
public:
  using LayerImpl::LayerImpl;

protected:
  const Tensor &volumeInput(const std::vector<Tensor> &inputs) const {
    expectInputs(inputs, 1);
    const Tensor &x = inputs[0];
    if (x.rank() != 5)
      fail("expects an NDHWC input of rank 5, got " + x.shapeString());
    return x;
  }
};

class Pool3DImpl : public VolumeLayerImpl {
public:
  Pool3DImpl(std::string className, bool isMax, Size3 pool,
             std::optional<Size3> strides, const std::string &padding)
      : VolumeLayerImpl(className), isMax_(isMax), pool_(pool),
        strides_(strides.value_or(pool)),
        padding_(parsePadding(className, padding)) {
    checkPositive(className, "pool_size", pool_);
    checkPositive(className, "strides", strides_);
  }
  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{
        {"pool_size", triple(pool_)},
        {"strides", triple(strides_)},
        {"padding", padding_ == ops::Padding::Same ? "same" : "valid"}};
  }

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    const Tensor &x = volumeInput(inputs);
    std::vector<int64_t> window{pool_.d, pool_.h, pool_.w};
    std::vector<int64_t> strides{strides_.d, strides_.h, strides_.w};
    if (isMax_)
      return {ops::maxPool3d(x, window, strides, padding_)};
    return {ops::avgPool3d(x, window, strides, padding_)};
  }

private:
  bool isMax_;
  Size3 pool_, strides_;
  ops::Padding padding_;
};

class GlobalPool3DImpl : public VolumeLayerImpl {
public:
  GlobalPool3DImpl(std::string className, bool isMax, bool keepdims)
      : VolumeLayerImpl(std::move(className)), isMax_(isMax),
        keepdims_(keepdims) {}
  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{{"keepdims", keepdims_}};
  }

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    const Tensor &x = volumeInput(inputs);
    if (isMax_)
      return {ops::reduceMax(x, {1, 2, 3}, keepdims_)};
    return {ops::reduceMean(x, {1, 2, 3}, keepdims_)};
  }

private:
  bool isMax_, keepdims_;
};

class ZeroPadding3DImpl : public VolumeLayerImpl {
public:
  explicit ZeroPadding3DImpl(Sides3 p)
      : VolumeLayerImpl("ZeroPadding3D"), p_(p) {
    checkSides("ZeroPadding3D", "padding", p);
  }
  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{{"padding", sidesConfig(p_)}};
  }

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    Tensor x = volumeInput(inputs);
    int64_t axis = 1;
    for (const Sides3::Pair &p : {p_.depth, p_.rows, p_.cols}) {
      std::vector<Tensor> parts;
      auto zeros = [&](int64_t n) {
        Shape s = x.shape();
        s[axis] = n;
        return ops::fillLike(x, s, 0.0);
      };
      if (p.first)
        parts.push_back(zeros(p.first));
      parts.push_back(x);
      if (p.second)
        parts.push_back(zeros(p.second));
      if (parts.size() > 1)
        x = ops::concat(parts, axis);
      ++axis;
    }
    return {x};
  }

private:
  Sides3 p_;
};

class Cropping3DImpl : public VolumeLayerImpl {
public:
  explicit Cropping3DImpl(Sides3 c) : VolumeLayerImpl("Cropping3D"), c_(c) {
    checkSides("Cropping3D", "cropping", c);
  }
  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{{"cropping", sidesConfig(c_)}};
  }

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    const Tensor &x = volumeInput(inputs);
    std::vector<int64_t> start{0, c_.depth.first, c_.rows.first, c_.cols.first,
                               0};
    std::vector<int64_t> limit{x.dim(0), x.dim(1) - c_.depth.second,
                               x.dim(2) - c_.rows.second,
                               x.dim(3) - c_.cols.second, x.dim(4)};
    for (int axis = 1; axis <= 3; ++axis)
      if (start[axis] >= limit[axis])
        fail("cropping " + std::to_string(start[axis]) + " and " +
             std::to_string(x.dim(axis) - limit[axis]) + " of axis " +
             std::to_string(axis) + " leaves nothing of " + x.shapeString());
    return {ops::slice(x, start, limit, {1, 1, 1, 1, 1})};
  }

private:
  Sides3 c_;
};

class UpSampling3DImpl : public VolumeLayerImpl {
public:
  explicit UpSampling3DImpl(Size3 size)
      : VolumeLayerImpl("UpSampling3D"), size_(size) {
    checkPositive("UpSampling3D", "size", size);
  }
  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{{"size", triple(size_)}};
  }

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    const Tensor &x = volumeInput(inputs);
    int64_t n = x.dim(0), d = x.dim(1), h = x.dim(2), w = x.dim(3),
            c = x.dim(4);
    std::optional<int64_t> od = checkedNumElements({d, size_.d});
    std::optional<int64_t> oh = checkedNumElements({h, size_.h});
    std::optional<int64_t> ow = checkedNumElements({w, size_.w});
    if (!od || !oh || !ow)
      fail("size " + shapeToString({size_.d, size_.h, size_.w}) +
           " overflows " + x.shapeString());
    if (TensorSize out = tensorSize({n, *od, *oh, *ow, c}, dtypeSize(x.dtype()),
                                    dtypeName(x.dtype()));
        !out)
      fail("size " + shapeToString({size_.d, size_.h, size_.w}) + " of " +
           x.shapeString() + ": the output " + out.error);
    // Keras repeats along depth, then height, then width: each voxel
    // becomes an sd x sh x sw block.
    Tensor y = ops::reshape(x, {n, d, 1, h, 1, w, 1, c});
    y = ops::broadcastTo(y, {n, d, size_.d, h, size_.h, w, size_.w, c});
    return {ops::reshape(y, {n, *od, *oh, *ow, c})};
  }

private:
  Size3 size_;
};

} // namespace

MaxPooling3D::MaxPooling3D(Size3 poolSize, std::optional<Size3> strides,
                           const std::string &padding)
    : Layer(std::make_shared<Pool3DImpl>("MaxPooling3D", /*isMax=*/true,
                                         poolSize, strides, padding)) {}

AveragePooling3D::AveragePooling3D(Size3 poolSize, std::optional<Size3> strides,
                                   const std::string &padding)
    : Layer(std::make_shared<Pool3DImpl>("AveragePooling3D", /*isMax=*/false,
                                         poolSize, strides, padding)) {}

GlobalAveragePooling3D::GlobalAveragePooling3D(bool keepdims)
    : Layer(std::make_shared<GlobalPool3DImpl>("GlobalAveragePooling3D",
                                               /*isMax=*/false, keepdims)) {}

GlobalMaxPooling3D::GlobalMaxPooling3D(bool keepdims)
    : Layer(std::make_shared<GlobalPool3DImpl>("GlobalMaxPooling3D",
                                               /*isMax=*/true, keepdims)) {}

ZeroPadding3D::ZeroPadding3D(Sides3 padding)
    : Layer(std::make_shared<ZeroPadding3DImpl>(padding)) {}

Cropping3D::Cropping3D(Sides3 cropping)
    : Layer(std::make_shared<Cropping3DImpl>(cropping)) {}

UpSampling3D::UpSampling3D(Size3 size)
    : Layer(std::make_shared<UpSampling3DImpl>(size)) {}
