//===- Recurrence.cpp - LSTM, GRU and SimpleRNN steps ---------------------===//
//
// Each step is one or two GEMMs with the recurrent kernel (loops on the
// calling thread for a step's small products, oneDNN's sgemm for large ones;
// both take leading dimensions, so the strided rows of the states buffer
// are read and written in place) and one pass of gate arithmetic. The
// gradient of every activation is taken from its output, which the states
// row keeps, so nothing before the activation has to be saved.
//
//===----------------------------------------------------------------------===//

#include "runtime/kernels/Recurrence.h"
#include "runtime/kernels/Exp.h"
#include "runtime/kernels/KernelSupport.h"
#include "runtime/kernels/RecurrentCells.h"
#include "runtime/kernels/Tanh.h"

#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

using namespace kcc;
using namespace kcc::kernels;

namespace {

using Act = RecurrentActivation;

/// The arithmetic of the cell equations (RecurrentCells.h) on scalars, and
/// the kernel library's activations: the rational tanh of Tanh.h, sigmoid
/// through Exp.h's exp.
template <typename T> struct ScalarCellOps {
  using Value = T;

  T add(T a, T b) const { return a + b; }
  T sub(T a, T b) const { return a - b; }
  T mul(T a, T b) const { return a * b; }
  T constant(double v, T) const { return T(v); }

  T activate(Act a, T x) const {
    switch (a) {
    case Act::Tanh:
      return tanhOf(x);
    case Act::Sigmoid:
      return T(1) / (T(1) + expOf(-x));
    case Act::Relu:
      return x > T(0) ? x : T(0);
    case Act::Linear:
      return x;
    case Act::HardSigmoid:
      return std::min(T(1), std::max(T(0), x / T(6) + T(0.5)));
    }
    return x;
  }

  /// d activation / d input, from the activation's output y.
  T activationGrad(Act a, T y) const {
    switch (a) {
    case Act::Tanh:
      return T(1) - y * y;
    case Act::Sigmoid:
      return y * (T(1) - y);
    case Act::Relu:
      return y > T(0) ? T(1) : T(0);
    case Act::Linear:
      return T(1);
    case Act::HardSigmoid:
      return y > T(0) && y < T(1) ? T(1) / T(6) : T(0);
    }
    return T(1);
  }
};

/// Scratch that lives across the steps of one thread (no allocation per
/// step once it has grown): slots 0 and 1 for the cells, 2 for loopGemm.
template <typename T> T *scratch(size_t n, int which) {
  thread_local std::vector<T> buffers[3];
  std::vector<T> &v = buffers[which];
  if (v.size() < n)
    v.resize(n);
  return v.data();
}

/// C[M,N] = alpha op(A) op(B) + beta C, row-major with leading dimensions,
/// in plain loops whose innermost index runs along a row of C and of op(B)
/// (they vectorize without reassociating sums); a transposed B is copied
/// to that layout first.
template <typename T>
void loopGemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha,
              const T *a, int64_t lda, const T *b, int64_t ldb, T beta, T *c,
              int64_t ldc) {
  if (tb) {
    T *bt = scratch<T>(k * n, 2);
    for (int64_t j = 0; j < n; ++j)
      for (int64_t l = 0; l < k; ++l)
        bt[l * n + j] = b[j * ldb + l];
    b = bt;
    ldb = n;
  }
  for (int64_t i = 0; i < m; ++i) {
    T *ci = c + i * ldc;
    if (beta == T(0))
      std::fill(ci, ci + n, T(0));
    else if (beta != T(1))
      for (int64_t j = 0; j < n; ++j)
        ci[j] *= beta;
    for (int64_t l = 0; l < k; ++l) {
      T av = alpha * (ta ? a[l * lda + i] : a[i * lda + l]);
      const T *bl = b + l * ldb;
      for (int64_t j = 0; j < n; ++j)
        ci[j] += av * bl[j];
    }
  }
}

