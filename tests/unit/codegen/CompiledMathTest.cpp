//===- CompiledMathTest.cpp - exp, log, erf: compiled as interpreted ------===//
//
// kc-expand-math generates runtime/kernels/Exp.h, Log.h and Erf.h op for
// op, so the compiled and the interpreted step must agree bit for bit on
// every input. Each kc op or activation that holds one of them is traced in
// f32 and run both ways on a sample of all f32 bit patterns (every
// 2^32/40000-th, so every binade of both signs, plus the specials and a
// dense run around 0), vectorized and not; the base functions are also
// held within 2 ulp of the double-precision std:: ones.
//
//===----------------------------------------------------------------------===//

#include "tests/unit/codegen/CodegenTestUtil.h"

#include "frontend/Ops.h"
#include "frontend/Trace.h"
#include "runtime/kernels/FloatBits.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>

using namespace kcc;
using namespace kcc::testing;

namespace {

struct MathCase {
  const char *name;
  std::function<Tensor(const Tensor &)> fn;
  /// The double-precision function, or null where only parity is checked.
  double (*reference)(double);
};

const MathCase kCases[] = {
    {"exp", [](const Tensor &x) { return ops::exp(x); },
     [](double x) { return std::exp(x); }},
    {"log", [](const Tensor &x) { return ops::log(x); },
     [](double x) { return std::log(x); }},
    {"gelu", [](const Tensor &x) { return ops::gelu(x); }, nullptr},
    {"sigmoid", [](const Tensor &x) { return ops::sigmoid(x); }, nullptr},
    {"elu", [](const Tensor &x) { return ops::elu(x); }, nullptr},
    {"selu", [](const Tensor &x) { return ops::selu(x); }, nullptr},
    {"softplus", [](const Tensor &x) { return ops::softplus(x); }, nullptr},
    {"silu", [](const Tensor &x) { return ops::silu(x); }, nullptr},
    {"mish", [](const Tensor &x) { return ops::mish(x); }, nullptr},
};

std::vector<float> sampleInputs() {
  constexpr float inf = std::numeric_limits<float>::infinity();
  std::vector<float> xs = {std::numeric_limits<float>::quiet_NaN(),
                           inf,
                           -inf,
                           0.0f,
                           -0.0f,
                           std::numeric_limits<float>::max(),
                           std::numeric_limits<float>::min(),
                           88.72f,
                           -87.33f,
                           -104.0f,
                           0.921875f,
                           4.0f};
  for (uint64_t bits = 0; bits < (uint64_t(1) << 32); bits += 107374)
    xs.push_back(kernels::floatOf(static_cast<uint32_t>(bits)));
  for (int i = -2000; i <= 2000; ++i)
    xs.push_back(i / 200.0f);
  return xs;
}

/// |got - want| in ulps of want as f32 (subnormals' ulp 2^-149).
double ulpError(float got, double want) {
  int exponent;
  std::frexp(want, &exponent);
  return std::fabs(double(got) - want) /
         std::ldexp(1.0, std::max(exponent - 24, -149));
}

class CompiledMath : public CodegenFixture,
                     public ::testing::WithParamInterface<size_t> {};

TEST_P(CompiledMath, BitForBitTheInterpreters) {
  const MathCase &c = kCases[GetParam()];
  std::vector<float> values = sampleInputs();
  int64_t n = static_cast<int64_t>(values.size());
  mlir::OpBuilder b(&context);
  mlir::Location loc = b.getUnknownLoc();
  module = mlir::ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  auto type = toTensorType(&context, {n}, DType::F32);
  auto f =
      b.create<mlir::func::FuncOp>(loc, "f", b.getFunctionType({type}, {type}));
  mlir::Block *entry = f.addEntryBlock();
  b.setInsertionPointToStart(entry);
  {
    TraceContext tc(b);
    Tensor y = c.fn(Tensor::traced(entry->getArgument(0), {n}, DType::F32));
    b.create<mlir::func::ReturnOp>(loc, y.value());
  }
  NDArray x = NDArray::empty({n}, DType::F32);
  std::memcpy(x.data<float>(), values.data(), n * sizeof(float));
  CompiledFunction fn = CompiledFunction::compile(*module, "f");
  NDArray interpreted = interpreter.run(f, {x})[0];
  NDArray compiled = fn.run({x})[0];
  int64_t mismatches = 0;
  double worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    float in = values[i];
    float ci = compiled.data<float>()[i], ii = interpreted.data<float>()[i];
    bool same = kernels::bitsOf(ci) == kernels::bitsOf(ii) ||
                (std::isnan(ci) && std::isnan(ii));
    if (!same && ++mismatches <= 5)
      ADD_FAILURE() << c.name << "(" << in << "): compiled " << ci
                    << ", interpreted " << ii;
    // Compiled and interpreted run with FTZ/DAZ: subnormal inputs and
    // results are 0 there, so the reference is taken on normal ones.
    if (!c.reference || std::isnan(in) || std::fpclassify(in) == FP_SUBNORMAL)
      continue;
    double want = c.reference(double(in));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(ii)) << c.name << "(" << in << ")";
      continue;
    }
    if (std::isinf(float(want)) || std::fabs(want) < 1.17549435e-38) {
      if (std::isinf(float(want)))
        EXPECT_EQ(ii, float(want)) << c.name << "(" << in << ")";
      continue;
    }
    worst = std::max(worst, ulpError(ii, want));
  }
  EXPECT_EQ(mismatches, 0) << c.name;
  EXPECT_LE(worst, 2.0) << c.name;
  std::printf("%s: %lld values, %lld compiled/interpreted mismatches", c.name,
              static_cast<long long>(n), static_cast<long long>(mismatches));
  if (c.reference)
    std::printf(", worst %.3f ulp from std::%s", worst, c.name);
  std::printf("\n");
}

INSTANTIATE_TEST_SUITE_P(Kernels, CompiledMath,
                         ::testing::Range(size_t(0), std::size(kCases)),
                         [](const auto &info) {
                           return std::string(kCases[info.param].name);
                         });

} // namespace
