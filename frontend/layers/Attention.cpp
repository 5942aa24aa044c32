//===- Attention.cpp - EinsumDense and the attention layers ---------------===//
//
// EinsumDense for the equations whose input is free dims then contracted
// dims, whose kernel is contracted dims then output dims, and whose output
// is the free dims then the output dims (`ab,bc->ac`, `abc,cd->abd`, and
// MultiHeadAttention's projections `abc,cde->abde`, `abcd,cde->abe`): one
// 2-D kc.matmul of the input folded to [free, contracted] by the kernel
// folded to [contracted, output], so the GEMM, its bias epilogue and
// autodiff are Dense's.
//
// MultiHeadAttention as Keras 3 computes it for rank-3 query/value/key and
// no dropout (GroupQueryAttention too: fewer key/value heads, each
// repeated for its query heads): the four projections above, then per batch and
// head softmax(q k^T / sqrt(key_dim)) v as two kc.batch_matmuls over [B*H, T,
// D] with the causal mask a constant added to the scores before the softmax.
// Its weights are Keras's: query/key/value/attention_output, each a kernel
// and (with use_bias) a bias, in the EinsumDense shapes.
//
// Attention and AdditiveAttention: their scores (dot products or sums of
// tanh), softmax, and a batched product with the value.
//
//===----------------------------------------------------------------------===//

#include "frontend/Layers.h"
#include "frontend/Ops.h"

#include <cfloat>
#include <cmath>
#include <numeric>
#include <optional>
#include <set>

using namespace kcc;

namespace {

int64_t product(const Shape &s) {
  return std::accumulate(s.begin(), s.end(), int64_t(1),
                         std::multiplies<int64_t>());
}

/// Folds the free (leading) dims of `x` into rows and the trailing
/// `contracted` dims into columns, multiplies by `kernel` folded to
/// [contracted, output] and adds the `bias` of [output] (the matmul's
/// epilogue); the result is [free..., output...].
Tensor projectLastDims(const Tensor &x, size_t contracted, const Tensor &kernel,
                       const std::optional<Tensor> &bias,
                       const Shape &outDims) {
  Shape free(x.shape().begin(), x.shape().end() - contracted);
  int64_t k = product(Shape(x.shape().end() - contracted, x.shape().end()));
  int64_t n = product(outDims);
  Tensor rows = ops::reshape(x, {product(free), k});
  Tensor y = ops::matmul(rows, ops::reshape(kernel, {k, n}));
  if (bias)
    y = ops::add(y, ops::reshape(*bias, {n}));
  Shape out = free;
  out.insert(out.end(), outDims.begin(), outDims.end());
  return ops::reshape(y, out);
}

void checkActivation(const std::string &layer, const std::string &name) {
  if (!ops::isActivation(name))
    throw Error(layer + ": unknown activation '" + name + "' (expected " +
                ops::activationNames() + ")");
}

class EinsumDenseImpl : public LayerImpl {
public:
  EinsumDenseImpl(std::string equation, Shape outputShape, std::string biasAxes,
                  std::string activation, std::string kernelInit,
                  std::string biasInit)
      : LayerImpl("EinsumDense"), equation_(std::move(equation)),
        outputShape_(std::move(outputShape)), biasAxes_(std::move(biasAxes)),
        activation_(std::move(activation)), kernelInit_(std::move(kernelInit)),
        biasInit_(std::move(biasInit)) {
    parseEquation();
    checkActivation("EinsumDense", activation_);
  }

