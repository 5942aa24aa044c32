//===- Erasing.cpp - RandomErasing ----------------------------------------===//
//
// Keras's RandomErasing: with probability uniform(factor) per image, one
// box filled. The box's sides are sqrt(uniform(scale)) of the width and of
// the height (two draws per image), placed at uniform offsets within the
// image; pixel (y, x) is inside when x0 <= x < x1 and y0 <= y < y1. The
// fill is a number, one per channel, or (fill_value null) normal noise
// times the range's upper end, clipped to the range. Identity at inference.
//
//===----------------------------------------------------------------------===//

#include "frontend/Layers.h"
#include "frontend/Ops.h"
#include "frontend/layers/AugmentationImpl.h"
#include "frontend/layers/ColorOps.h"

#include <cmath>

using namespace kcc;

namespace {

class RandomErasingImpl : public layers::AugmentationImpl {
public:
  RandomErasingImpl(std::pair<double, double> factor,
                    std::pair<double, double> scale,
                    std::vector<double> fillValue, double low, double high,
                    uint64_t seed)
      : AugmentationImpl("RandomErasing", seed), factor_(factor), scale_(scale),
        fill_(std::move(fillValue)), low_(low), high_(high) {
    auto bad = [](const std::string &m) { throw Error("RandomErasing: " + m); };
    for (auto [lo, hi] : {factor, scale})
      if (!(lo >= 0 && lo <= hi && hi <= 1))
        bad("factor and scale must be ordered pairs in [0, 1]");
    if (fill_.size() > 1 && fill_.size() != 3)
      bad("fill_value must be a number or three numbers");
    for (double v : fill_)
      if (!std::isfinite(v))
        bad("fill_value must be finite");
    if (!(std::isfinite(low) && std::isfinite(high) && low < high))
      bad("value_range must be [low, high] with low < high");
  }
  llvm::json::Object kerasConfig() const override {
    llvm::json::Value fill = nullptr;
    if (fill_.size() == 1)
      fill = fill_[0];
    else if (fill_.size() == 3)
      fill = llvm::json::Array{fill_[0], fill_[1], fill_[2]};
    return llvm::json::Object{
        {"factor", llvm::json::Array{factor_.first, factor_.second}},
        {"scale", llvm::json::Array{scale_.first, scale_.second}},
        {"fill_value", std::move(fill)},
        {"value_range", llvm::json::Array{low_, high_}},
        {"seed", seedConfig()},
        {"data_format", "channels_last"}};
  }

protected:
  void build(const std::vector<Shape> &shapes) override {
    AugmentationImpl::build(shapes);
    if (fill_.size() == 3 && shapes[0][3] != 3)
      fail("a fill_value of three numbers needs 3 channels, got " +
           shapeString(shapes[0]));
  }

  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &ctx) override {
    expectInputs(inputs, 1);
    const Tensor &x = inputs[0];
    if (!ctx.training)
      return {x};
    DType t = x.dtype();
    int64_t n = x.dim(0), height = x.dim(1), width = x.dim(2);
    Shape column{n, 1, 1, 1};
    // [lo, hi) of the box along an axis of `size` pixels; `axis` 2 for the
    // width, 1 for the height.
    auto inside = [&](int64_t size, int64_t axis, const char *stream) {
      Tensor side = ops::mul(
          ops::sqrt(uniform(column, t, ctx, scale_.first, scale_.second,
                            std::string(stream) + "/scale")),
          ops::scalar(static_cast<double>(size), t));
      Tensor lo = ops::mul(
          uniform(column, t, ctx, 0, 1, std::string(stream) + "/start"),
          ops::sub(ops::scalar(static_cast<double>(size), t), side));
      Tensor hi = ops::add(lo, side);
      std::vector<double> positions(size);
      for (int64_t i = 0; i < size; ++i)
        positions[i] = static_cast<double>(i);
      Shape grid{1, 1, 1, 1};
      grid[axis] = size;
      Tensor g = ops::cast(
          Tensor(NDArray::fromVector(grid, positions, DType::F32)), t);
      return ops::mul(ops::cast(ops::compare(ops::CompareKind::GE, g, lo), t),
                      ops::cast(ops::compare(ops::CompareKind::LT, g, hi), t));
    };
    Tensor box = ops::mul(inside(width, 2, "x"), inside(height, 1, "y"));
    Tensor probability = perImage(x, ctx, factor_.first, factor_.second);
    Tensor threshold = uniform(column, t, ctx, 0, 1, "threshold");
    Tensor erase = ops::mul(box, ops::cast(ops::compare(ops::CompareKind::LT,
                                                        threshold, probability),
                                           t));
    Tensor fill;
    if (fill_.empty())
      fill = ops::mul(normal(x.shape(), t, ctx, "fill"), ops::scalar(high_, t));
    else if (fill_.size() == 1)
      fill = ops::scalar(fill_[0], t);
    else
      fill = ops::cast(Tensor(NDArray::fromVector({3}, fill_)), t);
    fill = layers::clipTo(fill, low_, high_);
    return {ops::select(ops::compare(ops::CompareKind::GT,
                                     ops::broadcastTo(erase, x.shape()),
                                     ops::scalar(0.5, t)),
                        ops::broadcastTo(fill, x.shape()), x)};
  }

private:
  std::pair<double, double> factor_, scale_;
  std::vector<double> fill_;
  double low_, high_;
};

} // namespace

RandomErasing::RandomErasing(std::pair<double, double> factor,
                             std::pair<double, double> scale,
                             std::vector<double> fillValue, double low,
                             double high, uint64_t seed)
    : Layer(std::make_shared<RandomErasingImpl>(
          factor, scale, std::move(fillValue), low, high, seed)) {}
