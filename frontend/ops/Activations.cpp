//===- Activations.cpp - Keras's activations composed of kc ops -----------===//
//
// Each activation is written the way jax.nn (the backend Keras 3 parity is
// measured against) writes it, out of kc's elementwise, compare and select
// ops, as XLA sees it after JAX traces it. No activation has an op of its
// own: autodiff differentiates the pieces, the interpreter runs them as
// kernels, and the compiler fuses the whole chain into the loop of its
// producer. Two care points follow jax.nn:
//
//  - elu evaluates exp on min(x, 0), so the branch select() discards cannot
//    overflow and send 0 * inf = NaN back through the gradient;
//  - softplus is logaddexp(x, 0) = max(x, 0) + log(1 + exp(-|x|)), finite
//    for every finite x and +inf at +inf.
//
// NaN propagates through every activation: compare is false on NaN, and
// the branch then taken computes NaN from it (max/min propagate NaN).
//
//===----------------------------------------------------------------------===//

#include "frontend/ops/OpSupport.h"

#include "llvm/ADT/STLExtras.h"

using namespace kcc;
using namespace kcc::ops;

namespace {

/// A splat of `value` with x's shape and dtype (one kc.constant when traced).
Tensor like(const Tensor &x, double value) {
  return fillLike(x, x.shape(), value);
}

Tensor greater(const Tensor &x, double value) {
  return compare(CompareKind::GT, x, like(x, value));
}

} // namespace

Tensor ops::relu6(const Tensor &x) { return minimum(relu(x), like(x, 6.0)); }

Tensor ops::elu(const Tensor &x, double alpha) {
  Tensor negative = sub(exp(minimum(x, like(x, 0.0))), like(x, 1.0));
  if (alpha != 1.0)
    negative = mul(like(x, alpha), negative);
  return select(greater(x, 0.0), x, negative);
}

Tensor ops::selu(const Tensor &x) {
  // jax.nn.selu's constants (Klambauer et al.), in double as jax writes
  // them; the f32 splat rounds them as jax's weak-typed scalars do.
  constexpr double kAlpha = 1.6732632423543772848170429916717;
  constexpr double kScale = 1.0507009873554804934193349852946;
  return mul(like(x, kScale), elu(x, kAlpha));
}

Tensor ops::silu(const Tensor &x) { return mul(x, sigmoid(x)); }

Tensor ops::softplus(const Tensor &x) {
  Tensor tail = log(add(like(x, 1.0), exp(neg(abs(x)))));
  return add(maximum(x, like(x, 0.0)), tail);
}

Tensor ops::softsign(const Tensor &x) {
  return div(x, add(abs(x), like(x, 1.0)));
}

Tensor ops::hardSigmoid(const Tensor &x) {
  return div(relu6(add(x, like(x, 3.0))), like(x, 6.0));
}

Tensor ops::hardSilu(const Tensor &x) { return mul(x, hardSigmoid(x)); }

Tensor ops::leakyRelu(const Tensor &x, double negativeSlope) {
  Tensor nonNegative = compare(CompareKind::GE, x, like(x, 0.0));
  return select(nonNegative, x, mul(like(x, negativeSlope), x));
}

Tensor ops::mish(const Tensor &x) { return mul(x, tanh(softplus(x))); }

Tensor ops::kerasRelu(const Tensor &x, double negativeSlope,
                      std::optional<double> maxValue, double threshold) {
  // keras.activations.ReLU.static_call, branch for branch.
  Tensor negativePart;
  if (negativeSlope != 0.0) {
    if (!maxValue && threshold == 0.0)
      return leakyRelu(x, negativeSlope);
    negativePart =
        threshold != 0.0 ? relu(add(neg(x), like(x, threshold))) : relu(neg(x));
  }
  bool clipMax = maxValue.has_value();
  Tensor y;
  if (threshold != 0.0) {
    y = select(greater(x, threshold), x, like(x, 0.0));
  } else if (maxValue && *maxValue == 6.0) {
    y = relu6(x);
    clipMax = false;
  } else {
    y = relu(x);
  }
  if (clipMax)
    y = minimum(maximum(y, like(y, 0.0)), like(y, *maxValue));
  if (negativeSlope != 0.0)
    y = sub(y, mul(like(y, negativeSlope), negativePart));
  return y;
}

namespace {

using ActivationFn = Tensor (*)(const Tensor &);

struct NamedActivation {
  const char *name;
  ActivationFn fn;
};

// Keras 3's names (keras.activations.get), aliases included; leaky_relu
// takes Keras's default slope of 0.2 when named as a string.
const NamedActivation kActivations[] = {
    {"linear", [](const Tensor &x) { return x; }},
    {"relu", [](const Tensor &x) { return relu(x); }},
    {"sigmoid", [](const Tensor &x) { return sigmoid(x); }},
    {"tanh", [](const Tensor &x) { return ops::tanh(x); }},
    {"softmax", [](const Tensor &x) { return softmax(x); }},
    {"log_softmax", [](const Tensor &x) { return logSoftmax(x); }},
    {"exponential", [](const Tensor &x) { return ops::exp(x); }},
    {"elu", [](const Tensor &x) { return elu(x); }},
    {"selu", [](const Tensor &x) { return selu(x); }},
    {"gelu", [](const Tensor &x) { return gelu(x); }},
    {"silu", [](const Tensor &x) { return silu(x); }},
    {"swish", [](const Tensor &x) { return silu(x); }},
    {"softplus", [](const Tensor &x) { return softplus(x); }},
    {"softsign", [](const Tensor &x) { return softsign(x); }},
    {"hard_sigmoid", [](const Tensor &x) { return hardSigmoid(x); }},
    {"hard_silu", [](const Tensor &x) { return hardSilu(x); }},
    {"hard_swish", [](const Tensor &x) { return hardSilu(x); }},
    {"relu6", [](const Tensor &x) { return relu6(x); }},
    {"mish", [](const Tensor &x) { return mish(x); }},
    {"leaky_relu", [](const Tensor &x) { return leakyRelu(x); }},
};

const NamedActivation *findActivation(const std::string &name) {
  for (const NamedActivation &a : kActivations)
    if (name == a.name)
      return &a;
  return nullptr;
}

} // namespace

bool ops::isActivation(const std::string &name) {
  return findActivation(name) != nullptr;
}

const std::string &ops::activationNames() {
  static const std::string names = [] {
    std::string s;
    size_t n = std::size(kActivations);
    for (size_t i = 0; i < n; ++i) {
      if (i)
        s += i + 1 == n ? " or " : ", ";
      s += kActivations[i].name;
    }
    return s;
  }();
  return names;
}

Tensor ops::activation(const Tensor &x, const std::string &name) {
  if (const NamedActivation *a = findActivation(name))
    return a->fn(x);
  throwInLayer("unknown activation '" + name + "' (expected " +
               activationNames() + ")");
}