  llvm::json::Object kerasConfig() const override {
    llvm::json::Array shape;
    for (int64_t d : outputShape_)
      shape.push_back(d);
    return llvm::json::Object{{"equation", equation_},
                              {"output_shape", std::move(shape)},
                              {"activation", activation_},
                              {"bias_axes", biasAxes_.empty()
                                                ? llvm::json::Value(nullptr)
                                                : llvm::json::Value(biasAxes_)},
                              {"kernel_initializer", kernelInit_},
                              {"bias_initializer", biasInit_}};
  }

protected:
  void build(const std::vector<Shape> &shapes) override {
    if (shapes.size() != 1 || shapes[0].size() != input_.size())
      fail("equation '" + equation_ + "' expects one input of rank " +
           std::to_string(input_.size()) + ", got " +
           (shapes.empty() ? std::string("none") : shapeString(shapes[0])));
    const Shape &in = shapes[0];
    // Keras's output_shape leaves out the batch (the first output dim).
    if (outputShape_.size() + 1 != output_.size())
      fail("output_shape " + shapeToString(outputShape_) + " must have " +
           std::to_string(output_.size() - 1) + " dims for equation '" +
           equation_ + "'");
    size_t nFree = input_.size() - contracted_;
    for (size_t i = 1; i < nFree; ++i)
      if (outputShape_[i - 1] != in[i] && outputShape_[i - 1] > 0)
        fail("output_shape " + shapeToString(outputShape_) +
             " does not match the input " + shapeString(in) + " at '" +
             std::string(1, output_[i]) + "'");
    outDims_.assign(outputShape_.begin() + nFree - 1, outputShape_.end());
    for (int64_t d : outDims_)
      if (d <= 0)
        fail("output_shape " + shapeToString(outputShape_) +
             " must be positive in the kernel's output dims");
    Shape kernel(in.end() - contracted_, in.end());
    kernel.insert(kernel.end(), outDims_.begin(), outDims_.end());
    addWeight("kernel", kernel, kernelInit_);
    if (!biasAxes_.empty()) {
      // Keras: the output dims from the first bias axis on, 1 where a dim
      // carries no bias.
      size_t first = output_.find_first_of(biasAxes_);
      Shape bias;
      for (size_t i = first; i < output_.size(); ++i)
        bias.push_back(biasAxes_.find(output_[i]) != std::string::npos
                           ? outDims_[i - nFree]
                           : 1);
      biasIsFull_ = first == nFree &&
                    std::find(bias.begin(), bias.end(), 1) == bias.end();
      addWeight("bias", bias, biasInit_);
    }
  }

  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    expectInputs(inputs, 1);
    const Tensor &x = inputs[0];
    std::optional<Tensor> fullBias;
    if (!biasAxes_.empty() && biasIsFull_)
      fullBias = weight(1);
    Tensor y = projectLastDims(x, contracted_, weight(0), fullBias, outDims_);
    if (!biasAxes_.empty() && !biasIsFull_)
      y = ops::add(y, weight(1));
    return {ops::activation(y, activation_)};
  }

private:
  /// Splits "in,kernel->out" and checks it has the supported form.
  void parseEquation() {
    auto bad = [&](const std::string &why) {
      throw Error("EinsumDense: equation '" + equation_ +
                  "' is not supported: " + why +
                  " (supported: the input's free dims then its contracted "
                  "dims, a kernel of the contracted then the output dims, "
                  "an output of the free then the output dims, as in "
                  "'abc,cde->abde' and 'abcd,cde->abe')");
    };
    size_t comma = equation_.find(','), arrow = equation_.find("->");
    if (comma == std::string::npos || arrow == std::string::npos ||
        arrow < comma)
      bad("expected 'INPUT,KERNEL->OUTPUT'");
    input_ = equation_.substr(0, comma);
    kernel_ = equation_.substr(comma + 1, arrow - comma - 1);
    output_ = equation_.substr(arrow + 2);
    for (const std::string *s : {&input_, &kernel_, &output_})
      for (char ch : *s)
        if (!std::isalpha(static_cast<unsigned char>(ch)))
          bad("only letters are supported (no '...')");
    for (const std::string *s : {&input_, &kernel_, &output_})
      if (std::set<char>(s->begin(), s->end()).size() != s->size())
        bad("a letter repeats within one operand");
    // The contracted dims: the kernel's letters found in the input.
    contracted_ = 0;
    while (contracted_ < kernel_.size() &&
           input_.find(kernel_[contracted_]) != std::string::npos)
      ++contracted_;
    size_t nFree =
        input_.size() >= contracted_ ? input_.size() - contracted_ : 0;
    if (contracted_ == 0 || nFree == 0 ||
        input_.substr(nFree) != kernel_.substr(0, contracted_))
      bad("the input must end with the kernel's leading (contracted) dims");
    std::string outLetters = kernel_.substr(contracted_);
    if (output_ != input_.substr(0, nFree) + outLetters)
      bad("the output must be the input's free dims then the kernel's "
          "output dims");
    if (outLetters.empty())
      bad("the kernel has no output dims");
    for (char ch : biasAxes_)
      if (outLetters.find(ch) == std::string::npos)
        throw Error("EinsumDense: bias axis '" + std::string(1, ch) +
                    "' is not one of the kernel's output dims '" + outLetters +
                    "' of equation '" + equation_ + "'");
  }

