//===- Elementwise.cpp - Pointwise kernels, broadcast, cast and copy ------===//
//
// Every kernel switches on the op kind and dtype once, outside the loop, and
// then runs a plain contiguous loop over restrict pointers that the compiler
// vectorizes. Small tensors run on the calling thread: an OpenMP fork costs
// more than an add of a few thousand elements, and eager mode dispatches many
// tiny ops.
//
//===----------------------------------------------------------------------===//

#include "runtime/kernels/Erf.h"
#include "runtime/kernels/Exp.h"
#include "runtime/kernels/FloatBits.h"
#include "runtime/kernels/KernelSupport.h"
#include "runtime/kernels/Kernels.h"
#include "runtime/kernels/Log.h"
#include "runtime/kernels/Tanh.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <omp.h>
#include <type_traits>

using namespace kcc;
using namespace kcc::kernels;
using namespace kcc::kernels::detail;

namespace {

/// Runs body(begin, end) over [0, n), split evenly over the OpenMP threads
/// when n is large enough to pay for the fork.
template <typename Body> void parallelFor(int64_t n, const Body &body) {
  if (n < kParallelThreshold) {
    body(int64_t(0), n);
    return;
  }
#pragma omp parallel
  {
    int64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
    // Chunks are multiples of 64 elements so no two threads share a line.
    int64_t chunk = ((n + nt - 1) / nt + 63) / 64 * 64;
    int64_t begin = std::min(n, t * chunk), end = std::min(n, begin + chunk);
    if (begin < end)
      body(begin, end);
  }
}

void checkSame(const char *op, const NDArray &a, const NDArray &b) {
  if (a.shape() != b.shape())
    fail(op, "shape mismatch " + shapeToString(a.shape()) + " vs " +
                 shapeToString(b.shape()));
  if (a.dtype() != b.dtype())
    fail(op, std::string("dtype mismatch ") + dtypeName(a.dtype()) + " vs " +
                 dtypeName(b.dtype()));
}

/// Calls fn(T{}) with T the C++ type of a float dtype.
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

/// Floats and integers (I1 is stored as uint8_t 0/1).
template <typename Fn> void dispatchNumeric(const char *op, DType dt, Fn &&fn) {
  switch (dt) {
  case DType::I32:
    return fn(int32_t());
  case DType::I64:
    return fn(int64_t());
  case DType::I1:
    return fn(uint8_t());
  default:
    return dispatchFloat(op, dt, fn);
  }
}

/// Unsigned integer of the given byte width: for kernels that only move data.
template <typename Fn> void dispatchBytes(size_t size, Fn &&fn) {
  switch (size) {
  case 1:
    return fn(uint8_t());
  case 2:
    return fn(uint16_t());
  case 4:
    return fn(uint32_t());
  default:
    return fn(uint64_t());
  }
}

//===----------------------------------------------------------------------===//
// binary / unary / compare / select
//===----------------------------------------------------------------------===//

struct AddOp {
  template <typename T> static T apply(T a, T b) { return a + b; }
};
struct SubOp {
  template <typename T> static T apply(T a, T b) { return a - b; }
};
struct MulOp {
  template <typename T> static T apply(T a, T b) { return a * b; }
};
struct DivOp {
  template <typename T> static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>)
      return b == 0 ? T(0) : T(a / b); // Defined instead of a trap.
    else
      return a / b;
  }
};
struct PowOp {
  template <typename T> static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>)
      return static_cast<T>(std::pow(double(a), double(b)));
    else
      return std::pow(a, b);
  }
};
/// Max/Min propagate NaN from either side (as TF and PyTorch do).
struct MaxOp {
  template <typename T> static T apply(T a, T b) {
    return (a > b || a != a) ? a : b;
  }
};
struct MinOp {
  template <typename T> static T apply(T a, T b) {
    return (a < b || a != a) ? a : b;
  }
};

template <typename T, typename Op>
void binaryLoop(const T *__restrict a, const T *__restrict b, T *__restrict o,
                int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    o[i] = Op::apply(a[i], b[i]);
}

/// For out == a or b (in-place updates), where restrict would be a lie.
template <typename T, typename Op>
void binaryLoopInPlace(const T *a, const T *b, T *o, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    o[i] = Op::apply(a[i], b[i]);
}

