//===- CodegenTestUtil.h - Compiled vs interpreted comparisons --*- C++ -*-===//
//
// Parses a .mlir snippet (`$T` stands for the float type, so one snippet
// serves f32 and f64), runs its @f through the interpreter (the oracle) and
// through CompiledFunction on the same random inputs, and compares.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_TESTS_UNIT_CODEGEN_CODEGENTESTUTIL_H
#define KCC_TESTS_UNIT_CODEGEN_CODEGENTESTUTIL_H

#include "engine/CompiledFunction.h"
#include "engine/interpreter/Interpreter.h"
#include "ir/KcDialect.h"
#include "runtime/Error.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace kcc {
namespace testing {

inline std::string withType(std::string text, const std::string &type) {
  for (size_t at = text.find("$T"); at != std::string::npos;
       at = text.find("$T", at + type.size()))
    text.replace(at, 2, type);
  return text;
}

/// Random contents for an argument: floats in [lo, hi), integers in
/// [0, intRange), i1 as 0/1. Seeded, so failures reproduce.
inline NDArray randomArray(const TensorSpec &spec, std::mt19937 &gen,
                           double lo = -1, double hi = 1,
                           int64_t intRange = 10) {
  NDArray a = NDArray::empty(spec.shape, spec.dtype);
  std::uniform_real_distribution<double> real(lo, hi);
  std::uniform_int_distribution<int64_t> integer(0, intRange - 1);
  for (int64_t i = 0; i < a.numel(); ++i) {
    if (isFloat(spec.dtype))
      a.set(i, real(gen));
    else if (spec.dtype == DType::I1)
      a.set(i, integer(gen) % 2);
    else
      a.set(i, integer(gen));
  }
  return a;
}

/// A context with kc loaded and a module parsed from text.
class CodegenFixture : public ::testing::Test {
protected:
  CodegenFixture() {
    context.loadDialect<mlir::func::FuncDialect, kc::KcDialect>();
  }

  /// Parses `text`; fails the test on a parse error.
  bool parseText(const std::string &text) {
    module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
    EXPECT_TRUE(module) << "could not parse:\n" << text;
    return bool(module);
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  Interpreter interpreter;
};

/// Parameterized over "f32" / "f64".
class CompiledVsInterpreted
    : public CodegenFixture,
      public ::testing::WithParamInterface<std::string> {
protected:
  std::string type() const { return GetParam(); }
  double tolerance() const { return type() == "f32" ? 1e-5 : 1e-12; }

  /// Parses `text` with $T substituted.
  bool parse(const std::string &text) {
    return parseText(withType(text, type()));
  }

  /// Random arguments for @f's signature.
  std::vector<NDArray> randomArgs(const CompiledFunction &fn, double lo = -1,
                                  double hi = 1, int64_t intRange = 10) {
    std::mt19937 gen(1234);
    std::vector<NDArray> args;
    for (const TensorSpec &spec : fn.argSpecs())
      args.push_back(randomArray(spec, gen, lo, hi, intRange));
    return args;
  }

  /// Compiles @f, runs both ways on `args` (random when empty) and expects
  /// agreement within `tol` (relative, absolute near 0; default by type).
  void check(const std::string &text, std::vector<NDArray> args = {},
             double tol = -1, double lo = -1, double hi = 1,
             int64_t intRange = 10) {
    if (!parse(text))
      return;
    if (tol < 0)
      tol = tolerance();
    try {
      CompiledFunction fn = CompiledFunction::compile(*module, "f");
      if (args.empty())
        args = randomArgs(fn, lo, hi, intRange);
      auto func = module->lookupSymbol<mlir::func::FuncOp>("f");
      std::vector<NDArray> expected = interpreter.run(func, args);
      std::vector<NDArray> actual = fn.run(args);
      expectClose(expected, actual, tol);
    } catch (const Error &e) {
      ADD_FAILURE() << "kcc::Error: " << e.what();
    }
  }

  static void expectClose(const std::vector<NDArray> &expected,
                          const std::vector<NDArray> &actual, double tol) {
    ASSERT_EQ(expected.size(), actual.size());
    for (size_t r = 0; r < expected.size(); ++r) {
      ASSERT_EQ(expected[r].shape(), actual[r].shape()) << "result " << r;
      ASSERT_EQ(expected[r].dtype(), actual[r].dtype()) << "result " << r;
      int failures = 0;
      for (int64_t i = 0; i < expected[r].numel() && failures < 5; ++i) {
        double e = expected[r].at(i), a = actual[r].at(i);
        bool ok = (std::isnan(e) && std::isnan(a)) || e == a ||
                  std::abs(e - a) <= tol * std::max(1.0, std::abs(e));
        if (!ok) {
          ++failures;
          ADD_FAILURE() << "result " << r << " element " << i << ": expected "
                        << e << ", compiled " << a;
        }
      }
    }
  }
};

} // namespace testing
} // namespace kcc

#endif // KCC_TESTS_UNIT_CODEGEN_CODEGENTESTUTIL_H