  std::string equation_;
  Shape outputShape_;
  std::string biasAxes_, activation_, kernelInit_, biasInit_;
  std::string input_, kernel_, output_;
  size_t contracted_ = 0;
  Shape outDims_;
  bool biasIsFull_ = false;
};

/// MultiHeadAttention's and GroupQueryAttention's shape: GroupedQuery
/// projects the key and value to fewer heads, each shared by
/// heads / kvHeads consecutive query heads (Keras's ops.repeat on axis 2).
struct HeadsConfig {
  std::string className;
  int64_t heads, kvHeads, keyDim, valueDim;
  bool useBias;
  Shape outputShape;
  bool causal, gate;
  int64_t slidingWindow; ///< 0: none
  std::string kernelInit, biasInit;
};

class MultiHeadAttentionImpl : public LayerImpl {
public:
  explicit MultiHeadAttentionImpl(HeadsConfig c)
      : LayerImpl(c.className), c_(std::move(c)) {
    if (c_.valueDim == 0)
      c_.valueDim = c_.keyDim;
    if (c_.heads <= 0 || c_.keyDim <= 0 || c_.valueDim < 0)
      throw Error(c_.className + ": the number of heads (" +
                  std::to_string(c_.heads) + ") and the key dim (" +
                  std::to_string(c_.keyDim) +
                  ") must be positive, the value dim (" +
                  std::to_string(c_.valueDim) + ") positive or 0 (key dim)");
    if (c_.kvHeads <= 0 || c_.heads % c_.kvHeads != 0)
      throw Error(c_.className + ": num_query_heads (" +
                  std::to_string(c_.heads) +
                  ") must be a positive multiple of num_key_value_heads (" +
                  std::to_string(c_.kvHeads) + ")");
    if (c_.slidingWindow < 0)
      throw Error(c_.className + ": sliding_window (" +
                  std::to_string(c_.slidingWindow) +
                  ") must be a positive integer or none");
    for (int64_t d : c_.outputShape)
      if (d <= 0)
        throw Error(c_.className + ": output_shape " +
                    shapeToString(c_.outputShape) + " must be positive");
  }

  bool useCausalMask() const { return c_.causal; }

