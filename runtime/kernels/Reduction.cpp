//===- Reduction.cpp - softmax, logSoftmax, reduce and argmax -------------===//
//
// Every reduction is brought to the form [outer, R, inner] (R reduced). When
// inner == 1 the reduction runs along a contiguous row (an OpenMP simd
// reduction, which vectorizes without fast-math); otherwise whole rows of
// `inner` elements are combined, which vectorizes along inner. Softmax
// subtracts the row maximum first so large inputs stay finite.
//
//===----------------------------------------------------------------------===//

#include "runtime/kernels/Exp.h"
#include "runtime/kernels/KernelSupport.h"
#include "runtime/kernels/Kernels.h"
#include "runtime/kernels/Log.h"
#include "runtime/kernels/SplitSum.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <omp.h>
#include <type_traits>

using namespace kcc;
using namespace kcc::kernels;
using namespace kcc::kernels::detail;

namespace {

/// Columns per task when reducing along a non-innermost axis.
constexpr int64_t kColumnChunk = 256;

template <typename Fn> void dispatchFloat(const char *op, DType dt, Fn &&fn) {
  switch (dt) {
  case DType::F32:
    return fn(float());
  case DType::F64:
    return fn(double());
  default:
    fail(op, std::string("unsupported dtype ") + dtypeName(dt));
  }
}

/// [outer, len, inner] split of x's shape around `axis`.
struct AxisSplit {
  int64_t outer = 1, len = 1, inner = 1;
};

AxisSplit splitAt(const char *op, const Shape &shape, int64_t axis) {
  int64_t rank = static_cast<int64_t>(shape.size());
  if (axis < 0 || axis >= rank)
    fail(op, "axis " + std::to_string(axis) + " out of range for " +
                 shapeToString(shape));
  AxisSplit s;
  for (int64_t d = 0; d < rank; ++d)
    (d < axis ? s.outer : d == axis ? s.len : s.inner) *= shape[d];
  return s;
}

//===----------------------------------------------------------------------===//
// softmax / logSoftmax
//===----------------------------------------------------------------------===//

template <typename T, bool Log>
void softmaxRow(const T *__restrict x, T *__restrict o, int64_t len) {
  T m = -std::numeric_limits<T>::infinity();
#pragma omp simd reduction(max : m)
  for (int64_t i = 0; i < len; ++i)
    m = x[i] > m ? x[i] : m;
  T s = 0;
  for (int64_t i = 0; i < len; ++i) {
    T e = expOf(x[i] - m);
    if constexpr (!Log)
      o[i] = e;
    s += e;
  }
  if constexpr (Log) {
    // (x - m) is exact for the large entries; folding m into the log term
    // would round it at the magnitude of m.
    T logSum = logOf(s);
    for (int64_t i = 0; i < len; ++i)
      o[i] = (x[i] - m) - logSum;
  } else {
    T inv = T(1) / s;
    for (int64_t i = 0; i < len; ++i)
      o[i] *= inv;
  }
}

/// Softmax over the middle axis of [len, inner], columns [j0, j1).
template <typename T, bool Log>
void softmaxColumns(const T *__restrict x, T *__restrict o, int64_t len,
                    int64_t inner, int64_t j0, int64_t j1) {
  T m[kColumnChunk], s[kColumnChunk];
  int64_t w = j1 - j0;
  x += j0;
  o += j0;
  for (int64_t j = 0; j < w; ++j) {
    m[j] = x[j];
    s[j] = 0;
  }
  for (int64_t l = 1; l < len; ++l)
    for (int64_t j = 0; j < w; ++j)
      m[j] = x[l * inner + j] > m[j] ? x[l * inner + j] : m[j];
  for (int64_t l = 0; l < len; ++l)
    for (int64_t j = 0; j < w; ++j) {
      T e = expOf(x[l * inner + j] - m[j]);
      if constexpr (!Log)
        o[l * inner + j] = e;
      s[j] += e;
    }
  for (int64_t j = 0; j < w; ++j)
    s[j] = Log ? logOf(s[j]) : T(1) / s[j];
  for (int64_t l = 0; l < len; ++l)
    for (int64_t j = 0; j < w; ++j) {
      if constexpr (Log)
        o[l * inner + j] = (x[l * inner + j] - m[j]) - s[j];
      else
        o[l * inner + j] *= s[j];
    }
}

template <bool Log>
void runSoftmax(const char *op, const NDArray &x, int64_t axis, NDArray &out) {
  if (x.shape() != out.shape() || x.dtype() != out.dtype())
    fail(op, "output " + shapeToString(out.shape()) + " does not match input " +
                 shapeToString(x.shape()));
  AxisSplit s = splitAt(op, x.shape(), axis < 0 ? axis + x.rank() : axis);
  if (x.numel() == 0)
    return;
  dispatchFloat(op, x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T *px = x.data<T>();
    T *po = out.data<T>();
    int64_t rowSize = s.len * s.inner;
    if (s.inner == 1) {
      runTasks(s.outer, x.numel(), [&](int64_t r) {
        softmaxRow<T, Log>(px + r * s.len, po + r * s.len, s.len);
      });
      return;
    }
    int64_t chunks = (s.inner + kColumnChunk - 1) / kColumnChunk;
    runTasks(s.outer * chunks, x.numel(), [&](int64_t t) {
      int64_t r = t / chunks, j0 = (t % chunks) * kColumnChunk;
      softmaxColumns<T, Log>(px + r * rowSize, po + r * rowSize, s.len, s.inner,
                             j0, std::min(s.inner, j0 + kColumnChunk));
    });
  });
}