template <typename T, typename Op>
void runBinary(const NDArray &a, const NDArray &b, NDArray &out) {
  const T *pa = a.data<T>(), *pb = b.data<T>();
  T *po = out.data<T>();
  bool inPlace = po == pa || po == pb;
  parallelFor(out.numel(), [=](int64_t lo, int64_t hi) {
    if (inPlace)
      binaryLoopInPlace<T, Op>(pa + lo, pb + lo, po + lo, hi - lo);
    else
      binaryLoop<T, Op>(pa + lo, pb + lo, po + lo, hi - lo);
  });
}

struct NegOp {
  template <typename T> static T apply(T x) { return -x; }
};
/// f32: kcc's own exp and log (runtime/kernels/Exp.h, Log.h), as compiled
/// code computes them.
struct ExpOp {
  template <typename T> static T apply(T x) { return expOf(x); }
};
struct LogOp {
  template <typename T> static T apply(T x) { return logOf(x); }
};
struct SqrtOp {
  template <typename T> static T apply(T x) { return std::sqrt(x); }
};
struct RsqrtOp {
  template <typename T> static T apply(T x) { return T(1) / std::sqrt(x); }
};
struct AbsOp {
  template <typename T> static T apply(T x) { return std::abs(x); }
};
/// Written so NaN passes through.
struct ReluOp {
  template <typename T> static T apply(T x) { return x < 0 ? T(0) : x; }
};
/// exp(-|x|) never overflows, so both branches are finite for any x.
struct SigmoidOp {
  template <typename T> static T apply(T x) {
    T e = expOf(-std::abs(x));
    T s = T(1) / (T(1) + e);
    return x >= 0 ? s : e * s;
  }
};
/// f32: the approximation XLA computes (runtime/kernels/Tanh.h).
struct TanhOp {
  template <typename T> static T apply(T x) { return tanhOf(x); }
};
struct GeluOp {
  template <typename T> static T apply(T x) {
    return T(0.5) * x * (T(1) + erfOf(x * T(0.70710678118654752440)));
  }
};
struct GeluTanhOp {
  template <typename T> static T apply(T x) {
    const T k = T(0.79788456080286535588); // sqrt(2/pi)
    return T(0.5) * x * (T(1) + tanhOf(k * (x + T(0.044715) * x * x * x)));
  }
};
/// x * sigmoid(x), rounded as the two kc ops silu is traced to.
struct SiluOp {
  template <typename T> static T apply(T x) { return x * SigmoidOp::apply(x); }
};

// The activations composed of kc ops (frontend/ops/Activations.cpp), each
// written as the kc ops' kernels above compute its steps, in its order: a
// product kernel's epilogue then equals the unfused composition's result.
// `p` is the activation's parameter (alpha, slope or maximum).

/// select(x > 0, x, [alpha *] (exp(min(x, 0)) - 1)); no multiply when
/// alpha is 1, as jax.nn.elu has none.
template <typename T> T eluOf(T x, T alpha) {
  T negative = ExpOp::apply(MinOp::apply(x, T(0))) - T(1);
  if (alpha != T(1))
    negative = alpha * negative;
  return x > T(0) ? x : negative;
}
struct EluAct {
  template <typename T> static T apply(T x, T p) { return eluOf(x, p); }
};
/// scale * elu(x, alpha), jax.nn.selu's constants rounded to T as the
/// traced splats are.
struct SeluAct {
  template <typename T> static T apply(T x, T) {
    return T(1.0507009873554804934193349852946) *
           eluOf(x, T(1.6732632423543772848170429916717));
  }
};
/// select(x >= 0, x, slope * x).
struct LeakyReluAct {
  template <typename T> static T apply(T x, T p) {
    return x >= T(0) ? x : p * x;
  }
};
/// min(relu(x), maximum).
struct BoundedReluAct {
  template <typename T> static T apply(T x, T p) {
    return MinOp::apply(ReluOp::apply(x), p);
  }
};
/// max(x, 0) + log(1 + exp(-|x|)).
template <typename T> T softplusOf(T x) {
  T tail = LogOp::apply(T(1) + ExpOp::apply(-AbsOp::apply(x)));
  return MaxOp::apply(x, T(0)) + tail;
}
struct SoftplusAct {
  template <typename T> static T apply(T x, T) { return softplusOf(x); }
};
struct MishAct {
  template <typename T> static T apply(T x, T) {
    return x * TanhOp::apply(softplusOf(x));
  }
};
/// min(relu(x + 3), 6) / 6.
template <typename T> T hardSigmoidOf(T x) {
  return MinOp::apply(ReluOp::apply(x + T(3)), T(6)) / T(6);
}
struct HardSigmoidAct {
  template <typename T> static T apply(T x, T) { return hardSigmoidOf(x); }
};
struct HardSiluAct {
  template <typename T> static T apply(T x, T) { return x * hardSigmoidOf(x); }
};
/// x / (|x| + 1).
struct SoftsignAct {
  template <typename T> static T apply(T x, T) {
    return x / (AbsOp::apply(x) + T(1));
  }
};

