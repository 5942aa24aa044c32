//===- GradCheck.cpp - Central-difference checks of kc gradients ----------===//

#include "tests/unit/autodiff/GradCheck.h"

#include "engine/interpreter/Interpreter.h"
#include "ir/KcDialect.h"
#include "passes/Autodiff.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>

using namespace mlir;

namespace kcc {
namespace test {
namespace {

/// Step of the central difference: near the cube root of f64 epsilon, where
/// truncation (h^2) and rounding (eps / h) errors balance.
constexpr double kStep = 5e-6;

std::string joinShape(const Shape &shape) {
  std::ostringstream os;
  os << shapeToString(shape);
  return os.str();
}

} // namespace

NDArray uniform(const Shape &shape, double lo, double hi, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> values(numElements(shape));
  for (double &v : values)
    v = dist(rng);
  return NDArray::fromVector(shape, values, DType::F64);
}

NDArray awayFromZero(const Shape &shape, double lo, double hi, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::bernoulli_distribution sign(0.5);
  std::vector<double> values(numElements(shape));
  for (double &v : values)
    v = sign(rng) ? dist(rng) : -dist(rng);
  return NDArray::fromVector(shape, values, DType::F64);
}

void loadDialects(MLIRContext &ctx) {
  ctx.loadDialect<kc::KcDialect, func::FuncDialect>();
}

std::string f64Tensor(const Shape &shape) {
  std::ostringstream os;
  os << "tensor<";
  for (int64_t d : shape)
    os << d << "x";
  os << "f64>";
  return os.str();
}

Shape shapeOfType(MLIRContext &ctx, const std::string &type) {
  loadDialects(ctx);
  auto tensor = dyn_cast_or_null<RankedTensorType>(parseType(type, &ctx));
  if (!tensor) {
    ADD_FAILURE() << "not a ranked tensor type: " << type;
    return {};
  }
  return Shape(tensor.getShape().begin(), tensor.getShape().end());
}

OwningOpRef<ModuleOp> parse(MLIRContext &ctx, const std::string &text) {
  loadDialects(ctx);
  std::string diagnostics;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
    diagnostics += diag.str() + "\n";
    return success();
  });
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &ctx);
  if (!module)
    ADD_FAILURE() << "cannot parse:\n" << text << "\n" << diagnostics;
  return module;
}

GradCheckResult checkGradients(ModuleOp module,
                               const std::vector<NDArray> &inputs, int numWrt) {
  GradCheckResult result;
  MLIRContext *ctx = module.getContext();
  auto f = module.lookupSymbol<func::FuncOp>("f");
  if (!f) {
    ADD_FAILURE() << "no @f";
    return result;
  }

  // @f_grad: a copy of @f that returns the gradients instead of the loss.
  auto grad = cast<func::FuncOp>(f->clone());
  grad.setName("f_grad");
  module.push_back(grad);
  Operation *ret = grad.getBody().front().getTerminator();
  OpBuilder b(ret);
  std::string diagnostics;
  FailureOr<SmallVector<Value>> grads;
  {
    ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &diag) {
      diagnostics += diag.str() + "\n";
      return success();
    });
    grads = buildGradients(b, ret->getOperand(0),
                           grad.getArguments().take_front(numWrt));
  }
  if (failed(grads)) {
    ADD_FAILURE() << "buildGradients failed: " << diagnostics;
    return result;
  }
  b.create<func::ReturnOp>(ret->getLoc(), *grads);
  ret->erase();
  grad.setType(FunctionType::get(ctx, grad.getArgumentTypes(),
                                 ValueRange(*grads).getTypes()));
  if (failed(verify(module))) {
    ADD_FAILURE() << "gradient IR does not verify";
    return result;
  }
  result.built = true;

  Interpreter interpreter;
  std::vector<NDArray> analytic = interpreter.run(grad, inputs);
  for (int i = 0; i < numWrt; ++i) {
    NDArray probe = inputs[i].clone();
    std::vector<NDArray> args = inputs;
    args[i] = probe;
    for (int64_t e = 0; e < probe.numel(); ++e) {
      double x = probe.at(e);
      probe.set(e, x + kStep);
      double plus = interpreter.run(f, args)[0].at(0);
      probe.set(e, x - kStep);
      double minus = interpreter.run(f, args)[0].at(0);
      probe.set(e, x);
      double numeric = (plus - minus) / (2 * kStep);
      double exact = analytic[i].at(e);
      double rel = std::abs(exact - numeric) /
                   std::max({std::abs(exact), std::abs(numeric), 1e-2});
      if (!(rel <= result.maxRelError)) { // NaN counts as the worst
        result.maxRelError = std::isnan(rel) ? INFINITY : rel;
        std::ostringstream os;
        os << "argument " << i << " " << joinShape(probe.shape()) << " element "
           << e << ": analytic " << exact << ", numeric " << numeric;
        result.worst = os.str();
      }
      ++result.elementsChecked;
    }
  }
  // KCC_GRADCHECK_VERBOSE=1 prints every check's worst element.
  if (std::getenv("KCC_GRADCHECK_VERBOSE"))
    std::fprintf(stderr, "gradcheck: %lld elements, max rel error %.3g (%s)\n",
                 static_cast<long long>(result.elementsChecked),
                 result.maxRelError, result.worst.c_str());
  return result;
}

GradCheckResult checkOp(MLIRContext &ctx, const std::string &body,
                        const std::vector<std::string> &argTypes,
                        const std::string &resultType,
                        const std::vector<NDArray> &inputs) {
  Shape yShape = shapeOfType(ctx, resultType);
  std::ostringstream text, axes;
  for (size_t d = 0; d < yShape.size(); ++d)
    axes << (d ? ", " : "") << d;
  text << "func.func @f(";
  for (size_t i = 0; i < argTypes.size(); ++i)
    text << "%x" << i << ": " << argTypes[i] << ", ";
  text << "%r: " << resultType << ") -> tensor<f64> {\n"
       << body << "\n"
       << "  %weighted = kc.mul %y, %r : " << resultType << "\n";
  if (yShape.empty())
    text << "  return %weighted : tensor<f64>\n}\n";
  else
    text << "  %loss = kc.reduce_sum %weighted {axes = array<i64: "
         << axes.str() << ">} : " << resultType << " -> tensor<f64>\n"
         << "  return %loss : tensor<f64>\n}\n";
  OwningOpRef<ModuleOp> module = parse(ctx, text.str());
  if (!module)
    return {};
  std::vector<NDArray> args = inputs;
  args.push_back(uniform(yShape, -1.0, 1.0, /*seed=*/12345));
  return checkGradients(*module, args, static_cast<int>(inputs.size()));
}

} // namespace test
} // namespace kcc