//===----------------------------------------------------------------------===//
// reduce
//===----------------------------------------------------------------------===//

template <typename T, bool IsMax>
T reduceRow(const T *__restrict x, int64_t len) {
  if constexpr (IsMax) {
    // The simd max reduction may drop a NaN when it combines lanes, so NaNs
    // are counted on the side: a row holding one reduces to NaN (Keras).
    T m = -std::numeric_limits<T>::infinity();
    int nan = 0;
#pragma omp simd reduction(max : m) reduction(| : nan)
    for (int64_t i = 0; i < len; ++i) {
      m = x[i] > m ? x[i] : m;
      nan |= x[i] != x[i];
    }
    return nan ? std::numeric_limits<T>::quiet_NaN() : m;
  } else {
    T s = 0;
#pragma omp simd reduction(+ : s)
    for (int64_t i = 0; i < len; ++i)
      s += x[i];
    return s;
  }
}

template <typename T, bool IsMax>
void combineRow(T *__restrict acc, const T *__restrict x, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    if constexpr (IsMax)
      acc[j] = nanMax(x[j], acc[j]);
    else
      acc[j] += x[j];
  }
}

/// out[o, j] = reduce_r in[o, r, j].
template <typename T, bool IsMax>
void reduceMiddle(const T *in, T *out, int64_t outer, int64_t len,
                  int64_t inner) {
  int64_t work = outer * len * inner;
  if (inner == 1 && outer == 1 && work >= kParallelThreshold) {
    // One long row: partial results per thread, combined in order.
    int64_t nt = omp_get_max_threads();
    std::vector<T> partial(nt,
                           IsMax ? -std::numeric_limits<T>::infinity() : T(0));
    int64_t chunk = (len + nt - 1) / nt;
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < nt; ++t) {
      int64_t b = std::min(len, t * chunk), e = std::min(len, b + chunk);
      if (b < e)
        partial[t] = reduceRow<T, IsMax>(in + b, e - b);
    }
    *out = reduceRow<T, IsMax>(partial.data(), nt);
    return;
  }
  if (inner == 1) {
    runTasks(outer, work, [&](int64_t o) {
      out[o] = reduceRow<T, IsMax>(in + o * len, len);
    });
    return;
  }
  int64_t chunks = (inner + kColumnChunk - 1) / kColumnChunk;
  runTasks(outer * chunks, work, [&](int64_t t) {
    int64_t o = t / chunks, j0 = (t % chunks) * kColumnChunk;
    int64_t w = std::min(inner, j0 + kColumnChunk) - j0;
    const T *src = in + o * len * inner + j0;
    T *acc = out + o * inner + j0;
    std::copy(src, src + w, acc);
    for (int64_t r = 1; r < len; ++r)
      combineRow<T, IsMax>(acc, src + r * inner, w);
  });
}

