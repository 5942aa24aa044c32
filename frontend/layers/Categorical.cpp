//===- Categorical.cpp - CategoryEncoding and Discretization --------------===//
//
// Keras's integer-feature preprocessing, traced as comparisons: an id's
// one-hot row is ids == [0, 1, ..., depth) (compared in float32, exact for
// the depths allowed), multi_hot its maximum and count its sum over the
// features; Discretization's bucket is the number of boundaries at or
// below the value (numpy's digitize). Nothing here has a gradient: what
// reads these outputs trains, what feeds them does not.
//
//===----------------------------------------------------------------------===//

#include "frontend/Layers.h"
#include "frontend/Ops.h"

#include <cmath>
#include <functional>

using namespace kcc;

namespace {

/// Depths whose ids float32 holds exactly.
constexpr int64_t kMaxDepth = int64_t(1) << 24;

/// x [..., depth] one-hot rows of ids `x` (ids outside [0, depth): zeros).
Tensor oneHot(const Tensor &x, int64_t depth) {
  std::vector<double> range(depth);
  for (int64_t i = 0; i < depth; ++i)
    range[i] = static_cast<double>(i);
  Tensor ids = x.dtype() == DType::F32 ? x : ops::cast(x, DType::F32);
  Shape column = x.shape();
  column.push_back(1);
  Tensor equal =
      ops::compare(ops::CompareKind::EQ, ops::reshape(ids, column),
                   Tensor(NDArray::fromVector({depth}, range, DType::F32)));
  return ops::cast(equal, DType::F32);
}

/// Keras's encode_categorical_inputs for "one_hot", "multi_hot" and
/// "count" on a batched input (`fail` reports what Keras's shapes make
/// meaningless: multi_hot and count reduce axis 1 of a rank-2 input).
Tensor encode(const Tensor &x, const std::string &mode, int64_t depth,
              const std::function<void(const std::string &)> &fail) {
  if (mode == "one_hot") {
    if (x.rank() > 1 && x.dim(x.rank() - 1) == 1) {
      Shape squeezed = x.shape();
      squeezed.pop_back();
      return oneHot(ops::reshape(x, squeezed), depth);
    }
    return oneHot(x, depth);
  }
  if (x.rank() != 2)
    fail("output_mode '" + mode + "' expects ids of rank 2 ([batch, " +
         "features]), got " + x.shapeString());
  if (mode == "multi_hot") {
    // Keras casts the ids to int32 first.
    Tensor ids = isFloat(x.dtype()) ? ops::cast(x, DType::I32) : x;
    return ops::reduceMax(oneHot(ids, depth), {1});
  }
  return ops::reduceSum(oneHot(x, depth), {1});
}

void checkMode(const std::string &cls, const std::string &mode,
               bool intAllowed) {
  if (mode != "one_hot" && mode != "multi_hot" && mode != "count" &&
      !(intAllowed && mode == "int"))
    throw Error(cls + ": output_mode '" + mode + "' is not supported (" +
                (intAllowed ? "int, " : "") + "one_hot, multi_hot or count)");
}

class CategoryEncodingImpl : public LayerImpl {
public:
  CategoryEncodingImpl(int64_t numTokens, std::string mode)
      : LayerImpl("CategoryEncoding"), numTokens_(numTokens),
        mode_(std::move(mode)) {
    if (numTokens_ < 1 || numTokens_ > kMaxDepth)
      throw Error("CategoryEncoding: num_tokens must be in [1, 2^24], got " +
                  std::to_string(numTokens_));
    checkMode("CategoryEncoding", mode_, /*intAllowed=*/false);
  }

  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{
        {"num_tokens", numTokens_}, {"output_mode", mode_}, {"sparse", false}};
  }

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    if (inputs.size() != 1)
      fail("expects one input (count_weights are not supported), got " +
           std::to_string(inputs.size()));
    return {encode(inputs[0], mode_, numTokens_,
                   [&](const std::string &m) { fail(m); })};
  }
  bool autocastsInputs() const override { return false; }

private:
  int64_t numTokens_;
  std::string mode_;
};

class DiscretizationImpl : public LayerImpl {
public:
  DiscretizationImpl(std::vector<double> boundaries, std::string mode)
      : LayerImpl("Discretization"), boundaries_(std::move(boundaries)),
        mode_(std::move(mode)) {
    if (boundaries_.empty() ||
        static_cast<int64_t>(boundaries_.size()) >= kMaxDepth)
      throw Error("Discretization: bin_boundaries must hold 1 to 2^24 - 1 "
                  "values");
    for (size_t i = 0; i < boundaries_.size(); ++i)
      if (!std::isfinite(boundaries_[i]) ||
          (i && boundaries_[i] < boundaries_[i - 1]))
        throw Error("Discretization: bin_boundaries must be finite and "
                    "sorted");
    checkMode("Discretization", mode_, /*intAllowed=*/true);
  }

  llvm::json::Object kerasConfig() const override {
    llvm::json::Array bounds;
    for (double b : boundaries_)
      bounds.push_back(b);
    return llvm::json::Object{{"bin_boundaries", std::move(bounds)},
                              {"num_bins", nullptr},
                              {"epsilon", 0.01},
                              {"output_mode", mode_},
                              {"sparse", false}};
  }

protected:
  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    expectInputs(inputs, 1);
    Tensor x = inputs[0];
    if (x.dtype() != DType::F32)
      x = ops::cast(x, DType::F32);
    Shape column = x.shape();
    column.push_back(1);
    int64_t k = static_cast<int64_t>(boundaries_.size());
    Tensor atOrAbove = ops::cast(
        ops::compare(ops::CompareKind::GE, ops::reshape(x, column),
                     Tensor(NDArray::fromVector({k}, boundaries_, DType::F32))),
        DType::F32);
    Tensor bucket = ops::reduceSum(atOrAbove, {-1});
    if (mode_ == "int")
      return {ops::cast(bucket, DType::I32)};
    return {
        encode(bucket, mode_, k + 1, [&](const std::string &m) { fail(m); })};
  }
  bool autocastsInputs() const override { return false; }

private:
  std::vector<double> boundaries_;
  std::string mode_;
};

} // namespace

CategoryEncoding::CategoryEncoding(int64_t numTokens,
                                   const std::string &outputMode)
    : Layer(std::make_shared<CategoryEncodingImpl>(numTokens, outputMode)) {}

Discretization::Discretization(std::vector<double> binBoundaries,
                               const std::string &outputMode)
    : Layer(std::make_shared<DiscretizationImpl>(std::move(binBoundaries),
                                                 outputMode)) {}