template <typename T, typename Op>
void activationLoop(const T *x, T *o, int64_t n, T p) {
  for (int64_t i = 0; i < n; ++i)
    o[i] = Op::apply(x[i], p);
}

template <typename T, typename Op>
void runActivation(const NDArray &x, NDArray &out, double param) {
  const T *px = x.data<T>();
  T *po = out.data<T>();
  T p = T(param);
  parallelFor(out.numel(), [=](int64_t lo, int64_t hi) {
    activationLoop<T, Op>(px + lo, po + lo, hi - lo, p);
  });
}

template <typename T, typename Op>
void unaryLoop(const T *__restrict x, T *__restrict o, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    o[i] = Op::apply(x[i]);
}

template <typename T, typename Op> void unaryLoopInPlace(T *o, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    o[i] = Op::apply(o[i]);
}

template <typename T, typename Op>
void runUnary(const NDArray &x, NDArray &out) {
  const T *px = x.data<T>();
  T *po = out.data<T>();
  parallelFor(out.numel(), [=](int64_t lo, int64_t hi) {
    if (px == po)
      unaryLoopInPlace<T, Op>(po + lo, hi - lo);
    else
      unaryLoop<T, Op>(px + lo, po + lo, hi - lo);
  });
}

template <typename T, typename Cmp>
void compareLoop(const T *__restrict a, const T *__restrict b,
                 uint8_t *__restrict o, int64_t n, Cmp cmp) {
  for (int64_t i = 0; i < n; ++i)
    o[i] = cmp(a[i], b[i]) ? 1 : 0;
}

template <typename T>
void selectLoop(const uint8_t *__restrict c, const T *__restrict a,
                const T *__restrict b, T *__restrict o, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    o[i] = c[i] ? a[i] : b[i];
}

template <typename S, typename D>
void castLoop(const S *__restrict s, D *__restrict d, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<D, uint8_t>)
      d[i] = s[i] != S(0) ? 1 : 0; // I1 holds exactly 0 or 1.
    else
      d[i] = static_cast<D>(s[i]);
  }
}

} // namespace

void kernels::binary(BinaryKind kind, const NDArray &a, const NDArray &b,
                     NDArray &out) {
  checkSame("binary", a, b);
  checkSame("binary", a, out);
  dispatchNumeric("binary", a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    switch (kind) {
    case BinaryKind::Add:
      return runBinary<T, AddOp>(a, b, out);
    case BinaryKind::Sub:
      return runBinary<T, SubOp>(a, b, out);
    case BinaryKind::Mul:
      return runBinary<T, MulOp>(a, b, out);
    case BinaryKind::Div:
      return runBinary<T, DivOp>(a, b, out);
    case BinaryKind::Pow:
      return runBinary<T, PowOp>(a, b, out);
    case BinaryKind::Max:
      return runBinary<T, MaxOp>(a, b, out);
    case BinaryKind::Min:
      return runBinary<T, MinOp>(a, b, out);
    }
  });
}

