//===- CompiledActivationsTest.cpp - Keras's activations, both backends ---===//
//
// Each activation kcc composes of kc ops (frontend/ops/Activations.cpp),
// traced in f32 on inputs holding NaN, +-inf, 0 and ordinary values, is run
// by the interpreter and compiled: the two must agree element by element
// (NaN where NaN, inf where inf) and both must equal what Keras 3.15 (jax
// backend) returns for the same inputs, listed below as Keras printed them.
//
//===----------------------------------------------------------------------===//

#include "tests/unit/codegen/CodegenTestUtil.h"

#include "frontend/Ops.h"
#include "frontend/Trace.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>

using namespace kcc;
using namespace kcc::testing;

namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();
constexpr double inf = std::numeric_limits<double>::infinity();

const std::vector<double> kInputs = {nan, inf,  -inf,  0.0, -1.5,
                                     2.5, 30.0, -30.0, 0.7, -0.2};

struct KerasCase {
  const char *name;
  std::function<Tensor(const Tensor &)> fn;
  std::vector<double> keras; ///< keras.activations.<name>(kInputs), f32
};

// KERAS_BACKEND=jax: np.asarray(keras.activations.get(name)(x)) for x =
// kInputs as float32.
const KerasCase kCases[] = {
    {"elu",
     [](const Tensor &x) { return ops::elu(x); },
     {nan, inf, -1.0, 0.0, -0.7768698334693909, 2.5, 30.0, -1.0,
      0.699999988079071, -0.18126924335956573}},
    {"elu(alpha=0.5)",
     [](const Tensor &x) { return ops::elu(x, 0.5); },
     {nan, inf, -0.5, 0.0, -0.38843491673469543, 2.5, 30.0, -0.5,
      0.699999988079071, -0.09063462167978287}},
    {"selu",
     [](const Tensor &x) { return ops::selu(x); },
     {nan, inf, -1.7580993175506592, 0.0, -1.3658143281936646,
      2.6267526149749756, 31.52103042602539, -1.7580993175506592,
      0.7354906797409058, -0.3186893165111542}},
    {"gelu",
     [](const Tensor &x) { return ops::gelu(x); },
     {nan, inf, nan, 0.0, -0.10021083056926727, 2.48447585105896, 30.0, -0.0,
      0.5306254029273987, -0.08414806425571442}},
    {"gelu(approximate=True)",
     [](const Tensor &x) { return ops::gelu(x, true); },
     {nan, inf, nan, 0.0, -0.10042843222618103, 2.4849157333374023, 30.0, -0.0,
      0.5305701494216919, -0.0841485783457756}},
    {"silu",
     [](const Tensor &x) { return ops::silu(x); },
     {nan, inf, nan, 0.0, -0.2736383080482483, 2.310354471206665, 30.0,
      -2.8072871718215486e-12, 0.46773141622543335, -0.09003320336341858}},
    {"softplus",
     [](const Tensor &x) { return ops::softplus(x); },
     {nan, inf, 0.0, 0.6931471824645996, 0.20141328871250153, 2.578889846801758,
      30.0, 9.357622912219837e-14, 1.1031861305236816, 0.5981389284133911}},
    {"softsign",
     [](const Tensor &x) { return ops::softsign(x); },
     {nan, nan, nan, 0.0, -0.6000000238418579, 0.7142857313156128,
      0.9677419066429138, -0.9677419066429138, 0.4117646813392639,
      -0.1666666567325592}},
    {"hard_sigmoid",
     [](const Tensor &x) { return ops::hardSigmoid(x); },
     {nan, 1.0, 0.0, 0.5, 0.25, 0.9166666865348816, 1.0, 0.0,
      0.6166666746139526, 0.46666666865348816}},
    {"hard_silu",
     [](const Tensor &x) { return ops::hardSilu(x); },
     {nan, inf, nan, 0.0, -0.375, 2.2916667461395264, 30.0, -0.0,
      0.43166667222976685, -0.09333333373069763}},
    {"relu6",
     [](const Tensor &x) { return ops::relu6(x); },
     {nan, 6.0, 0.0, 0.0, 0.0, 2.5, 6.0, 0.0, 0.699999988079071, 0.0}},
    {"exponential",
     [](const Tensor &x) { return ops::exp(x); },
     {nan, inf, 0.0, 1.0, 0.22313016653060913, 12.182494163513184,
      10686474223616.0, 9.357622912219837e-14, 2.0137526988983154,
      0.8187307715415955}},
    {"mish",
     [](const Tensor &x) { return ops::mish(x); },
     {nan, inf, nan, 0.0, -0.29809969663619995, 2.4713923931121826, 30.0,
      -2.807286954981114e-12, 0.5611484050750732, -0.107144795358181}},
    {"leaky_relu",
     [](const Tensor &x) { return ops::leakyRelu(x); },
     {nan, inf, -inf, 0.0, -0.30000001192092896, 2.5, 30.0, -6.0,
      0.699999988079071, -0.04000000283122063}},
    {"relu(negative_slope=0.1, max_value=4, threshold=0.5)",
     [](const Tensor &x) { return ops::kerasRelu(x, 0.1, 4.0, 0.5); },
     {nan, 4.0, -inf, -0.05000000074505806, -0.20000000298023224, 2.5, 4.0,
      -3.049999952316284, 0.699999988079071, -0.07000000029802322}},
};

