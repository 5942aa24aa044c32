//===- InterpreterMathTest.cpp - kc math ops against naive references ----===//
//
// Each test runs a small kc function in the interpreter, in f32 and in f64,
// and compares every result with plain loops over std:: math written here.
//
//===----------------------------------------------------------------------===//

#include "tests/unit/interpreter/InterpreterTestUtil.h"

#include <algorithm>
#include <functional>

using namespace kcc;
using namespace kcc::testing;

namespace {

class InterpreterMathTest : public InterpreterFixture,
                            public ::testing::WithParamInterface<DType> {
protected:
  DType dtype() const { return GetParam(); }
  std::string type() const { return dtypeName(GetParam()); }
  double tol() const { return toleranceFor(GetParam()); }
  NDArray array(const Shape &shape, const std::vector<double> &values) {
    return NDArray::fromVector(shape, values, dtype());
  }
};

/// y = softmax(relu(x W1 + b1) W2 + b2), row by row.
std::vector<double> naiveMlp(const std::vector<double> &x,
                             const std::vector<double> &w1,
                             const std::vector<double> &b1,
                             const std::vector<double> &w2,
                             const std::vector<double> &b2, int64_t batch,
                             int64_t in, int64_t hidden, int64_t out) {
  std::vector<double> y(batch * out);
  for (int64_t n = 0; n < batch; ++n) {
    std::vector<double> h(hidden);
    for (int64_t j = 0; j < hidden; ++j) {
      double s = b1[j];
      for (int64_t k = 0; k < in; ++k)
        s += x[n * in + k] * w1[k * hidden + j];
      h[j] = std::max(s, 0.0);
    }
    std::vector<double> logits(out);
    for (int64_t j = 0; j < out; ++j) {
      logits[j] = b2[j];
      for (int64_t k = 0; k < hidden; ++k)
        logits[j] += h[k] * w2[k * out + j];
    }
    double m = *std::max_element(logits.begin(), logits.end()), z = 0;
    for (double l : logits)
      z += std::exp(l - m);
    for (int64_t j = 0; j < out; ++j)
      y[n * out + j] = std::exp(logits[j] - m) / z;
  }
  return y;
}

TEST_P(InterpreterMathTest, TwoLayerMlpMatchesNaiveLoops) {
  const char *text = R"mlir(
    func.func @mlp(%x: tensor<4x5x$T>, %w1: tensor<5x6x$T>, %b1: tensor<6x$T>,
                   %w2: tensor<6x3x$T>, %b2: tensor<3x$T>) -> tensor<4x3x$T> {
      %0 = kc.matmul %x, %w1 : tensor<4x5x$T>, tensor<5x6x$T> -> tensor<4x6x$T>
      %1 = kc.broadcast_to %b1 : tensor<6x$T> -> tensor<4x6x$T>
      %2 = kc.add %0, %1 : tensor<4x6x$T>
      %3 = kc.relu %2 : tensor<4x6x$T>
      %4 = kc.matmul %3, %w2 : tensor<4x6x$T>, tensor<6x3x$T> -> tensor<4x3x$T>
      %5 = kc.broadcast_to %b2 : tensor<3x$T> -> tensor<4x3x$T>
      %6 = kc.add %4, %5 : tensor<4x3x$T>
      %7 = kc.softmax %6 : tensor<4x3x$T>
      return %7 : tensor<4x3x$T>
    })mlir";
  auto x = randomValues(20, -1, 1, 1), w1 = randomValues(30, -1, 1, 2),
       b1 = randomValues(6, -0.5, 0.5, 3), w2 = randomValues(18, -1, 1, 4),
       b2 = randomValues(3, -0.5, 0.5, 5);
  auto results = run(withType(text, type()),
                     {array({4, 5}, x), array({5, 6}, w1), array({6}, b1),
                      array({6, 3}, w2), array({3}, b2)});
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].dtype(), dtype());
  expectNear(results[0], {4, 3}, naiveMlp(x, w1, b1, w2, b2, 4, 5, 6, 3),
             tol());
  EXPECT_EQ(interpreter.stats().opsDispatched, 8);
}