  llvm::json::Object kerasConfig() const override {
    llvm::json::Value window = nullptr;
    if (c_.slidingWindow > 0)
      window = c_.slidingWindow;
    if (c_.className == "GroupQueryAttention")
      return llvm::json::Object{{"head_dim", c_.keyDim},
                                {"num_query_heads", c_.heads},
                                {"num_key_value_heads", c_.kvHeads},
                                {"use_bias", c_.useBias},
                                {"use_gate", c_.gate},
                                {"sliding_window", std::move(window)},
                                {"dropout", 0.0},
                                {"kernel_initializer", c_.kernelInit},
                                {"bias_initializer", c_.biasInit}};
    llvm::json::Value shape = nullptr;
    if (!c_.outputShape.empty()) {
      llvm::json::Array a;
      for (int64_t d : c_.outputShape)
        a.push_back(d);
      shape = std::move(a);
    }
    return llvm::json::Object{{"num_heads", c_.heads},
                              {"key_dim", c_.keyDim},
                              {"value_dim", c_.valueDim},
                              {"dropout", 0.0},
                              {"use_bias", c_.useBias},
                              {"output_shape", std::move(shape)},
                              {"attention_axes", llvm::json::Array{1}},
                              {"use_gate", c_.gate},
                              {"sliding_window", std::move(window)},
                              {"kernel_initializer", c_.kernelInit},
                              {"bias_initializer", c_.biasInit}};
  }

protected:
  void build(const std::vector<Shape> &shapes) override {
    if (shapes.size() < 2 || shapes.size() > 4)
      fail("expects query and value (and optionally key and attention_mask), "
           "got " +
           std::to_string(shapes.size()) + " input(s)");
    for (const Shape &s : shapes)
      if (s.size() != 3)
        fail("expects inputs of rank 3 ([batch, steps, features]), got " +
             shapeString(s));
    const Shape &q = shapes[0], &v = shapes[1];
    const Shape &k = shapes.size() >= 3 ? shapes[2] : v;
    if (k[1] != v[1])
      fail("key " + shapeString(k) + " and value " + shapeString(v) +
           " must have the same number of steps");
    if (shapes.size() == 4) {
      const Shape &m = shapes[3];
      Shape want{q[0], q[1], v[1]};
      for (size_t i = 0; i < 3; ++i)
        if (m[i] != 1 && m[i] != want[i])
          fail("attention_mask " + shapeString(m) +
               " is not broadcastable to [batch, query steps, key steps] " +
               shapeString(want));
    }
    Shape out = c_.outputShape.empty() ? Shape{q.back()} : c_.outputShape;
    // Keras's order: query, key, gate, value, attention_output.
    auto project = [&](const std::string &name, int64_t in, int64_t heads,
                       int64_t dim) {
      addWeight(name + "/kernel", {in, heads, dim}, c_.kernelInit);
      if (c_.useBias)
        addWeight(name + "/bias", {heads, dim}, c_.biasInit);
    };
    project("query", q.back(), c_.heads, c_.keyDim);
    project("key", k.back(), c_.kvHeads, c_.keyDim);
    if (c_.gate)
      project("gate", q.back(), c_.heads, c_.valueDim);
    project("value", v.back(), c_.kvHeads, c_.valueDim);
    Shape outKernel{c_.heads, c_.valueDim};
    outKernel.insert(outKernel.end(), out.begin(), out.end());
    addWeight("attention_output/kernel", outKernel, c_.kernelInit);
    if (c_.useBias)
      addWeight("attention_output/bias", out, c_.biasInit);
    outDims_ = out;
  }

  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    if (inputs.size() < 2 || inputs.size() > 4)
      fail("expects query and value (and optionally key and attention_mask), "
           "got " +
           std::to_string(inputs.size()) + " input(s)");
    const Tensor &query = inputs[0], &value = inputs[1];
    const Tensor &key = inputs.size() >= 3 ? inputs[2] : value;
    int64_t b = query.dim(0), t = query.dim(1), s = value.dim(1);
    int64_t heads = c_.heads;
    size_t w = 0;
    auto next = [&]() { return weight(w++); };
    auto nextBias = [&]() -> std::optional<Tensor> {
      if (!c_.useBias)
        return std::nullopt;
      return weight(w++);
    };
    // [B, steps, E] -> [B, steps, count, dim].
    auto project = [&](const Tensor &x, int64_t count, int64_t dim) {
      Tensor kernel = next();
      std::optional<Tensor> bias = nextBias();
      return projectLastDims(x, 1, kernel, bias, {count, dim});
    };
    // [B, steps, count, dim] -> [B*H, steps, dim]: heads become batch
    // entries, a key/value head repeated for each of its query heads.
    auto asBatches = [&](Tensor p) {
      int64_t steps = p.dim(1), count = p.dim(2), dim = p.dim(3);
      if (count != heads) {
        int64_t repeats = heads / count;
        p = ops::reshape(
            ops::broadcastTo(ops::reshape(p, {b, steps, count, 1, dim}),
                             {b, steps, count, repeats, dim}),
            {b, steps, heads, dim});
      }
      return ops::reshape(ops::transpose(p, {0, 2, 1, 3}),
                          {b * heads, steps, dim});
    };
    // Keras's dot_product_attention (JAX) computes the scores, their mask
    // and the softmax in at least float32 (bfloat16 products accumulated
    // in float32, never rounded) and casts the probabilities back to the
    // compute dtype for the product with the values.
    DType compute = query.dtype();
    DType dt = isFloat(compute) && compute != DType::F64 ? DType::F32 : compute;
    const char *why = "MultiHeadAttention scores and softmax: float32, as "
                      "Keras's dot_product_attention";
    // The queries are scaled before the product: a multiply over [B*H, T,
    // key_dim] instead of one over every score, whose gradient would keep a
    // [B*H, T, S] broadcast of the scale.
    Tensor q = ops::mul(
        ops::cast(asBatches(project(query, heads, c_.keyDim)), dt, why),
        ops::scalar(1.0 / std::sqrt(double(c_.keyDim)), dt));
    Tensor k =
        ops::cast(asBatches(project(key, c_.kvHeads, c_.keyDim)), dt, why);
    // Keras's gate: sigmoid of the query's own projection, times the
    // heads' outputs before the output projection.
    std::optional<Tensor> gate;
    if (c_.gate)
      gate = ops::activation(project(query, heads, c_.valueDim), "sigmoid");
    Tensor v = asBatches(project(value, c_.kvHeads, c_.valueDim));
    Tensor scores = ops::batchMatmul(q, k, false, true); // [B*H, T, S]
    if (std::optional<Tensor> allowed = attentionMask(inputs, t, s)) {
      // Keras's masked attention: jax.nn.dot_product_attention puts its
      // large negative where the mask is false (a query step with no real
      // key then attends to every step alike).
      Tensor heads4 = ops::broadcastTo(ops::reshape(*allowed, {b, 1, t, s}),
                                       {b, heads, t, s});
      scores = ops::select(
          maskAsCondition(ops::reshape(heads4, {b * heads, t, s})), scores,
          ops::fillLike(scores, {}, -0.7 * double(FLT_MAX)));
    } else if (c_.causal) {
      // Keras's mask: query step i sees key steps j <= i. The others get
      // jax.nn.dot_product_attention's large negative, added rather than
      // selected: step i always sees step 0, so a row's maximum is a real
      // score and the softmax gives the masked ones exactly 0 either way,
      // and an add's gradient needs no [B*H, T, S] mask kept for backward.
      std::vector<double> bias(t * s, 0.0);
      for (int64_t i = 0; i < t; ++i)
        for (int64_t j = i + 1; j < s; ++j)
          bias[i * s + j] = -0.7 * double(FLT_MAX);
      scores = ops::add(scores, Tensor(NDArray::fromVector({t, s}, bias, dt)));
    }
    Tensor probs = ops::cast(ops::softmax(scores, -1), compute);
    Tensor o = ops::batchMatmul(probs, v); // [B*H, T, Dv]
    o = ops::transpose(ops::reshape(o, {b, heads, t, c_.valueDim}),
                       {0, 2, 1, 3}); // [B, T, H, Dv]
    if (gate)
      o = ops::mul(o, *gate);
    Tensor kernel = next();
    std::optional<Tensor> bias = nextBias();
    Tensor out = projectLastDims(o, 2, kernel, bias, outDims_);
    return {query.mask() ? out.withMask(*query.mask()) : out};
  }

  /// The output keeps the query's mask (Keras's MultiHeadAttention, and
  /// Layer.__call__'s first-argument mask for GroupQueryAttention).
  MaskRule maskRule() const override { return MaskRule::Own; }

