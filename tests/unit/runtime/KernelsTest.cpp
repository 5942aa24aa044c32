//===- KernelsTest.cpp - Host kernels against naive f64 references --------===//
//
// Every kernel runs in f32 and f64 and is compared with a plain loop written
// here in double precision, independent of the implementation (references
// use multi-index loops and scatter forms where the kernels use gathers).
// Sizes include odd shapes and sizes above the parallel threshold.
//
//===----------------------------------------------------------------------===//

#include "runtime/kernels/Kernels.h"
#include "runtime/kernels/ConvGeometry.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>
#include <thread>

using namespace kcc;
using namespace kcc::kernels;

namespace {

using Vec = std::vector<double>;
const DType kFloatTypes[] = {DType::F32, DType::F64};

double tolFor(DType dt) { return dt == DType::F32 ? 1e-5 : 1e-12; }

NDArray randomArray(const Shape &shape, DType dt, std::mt19937 &gen,
                    double lo = -1, double hi = 1) {
  std::uniform_real_distribution<double> dist(lo, hi);
  NDArray a = NDArray::empty(shape, dt);
  for (int64_t i = 0; i < a.numel(); ++i)
    a.set(i, dist(gen));
  return a;
}

/// |got - want| <= tol * (scale + |want|) elementwise, reporting the first
/// misses. `scale` is the typical magnitude of the summed terms' rounding
/// (sqrt of the number of terms for a sum of random-sign values of size ~1).
::testing::AssertionResult allClose(const NDArray &got, const Vec &want,
                                    double tol, double scale = 1) {
  if (got.numel() != static_cast<int64_t>(want.size()))
    return ::testing::AssertionFailure()
           << "size " << got.numel() << " vs " << want.size();
  int64_t bad = 0;
  std::ostringstream os;
  for (int64_t i = 0; i < got.numel(); ++i) {
    double g = got.at(i), w = want[i];
    if (!(std::abs(g - w) <= tol * (scale + std::abs(w))) && bad++ < 5)
      os << " [" << i << "] got " << g << " want " << w << ";";
  }
  if (bad)
    return ::testing::AssertionFailure() << bad << " mismatches:" << os.str();
  return ::testing::AssertionSuccess();
}

std::vector<int64_t> unravel(int64_t i, const Shape &s) {
  std::vector<int64_t> idx(s.size());
  for (int64_t d = static_cast<int64_t>(s.size()) - 1; d >= 0; --d) {
    idx[d] = i % s[d];
    i /= s[d];
  }
  return idx;
}

int64_t ravel(const std::vector<int64_t> &idx, const Shape &s) {
  int64_t i = 0;
  for (size_t d = 0; d < s.size(); ++d)
    i = i * s[d] + idx[d];
  return i;
}

template <typename Fn>
void expectShapeError(Fn fn, const char *s1, const char *s2) {
  try {
    fn();
    ADD_FAILURE() << "expected a KernelError";
  } catch (const KernelError &e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find(s1), std::string::npos) << msg;
    EXPECT_NE(msg.find(s2), std::string::npos) << msg;
  }
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

double refBinary(BinaryKind k, double a, double b) {
  switch (k) {
  case BinaryKind::Add:
    return a + b;
  case BinaryKind::Sub:
    return a - b;
  case BinaryKind::Mul:
    return a * b;
  case BinaryKind::Div:
    return a / b;
  case BinaryKind::Pow:
    return std::pow(a, b);
  case BinaryKind::Max:
    return a > b ? a : b;
  case BinaryKind::Min:
    return a < b ? a : b;
  }
  return 0;
}

double refUnary(UnaryKind k, double x) {
  const double pi = 3.14159265358979323846;
  switch (k) {
  case UnaryKind::Neg:
    return -x;
  case UnaryKind::Exp:
    return std::exp(x);
  case UnaryKind::Log:
    return std::log(x);
  case UnaryKind::Sqrt:
    return std::sqrt(x);
  case UnaryKind::Rsqrt:
    return 1 / std::sqrt(x);
  case UnaryKind::Abs:
    return std::fabs(x);
  case UnaryKind::Relu:
    return x > 0 ? x : 0;
  case UnaryKind::Sigmoid:
    return 1 / (1 + std::exp(-x));
  case UnaryKind::Tanh:
    return std::tanh(x);
  case UnaryKind::Gelu:
    return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  case UnaryKind::GeluTanh:
    return 0.5 * x *
           (1 + std::tanh(std::sqrt(2 / pi) * (x + 0.044715 * x * x * x)));
  case UnaryKind::Silu:
    return x / (1 + std::exp(-x));
  }
  return 0;
}

TEST(Elementwise, BinaryAllKindsSmallAndLarge) {
  std::mt19937 gen(1);
  for (DType dt : kFloatTypes)
    for (int64_t n : {int64_t(1), int64_t(37), int64_t(100003)})
      for (int k = 0; k <= int(BinaryKind::Min); ++k) {
        auto kind = static_cast<BinaryKind>(k);
        SCOPED_TRACE(std::to_string(n) + " kind " + std::to_string(k));
        NDArray a = randomArray({n}, dt, gen, 0.1, 2);
        NDArray b = randomArray({n}, dt, gen, -1.5, 1.5);
        NDArray out = NDArray::empty({n}, dt);
        binary(kind, a, b, out);
        Vec av = a.toVector(), bv = b.toVector(), ref(n);
        for (int64_t i = 0; i < n; ++i)
          ref[i] = refBinary(kind, av[i], bv[i]);
        EXPECT_TRUE(allClose(out, ref, tolFor(dt)));
      }
}

TEST(Elementwise, BinaryIntegersAndShapeErrors) {
  NDArray a = NDArray::fromVector({3}, {7, -8, 9}, DType::I64);
  NDArray b = NDArray::fromVector({3}, {2, 3, 0}, DType::I64);
  NDArray out = NDArray::empty({3}, DType::I64);
  binary(BinaryKind::Div, a, b, out);
  EXPECT_EQ(out.toVector(), (Vec{3, -2, 0}));
  binary(BinaryKind::Max, a, b, out);
  EXPECT_EQ(out.toVector(), (Vec{7, 3, 9}));
  NDArray x = NDArray::zeros({2, 3}, DType::F32),
          y = NDArray::zeros({3, 2}, DType::F32);
  expectShapeError([&] { binary(BinaryKind::Add, x, y, x); }, "[2, 3]",
                   "[3, 2]");
}

TEST(Elementwise, InPlaceUpdates) {
  std::mt19937 gen(15);
  for (DType dt : kFloatTypes)
    for (int64_t n : {int64_t(5), int64_t(50000)}) {
      NDArray a = randomArray({n}, dt, gen), b = randomArray({n}, dt, gen);
      Vec av = a.toVector(), bv = b.toVector(), ref(n);
      binary(BinaryKind::Sub, a, b, a); // a -= b
      for (int64_t i = 0; i < n; ++i)
        ref[i] = av[i] - bv[i];
      EXPECT_TRUE(allClose(a, ref, tolFor(dt)));
      binary(BinaryKind::Mul, b, b, b); // b *= b
      for (int64_t i = 0; i < n; ++i)
        ref[i] = bv[i] * bv[i];
      EXPECT_TRUE(allClose(b, ref, tolFor(dt)));
      unary(UnaryKind::Neg, b, b);
      for (double &r : ref)
        r = -r;
      EXPECT_TRUE(allClose(b, ref, tolFor(dt)));
    }
}

TEST(Elementwise, UnaryAllKinds) {
  std::mt19937 gen(2);
  for (DType dt : kFloatTypes)
    for (int64_t n : {int64_t(33), int64_t(70001)})
      for (int k = 0; k <= int(UnaryKind::Silu); ++k) {
        auto kind = static_cast<UnaryKind>(k);
        SCOPED_TRACE("kind " + std::to_string(k));
        bool positive = kind == UnaryKind::Log || kind == UnaryKind::Sqrt ||
                        kind == UnaryKind::Rsqrt;
        NDArray x = randomArray({n}, dt, gen, positive ? 0.05 : -4, 4);
        NDArray out = NDArray::empty({n}, dt);
        unary(kind, x, out);
        Vec xv = x.toVector(), ref(n);
        for (int64_t i = 0; i < n; ++i)
          ref[i] = refUnary(kind, xv[i]);
        EXPECT_TRUE(allClose(out, ref, tolFor(dt)));
      }
}

TEST(Elementwise, SigmoidStableForLargeMagnitudes) {
  for (DType dt : kFloatTypes) {
    Vec xs{-1000, -100, -30, 0, 30, 100, 1000};
    NDArray x = NDArray::fromVector({7}, xs, dt), out = NDArray::empty({7}, dt);
    unary(UnaryKind::Sigmoid, x, out);
    Vec ref;
    for (double v : xs)
      ref.push_back(refUnary(UnaryKind::Sigmoid, v));
    EXPECT_TRUE(allClose(out, ref, tolFor(dt)));
    EXPECT_GT(out.at(1), 0.0); // exp(-100) is representable even in f32.
    EXPECT_EQ(out.at(6), 1.0);
  }
}

TEST(Elementwise, CompareAndSelect) {
  std::mt19937 gen(3);
  for (DType dt : {DType::F32, DType::F64, DType::I32, DType::I64})
    for (int k = 0; k <= int(CompareKind::GE); ++k) {
      int64_t n = 40000;
      NDArray a = randomArray({n}, DType::F64, gen, -3, 3).to(dt);
      NDArray b = randomArray({n}, DType::F64, gen, -3, 3).to(dt);
      for (int64_t i = 0; i < n; i += 7) // Plenty of equal pairs.
        b.set(i, a.at(i));
      NDArray c = NDArray::empty({n}, DType::I1);
      compare(static_cast<CompareKind>(k), a, b, c);
      Vec ref(n);
      for (int64_t i = 0; i < n; ++i) {
        double x = a.at(i), y = b.at(i);
        bool r[] = {x == y, x != y, x<y, x <= y, x> y, x >= y};
        ref[i] = r[k];
      }
      ASSERT_TRUE(allClose(c, ref, 0));
      NDArray out = NDArray::empty({n}, dt);
      select(c, a, b, out);
      for (int64_t i = 0; i < n; ++i)
        ref[i] = ref[i] ? a.at(i) : b.at(i);
      EXPECT_TRUE(allClose(out, ref, 0));
    }
}

void checkBroadcast(const Shape &in, const Shape &outShape, DType dt) {
  std::mt19937 gen(4);
  NDArray x = randomArray(in, dt, gen);
  NDArray out = NDArray::empty(outShape, dt);
  broadcastTo(x, out);
  Vec ref(out.numel());
  size_t off = outShape.size() - in.size();
  for (int64_t i = 0; i < out.numel(); ++i) {
    std::vector<int64_t> o = unravel(i, outShape), s(in.size());
    for (size_t d = 0; d < in.size(); ++d)
      s[d] = in[d] == 1 ? 0 : o[d + off];
    ref[i] = x.at(ravel(s, in));
  }
  EXPECT_TRUE(allClose(out, ref, 0)) << shapeToString(in);
}

TEST(Elementwise, BroadcastTo) {
  for (DType dt : {DType::F32, DType::F64, DType::I64}) {
    checkBroadcast({3, 1, 5}, {2, 3, 4, 5}, dt);
    checkBroadcast({}, {4, 4}, dt);
    checkBroadcast({5}, {3, 5}, dt);
    checkBroadcast({4, 1}, {4, 6}, dt);
    checkBroadcast({1, 300}, {200, 300}, dt);
    checkBroadcast({70, 1, 1}, {70, 30, 20}, dt);
    checkBroadcast({2, 3}, {2, 3}, dt);
  }
  NDArray x = NDArray::zeros({2, 5}, DType::F32),
          out = NDArray::zeros({3, 5}, DType::F32);
  expectShapeError([&] { broadcastTo(x, out); }, "[2, 5]", "[3, 5]");
}

TEST(Elementwise, CastAndCopy) {
  NDArray x =
      NDArray::fromVector({6}, {-2.7, -0.5, 0, 0.5, 3.99, 100}, DType::F64);
  auto castTo = [](const NDArray &a, DType dt) {
    NDArray out = NDArray::empty(a.shape(), dt);
    cast(a, out);
    return out.toVector();
  };
  EXPECT_EQ(castTo(x, DType::I32), (Vec{-2, 0, 0, 0, 3, 100}));
  EXPECT_EQ(castTo(x, DType::I64), (Vec{-2, 0, 0, 0, 3, 100}));
  EXPECT_EQ(castTo(x, DType::I1), (Vec{1, 1, 0, 1, 1, 1}));
  Vec asF32 = castTo(x, DType::F32);
  EXPECT_EQ(asF32[0], double(float(-2.7)));
  NDArray i1 = NDArray::fromVector({3}, {1, 0, 1}, DType::I1);
  EXPECT_EQ(castTo(i1, DType::F32), (Vec{1, 0, 1}));
  EXPECT_EQ(castTo(i1, DType::I64), (Vec{1, 0, 1}));
  NDArray big = NDArray::fromVector({3}, {3e9, -5, 7}, DType::I64);
  EXPECT_EQ(castTo(big, DType::F64), (Vec{3e9, -5, 7}));
  EXPECT_EQ(castTo(x, DType::F16)[4], 3.990234375); // Nearest f16.
  std::mt19937 gen(5);
  NDArray large = randomArray({50000}, DType::F64, gen, -1000, 1000);
  Vec ref = large.toVector();
  for (double &v : ref)
    v = std::trunc(v);
  EXPECT_TRUE(allClose(
      NDArray::fromVector({50000}, castTo(large, DType::I32), DType::F64), ref,
      0));
  NDArray y = NDArray::empty({3, 2}, DType::F64);
  NDArray six = NDArray::fromVector({6}, {1, 2, 3, 4, 5, 6}, DType::F64);
  copy(six, y);
  EXPECT_EQ(y.toVector(), six.toVector());
  NDArray wrong = NDArray::empty({7}, DType::F64);
  expectShapeError([&] { copy(six, wrong); }, "[6]", "[7]");
}

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

void checkMatmul(int64_t m, int64_t k, int64_t n, bool ta, bool tb, DType dt) {
  std::mt19937 gen(6);
  NDArray a = randomArray(ta ? Shape{k, m} : Shape{m, k}, dt, gen);
  NDArray b = randomArray(tb ? Shape{n, k} : Shape{k, n}, dt, gen);
  NDArray c = NDArray::empty({m, n}, dt);
  matmul(a, b, ta, tb, c);
  Vec ref(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p)
        ref[i * n + j] +=
            a.at(ta ? p * m + i : i * k + p) * b.at(tb ? j * k + p : p * n + j);
  // Accumulation error grows with sqrt(K) for random signs.
  EXPECT_TRUE(allClose(c, ref, tolFor(dt), std::sqrt(double(k))))
      << m << "x" << k << "x" << n << " ta=" << ta << " tb=" << tb;
}

TEST(Matmul, AllTransposeCombinations) {
  for (DType dt : kFloatTypes)
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        checkMatmul(7, 13, 5, ta, tb, dt);
        checkMatmul(1, 1, 1, ta, tb, dt);
        checkMatmul(190, 131, 180, ta, tb, dt); // Above the threshold.
        checkMatmul(3, 600, 2, ta, tb, dt);     // Several K blocks.
      }
}