TEST_P(InterpreterMathTest, ElementwiseOpsMatchStdMath) {
  using Binary = std::function<double(double, double)>;
  using Unary = std::function<double(double)>;
  const double pi = std::acos(-1.0);
  std::vector<std::pair<std::string, Binary>> binaries = {
      {"add", [](double a, double b) { return a + b; }},
      {"sub", [](double a, double b) { return a - b; }},
      {"mul", [](double a, double b) { return a * b; }},
      {"div", [](double a, double b) { return a / b; }},
      {"pow", [](double a, double b) { return std::pow(a, b); }},
      {"max", [](double a, double b) { return std::max(a, b); }},
      {"min", [](double a, double b) { return std::min(a, b); }}};
  // Unary ops read %s (signed) or, where the domain needs it, %p (positive).
  std::vector<std::tuple<std::string, std::string, Unary>> unaries = {
      {"neg", "s", [](double x) { return -x; }},
      {"exp", "s", [](double x) { return std::exp(x); }},
      {"log", "p", [](double x) { return std::log(x); }},
      {"sqrt", "p", [](double x) { return std::sqrt(x); }},
      {"rsqrt", "p", [](double x) { return 1 / std::sqrt(x); }},
      {"abs", "s", [](double x) { return std::fabs(x); }},
      {"relu", "s", [](double x) { return x > 0 ? x : 0; }},
      {"sigmoid", "s", [](double x) { return 1 / (1 + std::exp(-x)); }},
      {"tanh", "s", [](double x) { return std::tanh(x); }},
      {"gelu", "s",
       [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }},
      {"gelu {approximate = true}", "s", [pi](double x) {
         return 0.5 * x *
                (1 + std::tanh(std::sqrt(2 / pi) * (x + 0.044715 * x * x * x)));
       }}};

  std::string body, results, types;
  int n = 0;
  auto addResult = [&](const std::string &expr) {
    body +=
        "      %r" + std::to_string(n) + " = " + expr + " : tensor<2x3x$T>\n";
    results += (n ? ", %r" : "%r") + std::to_string(n);
    types += std::string(n ? ", " : "") + "tensor<2x3x$T>";
    ++n;
  };
  for (auto &[name, fn] : binaries)
    addResult("kc." + name + " %p, %q");
  for (auto &[name, input, fn] : unaries) {
    // Attributes go after the operand: "kc.gelu %s {approximate = true}".
    std::string op = name, attrs;
    if (size_t space = name.find(' '); space != std::string::npos) {
      op = name.substr(0, space);
      attrs = name.substr(space);
    }
    addResult("kc." + op + " %" + input + attrs);
  }
  std::string text = "    func.func @f(%p: tensor<2x3x$T>, %q: tensor<2x3x$T>, "
                     "%s: tensor<2x3x$T>) -> (" +
                     types + ") {\n" + body + "      return " + results +
                     " : " + types + "\n    }";

  auto p = randomValues(6, 0.5, 2.0, 7), q = randomValues(6, 0.5, 2.0, 8),
       s = randomValues(6, -3.0, 3.0, 9);
  auto out = run(withType(text, type()),
                 {array({2, 3}, p), array({2, 3}, q), array({2, 3}, s)});
  ASSERT_EQ(out.size(), binaries.size() + unaries.size());
  size_t r = 0;
  for (auto &[name, fn] : binaries) {
    std::vector<double> expected(6);
    for (int i = 0; i < 6; ++i)
      expected[i] = fn(p[i], q[i]);
    expectNear(out[r++], {2, 3}, expected, tol(), "kc." + name);
  }
  for (auto &[name, input, fn] : unaries) {
    const std::vector<double> &x = input == "p" ? p : s;
    std::vector<double> expected(6);
    for (int i = 0; i < 6; ++i)
      expected[i] = fn(x[i]);
    expectNear(out[r++], {2, 3}, expected, tol(), "kc." + name);
  }
}