private:
  /// Keras's _compute_attention_mask from the inputs' masks, f32 0/1
  /// [B, T, S]: query_mask[:, :, None] & value_mask[:, None, :] (& the
  /// key's own mask when the key is another tensor) (& the causal mask)
  /// (& the sliding window's band |i - j| < window) (& the attention_mask
  /// argument, nonzero as true); none when no input is masked and no
  /// attention_mask or window is given.
  std::optional<Tensor> attentionMask(const std::vector<Tensor> &inputs,
                                      int64_t t, int64_t s) const {
    const Tensor &query = inputs[0];
    std::vector<Tensor> keys;
    if (const Tensor *m = inputs[1].mask())
      keys.push_back(*m);
    if (inputs.size() >= 3)
      if (const Tensor *m = inputs[2].mask())
        keys.push_back(*m);
    const Tensor *given = inputs.size() == 4 ? &inputs[3] : nullptr;
    if (!query.mask() && keys.empty() && !given && c_.slidingWindow == 0)
      return std::nullopt;
    int64_t b = query.dim(0);
    Tensor allowed = ops::fillLike(query, {b, t, s}, 1.0);
    auto asAllowed = [&](const Tensor &m, const Shape &shape) {
      return ops::cast(ops::reshape(m, shape), allowed.dtype());
    };
    if (query.mask())
      allowed = ops::mul(allowed, asAllowed(*query.mask(), {b, t, 1}));
    for (const Tensor &m : keys)
      allowed = ops::mul(allowed, asAllowed(m, {b, 1, s}));
    if (given) { // Keras casts it to bool: any nonzero value allows.
      Tensor m = ops::cast(*given, allowed.dtype());
      m = ops::compare(ops::CompareKind::NE, m, ops::fillLike(m, {}, 0.0));
      allowed = ops::mul(
          allowed, ops::broadcastTo(ops::cast(m, allowed.dtype()), {b, t, s}));
    }
    if (c_.causal || c_.slidingWindow > 0) {
      std::vector<double> band(t * s, 0.0);
      for (int64_t i = 0; i < t; ++i)
        for (int64_t j = 0; j < s; ++j) {
          bool seen = !c_.causal || j <= i;
          if (c_.slidingWindow > 0)
            seen = seen && std::abs(i - j) < c_.slidingWindow;
          band[i * s + j] = seen ? 1.0 : 0.0;
        }
      allowed = ops::mul(
          allowed, Tensor(NDArray::fromVector({t, s}, band, allowed.dtype())));
    }
    return allowed;
  }

  HeadsConfig c_;
  Shape outDims_;
};