/// The products of one step are small (batch x units x gates): below this
/// many multiply-adds oneDNN's dispatch and the wake-up of its thread team
/// cost more than the arithmetic, so they run as loops on the calling
/// thread. Measured on the LSTM and GRU fixtures: 32 x 12 x 48 (18k) is
/// faster as loops, 128 x 12 x 48 (74k) through oneDNN (2.4 against 4.1
/// ms a step).
constexpr int64_t kLoopGemmMacs = int64_t(1) << 15;

void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
          const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
          float *c, int64_t ldc) {
  if (m == 0 || n == 0)
    return;
  if (m * n * k <= kLoopGemmMacs)
    return loopGemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  if (dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb,
                 beta, c, ldc) != dnnl_success)
    detail::fail("recurrence", "oneDNN sgemm failed");
}

void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha,
          const double *a, int64_t lda, const double *b, int64_t ldb,
          double beta, double *c, int64_t ldc) {
  loopGemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

/// The views one step works on.
template <typename T> struct Step {
  int64_t B, H, G, S, K;
  int64_t row;            ///< the x row this step reads
  const T *x;             ///< [B, G*H]
  const T *hPrev, *cPrev; ///< [B, H], leading dimension ldPrev
  int64_t ldPrev;
  const T *statesRow; ///< [B, S]
  T *outRow;          ///< forward: the row written
};

template <typename T>
Step<T> viewStep(const RecurrenceParams &p, const RecurrenceDims &d, const T *x,
                 const T *initial, const T *states, int64_t step) {
  Step<T> s;
  s.B = d.batch;
  s.H = d.units;
  s.G = recurrentGates(p.cell);
  s.S = recurrentStateWidth(p, d.units);
  s.K = recurrentInitialWidth(p.cell, d.units);
  s.row = p.reverse ? d.steps - 1 - step : step;
  s.x = x ? x + s.row * s.B * s.G * s.H : nullptr;
  if (step == 0) {
    s.hPrev = initial;
    s.ldPrev = s.K;
  } else {
    s.hPrev = states + (step - 1) * s.B * s.S;
    s.ldPrev = s.S;
  }
  s.cPrev = s.hPrev + s.H; // LSTM: c follows h in both layouts
  s.statesRow = states + step * s.B * s.S;
  return s;
}

template <typename T>
void lstmStep(const RecurrenceParams &p, const Step<T> &s, const T *U,
              const T *rb, T *row) {
  const int64_t B = s.B, H = s.H, S = s.S, GH = 4 * H;
  T *z = row + 2 * H;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t j = 0; j < GH; ++j)
      z[b * S + j] = s.x[b * GH + j] + rb[j];
  gemm(false, false, B, GH, H, T(1), s.hPrev, s.ldPrev, U, GH, T(1), z, S);
  ScalarCellOps<T> ops;
  for (int64_t b = 0; b < B; ++b) {
    T *r = row + b * S, *gates = z + b * S;
    const T *cp = s.cPrev + b * s.ldPrev;
    for (int64_t j = 0; j < H; ++j) {
      cells::LstmStep<T> out = cells::lstmForward(
          ops, p, [&](int64_t k) { return gates[k * H + j]; }, cp[j]);
      int64_t slot = 0;
      for (T v : {out.h, out.c, out.i, out.f, out.g, out.o})
        r[slot++ * H + j] = v;
    }
  }
}