TEST_P(InterpreterMathTest, CompareSelectAndCast) {
  const char *text = R"mlir(
    func.func @f(%x: tensor<6x$T>, %y: tensor<6x$T>, %labels: tensor<6xi64>)
        -> (tensor<6xi1>, tensor<6xi1>, tensor<6xi1>, tensor<6xi1>, tensor<6xi1>,
            tensor<6xi1>, tensor<6x$T>, tensor<6xi32>, tensor<6x$T>, tensor<6x$T>) {
      %eq = kc.compare eq, %x, %y : tensor<6x$T> -> tensor<6xi1>
      %ne = kc.compare ne, %x, %y : tensor<6x$T> -> tensor<6xi1>
      %lt = kc.compare lt, %x, %y : tensor<6x$T> -> tensor<6xi1>
      %le = kc.compare le, %x, %y : tensor<6x$T> -> tensor<6xi1>
      %gt = kc.compare gt, %x, %y : tensor<6x$T> -> tensor<6xi1>
      %ge = kc.compare ge, %x, %y : tensor<6x$T> -> tensor<6xi1>
      %max = kc.select %gt, %x, %y : tensor<6xi1>, tensor<6x$T>
      %trunc = kc.cast %x : tensor<6x$T> -> tensor<6xi32>
      %mask = kc.cast %le : tensor<6xi1> -> tensor<6x$T>
      %fl = kc.cast %labels : tensor<6xi64> -> tensor<6x$T>
      return %eq, %ne, %lt, %le, %gt, %ge, %max, %trunc, %mask, %fl
        : tensor<6xi1>, tensor<6xi1>, tensor<6xi1>, tensor<6xi1>, tensor<6xi1>,
          tensor<6xi1>, tensor<6x$T>, tensor<6xi32>, tensor<6x$T>, tensor<6x$T>
    })mlir";
  // Ties at 0 and 3 exercise eq/le/ge; -2.5 checks truncation toward zero.
  std::vector<double> x = {1, 2, 3.75, -1, 0.5, -2.5};
  std::vector<double> y = {1, 3, 2, -1, 0.25, -2};
  NDArray labels = NDArray::empty({6}, DType::I64);
  std::vector<int64_t> labelValues = {0, 7, -3, 1000000007, 42, 5};
  std::copy(labelValues.begin(), labelValues.end(), labels.data<int64_t>());
  auto out =
      run(withType(text, type()), {array({6}, x), array({6}, y), labels});
  ASSERT_EQ(out.size(), 10u);
  std::vector<std::function<bool(double, double)>> directions = {
      std::equal_to<double>(), std::not_equal_to<double>(),
      std::less<double>(),     std::less_equal<double>(),
      std::greater<double>(),  std::greater_equal<double>()};
  for (size_t d = 0; d < directions.size(); ++d) {
    ASSERT_EQ(out[d].dtype(), DType::I1);
    std::vector<double> expected(6);
    for (int i = 0; i < 6; ++i)
      expected[i] = directions[d](x[i], y[i]) ? 1 : 0;
    expectNear(out[d], {6}, expected, 0, "compare #" + std::to_string(d));
  }
  std::vector<double> maxes(6), truncated(6), mask(6), floats(6);
  for (int i = 0; i < 6; ++i) {
    maxes[i] = x[i] > y[i] ? x[i] : y[i];
    truncated[i] = std::trunc(x[i]);
    mask[i] = x[i] <= y[i] ? 1 : 0;
    floats[i] = static_cast<double>(labelValues[i]);
  }
  expectNear(out[6], {6}, maxes, 0, "select");
  EXPECT_EQ(out[7].dtype(), DType::I32);
  expectNear(out[7], {6}, truncated, 0, "cast to i32");
  expectNear(out[8], {6}, mask, 0, "cast from i1");
  // 1000000007 is not exact in f32: compare with its f32 rounding.
  if (dtype() == DType::F32)
    floats[3] = static_cast<float>(floats[3]);
  expectNear(out[9], {6}, floats, 0, "cast from i64");
}