/// Keras's Attention (Luong: dot scores, optionally scaled by a learned
/// scalar; or "concat": a learned scalar times sum(tanh(scale * (q + k))))
/// and AdditiveAttention (Bahdanau: sum(scale[d] * tanh(q + k))), called on
/// {query, value} or {query, value, key}: softmax over the scores, times
/// the value. The causal mask subtracts Keras's 1e9 from the scores of the
/// later steps; the softmax gives them exactly 0, as in Keras.
class ScoreAttentionImpl : public LayerImpl {
public:
  ScoreAttentionImpl(bool additive, bool useScale, std::string scoreMode,
                     bool useCausalMask)
      : LayerImpl(additive ? "AdditiveAttention" : "Attention"),
        additive_(additive), useScale_(useScale),
        scoreMode_(std::move(scoreMode)), causal_(useCausalMask) {
    if (scoreMode_ != "dot" && scoreMode_ != "concat")
      throw Error("Attention: score_mode must be \"dot\" or \"concat\", "
                  "got \"" +
                  scoreMode_ + "\"");
  }
  llvm::json::Object kerasConfig() const override {
    llvm::json::Object c{{"use_scale", useScale_}, {"dropout", 0.0}};
    if (!additive_)
      c["score_mode"] = scoreMode_;
    return c;
  }
  bool useCausalMask() const { return causal_; }

protected:
  void build(const std::vector<Shape> &shapes) override {
    if (shapes.size() != 2 && shapes.size() != 3)
      fail("expects [query, value] or [query, value, key], got " +
           std::to_string(shapes.size()) + " inputs");
    for (const Shape &s : shapes)
      if (s.size() != 3)
        fail("expects inputs of rank 3 ([batch, steps, features]), got " +
             shapeString(s));
    const Shape &q = shapes[0], &v = shapes[1];
    const Shape &k = shapes.size() == 3 ? shapes[2] : v;
    if (q.back() != k.back())
      fail("query " + shapeString(q) + " and key " + shapeString(k) +
           " must have the same features");
    if (k[1] != v[1])
      fail("key " + shapeString(k) + " and value " + shapeString(v) +
           " must have the same steps");
    if (additive_ && useScale_)
      scale_ = addWeight("scale", {q.back()}, "glorot_uniform");
    else if (useScale_)
      scale_ = addWeight("scale", {}, "ones");
    if (!additive_ && scoreMode_ == "concat")
      concat_ = addWeight("concat_score_weight", {}, "ones");
  }

  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    const Tensor &q = inputs[0], &v = inputs[1];
    const Tensor &k = inputs.size() == 3 ? inputs[2] : v;
    Tensor scores;
    if (!additive_ && scoreMode_ == "dot") {
      scores = ops::batchMatmul(q, k, false, true); // [B, Tq, Tv]
      if (useScale_)
        scores = ops::mul(scores, weight(*scale_));
    } else {
      // [B, Tq, 1, D] + [B, 1, Tv, D]
      Tensor sum = ops::add(ops::reshape(q, {q.dim(0), q.dim(1), 1, q.dim(2)}),
                            ops::reshape(k, {k.dim(0), 1, k.dim(1), k.dim(2)}));
      if (additive_) {
        Tensor t = ops::tanh(sum);
        if (useScale_)
          t = ops::mul(t, weight(*scale_));
        scores = ops::reduceSum(t, {3});
      } else {
        if (useScale_)
          sum = ops::mul(sum, weight(*scale_));
        scores =
            ops::mul(ops::reduceSum(ops::tanh(sum), {3}), weight(*concat_));
      }
    }
    if (std::optional<Tensor> penalty = scorePenalty(v, scores)) {
      // Keras's where(masked, scores - 1e9, scores), as an add: the same
      // values, and an add's gradient keeps no [B, Tq, Tv] mask.
      scores = ops::add(scores, *penalty);
    }
    Tensor out = ops::batchMatmul(ops::softmax(scores, -1), v);
    if (!q.mask())
      return {out};
    // The query's padded steps give zeros, and the output keeps its mask.
    Tensor real = ops::broadcastTo(
        maskAsCondition(ops::reshape(*q.mask(), {q.dim(0), q.dim(1), 1})),
        out.shape());
    out = ops::select(real, out, ops::fillLike(out, out.shape(), 0.0));
    return {out.withMask(*q.mask())};
  }

  /// Keras's Attention reads the query's mask (the output's zeros and
  /// mask) and the value's (the scores' mask); the key's is ignored.
  MaskRule maskRule() const override { return MaskRule::Own; }

