//===- InterpreterTestUtil.h - Shared fixture for interpreter tests -*- C++
//-*-===//
//
// Parses a .mlir snippet (with `$T` standing for the float element type, so
// one snippet serves f32 and f64), runs its first function and compares the
// results with references the tests compute with plain loops.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_TESTS_UNIT_INTERPRETER_INTERPRETERTESTUTIL_H
#define KCC_TESTS_UNIT_INTERPRETER_INTERPRETERTESTUTIL_H

#include "engine/interpreter/Interpreter.h"
#include "ir/KcDialect.h"
#include "runtime/Error.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
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

/// `text` with every `$T` replaced by `type` ("f32" or "f64").
inline std::string withType(std::string text, const std::string &type) {
  for (size_t at = text.find("$T"); at != std::string::npos;
       at = text.find("$T", at + type.size()))
    text.replace(at, 2, type);
  return text;
}

/// Uniform values in [lo, hi) from a fixed seed, so failures reproduce.
inline std::vector<double> randomValues(int64_t n, double lo = -1.0,
                                        double hi = 1.0, unsigned seed = 42) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> values(n);
  for (double &v : values)
    v = dist(gen);
  return values;
}

class InterpreterFixture : public ::testing::Test {
protected:
  InterpreterFixture() {
    context.loadDialect<mlir::func::FuncDialect, mlir::arith::ArithDialect,
                        kc::KcDialect>();
  }

  /// Parses `text` (a module of one or more functions) and returns the first
  /// function; fails the test if it does not parse.
  mlir::func::FuncOp parse(const std::string &text) {
    module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
    EXPECT_TRUE(module) << "could not parse:\n" << text;
    if (!module)
      return {};
    auto funcs = module->getOps<mlir::func::FuncOp>();
    return funcs.empty() ? mlir::func::FuncOp() : *funcs.begin();
  }

  /// Parses and runs; an Error becomes a test failure with its message.
  std::vector<NDArray> run(const std::string &text,
                           const std::vector<NDArray> &args) {
    mlir::func::FuncOp func = parse(text);
    if (!func)
      return {};
    try {
      return interpreter.run(func, args);
    } catch (const Error &e) {
      ADD_FAILURE() << "kcc::Error: " << e.what();
      return {};
    }
  }

  /// The message of the kcc::Error that running `func` throws ("" if none).
  std::string errorOf(mlir::func::FuncOp func,
                      const std::vector<NDArray> &args) {
    try {
      interpreter.run(func, args);
    } catch (const Error &e) {
      return e.what();
    }
    return "";
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  Interpreter interpreter;
};

/// Expects `actual` to hold `expected` (shape and values) within a relative
/// tolerance (absolute near zero).
inline void expectNear(const NDArray &actual, const Shape &shape,
                       const std::vector<double> &expected, double tolerance,
                       const std::string &what = "") {
  ASSERT_TRUE(actual.defined()) << what;
  ASSERT_EQ(actual.shape(), shape) << what;
  ASSERT_EQ(static_cast<size_t>(actual.numel()), expected.size()) << what;
  for (size_t i = 0; i < expected.size(); ++i) {
    double bound = tolerance * std::max(1.0, std::fabs(expected[i]));
    ASSERT_NEAR(actual.at(i), expected[i], bound)
        << what << " at flat index " << i;
  }
}

/// The tolerance of one element type: f32 sums round at about 1e-7.
inline double toleranceFor(DType dtype) {
  return dtype == DType::F64 ? 1e-12 : 2e-5;
}

} // namespace testing
} // namespace kcc

#endif // KCC_TESTS_UNIT_INTERPRETER_INTERPRETERTESTUTIL_H