void kernels::unary(UnaryKind kind, const NDArray &x, NDArray &out) {
  checkSame("unary", x, out);
  dispatchFloat("unary", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    switch (kind) {
    case UnaryKind::Neg:
      return runUnary<T, NegOp>(x, out);
    case UnaryKind::Exp:
      return runUnary<T, ExpOp>(x, out);
    case UnaryKind::Log:
      return runUnary<T, LogOp>(x, out);
    case UnaryKind::Sqrt:
      return runUnary<T, SqrtOp>(x, out);
    case UnaryKind::Rsqrt:
      return runUnary<T, RsqrtOp>(x, out);
    case UnaryKind::Abs:
      return runUnary<T, AbsOp>(x, out);
    case UnaryKind::Relu:
      return runUnary<T, ReluOp>(x, out);
    case UnaryKind::Sigmoid:
      return runUnary<T, SigmoidOp>(x, out);
    case UnaryKind::Tanh:
      return runUnary<T, TanhOp>(x, out);
    case UnaryKind::Gelu:
      return runUnary<T, GeluOp>(x, out);
    case UnaryKind::GeluTanh:
      return runUnary<T, GeluTanhOp>(x, out);
    case UnaryKind::Silu:
      return runUnary<T, SiluOp>(x, out);
    }
  });
}

void kernels::composedActivation(ComposedActivation kind, double param,
                                 const NDArray &x, NDArray &out) {
  checkSame("activation", x, out);
  dispatchFloat("activation", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = ComposedActivation;
    switch (kind) {
    case C::Elu:
      return runActivation<T, EluAct>(x, out, param);
    case C::Selu:
      return runActivation<T, SeluAct>(x, out, param);
    case C::LeakyRelu:
      return runActivation<T, LeakyReluAct>(x, out, param);
    case C::BoundedRelu:
      return runActivation<T, BoundedReluAct>(x, out, param);
    case C::Softplus:
      return runActivation<T, SoftplusAct>(x, out, param);
    case C::Mish:
      return runActivation<T, MishAct>(x, out, param);
    case C::HardSigmoid:
      return runActivation<T, HardSigmoidAct>(x, out, param);
    case C::HardSilu:
      return runActivation<T, HardSiluAct>(x, out, param);
    case C::Softsign:
      return runActivation<T, SoftsignAct>(x, out, param);
    }
  });
}

void kernels::compare(CompareKind kind, const NDArray &a, const NDArray &b,
                      NDArray &out) {
  checkSame("compare", a, b);
  if (out.shape() != a.shape() || out.dtype() != DType::I1)
    fail("compare", "output must be i1 " + shapeToString(a.shape()) + ", got " +
                        dtypeName(out.dtype()) + " " +
                        shapeToString(out.shape()));
  dispatchNumeric("compare", a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T *pa = a.data<T>(), *pb = b.data<T>();
    uint8_t *po = out.data<uint8_t>();
    auto run = [&](auto cmp) {
      parallelFor(out.numel(), [=](int64_t lo, int64_t hi) {
        compareLoop(pa + lo, pb + lo, po + lo, hi - lo, cmp);
      });
    };
    switch (kind) {
    case CompareKind::EQ:
      return run([](T x, T y) { return x == y; });
    case CompareKind::NE:
      return run([](T x, T y) { return x != y; });
    case CompareKind::LT:
      return run([](T x, T y) { return x < y; });
    case CompareKind::LE:
      return run([](T x, T y) { return x <= y; });
    case CompareKind::GT:
      return run([](T x, T y) { return x > y; });
    case CompareKind::GE:
      return run([](T x, T y) { return x >= y; });
    }
  });
}

void kernels::select(const NDArray &cond, const NDArray &a, const NDArray &b,
                     NDArray &out) {
  checkSame("select", a, b);
  checkSame("select", a, out);
  if (cond.dtype() != DType::I1 || cond.shape() != a.shape())
    fail("select", "condition must be i1 " + shapeToString(a.shape()) +
                       ", got " + dtypeName(cond.dtype()) + " " +
                       shapeToString(cond.shape()));
  dispatchBytes(dtypeSize(a.dtype()), [&](auto tag) {
    using T = decltype(tag);
    const uint8_t *pc = cond.data<uint8_t>();
    const T *pa = a.data<T>(), *pb = b.data<T>();
    T *po = out.data<T>();
    parallelFor(out.numel(), [=](int64_t lo, int64_t hi) {
      selectLoop(pc + lo, pa + lo, pb + lo, po + lo, hi - lo);
    });
  });
}