private:
  /// Keras's _calculate_score_mask as what the scores get added: -1e9 where
  /// the value's step is padded or (causal) later than the query's, else 0;
  /// none when neither masks.
  std::optional<Tensor> scorePenalty(const Tensor &value,
                                     const Tensor &scores) const {
    const Tensor *valueMask = value.mask();
    if (!causal_ && !valueMask)
      return std::nullopt;
    int64_t b = scores.dim(0), tq = scores.dim(1), tv = scores.dim(2);
    DType dt = scores.dtype();
    std::optional<Tensor> later;
    if (causal_) {
      std::vector<double> penalty(tq * tv, 0.0);
      for (int64_t i = 0; i < tq; ++i)
        for (int64_t j = i + 1; j < tv; ++j)
          penalty[i * tv + j] = -1.0e9;
      later = Tensor(NDArray::fromVector({tq, tv}, penalty, dt));
      if (!valueMask)
        return later;
    }
    // One -1e9 where either masks (Keras ANDs the masks, then subtracts).
    Tensor padded =
        ops::mul(ops::sub(ops::cast(ops::reshape(*valueMask, {b, 1, tv}), dt),
                          ops::scalar(1.0, dt)),
                 ops::scalar(1.0e9, dt));
    if (!later)
      return padded;
    return ops::minimum(ops::broadcastTo(padded, scores.shape()), *later);
  }

  bool additive_, useScale_;
  std::string scoreMode_;
  bool causal_;
  std::optional<size_t> scale_, concat_;
};

} // namespace