/// out + bias (along the last dim), then relu when asked, in plain loops.
Vec withEpilogue(const NDArray &out, const NDArray *bias, bool relu) {
  int64_t n = out.dim(out.rank() - 1);
  Vec r(out.numel());
  for (int64_t i = 0; i < out.numel(); ++i) {
    double v = out.at(i) + (bias ? bias->at(i % n) : 0.0);
    r[i] = relu && v < 0 ? 0.0 : v;
  }
  return r;
}

TEST(Matmul, EpilogueMatchesSeparateBiasAndRelu) {
  std::mt19937 gen(21);
  for (DType dt : kFloatTypes)
    for (bool relu : {false, true})
      for (bool withBias : {false, true}) {
        if (!relu && !withBias)
          continue;
        NDArray a = randomArray({33, 17}, dt, gen),
                b = randomArray({17, 12}, dt, gen);
        NDArray bias = randomArray({12}, dt, gen);
        NDArray plain = NDArray::empty({33, 12}, dt),
                fused = NDArray::empty({33, 12}, dt);
        matmul(a, b, false, false, plain);
        matmul(a, b, false, false, fused,
               Epilogue{withBias ? &bias : nullptr, relu});
        EXPECT_TRUE(allClose(
            fused, withEpilogue(plain, withBias ? &bias : nullptr, relu),
            tolFor(dt)))
            << dtypeName(dt) << " bias " << withBias << " relu " << relu;
      }
}