void kernels::broadcastTo(const NDArray &x, NDArray &out) {
  const Shape &in = x.shape(), &os = out.shape();
  int64_t rank = out.rank(), offset = rank - x.rank();
  auto mismatch = [&] {
    fail("broadcastTo",
         "cannot broadcast " + shapeToString(in) + " to " + shapeToString(os));
  };
  if (offset < 0 || x.dtype() != out.dtype())
    mismatch();
  // Input strides over the output's dims, 0 where the input is broadcast.
  std::vector<int64_t> stride(rank, 0);
  int64_t s = 1;
  for (int64_t d = rank - 1; d >= offset; --d) {
    int64_t id = in[d - offset];
    if (id != 1 && id != os[d])
      mismatch();
    stride[d] = id == 1 ? 0 : s;
    s *= id;
  }
  int64_t inner = rank ? os[rank - 1] : 1;
  int64_t rows = inner ? out.numel() / inner : 0;
  int64_t innerStride = rank ? stride[rank - 1] : 0;
  dispatchBytes(dtypeSize(x.dtype()), [&](auto tag) {
    using T = decltype(tag);
    const T *px = x.data<T>();
    T *po = out.data<T>();
    auto rowsBody = [&](int64_t lo, int64_t hi) {
      for (int64_t r = lo; r < hi; ++r) {
        // Row r's input offset from its multi-index over the outer dims.
        int64_t src = 0, rem = r;
        for (int64_t d = rank - 2; d >= 0; --d) {
          src += (rem % os[d]) * stride[d];
          rem /= os[d];
        }
        T *__restrict dst = po + r * inner;
        const T *__restrict row = px + src;
        if (innerStride)
          std::memcpy(dst, row, inner * sizeof(T));
        else
          std::fill(dst, dst + inner, row[0]);
      }
    };
    if (rows * inner < kParallelThreshold) {
      rowsBody(0, rows);
      return;
    }
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; ++r)
      rowsBody(r, r + 1);
  });
}

void kernels::copy(const NDArray &x, NDArray &out) {
  if (x.numel() != out.numel() || x.dtype() != out.dtype())
    fail("copy", "cannot copy " + std::string(dtypeName(x.dtype())) + " " +
                     shapeToString(x.shape()) + " to " +
                     dtypeName(out.dtype()) + " " + shapeToString(out.shape()));
  if (x.rawData() != out.rawData() && x.bytes())
    std::memcpy(out.rawData(), x.rawData(), x.bytes());
}

void kernels::cast(const NDArray &x, NDArray &out) {
  if (x.numel() != out.numel())
    fail("cast", "element count mismatch " + shapeToString(x.shape()) + " vs " +
                     shapeToString(out.shape()));
  if (x.dtype() == out.dtype())
    return copy(x, out);
  auto isHalf = [](DType dt) { return dt == DType::F16 || dt == DType::BF16; };
  int64_t n = x.numel();
  // The casts of mixed precision: every bfloat16 op's operands and result.
  if (x.dtype() == DType::F32 && out.dtype() == DType::BF16) {
    const float *ps = x.data<float>();
    uint16_t *pd = out.data<uint16_t>();
    parallelFor(n, [=](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i)
        pd[i] = bf16Of(ps[i]);
    });
    return;
  }
  if (x.dtype() == DType::BF16 && out.dtype() == DType::F32) {
    const uint16_t *ps = x.data<uint16_t>();
    float *pd = out.data<float>();
    parallelFor(n, [=](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i)
        pd[i] = floatOfBF16(ps[i]);
    });
    return;
  }
  if (isHalf(x.dtype()) || isHalf(out.dtype())) {
    // Rare path: the element accessors do the bit conversions.
    for (int64_t i = 0; i < n; ++i)
      out.set(i, x.at(i));
    return;
  }
  dispatchNumeric("cast", x.dtype(), [&](auto stag) {
    using S = decltype(stag);
    dispatchNumeric("cast", out.dtype(), [&](auto dtag) {
      using D = decltype(dtag);
      const S *ps = x.data<S>();
      D *pd = out.data<D>();
      parallelFor(n, [=](int64_t lo, int64_t hi) {
        castLoop(ps + lo, pd + lo, hi - lo);
      });
    });
  });
}