/// Reduces the dims flagged in `reduced`, one run of adjacent reduced dims at
/// a time starting from the innermost. One pass in the common cases (leading,
/// trailing or one middle block of axes).
template <typename T, bool IsMax>
void reduceGroups(const T *in, T *out, std::vector<int64_t> sizes,
                  std::vector<bool> reduced) {
  std::vector<T> bufA, bufB;
  const T *src = in;
  while (true) {
    // Merge adjacent dims of the same kind; size-1 dims are no-ops.
    std::vector<int64_t> s;
    std::vector<bool> r;
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (sizes[d] == 1)
        continue;
      if (!r.empty() && r.back() == reduced[d])
        s.back() *= sizes[d];
      else {
        s.push_back(sizes[d]);
        r.push_back(reduced[d]);
      }
    }
    int64_t last = -1;
    for (size_t d = 0; d < r.size(); ++d)
      if (r[d])
        last = static_cast<int64_t>(d);
    int64_t outer = 1, inner = 1, numReduced = 0;
    for (size_t d = 0; d < r.size(); ++d) {
      if (static_cast<int64_t>(d) < last)
        outer *= s[d];
      else if (static_cast<int64_t>(d) > last)
        inner *= s[d];
      numReduced += r[d];
    }
    if (last < 0) { // Nothing (left) to reduce.
      if (src != out)
        std::copy(src, src + outer * inner, out);
      return;
    }
    T *dst = out;
    if (numReduced > 1) {
      std::vector<T> &buf = src == bufA.data() ? bufB : bufA;
      buf.resize(outer * inner);
      dst = buf.data();
    }
    reduceMiddle<T, IsMax>(src, dst, outer, s[last], inner);
    if (dst == out)
      return;
    src = dst;
    s.erase(s.begin() + last);
    r.erase(r.begin() + last);
    sizes = s;
    reduced = r;
  }
}

//===----------------------------------------------------------------------===//
// argmax
//===----------------------------------------------------------------------===//

/// Whether `v` replaces the running maximum `best`: a NaN counts as the
/// largest value (as numpy and PyTorch), so the first NaN wins.
template <typename T> bool argmaxBetter(T v, T best) {
  if constexpr (std::is_floating_point_v<T>)
    return v > best || (v != v && best == best);
  else
    return v > best;
}

template <typename T>
void argmaxRow(const T *__restrict x, int64_t len, int64_t *out) {
  int64_t best = 0;
  T bestVal = x[0];
  for (int64_t i = 1; i < len; ++i)
    if (argmaxBetter(x[i], bestVal)) { // The first maximum (or NaN) wins.
      bestVal = x[i];
      best = i;
    }
  *out = best;
}

template <typename T>
void argmaxColumns(const T *__restrict x, int64_t len, int64_t inner,
                   int64_t *__restrict out, int64_t w) {
  T best[kColumnChunk];
  for (int64_t j = 0; j < w; ++j) {
    best[j] = x[j];
    out[j] = 0;
  }
  for (int64_t l = 1; l < len; ++l)
    for (int64_t j = 0; j < w; ++j) {
      T v = x[l * inner + j];
      bool better = argmaxBetter(v, best[j]);
      best[j] = better ? v : best[j];
      out[j] = better ? l : out[j];
    }
}

} // namespace

void kernels::softmax(const NDArray &x, int64_t axis, NDArray &out) {
  runSoftmax<false>("softmax", x, axis, out);
}

void kernels::logSoftmax(const NDArray &x, int64_t axis, NDArray &out) {
  runSoftmax<true>("logSoftmax", x, axis, out);
}