TEST(Conv, EpilogueMatchesSeparateBiasAndRelu) {
  std::mt19937 gen(22);
  for (DType dt : kFloatTypes) {
    NDArray x = randomArray({2, 7, 7, 3}, dt, gen),
            w = randomArray({3, 3, 3, 5}, dt, gen);
    NDArray bias = randomArray({5}, dt, gen);
    NDArray plain = NDArray::empty({2, 5, 5, 5}, dt),
            fused = NDArray::empty({2, 5, 5, 5}, dt);
    Conv2DParams p;
    conv2d(x, w, p, plain);
    conv2d(x, w, p, fused, Epilogue{&bias, true});
    EXPECT_TRUE(allClose(fused, withEpilogue(plain, &bias, true), tolFor(dt)))
        << dtypeName(dt);
  }
}

//===----------------------------------------------------------------------===//
// bfloat16: casts, products with float32 accumulation
//===----------------------------------------------------------------------===//

TEST(BFloat16, CastRoundsToNearestEvenAndKeepsNaN) {
  // 1 + 2^-8 is halfway between bf16's 1 and 1 + 2^-7: to even, 1; the
  // next float up rounds up. NaN stays NaN, infinities and bf16 values stay.
  float half = 1.0f + 0x1p-8f;
  float above = std::nextafter(half, 2.0f);
  NDArray x = NDArray::fromVector(
      {6}, {half, above, -3.0, NAN, INFINITY, 0x1p-133}, DType::F32);
  NDArray b = NDArray::empty({6}, DType::BF16);
  cast(x, b);
  NDArray back = NDArray::empty({6}, DType::F32);
  cast(b, back);
  EXPECT_EQ(back.at(0), 1.0);
  EXPECT_EQ(back.at(1), 1.0 + 0x1p-7);
  EXPECT_EQ(back.at(2), -3.0);
  EXPECT_TRUE(std::isnan(back.at(3)));
  EXPECT_EQ(back.at(4), INFINITY);
  EXPECT_EQ(back.at(5), 0x1p-133); // subnormal bf16 kept
}

/// `x` rounded to bf16, as bf16 and as f32 (the same values).
std::pair<NDArray, NDArray> bf16Pair(const NDArray &x) {
  NDArray b = NDArray::empty(x.shape(), DType::BF16);
  cast(x, b);
  NDArray f = NDArray::empty(x.shape(), DType::F32);
  cast(b, f);
  return {b, f};
}

/// Expects `got` (bf16) to be `exact` (f32) rounded to bf16, within one
/// bf16 ulp (the two sum in different orders; 1e-3 absolute covers the f32
/// differences where a sum cancels). A bf16 accumulator would be off by
/// about 2^-9 sqrt(K) of the partial sums, far more.
void expectRoundedProduct(const NDArray &got, const NDArray &exact,
                          const std::string &what) {
  for (int64_t i = 0; i < exact.numel(); ++i) {
    double e = exact.at(i), g = got.at(i);
    EXPECT_LE(std::abs(g - e), std::abs(e) * 0x1p-8 + 1e-3)
        << what << " [" << i << "]: f32 " << e << ", bf16 " << g;
  }
}

TEST(BFloat16, GemmAccumulatesInFloat32) {
  std::mt19937 gen(41);
  for (auto [ta, tb] :
       {std::pair{false, false}, {true, false}, {false, true}}) {
    // K = 512: accumulating in bf16 would lose ~2^-9 x sqrt(512) relative.
    auto [a, af] = bf16Pair(
        randomArray(ta ? Shape{512, 24} : Shape{24, 512}, DType::F32, gen));
    auto [b, bf] = bf16Pair(
        randomArray(tb ? Shape{40, 512} : Shape{512, 40}, DType::F32, gen));
    NDArray c = NDArray::empty({24, 40}, DType::BF16);
    NDArray cf = NDArray::empty({24, 40}, DType::F32);
    matmul(a, b, ta, tb, c);
    matmul(af, bf, ta, tb, cf);
    expectRoundedProduct(c, cf, "matmul");
  }
  auto [a, af] = bf16Pair(randomArray({3, 8, 64}, DType::F32, gen));
  auto [b, bf] = bf16Pair(randomArray({3, 64, 5}, DType::F32, gen));
  NDArray c = NDArray::empty({3, 8, 5}, DType::BF16);
  NDArray cf = NDArray::empty({3, 8, 5}, DType::F32);
  batchMatmul(a, b, false, false, c);
  batchMatmul(af, bf, false, false, cf);
  expectRoundedProduct(c, cf, "batch_matmul");
}

TEST(BFloat16, ConvolutionsAreTheFloat32OnesRounded) {
  std::mt19937 gen(42);
  auto [x, xf] = bf16Pair(randomArray({2, 9, 9, 4}, DType::F32, gen));
  auto [w, wf] = bf16Pair(randomArray({3, 3, 4, 6}, DType::F32, gen));
  auto [g, gf] = bf16Pair(randomArray({2, 7, 7, 6}, DType::F32, gen));
  Conv2DParams p;
  NDArray y = NDArray::empty({2, 7, 7, 6}, DType::BF16);
  NDArray yf = NDArray::empty({2, 7, 7, 6}, DType::F32);
  conv2d(x, w, p, y);
  conv2d(xf, wf, p, yf);
  expectRoundedProduct(y, yf, "conv2d");
  NDArray dx = NDArray::empty({2, 9, 9, 4}, DType::BF16);
  NDArray dxf = NDArray::empty({2, 9, 9, 4}, DType::F32);
  conv2dBackpropInput(g, w, p, dx);
  conv2dBackpropInput(gf, wf, p, dxf);
  expectRoundedProduct(dx, dxf, "conv2d_backprop_input");
  NDArray dw = NDArray::empty({3, 3, 4, 6}, DType::BF16);
  NDArray dwf = NDArray::empty({3, 3, 4, 6}, DType::F32);
  conv2dBackpropFilter(x, g, p, dw);
  conv2dBackpropFilter(xf, gf, p, dwf);
  expectRoundedProduct(dw, dwf, "conv2d_backprop_filter");
}

