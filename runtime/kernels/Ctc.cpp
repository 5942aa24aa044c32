//===- Ctc.cpp - CTC negative log-likelihood and its gradient -------------===//
//
// Keras's ctc loss (keras.losses.ctc) as its JAX backend computes it (the
// optax recursion): log_softmax of the logits, then a log-space forward
// pass over the lattice of blank states phi[0..L] and label states
// emit[0..L-1], where L counts the example's non-zero labels (0 is the
// blank). Transitions CTC forbids (a repeated label without a blank
// between, starting anywhere but phi[0]) are not -inf but weighed by
// log_epsilon = -1e5, as in Keras: an infeasible alignment gives a large
// finite loss, and its gradient is finite too.
//
// The gradient is the reverse-mode derivative of that same recursion
// (what jax.grad computes): each logaddexp sends its output's adjoint to
// its operands weighed by exp(operand - output). States past L never reach
// the loss, so neither the forward nor the backward visits them.
//
//===----------------------------------------------------------------------===//

#include "runtime/kernels/KernelSupport.h"
#include "runtime/kernels/Kernels.h"

#include <algorithm>
#include <cmath>
#include <vector>

using namespace kcc;
using namespace kcc::kernels;
using namespace kcc::kernels::detail;

namespace {

/// jnp.logaddexp: max + log1p(exp(-|a - b|)), a + b when that is NaN.
template <typename T> inline T logAddExp(T a, T b) {
  T delta = a - b;
  if (delta != delta)
    return a + b;
  return std::max(a, b) + std::log1p(std::exp(-std::fabs(delta)));
}

/// One example: logits [steps, classes], labels [width].
template <typename T> class CtcLattice {
public:
  CtcLattice(const T *logits, const int32_t *labels, int64_t steps,
             int64_t classes, int64_t width)
      : steps_(steps), classes_(classes) {
    logProbs_.resize(steps * classes);
    for (int64_t t = 0; t < steps; ++t) {
      // jax.nn.log_softmax: shifted - log(sum(exp(shifted))).
      const T *x = logits + t * classes;
      T *lp = logProbs_.data() + t * classes;
      T max = x[0];
      for (int64_t k = 1; k < classes; ++k)
        max = nanMax(x[k], max);
      T sum = 0;
      for (int64_t k = 0; k < classes; ++k)
        sum += std::exp(x[k] - max);
      T logSum = std::log(sum);
      for (int64_t k = 0; k < classes; ++k)
        lp[k] = (x[k] - max) - logSum;
    }
    for (int64_t n = 0; n < width; ++n)
      length_ += labels[n] != 0;
    labels_.assign(labels, labels + length_);
    // repeat[n]: label n equals label n + 1 of the padded row (Keras
    // compares the whole row; the last position has no successor).
    for (int64_t n = 0; n < length_; ++n)
      repeat_.push_back(n + 1 < width && labels[n] == labels[n + 1] ? T(1)
                                                                    : T(0));
    forward();
  }

  /// -log p(labels | logits).
  T loss() const { return -logLikelihood(); }

  /// d(g * loss) / d logits into `grad` [steps, classes].
  void gradient(T g, T *grad) const;

private:
  static constexpr T kLogEpsilon = T(-1e5);

  /// log p of label n at step t (0 for a label outside [0, classes), as
  /// jax.nn.one_hot gives it a row of zeros).
  T emitLogProb(int64_t t, int64_t n) const {
    int32_t c = labels_[n];
    return c >= 0 && c < classes_ ? logProbs_[t * classes_ + c] : T(0);
  }
  T blankLogProb(int64_t t) const { return logProbs_[t * classes_]; }
  int64_t states() const { return 2 * length_ + 1; }
  /// phi[n] and emit[n] before step t (t = steps: after the last).
  const T *phi(int64_t t) const { return &alpha_[t * states()]; }
  const T *emit(int64_t t) const { return &alpha_[t * states() + length_ + 1]; }
  T *phi(int64_t t) { return &alpha_[t * states()]; }
  T *emit(int64_t t) { return &alpha_[t * states() + length_ + 1]; }

  /// The phi states after the emit-to-phi epsilon transition of step t
  /// (the recursion's `prev_phi` once updated).
  void epsilonPhi(int64_t t, T *q) const {
    const T *p = phi(t), *e = emit(t);
    q[0] = p[0];
    for (int64_t n = 0; n < length_; ++n)
      q[n + 1] = logAddExp(p[n + 1], e[n] + kLogEpsilon * repeat_[n]);
  }

  void forward();
  /// log p(labels | logits): phi[L] after the last epsilon transition.
  T logLikelihood() const {
    const T *p = phi(steps_);
    return length_ == 0 ? p[0]
                        : logAddExp(p[length_], emit(steps_)[length_ - 1]);
  }

  int64_t steps_, classes_, length_ = 0;
  std::vector<int32_t> labels_;
  std::vector<T> repeat_, logProbs_, alpha_;
};

template <typename T> void CtcLattice<T>::forward() {
  alpha_.assign((steps_ + 1) * states(), kLogEpsilon);
  phi(0)[0] = 0;
  std::vector<T> q(length_ + 1);
  for (int64_t t = 0; t < steps_; ++t) {
    const T *e = emit(t);
    T *nextPhi = phi(t + 1), *nextEmit = emit(t + 1);
    epsilonPhi(t, q.data());
    for (int64_t n = 0; n < length_; ++n) {
      T le = emitLogProb(t, n);
      nextEmit[n] = logAddExp(q[n] + le, e[n] + le);
    }
    T lb = blankLogProb(t);
    nextPhi[0] = q[0] + lb;
    for (int64_t n = 0; n < length_; ++n)
      nextPhi[n + 1] = logAddExp(q[n + 1] + lb,
                                 e[n] + lb + kLogEpsilon * (T(1) - repeat_[n]));
  }
}

template <typename T> void CtcLattice<T>::gradient(T g, T *grad) const {
  std::vector<T> dLogProbs(steps_ * classes_, T(0));
  // Adjoints of phi and emit after step t, then before it.
  std::vector<T> gPhi(length_ + 1, T(0)), gEmit(length_, T(0));
  std::vector<T> gPhiPrev(length_ + 1), gEmitPrev(length_), q(length_ + 1),
      gQ(length_ + 1);
  T out = logLikelihood();
  if (length_ == 0) {
    gPhi[0] = -g;
  } else {
    gPhi[length_] = -g * std::exp(phi(steps_)[length_] - out);
    gEmit[length_ - 1] = -g * std::exp(emit(steps_)[length_ - 1] - out);
  }
  for (int64_t t = steps_ - 1; t >= 0; --t) {
    const T *p = phi(t), *e = emit(t);
    const T *nextPhi = phi(t + 1), *nextEmit = emit(t + 1);
    T *dLp = dLogProbs.data() + t * classes_;
    epsilonPhi(t, q.data());
    std::fill(gPhiPrev.begin(), gPhiPrev.end(), T(0));
    std::fill(gEmitPrev.begin(), gEmitPrev.end(), T(0));
    T lb = blankLogProb(t), gBlank = 0;
    // nextPhi = [q0 + lb, logaddexp(q[n+1] + lb, e[n] + lb + eps(1 - rep))]
    gQ[0] = gPhi[0];
    gBlank += gPhi[0];
    for (int64_t n = 0; n < length_; ++n) {
      T o = nextPhi[n + 1];
      T viaQ = gPhi[n + 1] * std::exp(q[n + 1] + lb - o);
      T viaEmit = gPhi[n + 1] *
                  std::exp(e[n] + lb + kLogEpsilon * (T(1) - repeat_[n]) - o);
      gQ[n + 1] = viaQ;
      gEmitPrev[n] += viaEmit;
      gBlank += viaQ + viaEmit;
    }
    // nextEmit[n] = logaddexp(q[n] + le, e[n] + le)
    for (int64_t n = 0; n < length_; ++n) {
      T le = emitLogProb(t, n), o = nextEmit[n];
      T viaQ = gEmit[n] * std::exp(q[n] + le - o);
      T viaEmit = gEmit[n] * std::exp(e[n] + le - o);
      gQ[n] += viaQ;
      gEmitPrev[n] += viaEmit;
      int32_t c = labels_[n];
      if (c >= 0 && c < classes_)
        dLp[c] += viaQ + viaEmit;
    }
    dLp[0] += gBlank;
    // q = [p0, logaddexp(p[n+1], e[n] + eps * rep)]
    gPhiPrev[0] += gQ[0];
    for (int64_t n = 0; n < length_; ++n) {
      T o = q[n + 1];
      gPhiPrev[n + 1] += gQ[n + 1] * std::exp(p[n + 1] - o);
      gEmitPrev[n] += gQ[n + 1] * std::exp(e[n] + kLogEpsilon * repeat_[n] - o);
    }
    gPhi.swap(gPhiPrev);
    gEmit.swap(gEmitPrev);
  }
  // Through log_softmax: d logits = d lp - softmax * sum(d lp).
  for (int64_t t = 0; t < steps_; ++t) {
    const T *dLp = dLogProbs.data() + t * classes_;
    const T *lp = logProbs_.data() + t * classes_;
    T sum = 0;
    for (int64_t k = 0; k < classes_; ++k)
      sum += dLp[k];
    for (int64_t k = 0; k < classes_; ++k)
      grad[t * classes_ + k] = dLp[k] - std::exp(lp[k]) * sum;
  }
}

struct CtcGeom {
  int64_t batch, steps, classes, width;
};

CtcGeom checkCtc(const char *op, const NDArray &logits, const NDArray &labels,
                 const NDArray &out, bool gradient) {
  bool ok = logits.rank() == 3 && labels.rank() == 2 &&
            labels.dtype() == DType::I32 &&
            (logits.dtype() == DType::F32 || logits.dtype() == DType::F64) &&
            out.dtype() == logits.dtype() && labels.dim(0) == logits.dim(0) &&
            logits.dim(2) >= 1 &&
            (gradient ? out.shape() == logits.shape()
                      : out.rank() == 1 && out.dim(0) == logits.dim(0));
  if (!ok)
    fail(op, std::string("logits ") + dtypeName(logits.dtype()) + " " +
                 shapeToString(logits.shape()) + ", labels " +
                 dtypeName(labels.dtype()) + " " +
                 shapeToString(labels.shape()) + ", output " +
                 dtypeName(out.dtype()) + " " + shapeToString(out.shape()) +
                 " do not match");
  return {logits.dim(0), logits.dim(1), logits.dim(2), labels.dim(1)};
}

template <typename T>
void ctcLossT(const CtcGeom &g, const NDArray &logits, const NDArray &labels,
              const NDArray *gradOut, NDArray &out) {
  const T *x = logits.data<T>();
  const int32_t *y = labels.data<int32_t>();
  T *o = out.data<T>();
  int64_t perExample = g.steps * g.classes;
  runTasks(g.batch, g.batch * perExample * std::max<int64_t>(g.width, 1),
           [&](int64_t b) {
             CtcLattice<T> lattice(x + b * perExample, y + b * g.width, g.steps,
                                   g.classes, g.width);
             if (!gradOut)
               o[b] = lattice.loss();
             else
               lattice.gradient(gradOut->data<T>()[b], o + b * perExample);
           });
}

} // namespace

void kcc::kernels::ctcLoss(const NDArray &logits, const NDArray &labels,
                           NDArray &out) {
  CtcGeom g = checkCtc("ctc_loss", logits, labels, out, false);
  if (logits.dtype() == DType::F64)
    ctcLossT<double>(g, logits, labels, nullptr, out);
  else
    ctcLossT<float>(g, logits, labels, nullptr, out);
}

void kcc::kernels::ctcLossGrad(const NDArray &logits, const NDArray &labels,
                               const NDArray &gradOut, NDArray &out) {
  CtcGeom g = checkCtc("ctc_loss_grad", logits, labels, out, true);
  if (gradOut.rank() != 1 || gradOut.dim(0) != g.batch ||
      gradOut.dtype() != logits.dtype())
    fail("ctc_loss_grad", "grad_output " + shapeToString(gradOut.shape()) +
                              " is not one value per example");
  if (logits.dtype() == DType::F64)
    ctcLossT<double>(g, logits, labels, &gradOut, out);
  else
    ctcLossT<float>(g, logits, labels, &gradOut, out);
}