void kernels::reduce(ReduceKind kind, const NDArray &x,
                     const std::vector<int64_t> &axes, NDArray &out) {
  int64_t rank = x.rank();
  std::vector<bool> reduced(rank, false);
  int64_t count = 1, prev = -1;
  for (int64_t a : axes) {
    if (a <= prev || a >= rank)
      fail("reduce", "axes must be sorted, unique and within rank of " +
                         shapeToString(x.shape()));
    reduced[a] = true;
    count *= x.dim(a);
    prev = a;
  }
  int64_t expected = count ? x.numel() / count : 0;
  if (count == 0) {
    expected = 1;
    for (int64_t d = 0; d < rank; ++d)
      expected *= reduced[d] ? 1 : x.dim(d);
  }
  if (out.numel() != expected || out.dtype() != x.dtype())
    fail("reduce", "output " + shapeToString(out.shape()) +
                       " does not match reducing " + shapeToString(x.shape()));
  dispatchFloat("reduce", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T *po = out.data<T>();
    if (count == 0) { // Empty reduction: the identity (NaN for a mean).
      T init = kind == ReduceKind::Sum   ? T(0)
               : kind == ReduceKind::Max ? -std::numeric_limits<T>::infinity()
                                         : std::numeric_limits<T>::quiet_NaN();
      std::fill(po, po + expected, init);
      return;
    }
    if (expected == 0)
      return;
    int64_t reducedDims = std::count(reduced.begin(), reduced.end(), true);
    if (kind == ReduceKind::Max) {
      reduceGroups<T, true>(x.data<T>(), po, x.shape(), reduced);
    } else if (rank > 0 && reduced[0] &&
               splitsSum(x.numel(), expected, x.dim(0), reducedDims)) {
      // One partial sum per leading index, then those added in order: the
      // compiled step's split (SplitSum.h), and parallel over the rows.
      std::vector<bool> inner = reduced;
      inner[0] = false;
      std::vector<T> partial(x.dim(0) * expected);
      reduceGroups<T, false>(x.data<T>(), partial.data(), x.shape(), inner);
      std::copy(partial.begin(), partial.begin() + expected, po);
      for (int64_t r = 1; r < x.dim(0); ++r)
        for (int64_t i = 0; i < expected; ++i)
          po[i] += partial[r * expected + i];
    } else {
      reduceGroups<T, false>(x.data<T>(), po, x.shape(), reduced);
    }
    if (kind == ReduceKind::Mean) {
      T scale = T(1) / T(count);
      for (int64_t i = 0; i < expected; ++i)
        po[i] *= scale;
    }
  });
}

void kernels::argmax(const NDArray &x, int64_t axis, NDArray &out) {
  AxisSplit s = splitAt("argmax", x.shape(), axis);
  if (out.dtype() != DType::I64 || out.numel() != s.outer * s.inner ||
      s.len == 0)
    fail("argmax", "output i64 " + shapeToString(out.shape()) +
                       " does not match " + shapeToString(x.shape()) +
                       " reduced over axis " + std::to_string(axis));
  int64_t *po = out.data<int64_t>();
  auto run = [&](auto tag) {
    using T = decltype(tag);
    const T *px = x.data<T>();
    if (s.inner == 1) {
      runTasks(s.outer, x.numel(),
               [&](int64_t r) { argmaxRow<T>(px + r * s.len, s.len, po + r); });
      return;
    }
    int64_t chunks = (s.inner + kColumnChunk - 1) / kColumnChunk;
    runTasks(s.outer * chunks, x.numel(), [&](int64_t t) {
      int64_t r = t / chunks, j0 = (t % chunks) * kColumnChunk;
      argmaxColumns<T>(px + r * s.len * s.inner + j0, s.len, s.inner,
                       po + r * s.inner + j0,
                       std::min(s.inner, j0 + kColumnChunk) - j0);
    });
  };
  switch (x.dtype()) {
  case DType::I32:
    return run(int32_t());
  case DType::I64:
    return run(int64_t());
  default:
    return dispatchFloat("argmax", x.dtype(), run);
  }
}