TEST_P(InterpreterMathTest, MatmulTransposeFlags) {
  // op(a) is 3x4 and op(b) 4x2 in all four cases; the stored operands are
  // transposed copies where the flag is set.
  const int64_t m = 3, k = 4, n = 2;
  auto a = randomValues(m * k, -1, 1, 11), b = randomValues(k * n, -1, 1, 12);
  std::vector<double> at(k * m), bt(n * k), expected(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < k; ++j)
      at[j * m + i] = a[i * k + j];
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < n; ++j)
      bt[j * k + i] = b[i * n + j];
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t l = 0; l < k; ++l)
        expected[i * n + j] += a[i * k + l] * b[l * n + j];

  const char *text = R"mlir(
    func.func @f(%a: tensor<3x4x$T>, %at: tensor<4x3x$T>, %b: tensor<4x2x$T>,
                 %bt: tensor<2x4x$T>)
        -> (tensor<3x2x$T>, tensor<3x2x$T>, tensor<3x2x$T>, tensor<3x2x$T>) {
      %0 = kc.matmul %a, %b : tensor<3x4x$T>, tensor<4x2x$T> -> tensor<3x2x$T>
      %1 = kc.matmul %at, %b {transpose_lhs = true} : tensor<4x3x$T>, tensor<4x2x$T> -> tensor<3x2x$T>
      %2 = kc.matmul %a, %bt {transpose_rhs = true} : tensor<3x4x$T>, tensor<2x4x$T> -> tensor<3x2x$T>
      %3 = kc.matmul %at, %bt {transpose_lhs = true, transpose_rhs = true} : tensor<4x3x$T>, tensor<2x4x$T> -> tensor<3x2x$T>
      return %0, %1, %2, %3 : tensor<3x2x$T>, tensor<3x2x$T>, tensor<3x2x$T>, tensor<3x2x$T>
    })mlir";
  auto out = run(withType(text, type()), {array({3, 4}, a), array({4, 3}, at),
                                          array({4, 2}, b), array({2, 4}, bt)});
  ASSERT_EQ(out.size(), 4u);
  for (int i = 0; i < 4; ++i)
    expectNear(out[i], {3, 2}, expected, tol(),
               "matmul flags #" + std::to_string(i));
}

TEST_P(InterpreterMathTest, SoftmaxAxesAndLogSoftmax) {
  const char *text = R"mlir(
    func.func @f(%x: tensor<3x4x$T>) -> (tensor<3x4x$T>, tensor<3x4x$T>, tensor<3x4x$T>) {
      %0 = kc.softmax %x {axis = 0 : i64} : tensor<3x4x$T>
      %1 = kc.softmax %x {axis = -2 : i64} : tensor<3x4x$T>
      %2 = kc.log_softmax %x : tensor<3x4x$T>
      return %0, %1, %2 : tensor<3x4x$T>, tensor<3x4x$T>, tensor<3x4x$T>
    })mlir";
  // Large offsets: a softmax that does not subtract the max overflows in f32.
  auto x = randomValues(12, 80, 100, 13);
  auto out = run(withType(text, type()), {array({3, 4}, x)});
  ASSERT_EQ(out.size(), 3u);
  std::vector<double> byColumn(12), logByRow(12);
  for (int c = 0; c < 4; ++c) {
    double m = std::max({x[c], x[4 + c], x[8 + c]}), z = 0;
    for (int r = 0; r < 3; ++r)
      z += std::exp(x[r * 4 + c] - m);
    for (int r = 0; r < 3; ++r)
      byColumn[r * 4 + c] = std::exp(x[r * 4 + c] - m) / z;
  }
  for (int r = 0; r < 3; ++r) {
    double m = *std::max_element(&x[r * 4], &x[r * 4] + 4), z = 0;
    for (int c = 0; c < 4; ++c)
      z += std::exp(x[r * 4 + c] - m);
    for (int c = 0; c < 4; ++c)
      logByRow[r * 4 + c] = x[r * 4 + c] - m - std::log(z);
  }
  expectNear(out[0], {3, 4}, byColumn, tol(), "softmax axis 0");
  expectNear(out[1], {3, 4}, byColumn, tol(), "softmax axis -2");
  expectNear(out[2], {3, 4}, logByRow, tol(), "log_softmax");
}

INSTANTIATE_TEST_SUITE_P(FloatTypes, InterpreterMathTest,
                         ::testing::Values(DType::F32, DType::F64),
                         [](const ::testing::TestParamInfo<DType> &info) {
                           return std::string(dtypeName(info.param));
                         });

} // namespace