TEST(Matmul, RepeatedCallsReuseAndShapeErrors) {
  for (int rep = 0; rep < 3; ++rep)
    checkMatmul(9, 4, 11, false, true, DType::F32);
  // Threads sharing one cached primitive must not see each other's operands.
  auto worker = [](int id, bool *ok) {
    NDArray a = NDArray::fromVector({2, 2}, {double(id), 0, 0, double(id)});
    NDArray c = NDArray::empty({2, 2}, DType::F32);
    for (int i = 0; i < 20000 && *ok; ++i) {
      matmul(a, a, false, false, c);
      *ok = c.toVector() == Vec{double(id * id), 0, 0, double(id * id)};
    }
  };
  bool ok1 = true, ok2 = true;
  std::thread t1(worker, 2, &ok1), t2(worker, 3, &ok2);
  t1.join();
  t2.join();
  EXPECT_TRUE(ok1 && ok2);
  NDArray a = NDArray::zeros({2, 3}, DType::F32),
          b = NDArray::zeros({4, 5}, DType::F32);
  NDArray c = NDArray::zeros({2, 5}, DType::F32);
  expectShapeError([&] { matmul(a, b, false, false, c); }, "[2, 3]", "[4, 5]");
  NDArray k0a = NDArray::zeros({2, 0}, DType::F32),
          k0b = NDArray::zeros({0, 5}, DType::F32);
  NDArray out = NDArray::fromVector({2, 5}, Vec(10, 7.0));
  matmul(k0a, k0b, false, false, out);
  EXPECT_EQ(out.toVector(), Vec(10, 0.0));
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// Softmax (or log-softmax) over `axis`, computed by multi-index loops.
Vec refSoftmax(const NDArray &x, int64_t axis, bool log) {
  const Shape &s = x.shape();
  Vec out(x.numel());
  for (int64_t i = 0; i < x.numel(); ++i) {
    std::vector<int64_t> idx = unravel(i, s);
    if (idx[axis] != 0) // One pass per line along the axis.
      continue;
    std::vector<int64_t> line;
    for (idx[axis] = 0; idx[axis] < s[axis]; ++idx[axis])
      line.push_back(ravel(idx, s));
    double m = -INFINITY, sum = 0;
    for (int64_t j : line)
      m = std::max(m, x.at(j));
    for (int64_t j : line)
      sum += std::exp(x.at(j) - m);
    for (int64_t j : line)
      out[j] = log ? x.at(j) - m - std::log(sum) : std::exp(x.at(j) - m) / sum;
  }
  return out;
}

TEST(Reduction, SoftmaxAndLogSoftmax) {
  std::mt19937 gen(7);
  // Inputs in [lo, hi]: around +-1000, and spread so wide that skipping the
  // max subtraction anywhere overflows.
  struct Case {
    Shape shape;
    int64_t axis;
    double lo, hi;
  };
  std::vector<Case> cases = {
      {{4, 6, 5}, 2, -5, 5},     {{4, 6, 5}, 1, -5, 5},
      {{4, 6, 5}, 0, -5, 5},     {{3, 10}, 1, 995, 1005},
      {{3, 10}, 0, -1005, -995}, {{5, 12}, 1, -1000, 1000},
      {{12, 5}, 0, -1000, 1000}, {{300, 200}, 1, -5, 5},
      {{300, 200}, 0, -5, 5},    {{2, 500, 40}, 1, -5, 5}};
  for (DType dt : kFloatTypes)
    for (const Case &c : cases)
      for (bool log : {false, true}) {
        NDArray x = randomArray(c.shape, dt, gen, c.lo, c.hi);
        NDArray out = NDArray::empty(c.shape, dt);
        (log ? logSoftmax : softmax)(x, c.axis, out);
        for (int64_t i = 0; i < out.numel(); ++i)
          ASSERT_TRUE(std::isfinite(out.at(i)));
        EXPECT_TRUE(allClose(out, refSoftmax(x, c.axis, log), tolFor(dt)))
            << shapeToString(c.shape) << " axis " << c.axis << " log " << log;
      }
  // The maximum first and last along the axis, for both loop structures.
  for (DType dt : kFloatTypes)
    for (int64_t axis : {0, 1}) {
      Shape s = axis ? Shape{2, 3} : Shape{3, 2};
      NDArray x =
          NDArray::fromVector(s,
                              axis ? Vec{-1000, 0, 1000, 1000, 0, -1000}
                                   : Vec{-1000, 1000, 0, 0, 1000, -1000},
                              dt);
      NDArray out = NDArray::empty(s, dt);
      softmax(x, axis, out);
      EXPECT_TRUE(allClose(out, refSoftmax(x, axis, false), tolFor(dt)));
      logSoftmax(x, axis, out);
      EXPECT_TRUE(allClose(out, refSoftmax(x, axis, true), tolFor(dt)));
    }
}

void checkReduce(ReduceKind kind, const Shape &shape,
                 const std::vector<int64_t> &axes, bool keepDims, DType dt) {
  std::mt19937 gen(8);
  NDArray x = randomArray(shape, dt, gen);
  Shape outShape, keptShape;
  for (int64_t d = 0; d < int64_t(shape.size()); ++d) {
    bool r = std::count(axes.begin(), axes.end(), d) > 0;
    keptShape.push_back(r ? 1 : shape[d]);
    if (keepDims || !r)
      outShape.push_back(keptShape.back());
  }
  NDArray out = NDArray::empty(outShape, dt);
  reduce(kind, x, axes, out);
  int64_t n = numElements(keptShape);
  Vec ref(n, kind == ReduceKind::Max ? -INFINITY : 0.0);
  for (int64_t i = 0; i < x.numel(); ++i) {
    std::vector<int64_t> idx = unravel(i, shape);
    for (int64_t a : axes)
      idx[a] = 0;
    double &r = ref[ravel(idx, keptShape)];
    r = kind == ReduceKind::Max ? std::max(r, x.at(i)) : r + x.at(i);
  }
  if (kind == ReduceKind::Mean)
    for (double &r : ref)
      r /= double(x.numel() / n);
  double terms = double(x.numel() / n);
  EXPECT_TRUE(allClose(out, ref, tolFor(dt), std::sqrt(terms)))
      << shapeToString(shape) << " kind " << int(kind) << " axes "
      << axes.size() << " keep " << keepDims;
}

TEST(Reduction, ReduceAxisSets) {
  std::vector<std::vector<int64_t>> axisSets = {
      {}, {0}, {3}, {1, 2}, {0, 2}, {1, 3}, {0, 3}, {0, 1, 2, 3}, {0, 1, 3}};
  for (DType dt : kFloatTypes)
    for (ReduceKind kind : {ReduceKind::Sum, ReduceKind::Max, ReduceKind::Mean})
      for (const auto &axes : axisSets)
        for (bool keep : {false, true})
          checkReduce(kind, {3, 4, 5, 6}, axes, keep, dt);
}

TEST(Reduction, ReduceLarge) {
  for (DType dt : kFloatTypes)
    for (ReduceKind kind : {ReduceKind::Sum, ReduceKind::Max, ReduceKind::Mean})
      for (const std::vector<int64_t> &axes :
           {std::vector<int64_t>{0}, {1}, {0, 1}}) {
        checkReduce(kind, {400, 300}, axes, false, dt);
        checkReduce(kind, {1, 70000}, axes, true, dt);
      }
  NDArray x = NDArray::zeros({2, 3}, DType::F32),
          bad = NDArray::zeros({4}, DType::F32);
  expectShapeError([&] { reduce(ReduceKind::Sum, x, {0}, bad); }, "[2, 3]",
                   "[4]");
}

/// A sum over N, H and W (BatchNormalization's) big enough to split
/// (SplitSum.h): one partial per n summed in (h, w) order, the partials then
/// added in n order, bit for bit, which is what the compiled step's
/// kc-split-reductions computes; and close to the f64 sum.
TEST(Reduction, SplitSumAddsPartialsInOrder) {
  std::mt19937 gen(9);
  const int64_t n = 32, hw = 14 * 14, c = 16;
  NDArray x = randomArray({n, 14, 14, c}, DType::F32, gen);
  NDArray out = NDArray::empty({c}, DType::F32);
  reduce(ReduceKind::Sum, x, {0, 1, 2}, out);
  const float *px = x.data<float>();
  for (int64_t j = 0; j < c; ++j) {
    float total = 0;
    double exact = 0;
    for (int64_t b = 0; b < n; ++b) {
      float partial = px[b * hw * c + j];
      for (int64_t p = 1; p < hw; ++p)
        partial += px[(b * hw + p) * c + j];
      total = b == 0 ? partial : total + partial;
      for (int64_t p = 0; p < hw; ++p)
        exact += px[(b * hw + p) * c + j];
    }
    EXPECT_EQ(out.data<float>()[j], total) << "channel " << j;
    EXPECT_NEAR(out.data<float>()[j], exact, 1e-3) << "channel " << j;
  }
}

TEST(Reduction, ArgmaxFirstMaximumWins) {
  NDArray x =
      NDArray::fromVector({3, 4}, {1, 3, 3, 2, 5, 5, 5, 5, -1, -2, 0, 0});
  NDArray rows = NDArray::empty({3}, DType::I64);
  argmax(x, 1, rows);
  EXPECT_EQ(rows.toVector(), (Vec{1, 0, 2}));
  NDArray cols = NDArray::empty({4}, DType::I64);
  argmax(x, 0, cols);
  EXPECT_EQ(cols.toVector(), (Vec{1, 1, 1, 1}));
  std::mt19937 gen(9);
  Shape s{20, 300, 30};
  for (DType dt : {DType::F32, DType::F64, DType::I32})
    for (int64_t axis = 0; axis < 3; ++axis) {
      NDArray in = randomArray(s, DType::F64, gen, -50, 50).to(dt);
      Shape os = s;
      os.erase(os.begin() + axis);
      NDArray out = NDArray::empty(os, DType::I64);
      argmax(in, axis, out);
      Vec ref(out.numel()), best(out.numel(), -INFINITY);
      for (int64_t i = 0; i < in.numel(); ++i) {
        std::vector<int64_t> idx = unravel(i, s);
        int64_t pos = idx[axis];
        idx.erase(idx.begin() + axis);
        int64_t o = ravel(idx, os);
        if (in.at(i) > best[o]) { // Indices ascend along the axis per o.
          best[o] = in.at(i);
          ref[o] = double(pos);
        }
      }
      EXPECT_TRUE(allClose(out, ref, 0)) << "axis " << axis;
    }
}

//===----------------------------------------------------------------------===//
// Shape kernels
//===----------------------------------------------------------------------===//

void checkTranspose(const Shape &s, const std::vector<int64_t> &perm,
                    DType dt) {
  std::mt19937 gen(10);
  NDArray x = randomArray(s, dt, gen, -100, 100);
  Shape os;
  for (int64_t p : perm)
    os.push_back(s[p]);
  NDArray out = NDArray::empty(os, dt);
  transpose(x, perm, out);
  Vec ref(out.numel());
  for (int64_t i = 0; i < out.numel(); ++i) {
    std::vector<int64_t> o = unravel(i, os), idx(s.size());
    for (size_t d = 0; d < s.size(); ++d)
      idx[perm[d]] = o[d];
    ref[i] = x.at(ravel(idx, s));
  }
  EXPECT_TRUE(allClose(out, ref, 0)) << shapeToString(s);
}

TEST(ShapeKernels, Transpose) {
  for (DType dt : {DType::F32, DType::F64, DType::I32, DType::I1}) {
    checkTranspose({2, 3, 4, 5}, {0, 2, 3, 1}, dt);
    checkTranspose({2, 3, 4, 5}, {3, 1, 0, 2}, dt);
    checkTranspose({2, 3, 4, 5}, {0, 1, 2, 3}, dt);
    checkTranspose({300, 200}, {1, 0}, dt);
    checkTranspose({4, 50, 70}, {0, 2, 1}, dt);
    checkTranspose({33, 1, 65}, {2, 1, 0}, dt);
    checkTranspose({20, 30, 40, 5}, {2, 0, 3, 1}, dt);
  }
}

TEST(ShapeKernels, ConcatEachAxis) {
  std::mt19937 gen(11);
  for (DType dt : {DType::F32, DType::F64, DType::I64})
    for (int64_t axis = 0; axis < 3; ++axis)
      for (bool large : {false, true}) {
        Shape base = large ? Shape{40, 50, 30} : Shape{4, 5, 6};
        std::vector<NDArray> ins;
        int64_t total = 0;
        for (int64_t len : large ? std::vector<int64_t>{20, 35, 7}
                                 : std::vector<int64_t>{2, 3, 1}) {
          Shape s = base;
          s[axis] = len;
          ins.push_back(randomArray(s, DType::F64, gen, -9, 9).to(dt));
          total += len;
        }
        Shape os = base;
        os[axis] = total;
        NDArray out = NDArray::empty(os, dt);
        concat(ins, axis, out);
        Vec ref(out.numel());
        for (int64_t i = 0; i < out.numel(); ++i) {
          std::vector<int64_t> idx = unravel(i, os);
          size_t k = 0;
          while (idx[axis] >= ins[k].dim(axis))
            idx[axis] -= ins[k++].dim(axis);
          ref[i] = ins[k].at(ravel(idx, ins[k].shape()));
        }
        EXPECT_TRUE(allClose(out, ref, 0)) << "axis " << axis;
      }
  std::vector<NDArray> bad = {NDArray::zeros({2, 3}, DType::F32),
                              NDArray::zeros({2, 4}, DType::F32)};
  NDArray out = NDArray::zeros({4, 3}, DType::F32);
  expectShapeError([&] { concat(bad, 0, out); }, "[2, 4]", "[4, 3]");
}

TEST(ShapeKernels, SliceWithStrides) {
  std::mt19937 gen(12);
  struct Case {
    Shape in, start, strides, out;
  };
  std::vector<Case> cases = {{{10, 9, 8}, {1, 0, 2}, {2, 3, 1}, {4, 3, 6}},
                             {{10, 9, 8}, {9, 8, 7}, {-3, -2, -1}, {4, 5, 8}},
                             {{10, 9, 8}, {0, 0, 0}, {1, 1, 1}, {10, 9, 8}},
                             {{300, 301}, {5, 1}, {1, 2}, {295, 150}}};
  for (DType dt : {DType::F32, DType::F64, DType::I32})
    for (const Case &c : cases) {
      NDArray x = randomArray(c.in, DType::F64, gen, -9, 9).to(dt);
      NDArray out = NDArray::empty(c.out, dt);
      slice(x, c.start, c.strides, out);
      Vec ref(out.numel());
      for (int64_t i = 0; i < out.numel(); ++i) {
        std::vector<int64_t> idx = unravel(i, c.out);
        for (size_t d = 0; d < idx.size(); ++d)
          idx[d] = c.start[d] + idx[d] * c.strides[d];
        ref[i] = x.at(ravel(idx, c.in));
      }
      EXPECT_TRUE(allClose(out, ref, 0)) << shapeToString(c.out);
    }
  NDArray x = NDArray::zeros({5, 5}, DType::F32),
          out = NDArray::zeros({3, 3}, DType::F32);
  expectShapeError([&] { slice(x, {0, 0}, {2, 3}, out); }, "[5, 5]", "[3, 3]");
}

TEST(ShapeKernels, OneHot) {
  for (DType labelType : {DType::I32, DType::I64})
    for (DType dt : kFloatTypes) {
      NDArray labels =
          NDArray::fromVector({2, 3}, {0, 3, 1, 2, -1, 4}, labelType);
      NDArray out = NDArray::empty({2, 3, 4}, dt);
      oneHot(labels, out);
      Vec ref(24, 0.0);
      for (int64_t i = 0; i < 6; ++i) {
        double c = labels.at(i);
        if (c >= 0 && c < 4)
          ref[i * 4 + int64_t(c)] = 1;
      }
      EXPECT_TRUE(allClose(out, ref, 0));
    }
  NDArray labels = NDArray::zeros({3}, DType::I32),
          out = NDArray::zeros({4, 2}, DType::F32);
  expectShapeError([&] { oneHot(labels, out); }, "[3]", "[4, 2]");
}

//===----------------------------------------------------------------------===//
// Random
//===----------------------------------------------------------------------===//

TEST(Random, UniformIsDeterministicAndWellSpread) {
  for (DType dt : kFloatTypes) {
    int64_t n = 100000;
    NDArray a = NDArray::empty({n}, dt), b = NDArray::empty({n}, dt);
    NDArray c = NDArray::empty({n}, dt), d = NDArray::empty({n}, dt);
    randomUniform(42, 0, a);
    randomUniform(42, 0, b);
    randomUniform(42, 1, c);
    randomUniform(43, 0, d);
    double sum = 0, sumSq = 0;
    int64_t sameC = 0, sameD = 0;
    for (int64_t i = 0; i < n; ++i) {
      double v = a.at(i);
      ASSERT_GE(v, 0.0);
      ASSERT_LT(v, 1.0);
      ASSERT_EQ(v, b.at(i));
      sameC += v == c.at(i);
      sameD += v == d.at(i);
      sum += v;
      sumSq += v * v;
    }
    EXPECT_LT(sameC, 5);
    EXPECT_LT(sameD, 5);
    EXPECT_NEAR(sum / n, 0.5, 0.01);
    EXPECT_NEAR(sumSq / n - (sum / n) * (sum / n), 1.0 / 12, 0.005);
    // A pure function of the index: a short array is a prefix of a long one.
    NDArray shortA = NDArray::empty({1000}, dt);
    randomUniform(42, 0, shortA);
    for (int64_t i = 0; i < 1000; ++i)
      ASSERT_EQ(shortA.at(i), a.at(i));
  }
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

/// TF "SAME"/"VALID" arithmetic, written out independently of the library.
struct Window {
  int64_t out, before;
};
Window refWindow(int64_t in, int64_t k, int64_t s, int64_t d, Padding p) {
  int64_t extent = (k - 1) * d + 1;
  if (p == Padding::Valid)
    return {in < extent ? 0 : (in - extent) / s + 1, 0};
  int64_t out = (in + s - 1) / s;
  return {out, std::max<int64_t>((out - 1) * s + extent - in, 0) / 2};
}

TEST(Window, SameAndValidSizes) {
  struct Case {
    int64_t in, k, s, d;
    Padding p;
    int64_t out, before;
  };
  std::vector<Case> cases = {
      {10, 4, 2, 1, Padding::Same, 5, 1}, {9, 3, 2, 1, Padding::Same, 5, 1},
      {8, 3, 2, 1, Padding::Same, 4, 0},  {7, 3, 1, 2, Padding::Same, 7, 2},
      {5, 1, 2, 1, Padding::Same, 3, 0},  {7, 3, 2, 1, Padding::Valid, 3, 0},
      {2, 3, 1, 1, Padding::Valid, 0, 0}, {9, 3, 1, 2, Padding::Valid, 5, 0}};
  for (const Case &c : cases) {
    EXPECT_EQ(windowOutputSize(c.in, c.k, c.s, c.d, c.p), c.out) << c.in;
    EXPECT_EQ(windowPadBefore(c.in, c.k, c.s, c.d, c.p), c.before) << c.in;
  }
}

struct ConvCase {
  int64_t n, h, w, c, kh, kw, o, sh, sw, dh, dw;
  Padding pad;
  int64_t groups = 1;
};

/// Calls fn(b, oy, ox, ky, kx, iy, ix) for every tap that reads the input.
template <typename Fn> void forEachTap(const ConvCase &c, Fn fn) {
  Window wy = refWindow(c.h, c.kh, c.sh, c.dh, c.pad);
  Window wx = refWindow(c.w, c.kw, c.sw, c.dw, c.pad);
  for (int64_t b = 0; b < c.n; ++b)
    for (int64_t oy = 0; oy < wy.out; ++oy)
      for (int64_t ox = 0; ox < wx.out; ++ox)
        for (int64_t ky = 0; ky < c.kh; ++ky)
          for (int64_t kx = 0; kx < c.kw; ++kx) {
            int64_t iy = oy * c.sh + ky * c.dh - wy.before;
            int64_t ix = ox * c.sw + kx * c.dw - wx.before;
            if (iy >= 0 && iy < c.h && ix >= 0 && ix < c.w)
              fn(b, oy, ox, ky, kx, iy, ix);
          }
}

double dot(const NDArray &a, const NDArray &b) {
  double s = 0;
  for (int64_t i = 0; i < a.numel(); ++i)
    s += a.at(i) * b.at(i);
  return s;
}

TEST(Conv, ForwardAndBackpropsAgainstNaiveLoops) {
  const Padding S = Padding::Same, V = Padding::Valid;
  std::vector<ConvCase> cases = {{2, 9, 7, 3, 3, 3, 4, 1, 1, 1, 1, S},
                                 {2, 9, 7, 3, 3, 3, 4, 1, 1, 1, 1, V},
                                 {2, 9, 7, 3, 3, 2, 5, 2, 2, 1, 1, S},
                                 {2, 9, 7, 3, 3, 3, 4, 2, 2, 1, 1, V},
                                 {2, 9, 7, 2, 3, 3, 3, 1, 1, 2, 2, S},
                                 {2, 9, 7, 2, 3, 3, 3, 1, 1, 2, 2, V},
                                 {2, 8, 8, 3, 1, 1, 6, 2, 2, 1, 1, S},
                                 {2, 10, 9, 3, 4, 4, 2, 2, 1, 1, 1, S},
                                 {1, 9, 7, 3, 5, 3, 2, 3, 2, 1, 2, S},
                                 {2, 16, 16, 8, 3, 3, 16, 1, 1, 1, 1, S},
                                 // GEMMs on the arrays as they lie (float32):
                                 // pointwise, a strided 1x1 and filters that
                                 // outweigh their column matrix, where only
                                 // some taps (a run with idle ones inside)
                                 // read the input.
                                 {2, 5, 4, 6, 1, 1, 8, 1, 1, 1, 1, V},
                                 {2, 4, 4, 16, 1, 1, 32, 2, 2, 1, 1, V},
                                 {3, 1, 1, 8, 3, 3, 8, 1, 1, 1, 1, S},
                                 {3, 1, 1, 8, 3, 3, 8, 2, 2, 1, 1, S},
                                 {2, 2, 2, 8, 3, 3, 8, 1, 1, 1, 1, S},
                                 {2, 2, 2, 8, 3, 3, 8, 2, 2, 1, 1, S},
                                 {2, 1, 3, 4, 3, 3, 4, 1, 1, 1, 1, S},
                                 {2, 2, 1, 4, 3, 3, 4, 1, 1, 1, 1, S},
                                 {1, 3, 3, 4, 5, 5, 8, 1, 1, 2, 2, S},
                                 {2, 3, 3, 8, 3, 3, 8, 1, 1, 1, 1, V},
                                 // Grouped, and dilated: where oneDNN has no
                                 // direct convolution for some pass and kcc
                                 // runs its own im2col + GEMMs.
                                 {4, 10, 10, 8, 3, 3, 8, 1, 1, 1, 1, S, 4},
                                 {4, 10, 10, 8, 3, 2, 8, 2, 1, 1, 1, V, 2},
                                 {4, 14, 14, 8, 3, 3, 8, 1, 1, 2, 2, V},
                                 {2, 9, 7, 4, 3, 3, 6, 2, 2, 2, 2, S, 2},
                                 {2, 5, 4, 6, 1, 1, 9, 1, 1, 1, 1, V, 3},
                                 {2, 8, 8, 32, 3, 3, 32, 1, 1, 1, 1, S, 8},
                                 // Depthwise 1-D (oneDNN's im2col; kcc's
                                 // direct loops).
                                 {4, 1, 28, 28, 1, 3, 56, 1, 2, 1, 1, V, 28},
                                 {4, 1, 14, 56, 1, 3, 56, 1, 1, 1, 2, V, 56}};
  std::mt19937 gen(13);
  for (DType dt : kFloatTypes)
    for (const ConvCase &c : cases) {
      Conv2DParams p;
      p.strideH = c.sh, p.strideW = c.sw, p.dilationH = c.dh,
      p.dilationW = c.dw;
      p.padding = c.pad;
      p.groups = c.groups;
      int64_t oh = refWindow(c.h, c.kh, c.sh, c.dh, c.pad).out;
      int64_t ow = refWindow(c.w, c.kw, c.sw, c.dw, c.pad).out;
      int64_t gi = c.c / c.groups, go = c.o / c.groups;
      Shape xs{c.n, c.h, c.w, c.c}, ws{c.kh, c.kw, gi, c.o},
          ys{c.n, oh, ow, c.o};
      NDArray x = randomArray(xs, dt, gen), w = randomArray(ws, dt, gen);
      NDArray g = randomArray(ys, dt, gen);
      NDArray y = NDArray::empty(ys, dt), dx = NDArray::empty(xs, dt);
      NDArray dw = NDArray::empty(ws, dt);
      conv2d(x, w, p, y);
      conv2dBackpropInput(g, w, p, dx);
      conv2dBackpropFilter(x, g, p, dw);
      Vec refY(y.numel(), 0.0), refDx(x.numel(), 0.0), refDw(w.numel(), 0.0);
      forEachTap(c, [&](int64_t b, int64_t oy, int64_t ox, int64_t ky,
                        int64_t kx, int64_t iy, int64_t ix) {
        for (int64_t ic = 0; ic < c.c; ++ic)
          for (int64_t oc = ic / gi * go; oc < (ic / gi + 1) * go; ++oc) {
            int64_t xi = ravel({b, iy, ix, ic}, xs);
            int64_t wi = ravel({ky, kx, ic % gi, oc}, ws);
            int64_t yi = ravel({b, oy, ox, oc}, ys);
            refY[yi] += x.at(xi) * w.at(wi);
            refDx[xi] += g.at(yi) * w.at(wi);
            refDw[wi] += x.at(xi) * g.at(yi);
          }
      });
      std::string what = shapeToString(xs) + " * " + shapeToString(ws) +
                         " stride " + std::to_string(c.sh) + " dilation " +
                         std::to_string(c.dh) + " groups " +
                         std::to_string(c.groups) +
                         (c.pad == S ? " same" : " valid");
      double tol = tolFor(dt) * 4;
      EXPECT_TRUE(allClose(y, refY, tol)) << "forward " << what;
      EXPECT_TRUE(allClose(dx, refDx, tol)) << "backprop input " << what;
      EXPECT_TRUE(allClose(dw, refDw, tol * 4)) << "backprop filter " << what;
      // Adjoint identity: <conv(x,w), G> = <x, dx(G,w)> = <w, dw(x,G)>.
      double lhs = dot(y, g);
      double scale = tol * (1 + std::abs(lhs)) * std::sqrt(double(y.numel()));
      EXPECT_NEAR(dot(x, dx), lhs, scale) << what;
      EXPECT_NEAR(dot(w, dw), lhs, scale) << what;
    }
}

/// kcc's own im2col + GEMM lowering, called directly (Conv.cpp takes it only
/// where oneDNN would fall back to its own): each pass, grouped and not,
/// against the f64 loops of the public kernels.
TEST(Conv, GemmLoweringMatchesTheLoopsOnEveryPass) {
  using namespace kcc::kernels::detail;
  struct Case {
    ConvGeometry g;
    Padding pad;
  };
  // n h w c kh kw o oh ow sh sw dh dw padT padL padB padR groups
  std::vector<Case> cases = {
      {{3, 10, 10, 8, 3, 3, 8, 10, 10, 1, 1, 1, 1, 1, 1, 1, 1, 4},
       Padding::Same},
      {{3, 10, 10, 8, 3, 2, 8, 4, 9, 2, 1, 1, 1, 0, 0, 0, 0, 2},
       Padding::Valid},
      {{2, 9, 9, 6, 3, 3, 4, 5, 5, 1, 1, 2, 2, 0, 0, 0, 0, 1}, Padding::Valid},
      {{2, 5, 4, 6, 1, 1, 9, 5, 4, 1, 1, 1, 1, 0, 0, 0, 0, 3}, Padding::Valid},
      // Strided along the row, padded on both sides: im2col's runs of
      // taps end at either edge.
      {{2, 7, 9, 4, 3, 3, 6, 4, 5, 2, 2, 1, 1, 1, 1, 1, 1, 2}, Padding::Same},
      // One image row: only the filter's middle row reads (tap0 = 3).
      {{2, 1, 2, 4, 3, 3, 4, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1}, Padding::Same}};
  std::mt19937 gen(29);
  for (const Case &c : cases) {
    const ConvGeometry &g = c.g;
    Conv2DParams p;
    p.strideH = g.sh, p.strideW = g.sw, p.dilationH = g.dh, p.dilationW = g.dw;
    p.padding = c.pad;
    p.groups = g.grp;
    Shape xs{g.n, g.h, g.w, g.c}, ws{g.kh, g.kw, g.groupIn(), g.o},
        ys{g.n, g.oh, g.ow, g.o};
    NDArray x = randomArray(xs, DType::F64, gen);
    NDArray w = randomArray(ws, DType::F64, gen);
    NDArray dy = randomArray(ys, DType::F64, gen);
    NDArray bias = randomArray({g.o}, DType::F64, gen);
    NDArray y = NDArray::empty(ys, DType::F64),
            dx = NDArray::empty(xs, DType::F64);
    NDArray dw = NDArray::empty(ws, DType::F64);
    Epilogue e;
    e.bias = &bias;
    conv2d(x, w, p, y, e);
    conv2dBackpropInput(dy, w, p, dx);
    conv2dBackpropFilter(x, dy, p, dw);
    auto f32 = [](const NDArray &a) {
      NDArray out = NDArray::empty(a.shape(), DType::F32);
      cast(a, out);
      return out;
    };
    NDArray x32 = f32(x), w32 = f32(w), dy32 = f32(dy), b32 = f32(bias);
    NDArray y32 = NDArray::empty(ys, DType::F32);
    NDArray dx32 = NDArray::empty(xs, DType::F32);
    NDArray dw32 = NDArray::empty(ws, DType::F32);
    std::optional<GemmLowering> l = gemmLowering(g);
    ASSERT_TRUE(l);
    runConvAsGemm(g, *l, ConvPass::Forward, x32.data<float>(),
                  w32.data<float>(), y32.data<float>(), b32.data<float>());
    runConvAsGemm(g, *l, ConvPass::BackwardData, dx32.data<float>(),
                  w32.data<float>(), dy32.data<float>(), nullptr);
    runConvAsGemm(g, *l, ConvPass::BackwardWeights, x32.data<float>(),
                  dw32.data<float>(), dy32.data<float>(), nullptr);
    std::string what = shapeToString(xs) + " * " + shapeToString(ws) +
                       " groups " + std::to_string(g.grp);
    auto close = [](const NDArray &a, const NDArray &b, double tol) {
      for (int64_t i = 0; i < a.numel(); ++i)
        if (std::abs(a.at(i) - b.at(i)) > tol * (1 + std::abs(b.at(i))))
          return false;
      return true;
    };
    EXPECT_TRUE(close(y32, y, 1e-5)) << "forward " << what;
    EXPECT_TRUE(close(dx32, dx, 1e-5)) << "backprop input " << what;
    EXPECT_TRUE(close(dw32, dw, 1e-4)) << "backprop filter " << what;
  }
}

TEST(Conv, SamePaddingPutsTheExtraRowAfter) {
  // 3x3 input, 2x2 ones filter, stride 1: TF pads one row/col at the end only.
  for (DType dt : kFloatTypes) {
    NDArray x =
        NDArray::fromVector({1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9}, dt);
    NDArray w = NDArray::fromVector({2, 2, 1, 1}, {1, 1, 1, 1}, dt);
    NDArray y = NDArray::empty({1, 3, 3, 1}, dt);
    Conv2DParams p;
    p.padding = Padding::Same;
    conv2d(x, w, p, y);
    EXPECT_EQ(y.toVector(), (Vec{12, 16, 9, 24, 28, 15, 15, 17, 9}));
  }
  NDArray x = NDArray::zeros({1, 5, 5, 3}, DType::F32),
          w = NDArray::zeros({3, 3, 2, 4}, DType::F32);
  NDArray y = NDArray::zeros({1, 3, 3, 4}, DType::F32);
  expectShapeError([&] { conv2d(x, w, Conv2DParams(), y); }, "[1, 5, 5, 3]",
                   "[3, 3, 2, 4]");
}

struct PoolCase {
  int64_t n, h, w, c, wh, ww, sh, sw;
  Padding pad;
};

TEST(Pool, MaxAndAvgWithGradients) {
  const Padding S = Padding::Same, V = Padding::Valid;
  std::vector<PoolCase> cases = {
      {2, 9, 7, 3, 2, 2, 2, 2, V},   {2, 9, 7, 3, 2, 2, 2, 2, S},
      {2, 9, 7, 3, 3, 3, 1, 1, S},   {2, 9, 7, 3, 3, 3, 2, 2, S},
      {2, 9, 7, 3, 3, 2, 1, 2, V},   {2, 6, 6, 70, 3, 3, 2, 2, S},
      {4, 32, 32, 16, 2, 2, 2, 2, V}};
  std::mt19937 gen(14);
  for (DType dt : kFloatTypes)
    for (const PoolCase &c : cases) {
      Pool2DParams p{c.wh, c.ww, c.sh, c.sw, c.pad};
      Window wy = refWindow(c.h, c.wh, c.sh, 1, c.pad);
      Window wx = refWindow(c.w, c.ww, c.sw, 1, c.pad);
      Shape xs{c.n, c.h, c.w, c.c}, ys{c.n, wy.out, wx.out, c.c};
      // Coarse values so windows contain ties.
      NDArray x = randomArray(xs, DType::F64, gen, 0, 4).to(DType::I32).to(dt);
      NDArray g = randomArray(ys, dt, gen);
      NDArray mx = NDArray::empty(ys, dt), av = NDArray::empty(ys, dt);
      NDArray dmx = NDArray::empty(xs, dt), dav = NDArray::empty(xs, dt);
      maxPool2d(x, p, mx);
      avgPool2d(x, p, av);
      maxPool2dGrad(x, g, p, dmx);
      avgPool2dGrad(g, p, dav);
      Vec refMx(mx.numel()), refAv(av.numel()), refDmx(x.numel(), 0.0),
          refDav(x.numel(), 0.0);
      for (int64_t i = 0; i < mx.numel(); ++i) {
        std::vector<int64_t> o = unravel(i, ys);
        double best = -INFINITY, sum = 0;
        int64_t where = -1, count = 0;
        std::vector<int64_t> taps;
        for (int64_t ky = 0; ky < c.wh; ++ky) // Row-major window scan.
          for (int64_t kx = 0; kx < c.ww; ++kx) {
            int64_t iy = o[1] * c.sh + ky - wy.before;
            int64_t ix = o[2] * c.sw + kx - wx.before;
            if (iy < 0 || iy >= c.h || ix < 0 || ix >= c.w)
              continue;
            int64_t xi = ravel({o[0], iy, ix, o[3]}, xs);
            taps.push_back(xi);
            sum += x.at(xi);
            ++count;
            if (x.at(xi) > best)
              best = x.at(xi), where = xi;
          }
        refMx[i] = best;
        refAv[i] = sum / count;
        refDmx[where] += g.at(i);
        for (int64_t xi : taps)
          refDav[xi] += g.at(i) / count;
      }
      std::string what = shapeToString(xs) + " window " + std::to_string(c.wh) +
                         "x" + std::to_string(c.ww) + " stride " +
                         std::to_string(c.sh) +
                         (c.pad == S ? " same" : " valid");
      EXPECT_TRUE(allClose(mx, refMx, 0)) << "max " << what;
      EXPECT_TRUE(allClose(av, refAv, tolFor(dt))) << "avg " << what;
      EXPECT_TRUE(allClose(dmx, refDmx, tolFor(dt))) << "max grad " << what;
      EXPECT_TRUE(allClose(dav, refDav, tolFor(dt))) << "avg grad " << what;

      // Windows that tile x: the gradient through relu then max pooling
      // (masked where the maximum is not positive), also written over x
      // itself, as compiled code runs it.
      if (c.wh == c.sh && c.ww == c.sw && wy.before == 0 && wx.before == 0) {
        NDArray shifted = NDArray::empty(xs, dt);
        Vec refMasked(x.numel(), 0.0);
        for (int64_t k = 0; k < x.numel(); ++k) {
          shifted.set(k, x.at(k) - 2); // maxima stay where they were
          refMasked[k] = x.at(k) - 2 > 0 ? refDmx[k] : 0.0;
        }
        NDArray masked = NDArray::empty(xs, dt);
        maxPool2dGrad(shifted, g, p, masked, /*reluMask=*/true);
        EXPECT_TRUE(allClose(masked, refMasked, tolFor(dt)))
            << "masked max grad " << what;
        NDArray inPlace = shifted.clone();
        maxPool2dGrad(inPlace, g, p, inPlace, /*reluMask=*/true);
        EXPECT_TRUE(allClose(inPlace, refMasked, tolFor(dt)))
            << "masked max grad over x " << what;
      }
    }
}

TEST(Pool, AvgSameDividesByValidCountAndMaxTiesGoFirst) {
  for (DType dt : kFloatTypes) {
    NDArray x =
        NDArray::fromVector({1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9}, dt);
    Pool2DParams p{2, 2, 2, 2, Padding::Same};
    NDArray y = NDArray::empty({1, 2, 2, 1}, dt);
    avgPool2d(x, p, y);
    EXPECT_EQ(y.toVector(), (Vec{3, 4.5, 7.5, 9}));
    NDArray ones = NDArray::fromVector({1, 2, 2, 1}, {1, 1, 1, 1}, dt);
    NDArray g = NDArray::fromVector({1, 1, 1, 1}, {5}, dt);
    NDArray dx = NDArray::empty({1, 2, 2, 1}, dt);
    maxPool2dGrad(ones, g, Pool2DParams(), dx);
    EXPECT_EQ(dx.toVector(), (Vec{5, 0, 0, 0}));
  }
  NDArray x = NDArray::zeros({1, 4, 4, 1}, DType::F32),
          y = NDArray::zeros({1, 3, 3, 1}, DType::F32);
  expectShapeError([&] { maxPool2d(x, Pool2DParams(), y); }, "[1, 4, 4, 1]",
                   "[1, 3, 3, 1]");
}

} // namespace
