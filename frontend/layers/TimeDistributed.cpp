//===- TimeDistributed.cpp - A layer applied to every step ----------------===//
//
// TimeDistributed owns the weights of the layers it wraps, so a model (its
// parameters, the optimizer, saving) sees them as the TimeDistributed's,
// named as Keras 3 stores them. On each call it lends them to the wrapped
// layers: a trace binds their weights to the TimeDistributed's arguments,
// an eager call copies the values in, and a statistic a wrapped layer
// assigns (BatchNormalization's moving mean) comes back as the
// TimeDistributed's own assignment.
//
// Keras calls the wrapped layer once per step. Where the steps cannot
// interact -- every inference call, and training calls of layers whose
// training mode computes nothing else -- kcc makes that one call on
// [batch * steps, ...]: the same numbers, one kernel per op. A training
// call of a layer with batch statistics or randomness is made step by step
// as Keras does, each step's assigned statistics read by the next.
//
//===----------------------------------------------------------------------===//

#include "frontend/Layers.h"
#include "frontend/Ops.h"
#include "frontend/Trace.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"

using namespace kcc;

namespace {

class TimeDistributedImpl : public LayerImpl {
public:
  TimeDistributedImpl(std::vector<Layer> layers, std::string sequentialName)
      : LayerImpl("TimeDistributed"), layers_(std::move(layers)),
        sequentialName_(std::move(sequentialName)) {
    if (layers_.empty())
      throw Error("TimeDistributed: expects a layer to apply");
    if (layers_.size() > 1 && sequentialName_.empty())
      throw Error("TimeDistributed: several layers need the name of the "
                  "Sequential they form");
    // Keras's weight groups: "layer", or a Sequential's layers/<group>
    // numbered per class.
    llvm::StringMap<int> counters;
    for (const Layer &l : layers_) {
      if (sequentialName_.empty()) {
        prefixes_.push_back("layer/");
        continue;
      }
      std::string cls = toSnakeCase(l.className());
      int n = counters[cls]++;
      prefixes_.push_back("layer/layers/" + cls +
                          (n ? "_" + std::to_string(n) : "") + "/");
    }
  }

  const std::vector<Layer> &layers() const { return layers_; }
  const std::string &sequentialName() const { return sequentialName_; }

  bool usesRandomness() const override {
    return llvm::any_of(
        layers_, [](const Layer &l) { return l.impl()->usesRandomness(); });
  }
  bool trainingDiffers() const override {
    return llvm::any_of(
        layers_, [](const Layer &l) { return l.impl()->trainingDiffers(); });
  }
  /// Keras's TimeDistributed passes its input's mask on, and hands each
  /// step's [batch] slice of it to a wrapped layer whose call takes a mask:
  /// kcc's such layers own or refuse masks, and a mask reaching them here
  /// is refused.
  MaskRule maskRule() const override {
    bool usesMask = llvm::any_of(layers_, [](const Layer &l) {
      MaskRule rule = l.impl()->maskRule();
      return rule == MaskRule::Own || rule == MaskRule::Apply ||
             rule == MaskRule::Refuse;
    });
    return usesMask ? MaskRule::Refuse : MaskRule::Propagate;
  }

protected:
  void build(const std::vector<Shape> &shapes) override {
    if (shapes.size() != 1 || shapes[0].size() < 3)
      fail("expects one input of rank >= 3 ([batch, steps, ...]), got " +
           (shapes.empty() ? std::string("none") : shapeString(shapes[0])));
  }

  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &ctx) override {
    expectInputs(inputs, 1);
    const Tensor &x = inputs[0];
    if (x.rank() < 3)
      fail("expects an input of rank >= 3 ([batch, steps, ...]), got " +
           x.shapeString());
    if (!adopted_)
      adoptWeights(x);
    // Keras's trainable setter freezes what a frozen wrapper holds (a
    // frozen BatchNormalization then runs in inference mode).
    if (!trainable())
      for (const Layer &l : layers_)
        if (l.trainable())
          l.setTrainable(false);
    lend();
    int64_t batch = x.dim(0), steps = x.dim(1);
    Tensor y;
    if (ctx.training && trainingDiffers() && steps > 1) {
      std::vector<Tensor> outs;
      for (int64_t t = 0; t < steps; ++t) {
        std::vector<int64_t> start(x.rank(), 0), strides(x.rank(), 1);
        std::vector<int64_t> limit(x.shape().begin(), x.shape().end());
        start[1] = t;
        limit[1] = t + 1;
        Tensor step = ops::reshape(ops::slice(x, start, limit, strides),
                                   stepShape(x.shape(), batch));
        Tensor out = applyLayers(step, ctx);
        Shape s = out.shape();
        s.insert(s.begin() + 1, 1);
        outs.push_back(ops::reshape(out, s));
        carryAssignments();
      }
      y = ops::concat(outs, 1);
    } else {
      y = applyLayers(ops::reshape(x, stepShape(x.shape())), ctx);
      Shape s = y.shape();
      s[0] = steps;
      s.insert(s.begin(), batch);
      y = ops::reshape(y, s);
    }
    takeAssignments(x.isConcrete());
    return {y};
  }

private:
  /// [batch * steps, ...] for an input [batch, steps, ...], or [batch, ...]
  /// for one step when `batch` is given.
  static Shape stepShape(const Shape &in, std::optional<int64_t> batch = {}) {
    Shape s(in.begin() + 1, in.end());
    s[0] = batch ? *batch : in[0] * in[1];
    return s;
  }