EinsumDense::EinsumDense(const std::string &equation, const Shape &outputShape,
                         const std::string &biasAxes,
                         const std::string &activation,
                         const std::string &kernelInitializer,
                         const std::string &biasInitializer)
    : Layer(std::make_shared<EinsumDenseImpl>(equation, outputShape, biasAxes,
                                              activation, kernelInitializer,
                                              biasInitializer)) {}

Attention::Attention(bool useScale, const std::string &scoreMode,
                     bool useCausalMask)
    : Layer(std::make_shared<ScoreAttentionImpl>(/*additive=*/false, useScale,
                                                 scoreMode, useCausalMask)) {}

AdditiveAttention::AdditiveAttention(bool useScale, bool useCausalMask)
    : Layer(std::make_shared<ScoreAttentionImpl>(/*additive=*/true, useScale,
                                                 "dot", useCausalMask)) {}

MultiHeadAttention::MultiHeadAttention(int64_t numHeads, int64_t keyDim,
                                       int64_t valueDim, bool useBias,
                                       const Shape &outputShape,
                                       bool useCausalMask,
                                       const std::string &kernelInitializer,
                                       const std::string &biasInitializer,
                                       bool useGate, int64_t slidingWindow)
    : Layer(std::make_shared<MultiHeadAttentionImpl>(
          HeadsConfig{"MultiHeadAttention", numHeads, numHeads, keyDim,
                      valueDim, useBias, outputShape, useCausalMask, useGate,
                      slidingWindow, kernelInitializer, biasInitializer})) {}

GroupQueryAttention::GroupQueryAttention(int64_t headDim, int64_t numQueryHeads,
                                         int64_t numKeyValueHeads, bool useBias,
                                         bool useCausalMask, bool useGate,
                                         int64_t slidingWindow,
                                         const std::string &kernelInitializer,
                                         const std::string &biasInitializer)
    : Layer(std::make_shared<MultiHeadAttentionImpl>(HeadsConfig{
          "GroupQueryAttention", numQueryHeads, numKeyValueHeads, headDim,
          headDim, useBias, Shape{}, useCausalMask, useGate, slidingWindow,
          kernelInitializer, biasInitializer})) {}

bool kcc::isMultiHeadAttentionClass(const std::string &className) {
  return className == "MultiHeadAttention" ||
         className == "GroupQueryAttention";
}

bool kcc::usesCausalMask(const Layer &layer) {
  if (auto *mha = dynamic_cast<MultiHeadAttentionImpl *>(layer.impl().get()))
    return mha->useCausalMask();
  auto *scores = dynamic_cast<ScoreAttentionImpl *>(layer.impl().get());
  return scores && scores->useCausalMask();
}