template <typename T>
void gruStep(const RecurrenceParams &p, const Step<T> &s, const T *U,
             const T *rb, T *row) {
  const int64_t B = s.B, H = s.H, S = s.S, GH = 3 * H;
  T *rec = scratch<T>(B * GH, 0);
  for (int64_t b = 0; b < B; ++b)
    std::memcpy(rec + b * GH, rb, GH * sizeof(T));
  // reset_after: h.U for all three gates at once; else z and r first, then
  // (r * h).U for the candidate.
  gemm(false, false, B, p.resetAfter ? GH : 2 * H, H, T(1), s.hPrev, s.ldPrev,
       U, GH, T(1), rec, GH);
  ScalarCellOps<T> ops;
  if (!p.resetAfter) {
    T *rh = scratch<T>(B * H, 1);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t j = 0; j < H; ++j)
        rh[b * H + j] = cells::gruResetHidden(
            ops,
            cells::gruGate(ops, p, s.x[b * GH + H + j], rec[b * GH + H + j]),
            s.hPrev[b * s.ldPrev + j]);
    gemm(false, false, B, H, H, T(1), rh, H, U + 2 * H, GH, T(1), rec + 2 * H,
         GH);
  }
  for (int64_t b = 0; b < B; ++b) {
    const T *xb = s.x + b * GH, *rc = rec + b * GH;
    const T *hp = s.hPrev + b * s.ldPrev;
    T *r = row + b * S;
    for (int64_t j = 0; j < H; ++j) {
      T zg = cells::gruGate(ops, p, xb[j], rc[j]);
      T rg = cells::gruGate(ops, p, xb[H + j], rc[H + j]);
      T hh = p.resetAfter
                 ? cells::gruCandidateResetAfter(ops, p, xb[2 * H + j], rg,
                                                 rc[2 * H + j])
                 : cells::gruCandidate(ops, p, xb[2 * H + j], rc[2 * H + j]);
      r[j] = cells::gruOutput(ops, zg, hp[j], hh);
      r[H + j] = zg, r[2 * H + j] = rg, r[3 * H + j] = hh;
      if (p.resetAfter)
        r[4 * H + j] = rc[2 * H + j];
    }
  }
}

template <typename T>
void simpleStep(const RecurrenceParams &p, const Step<T> &s, const T *U,
                const T *rb, T *row) {
  const int64_t B = s.B, H = s.H;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t j = 0; j < H; ++j)
      row[b * H + j] = s.x[b * H + j] + rb[j];
  gemm(false, false, B, H, H, T(1), s.hPrev, s.ldPrev, U, H, T(1), row, H);
  ScalarCellOps<T> ops;
  for (int64_t i = 0; i < B * H; ++i)
    row[i] = cells::simpleRnnForward(ops, p, row[i]);
}

/// The flat gradient buffer's parts.
template <typename T> struct GradParts {
  T *dx, *dU, *dInit, *dRb;
};

template <typename T>
GradParts<T> gradParts(const RecurrenceParams &p, const RecurrenceDims &d,
                       T *grad) {
  int64_t GH = recurrentGates(p.cell) * d.units;
  GradParts<T> g;
  g.dx = grad;
  g.dU = g.dx + d.steps * d.batch * GH;
  g.dInit = g.dU + d.units * GH;
  g.dRb = g.dInit + d.batch * recurrentInitialWidth(p.cell, d.units);
  return g;
}

/// dRb[j] += sum over b of m[b, j] (leading dimension ld).
template <typename T>
void addColumnSums(const T *m, int64_t rows, int64_t cols, int64_t ld, T *out) {
  for (int64_t b = 0; b < rows; ++b)
    for (int64_t j = 0; j < cols; ++j)
      out[j] += m[b * ld + j];
}

template <typename T>
void lstmGradStep(const RecurrenceParams &p, const Step<T> &s, const T *U,
                  const T *gRow, const GradParts<T> &g) {
  const int64_t B = s.B, H = s.H, S = s.S, GH = 4 * H;
  T *dz = g.dx + s.row * B * GH;
  T *dh = g.dInit, *dc = g.dInit + H; // carries, leading dimension 2H
  ScalarCellOps<T> ops;
  for (int64_t b = 0; b < B; ++b) {
    const T *r = s.statesRow + b * S, *gr = gRow + b * S;
    const T *cp = s.cPrev + b * s.ldPrev;
    T *dzb = dz + b * GH, *dhb = dh + b * 2 * H, *dcb = dc + b * 2 * H;
    for (int64_t j = 0; j < H; ++j) {
      cells::LstmStep<T> saved{r[j],         r[H + j],     r[2 * H + j],
                               r[3 * H + j], r[4 * H + j], r[5 * H + j]};
      cells::LstmGradients<T> d =
          cells::lstmBackward(ops, p, saved, dhb[j], dcb[j], cp[j],
                              [&](int64_t slot) { return gr[slot * H + j]; });
      for (int64_t k = 0; k < 4; ++k)
        dzb[k * H + j] = d.gates[k];
      dcb[j] = cells::lstmCellCarry(ops, d.cell, saved.f);
    }
  }
  gemm(false, true, B, H, GH, T(1), dz, GH, U, GH, T(0), dh, 2 * H);
  gemm(true, false, H, GH, B, T(1), s.hPrev, s.ldPrev, dz, GH, T(1), g.dU, GH);
  addColumnSums(dz, B, GH, GH, g.dRb);
}

