//===- Layer.cpp - Keras-style layers: the base classes -------------------===//

#include "frontend/Layer.h"
#include "frontend/Initializers.h"
#include "frontend/Ops.h"
#include "frontend/Trace.h"
#include "runtime/MemoryBudget.h"

#include "llvm/ADT/STLExtras.h"

#include <cctype>
#include <cmath>
#include <regex>

using namespace kcc;

std::string kcc::toSnakeCase(const std::string &className) {
  // Keras's to_snake_case (keras/src/utils/naming.py), regex for regex:
  // "Conv2D" -> "conv2d", "MaxPooling2D" -> "max_pooling2d", "ReLU" ->
  // "re_lu", "PReLU" -> "p_re_lu".
  static const std::regex word("(.)([A-Z][a-z]+)");
  static const std::regex camel("([a-z])([A-Z])");
  std::string out = std::regex_replace(className, word, "$1_$2");
  out = std::regex_replace(out, camel, "$1_$2");
  for (char &c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string kcc::namePrefix(const std::string &className) {
  if (className == "GroupQueryAttention")
    return "grouped_query_attention";
  return toSnakeCase(className);
}

//===----------------------------------------------------------------------===//
// LayerImpl
//===----------------------------------------------------------------------===//

LayerImpl::LayerImpl(std::string className)
    : className_(std::move(className)), name_(namePrefix(className_)) {}

LayerImpl::~LayerImpl() = default;

void LayerImpl::setName(std::string name) {
  if (name.empty())
    throw Error("layer names must not be empty (" + className_ + ")");
  name_ = std::move(name);
  named_ = true;
}

size_t LayerImpl::addWeight(std::string name, Shape shape,
                            std::string initializer, bool trainable) {
  if (!init::isInitializer(initializer))
    fail("unknown initializer '" + initializer + "' for weight '" + name + "'");
  TensorSize size = tensorSize(shape, dtypeSize(DType::F32), "f32");
  if (!size)
    fail("weight '" + name + "' " + size.error);
  Weight w;
  w.name = std::move(name);
  w.shape = std::move(shape);
  w.initializer = std::move(initializer);
  w.declaredTrainable = trainable;
  w.trainable = trainable && trainable_;
  w.regularizer = weightRegularizer(w.name);
  weights_.push_back(std::move(w));
  return weights_.size() - 1;
}

void LayerImpl::setWeightRegularizer(const std::string &name, Regularizer r) {
  std::vector<std::string> names = regularizableWeights();
  if (!llvm::is_contained(names, name)) {
    std::string takes;
    for (const std::string &n : names)
      takes += (takes.empty() ? "" : ", ") + n + "_regularizer";
    fail("has no " + name + "_regularizer (" +
         (takes.empty() ? std::string("it regularizes no weight")
                        : "it takes " + takes) +
         ")");
  }
  if (!(r.l1 >= 0) || !(r.l2 >= 0) || !std::isfinite(r.l1) ||
      !std::isfinite(r.l2))
    fail(name + "_regularizer: l1 and l2 must be finite values >= 0");
  std::string weight = regularizedWeight(name);
  auto it = llvm::find_if(regularizers_,
                          [&](const auto &e) { return e.first == weight; });
  if (it != regularizers_.end())
    it->second = r;
  else
    regularizers_.push_back({weight, r});
  for (Weight &w : weights_)
    if (w.name == weight)
      w.regularizer = r;
}

std::optional<Regularizer>
LayerImpl::weightRegularizer(const std::string &weight) const {
  for (const auto &[name, r] : regularizers_)
    if (name == weight)
      return r;
  return std::nullopt;
}

void LayerImpl::setActivityRegularizer(std::optional<Regularizer> r) {
  if (r && (!(r->l1 >= 0) || !(r->l2 >= 0) || !std::isfinite(r->l1) ||
            !std::isfinite(r->l2)))
    fail("activity_regularizer: l1 and l2 must be finite values >= 0");
  activity_ = r;
}

Tensor kcc::regularizationPenalty(const Tensor &x, const Regularizer &r) {
  std::vector<int64_t> all(x.rank());
  for (int64_t d = 0; d < x.rank(); ++d)
    all[d] = d;
  // Keras starts from 0.0 and adds each nonzero term: 0 + t is t exactly.
  Tensor penalty;
  auto add = [&](double factor, const Tensor &values) {
    Tensor term =
        ops::mul(ops::fillLike(x, {}, factor), ops::reduceSum(values, all));
    penalty = penalty.defined() ? ops::add(penalty, term) : term;
  };
  if (r.l1 != 0)
    add(r.l1, ops::abs(x));
  if (r.l2 != 0)
    add(r.l2, ops::mul(x, x));
  return penalty.defined() ? penalty : ops::fillLike(x, {}, 0.0);
}

void LayerImpl::setTrainable(bool trainable) {
  trainable_ = trainable;
  for (Weight &w : weights_)
    w.trainable = trainable && w.declaredTrainable;
}

void LayerImpl::materializeWeights() {
  // All of the layer's weights at once, before any is drawn: a layer too
  // big for this machine is an error that says so, not std::bad_alloc or
  // the OOM killer halfway through initializing it.
  std::optional<int64_t> needed = 0;
  for (const Weight &w : weights_)
    if (!w.value.defined() && needed)
      needed = addChecked(*needed, tensorBytes(w.shape, w.dtype));
  if (!needed)
    fail("its weights need more than 2^63-1 bytes");
  if (*needed == 0)
    return;
  try {
    requireMemory(*needed, "its weights");
  } catch (const Error &e) {
    fail(e.what());
  }
  for (Weight &w : weights_)
    if (!w.value.defined())
      w.value = init::initialize(w.initializer, w.shape, w.dtype, seed_,
                                 name_ + "/" + w.name);
}

namespace {

bool isFloatDType(DType dt) {
  return dt == DType::F32 || dt == DType::F64 || dt == DType::F16 ||
         dt == DType::BF16;
}

/// Keras's autocast: a floating tensor read by a layer whose compute dtype
/// differs is cast to it (integer ids pass unchanged).
Tensor autocast(const Tensor &x, DType compute) {
  if (!isFloatDType(x.dtype()) || x.dtype() == compute)
    return x;
  Tensor y = ops::cast(x, compute);
  return x.mask() ? y.withMask(*x.mask()) : y;
}

/// The layer classes whose computation under mixed_bfloat16 kcc matches
/// Keras's: most are the same ops in the compute dtype (Softmax, Attention,
/// AdditiveAttention, Embedding and the recurrent cells too); the
/// normalizations and MultiHeadAttention's scores compute in float32 where
/// Keras does (frontend/layers). The others (GroupNormalization,
/// Bidirectional, TimeDistributed, ...) are not checked against Keras yet.
bool computesLikeKerasUnderMixed(llvm::StringRef cls) {
  static const llvm::StringRef classes[] = {"Dense",
                                            "Activation",
                                            "ReLU",
                                            "Flatten",
                                            "Dropout",
                                            "Conv2D",
                                            "MaxPooling2D",
                                            "Reshape",
                                            "AveragePooling2D",
                                            "GlobalAveragePooling2D",
                                            "GlobalMaxPooling2D",
                                            "LeakyReLU",
                                            "ELU",
                                            "Add",
                                            "Subtract",
                                            "Multiply",
                                            "Concatenate",
                                            "ZeroPadding2D",
                                            "BatchNormalization",
                                            "LayerNormalization",
                                            "Softmax",
                                            "MultiHeadAttention",
                                            "EinsumDense",
                                            "Attention",
                                            "AdditiveAttention",
                                            "Embedding",
                                            "LSTM",
                                            "GRU",
                                            "SimpleRNN",
                                            "Conv1D",
                                            "MaxPooling1D",
                                            "AveragePooling1D",
                                            "GlobalAveragePooling1D",
                                            "GlobalMaxPooling1D"};
  return llvm::is_contained(classes, cls);
}

} // namespace

void LayerImpl::setDTypePolicy(const std::string &policy) {
  if (policy != "float32" && policy != "mixed_bfloat16")
    fail("dtype policy '" + policy +
         "' is not supported (float32 or mixed_bfloat16)");
  dtypePolicy_ = policy;
}

DType LayerImpl::computeDType() const {
  return dtypePolicy_ == "mixed_bfloat16" ? DType::BF16 : DType::F32;
}

Tensor LayerImpl::weight(size_t i, bool autocastRead) {
  Weight &w = weights_[i];
  DType compute = computeDType();
  // Variables stay in their own dtype; a mixed policy reads them cast.
  bool mixed = autocastRead && compute != DType::F32 && isFloatDType(w.dtype);
  DType read = mixed ? compute : w.dtype;
  if (callKind_ == Tensor::Kind::Symbolic)
    return Tensor::symbolic(w.shape, read);
  if (callKind_ == Tensor::Kind::Traced)
    if (TraceContext *tc = TraceContext::current())
      if (const Tensor *bound = tc->lookupWeight(&w))
        return mixed ? autocast(*bound, compute) : *bound;
  // Eager, or a trace that did not make this weight an argument: the value
  // itself (embedded as a constant when traced).
  if (!w.value.defined())
    materializeWeights();
  return mixed ? autocast(Tensor(w.value), compute) : Tensor(w.value);
}

void LayerImpl::assignWeight(size_t i, const Tensor &value) {
  Weight &w = weights_[i];
  if (value.shape() != w.shape || value.dtype() != w.dtype)
    fail("assigns " + value.describe() + " to weight '" + w.name + "' of " +
         dtypeName(w.dtype) + shapeToString(w.shape));
  if (callKind_ == Tensor::Kind::Symbolic)
    return;
  if (callKind_ == Tensor::Kind::Traced) {
    if (TraceContext *tc = TraceContext::current())
      tc->assignWeight(&w, value);
    return;
  }
  w.value = value.array();
}

std::string LayerImpl::shapeString(const Shape &shape) const {
  if (callKind_ == Tensor::Kind::Symbolic)
    return Tensor::symbolic(shape, DType::F32).shapeString();
  return shapeToString(shape);
}

void LayerImpl::fail(const std::string &message) const {
  throw Error("layer '" + name_ + "' (" + className_ + "): " + message);
}

void LayerImpl::expectInputs(const std::vector<Tensor> &inputs,
                             size_t n) const {
  if (inputs.size() != n)
    fail("expects " + std::to_string(n) + " input(s), got " +
         std::to_string(inputs.size()));
}

std::vector<Tensor> LayerImpl::call(const std::vector<Tensor> &inputs,
                                    const CallContext &ctx) {
  if (inputs.empty())
    fail("called with no inputs");
  Tensor::Kind kind = inputs[0].kind();
  for (const Tensor &t : inputs) {
    if (!t.defined())
      fail("called on an undefined tensor");
    if (t.kind() != kind)
      fail("inputs mix " + inputs[0].describe() + " and " + t.describe());
  }
  LayerScope scope(name_);
  // Restored on exit so a layer calling another layer sees its own kind.
  Tensor::Kind saved = callKind_;
  callKind_ = kind;
  struct Restore {
    Tensor::Kind &slot, value;
    ~Restore() { slot = value; }
  } restore{callKind_, saved};
  if (!built_) {
    std::vector<Shape> shapes;
    for (const Tensor &t : inputs)
      shapes.push_back(t.shape());
    build(shapes);
    built_ = true;
  }
  // Keras casts floating inputs to the compute dtype: bfloat16 into a
  // mixed layer, and back to float32 into a float32 layer after one (f64
  // inputs, kcc's numerics oracle, pass through float32 layers).
  DType compute = computeDType();
  if (compute != DType::F32 && !computesLikeKerasUnderMixed(className_))
    fail("dtype policy '" + dtypePolicy_ + "' is not supported for " +
         className_ +
         " layers yet (Dense, Conv1D/2D, pooling, activations, Dropout, "
         "reshaping and merging layers, BatchNormalization, "
         "LayerNormalization, Embedding, the attention and recurrent "
         "layers are); give this layer dtype='float32'");
  std::vector<Tensor> cast = inputs;
  for (Tensor &t : cast)
    if (autocastsInputs() &&
        (compute != DType::F32 || t.dtype() == DType::BF16 ||
         t.dtype() == DType::F16))
      t = autocast(t, compute);
  // Layers that read masks read step masks; another shape is Softmax's
  // mask argument handed on, which Keras would feed them too.
  MaskRule rule = maskRule();
  if (rule == MaskRule::Own || rule == MaskRule::Merge)
    for (const Tensor &t : cast)
      if (t.mask() && !hasStepMask(t))
        fail("receives a mask of shape " + t.mask()->shapeString() +
             " for its input " + t.shapeString() +
             " (a Softmax's mask argument, which Keras hands on); this layer "
             "reads masks of [batch, steps] only");
  std::vector<Tensor> outputs = applyMaskRule(cast, forward(cast, ctx));
  // Keras 3's Layer.__call__: each output's activity penalty over its
  // batch size, added to the loss (traced training calls; kcc has no
  // eager `model.losses`).
  if (activity_ && ctx.training && kind == Tensor::Kind::Traced)
    if (TraceContext *trace = TraceContext::current())
      for (const Tensor &out : outputs) {
        Tensor penalty = regularizationPenalty(out, *activity_);
        if (out.rank() > 0)
          penalty = ops::div(
              penalty, ops::fillLike(out, {}, static_cast<double>(out.dim(0))));
        trace->addLoss(penalty);
      }
  return outputs;
}

std::vector<Tensor> LayerImpl::applyMaskRule(const std::vector<Tensor> &inputs,
                                             std::vector<Tensor> outputs) {
  MaskRule rule = maskRule();
  if (rule == MaskRule::Own || rule == MaskRule::Apply)
    return outputs;
  const Tensor *masked = nullptr;
  bool allMasked = true;
  for (const Tensor &t : inputs) {
    if (t.mask() && !masked)
      masked = &t;
    allMasked = allMasked && t.mask();
  }
  if (masked && rule == MaskRule::Refuse)
    fail("receives a mask (Embedding(mask_zero=True), Masking or a "
         "Softmax's mask argument upstream), "
         "which Keras would apply in this layer and kcc does not model; "
         "drop the mask before it (a layer without masking, such as a "
         "Conv1D or GlobalMaxPooling1D) or remove mask_zero/Masking");
  Tensor mask;
  if (rule == MaskRule::Propagate && inputs[0].mask())
    mask = *inputs[0].mask();
  if (rule == MaskRule::Merge && masked && allMasked) {
    mask = *inputs[0].mask();
    for (size_t i = 1; i < inputs.size(); ++i)
      mask = ops::maximum(mask, *inputs[i].mask());
  }
  for (Tensor &out : outputs) {
    Tensor m = mask;
    // Keras sets a step mask on outputs of the input's steps only; a
    // Softmax's mask argument passes on as it is.
    if (m.defined() && m.rank() == 2 &&
        (out.rank() < 2 || out.dim(0) != m.dim(0) || out.dim(1) != m.dim(1)))
      m = Tensor();
    out = out.withMask(m);
  }
  return outputs;
}

//===----------------------------------------------------------------------===//
// Layer
//===----------------------------------------------------------------------===//

Layer::Layer(std::shared_ptr<LayerImpl> impl) : impl_(std::move(impl)) {}

std::vector<Tensor> Layer::call(const std::vector<Tensor> &xs,
                                const CallContext &ctx) const {
  std::vector<Tensor> outs = impl_->call(xs, ctx);
  if (xs.empty() || !xs[0].isSymbolic())
    return outs;
  // A call on symbolic tensors becomes a node of the functional graph.
  auto node = std::make_shared<SymbolicNode>();
  node->layer = impl_;
  node->inputs = xs;
  for (const Tensor &o : outs) {
    node->outputShapes.push_back(o.shape());
    node->outputDTypes.push_back(o.dtype());
  }
  std::vector<Tensor> result;
  for (size_t i = 0; i < outs.size(); ++i) {
    Tensor out = Tensor::symbolic(outs[i].shape(), outs[i].dtype(), node,
                                  static_cast<int>(i));
    result.push_back(outs[i].mask() ? out.withMask(*outs[i].mask()) : out);
  }
  return result;
}

Tensor Layer::operator()(const std::vector<Tensor> &xs, bool training) const {
  CallContext ctx;
  ctx.training = training;
  std::vector<Tensor> outs = call(xs, ctx);
  if (outs.size() != 1)
    throw Error("layer '" + name() + "' returns " +
                std::to_string(outs.size()) +
                " tensors; use call() for several");
  return outs[0];
}

Tensor Layer::operator()(const Tensor &x, bool training) const {
  return (*this)(std::vector<Tensor>{x}, training);
}

Layer Layer::named(std::string name) const {
  impl_->setName(std::move(name));
  return *this;
}

Layer Layer::withInputShape(Shape shape) const {
  impl_->setInputShape(std::move(shape));
  return *this;
}

Layer Layer::setTrainable(bool trainable) const {
  impl_->setTrainable(trainable);
  return *this;
}

Layer Layer::withRegularizer(const std::string &weight, Regularizer r) const {
  impl_->setWeightRegularizer(weight, r);
  return *this;
}

Layer Layer::withDTypePolicy(const std::string &policy) const {
  impl_->setDTypePolicy(policy);
  return *this;
}

Layer Layer::withActivityRegularizer(Regularizer r) const {
  impl_->setActivityRegularizer(r);
  return *this;
}

std::vector<NDArray> Layer::getWeights() const {
  impl_->materializeWeights();
  std::vector<NDArray> out;
  for (const Weight &w : impl_->weights())
    out.push_back(w.value);
  return out;
}

void Layer::setWeights(const std::vector<NDArray> &values) const {
  std::vector<Weight> &ws = impl_->weights();
  if (values.size() != ws.size())
    throw Error("layer '" + name() + "' has " + std::to_string(ws.size()) +
                " weights, got " + std::to_string(values.size()) +
                (built() ? "" : " (the layer is not built yet)"));
  for (size_t i = 0; i < ws.size(); ++i)
    if (values[i].shape() != ws[i].shape || values[i].dtype() != ws[i].dtype)
      throw Error("layer '" + name() + "': weight '" + ws[i].name + "' is " +
                  dtypeName(ws[i].dtype) + shapeToString(ws[i].shape) +
                  ", got " + dtypeName(values[i].dtype()) +
                  shapeToString(values[i].shape()));
  for (size_t i = 0; i < ws.size(); ++i)
    ws[i].value = values[i];
}