class CompiledActivations : public CodegenFixture,
                            public ::testing::WithParamInterface<size_t> {
protected:
  /// @f(x: tensor<10xf32>) -> fn(x), traced into `module`.
  void trace(const std::function<Tensor(const Tensor &)> &fn) {
    mlir::OpBuilder b(&context);
    mlir::Location loc = b.getUnknownLoc();
    module = mlir::ModuleOp::create(loc);
    b.setInsertionPointToEnd(module->getBody());
    Shape shape{static_cast<int64_t>(kInputs.size())};
    auto type = toTensorType(&context, shape, DType::F32);
    auto f = b.create<mlir::func::FuncOp>(loc, "f",
                                          b.getFunctionType({type}, {type}));
    mlir::Block *entry = f.addEntryBlock();
    b.setInsertionPointToStart(entry);
    TraceContext tc(b);
    Tensor y = fn(Tensor::traced(entry->getArgument(0), shape, DType::F32));
    b.create<mlir::func::ReturnOp>(loc, y.value());
  }
};

bool same(double want, double got) {
  if (std::isnan(want) || std::isnan(got))
    return std::isnan(want) && std::isnan(got);
  if (std::isinf(want) || std::isinf(got))
    return want == got;
  return std::abs(want - got) <= 1e-6 * std::max(1.0, std::abs(want));
}

TEST_P(CompiledActivations, MatchKerasWithNaNAndInf) {
  const KerasCase &c = kCases[GetParam()];
  trace(c.fn);
  NDArray x = NDArray::fromVector({static_cast<int64_t>(kInputs.size())},
                                  kInputs, DType::F32);
  CompiledFunction fn = CompiledFunction::compile(*module, "f");
  auto func = module->lookupSymbol<mlir::func::FuncOp>("f");
  NDArray interpreted = interpreter.run(func, {x})[0];
  NDArray compiled = fn.run({x})[0];
  for (size_t i = 0; i < kInputs.size(); ++i) {
    EXPECT_TRUE(same(c.keras[i], interpreted.at(i)))
        << c.name << "(" << kInputs[i] << "): Keras " << c.keras[i]
        << ", interpreted " << interpreted.at(i);
    EXPECT_TRUE(same(interpreted.at(i), compiled.at(i)))
        << c.name << "(" << kInputs[i] << "): interpreted " << interpreted.at(i)
        << ", compiled " << compiled.at(i);
  }
}

/// tanh over f32 values across every branch of runtime/kernels/Tanh.h (near
/// 0, the polynomial, the clamp at 7.9, the saturation at 9, inf, NaN):
/// compiled (kc-expand-math) and interpreted agree bit for bit, vectorized
/// or not, and both are within 3.3e-7 of tanh.
using CompiledTanh = CodegenFixture;

TEST_F(CompiledTanh, BitForBitTheKernelLibrarys) {
  std::vector<double> values = {nan,    inf,       -inf,      0.0, -0.0,
                                3.9e-4, -4e-4,     7.9053111, 8.5, 9.0,
                                -9.0,   8.9999995, 30.0};
  for (int i = 0; i <= 4000; ++i)
    values.push_back(-12.0 + 24.0 * i / 4000.0);
  for (int i = 0; i <= 200; ++i)
    values.push_back(-1e-3 + 2e-3 * i / 200.0);
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
  TraceContext tc(b);
  Tensor y = ops::tanh(Tensor::traced(entry->getArgument(0), {n}, DType::F32));
  b.create<mlir::func::ReturnOp>(loc, y.value());

  NDArray x = NDArray::fromVector({n}, values, DType::F32);
  CompiledFunction fn = CompiledFunction::compile(*module, "f");
  NDArray interpreted = interpreter.run(f, {x})[0];
  NDArray compiled = fn.run({x})[0];
  double worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    float c = compiled.data<float>()[i], e = interpreted.data<float>()[i];
    uint32_t cb, eb;
    std::memcpy(&cb, &c, 4);
    std::memcpy(&eb, &e, 4);
    EXPECT_EQ(cb, eb) << "tanh(" << x.data<float>()[i] << "): compiled " << c
                      << ", interpreted " << e;
    float in = x.data<float>()[i];
    if (std::isnan(in)) {
      EXPECT_TRUE(std::isnan(e));
      continue;
    }
    worst = std::max(worst, std::abs(double(e) - std::tanh(double(in))));
  }
  EXPECT_LE(worst, 3.3e-7);
  std::printf("tanh: %lld values bit for bit; worst error %.2e\n",
              static_cast<long long>(n), worst);
}

INSTANTIATE_TEST_SUITE_P(Keras, CompiledActivations,
                         ::testing::Range(size_t(0), std::size(kCases)),
                         [](const auto &info) {
                           std::string name;
                           for (char ch : std::string(kCases[info.param].name))
                             if (std::isalnum(static_cast<unsigned char>(ch)))
                               name += ch;
                             else if (!name.empty() && name.back() != '_')
                               name += '_';
                           while (!name.empty() && name.back() == '_')
                             name.pop_back();
                           return name;
                         });

} // namespace