template <typename T>
void gruGradStep(const RecurrenceParams &p, const Step<T> &s, const T *U,
                 const T *gRow, const GradParts<T> &g) {
  const int64_t B = s.B, H = s.H, S = s.S, GH = 3 * H;
  T *dz = g.dx + s.row * B * GH;
  T *dh = g.dInit; // carry, leading dimension H
  ScalarCellOps<T> ops;
  if (p.resetAfter) {
    T *drec = scratch<T>(B * GH, 0);
    for (int64_t b = 0; b < B; ++b) {
      const T *r = s.statesRow + b * S, *gr = gRow + b * S;
      const T *hp = s.hPrev + b * s.ldPrev;
      T *dzb = dz + b * GH, *drb = drec + b * GH, *dhb = dh + b * H;
      for (int64_t j = 0; j < H; ++j) {
        T zg = r[H + j], rg = r[2 * H + j], hh = r[3 * H + j],
          recH = r[4 * H + j];
        T dht = cells::hiddenGradient(ops, gr[j], dhb[j]);
        T dzh = cells::gruCandidateGradient(ops, p, dht, zg, hh, gr[3 * H + j]);
        T dzz = cells::gruUpdateGradient(ops, p, dht, hp[j], hh, zg, gr[H + j]);
        T dzr = cells::gruResetGradient(ops, p, dzh, recH, rg, gr[2 * H + j]);
        dzb[j] = dzz, dzb[H + j] = dzr, dzb[2 * H + j] = dzh;
        drb[j] = dzz, drb[H + j] = dzr;
        drb[2 * H + j] =
            cells::gruRecurrentCandidateGradient(ops, dzh, rg, gr[4 * H + j]);
        dhb[j] = cells::gruHiddenCarry(ops, dht, zg);
      }
    }
    gemm(false, true, B, H, GH, T(1), drec, GH, U, GH, T(1), dh, H);
    gemm(true, false, H, GH, B, T(1), s.hPrev, s.ldPrev, drec, GH, T(1), g.dU,
         GH);
    addColumnSums(drec, B, GH, GH, g.dRb);
    return;
  }
  // reset before: hh = a(x_h + (r * h).U_h + b_h).
  T *drh = scratch<T>(B * H, 0), *rh = scratch<T>(B * H, 1);
  for (int64_t b = 0; b < B; ++b) {
    const T *r = s.statesRow + b * S, *gr = gRow + b * S;
    const T *hp = s.hPrev + b * s.ldPrev;
    T *dzb = dz + b * GH, *dhb = dh + b * H;
    for (int64_t j = 0; j < H; ++j) {
      T zg = r[H + j], rg = r[2 * H + j], hh = r[3 * H + j];
      T dht = cells::hiddenGradient(ops, gr[j], dhb[j]);
      dzb[2 * H + j] =
          cells::gruCandidateGradient(ops, p, dht, zg, hh, gr[3 * H + j]);
      dzb[j] = cells::gruUpdateGradient(ops, p, dht, hp[j], hh, zg, gr[H + j]);
      dhb[j] = cells::gruHiddenCarry(ops, dht, zg);
      rh[b * H + j] = cells::gruResetHidden(ops, rg, hp[j]);
    }
  }
  gemm(false, true, B, H, H, T(1), dz + 2 * H, GH, U + 2 * H, GH, T(0), drh, H);
  for (int64_t b = 0; b < B; ++b) {
    const T *r = s.statesRow + b * S, *gr = gRow + b * S;
    const T *hp = s.hPrev + b * s.ldPrev;
    T *dzb = dz + b * GH, *dhb = dh + b * H;
    for (int64_t j = 0; j < H; ++j) {
      T rg = r[2 * H + j], d = drh[b * H + j];
      dzb[H + j] = cells::gruResetGradient(ops, p, d, hp[j], rg, gr[2 * H + j]);
      dhb[j] = cells::gruResetCarry(ops, dhb[j], d, rg);
    }
  }
  gemm(false, true, B, H, 2 * H, T(1), dz, GH, U, GH, T(1), dh, H);
  gemm(true, false, H, 2 * H, B, T(1), s.hPrev, s.ldPrev, dz, GH, T(1), g.dU,
       GH);
  gemm(true, false, H, H, B, T(1), rh, H, dz + 2 * H, GH, T(1), g.dU + 2 * H,
       GH);
  addColumnSums(dz, B, GH, GH, g.dRb);
}