  /// Builds the wrapped layers on one step of `x` (its dtype: an
  /// Embedding takes token ids) and declares their weights as ours.
  void adoptWeights(const Tensor &x) {
    Tensor step = Tensor::symbolic(stepShape(x.shape()), x.dtype());
    for (const Layer &l : layers_)
      step = single(l.impl()->call({step}, CallContext{}), l);
    for (auto [l, prefix] : llvm::zip(layers_, prefixes_))
      for (const Weight &w : l.impl()->weights()) {
        size_t i = addWeight(prefix + w.name, w.shape, w.initializer,
                             w.declaredTrainable && l.trainable());
        Weight &own = weights()[i];
        own.regularizer = w.regularizer;
        own.value = w.value;
      }
    adopted_ = true;
  }

  Tensor single(const std::vector<Tensor> &outs, const Layer &l) const {
    if (outs.size() != 1)
      fail("the wrapped layer '" + l.name() + "' returns " +
           std::to_string(outs.size()) +
           " tensors; TimeDistributed takes "
           "one");
    return outs[0];
  }

  Tensor applyLayers(Tensor x, const CallContext &ctx) {
    for (const Layer &l : layers_)
      x = single(l.impl()->call({x}, ctx), l);
    return x;
  }

  /// Calls `fn(own weight index, wrapped layer's weight)` for every weight.
  template <typename Fn> void forEachWeight(Fn fn) {
    size_t i = 0;
    for (const Layer &l : layers_)
      for (Weight &w : l.impl()->weights())
        fn(i++, w);
  }

  /// Makes the wrapped layers' weights this call's values of ours.
  void lend() {
    forEachWeight([&](size_t i, Weight &w) {
      Tensor mine = weight(i);
      if (mine.isSymbolic())
        return;
      if (mine.isTraced()) {
        if (TraceContext *tc = TraceContext::current())
          tc->bindWeight(&w, mine);
        return;
      }
      w.value = mine.array();
    });
  }

  /// Between steps: what a step assigned is what the next one reads.
  void carryAssignments() {
    forEachWeight([&](size_t, Weight &w) {
      if (TraceContext *tc = TraceContext::current())
        if (const Tensor *assigned = tc->lookupAssignment(&w))
          tc->bindWeight(&w, *assigned);
    });
  }

  /// The wrapped layers' assignments as ours.
  void takeAssignments(bool eager) {
    forEachWeight([&](size_t i, Weight &w) {
      if (eager) {
        // The wrapped layer wrote its new values in place.
        weights()[i].value = w.value;
        return;
      }
      if (TraceContext *tc = TraceContext::current())
        if (const Tensor *assigned = tc->lookupAssignment(&w))
          assignWeight(i, *assigned);
    });
  }

  std::vector<Layer> layers_;
  std::string sequentialName_;
  std::vector<std::string> prefixes_;
  bool adopted_ = false;
};

} // namespace

TimeDistributed::TimeDistributed(const Layer &layer)
    : Layer(std::make_shared<TimeDistributedImpl>(std::vector<Layer>{layer},
                                                  "")) {}

TimeDistributed::TimeDistributed(std::vector<Layer> layers,
                                 std::string sequentialName)
    : Layer(std::make_shared<TimeDistributedImpl>(std::move(layers),
                                                  std::move(sequentialName))) {}

std::optional<std::pair<std::vector<Layer>, std::string>>
kcc::timeDistributedLayers(const Layer &layer) {
  auto *impl = dynamic_cast<TimeDistributedImpl *>(layer.impl().get());
  if (!impl)
    return std::nullopt;
  return std::make_pair(impl->layers(), impl->sequentialName());
}