template <typename T>
void simpleGradStep(const RecurrenceParams &p, const Step<T> &s, const T *U,
                    const T *gRow, const GradParts<T> &g) {
  const int64_t B = s.B, H = s.H;
  T *dz = g.dx + s.row * B * H, *dh = g.dInit;
  ScalarCellOps<T> ops;
  for (int64_t i = 0; i < B * H; ++i)
    dz[i] = cells::simpleRnnGradient(
        ops, p, cells::hiddenGradient(ops, gRow[i], dh[i]), s.statesRow[i]);
  gemm(false, true, B, H, H, T(1), dz, H, U, H, T(0), dh, H);
  gemm(true, false, H, H, B, T(1), s.hPrev, s.ldPrev, dz, H, T(1), g.dU, H);
  addColumnSums(dz, B, H, H, g.dRb);
}

template <typename T> const T *typed(const NDArray &a, const char *what) {
  if (a.dtype() != (sizeof(T) == 4 ? DType::F32 : DType::F64))
    detail::fail("recurrence",
                 std::string(what) + " has dtype " + dtypeName(a.dtype()));
  return a.data<T>();
}

RecurrenceDims dimsOf(const RecurrenceParams &p, const NDArray &kernel,
                      const NDArray &initial, int64_t steps) {
  RecurrenceDims d;
  d.units = kernel.rank() == 2 ? kernel.dim(0) : 0;
  d.batch = initial.rank() == 2 ? initial.dim(0) : 0;
  d.steps = steps;
  if (kernel.rank() != 2 || kernel.dim(1) != recurrentGates(p.cell) * d.units ||
      initial.rank() != 2 ||
      initial.dim(1) != recurrentInitialWidth(p.cell, d.units))
    detail::fail("recurrence", "kernel " + shapeToString(kernel.shape()) +
                                   " and initial state " +
                                   shapeToString(initial.shape()) +
                                   " do not fit the cell");
  return d;
}

template <typename T>
void runForward(const RecurrenceParams &p, const NDArray &x,
                const NDArray &kernel, const NDArray &initial,
                const NDArray &rbias, NDArray &states) {
  RecurrenceDims d = dimsOf(p, kernel, initial, x.dim(0));
  for (int64_t s = 0; s < d.steps; ++s)
    recurrenceStep<T>(p, d, typed<T>(x, "x"), typed<T>(kernel, "kernel"),
                      typed<T>(initial, "initial"), typed<T>(rbias, "rbias"),
                      states.data<T>(), s);
}

template <typename T>
void runBackward(const RecurrenceParams &p, const NDArray &kernel,
                 const NDArray &initial, const NDArray &states,
                 const NDArray &gradStates, NDArray &grad) {
  RecurrenceDims d = dimsOf(p, kernel, initial, states.dim(0));
  for (int64_t s = d.steps - 1; s >= 0; --s)
    recurrenceGradStep<T>(p, d, typed<T>(kernel, "kernel"),
                          typed<T>(initial, "initial"),
                          typed<T>(states, "states"),
                          typed<T>(gradStates, "grad"), grad.data<T>(), s);
}

} // namespace

template <typename T>
void kernels::recurrenceStep(const RecurrenceParams &p, const RecurrenceDims &d,
                             const T *x, const T *kernel, const T *initial,
                             const T *rbias, T *states, int64_t step) {
  Step<T> s = viewStep<T>(p, d, x, initial, states, step);
  T *row = states + step * s.B * s.S;
  switch (p.cell) {
  case RecurrentCell::Lstm:
    return lstmStep(p, s, kernel, rbias, row);
  case RecurrentCell::Gru:
    return gruStep(p, s, kernel, rbias, row);
  case RecurrentCell::SimpleRnn:
    return simpleStep(p, s, kernel, rbias, row);
  }
}

template <typename T>
void kernels::recurrenceGradStep(const RecurrenceParams &p,
                                 const RecurrenceDims &d, const T *kernel,
                                 const T *initial, const T *states,
                                 const T *gradStates, T *grad, int64_t step) {
  GradParts<T> g = gradParts(p, d, grad);
  if (step == d.steps - 1) {
    int64_t GH = recurrentGates(p.cell) * d.units;
    std::fill(g.dU, g.dU + d.units * GH, T(0));
    std::fill(g.dInit,
              g.dInit + d.batch * recurrentInitialWidth(p.cell, d.units), T(0));
    std::fill(g.dRb, g.dRb + GH, T(0));
  }
  Step<T> s =
      viewStep<T>(p, d, static_cast<const T *>(nullptr), initial, states, step);
  const T *gRow = gradStates + step * s.B * s.S;
  switch (p.cell) {
  case RecurrentCell::Lstm:
    return lstmGradStep(p, s, kernel, gRow, g);
  case RecurrentCell::Gru:
    return gruGradStep(p, s, kernel, gRow, g);
  case RecurrentCell::SimpleRnn:
    return simpleGradStep(p, s, kernel, gRow, g);
  }
}

template void kernels::recurrenceStep<float>(const RecurrenceParams &,
                                             const RecurrenceDims &,
                                             const float *, const float *,
                                             const float *, const float *,
                                             float *, int64_t);
template void kernels::recurrenceStep<double>(const RecurrenceParams &,
                                              const RecurrenceDims &,
                                              const double *, const double *,
                                              const double *, const double *,
                                              double *, int64_t);
template void kernels::recurrenceGradStep<float>(const RecurrenceParams &,
                                                 const RecurrenceDims &,
                                                 const float *, const float *,
                                                 const float *, const float *,
                                                 float *, int64_t);
template void kernels::recurrenceGradStep<double>(
    const RecurrenceParams &, const RecurrenceDims &, const double *,
    const double *, const double *, const double *, double *, int64_t);

void kernels::recurrence(const RecurrenceParams &p, const NDArray &x,
                         const NDArray &kernel, const NDArray &initial,
                         const NDArray &rbias, NDArray &states) {
  if (x.rank() != 3 || states.rank() != 3 || states.dim(0) != x.dim(0))
    detail::fail("recurrence", "expects [T, B, G*H] x and [T, B, S] states, "
                               "got " +
                                   shapeToString(x.shape()) + " and " +
                                   shapeToString(states.shape()));
  if (states.dtype() == DType::F64)
    runForward<double>(p, x, kernel, initial, rbias, states);
  else
    runForward<float>(p, x, kernel, initial, rbias, states);
}

void kernels::recurrenceGrad(const RecurrenceParams &p, const NDArray &kernel,
                             const NDArray &initial, const NDArray &states,
                             const NDArray &gradStates, NDArray &grad) {
  if (states.rank() != 3 || gradStates.shape() != states.shape())
    detail::fail("recurrence_grad", "expects the gradient of the states " +
                                        shapeToString(states.shape()) +
                                        ", got " +
                                        shapeToString(gradStates.shape()));
  if (grad.dtype() == DType::F64)
    runBackward<double>(p, kernel, initial, states, gradStates, grad);
  else
    runBackward<float>(p, kernel, initial, states, gradStates, grad);
}
