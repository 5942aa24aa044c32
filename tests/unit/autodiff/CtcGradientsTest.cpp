//===- CtcGradientsTest.cpp - The ctc loss against Keras and differences --===//
//
// tests/fixtures/keras/ctc/fit.json's "values" (written by Keras 3 on JAX,
// see scripts/keras-fixtures/make_ctc_fixtures.py): logits [6, 6 steps, 5
// classes] and label sequences 4 wide with a repeated label, padding, no
// label, a zero inside the sequence and an alignment that cannot fit the
// steps; Keras's per-example loss and jax.grad of their sum. kcc's ctc
// (buildLoss, so kc.ctc_loss and its gradient rule) must give Keras's
// values and gradient, and its gradient must match central differences in
// float64, through the loss's reduction and through a weighted sum.
//
//===----------------------------------------------------------------------===//

#include "tests/unit/autodiff/GradCheck.h"

#include "engine/interpreter/Interpreter.h"
#include "passes/Losses.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"

#include "KerasValues.h"

#include "llvm/Support/JSON.h"
#include "gtest/gtest.h"

#include <cmath>
#include <cstdio>

using namespace kcc;
using namespace mlir;
namespace json = llvm::json;

namespace {

const json::Object &values() {
  static const json::Object empty;
  const json::Object *v = test::kerasValues("ctc/fit.json").getObject("values");
  return v ? *v : empty;
}

using test::numbers;

/// The fixture's examples `rows`: logits [rows, steps, classes] of `dtype`
/// and labels padded with zeros to the steps (as kcc reads them), int32.
struct Batch {
  NDArray logits, labels;
  Shape shape;
};

Batch fixtureBatch(const std::vector<int64_t> &rows, DType dtype) {
  std::vector<double> shapeValues = numbers(*values().getArray("shape"));
  int64_t steps = static_cast<int64_t>(shapeValues[1]);
  int64_t classes = static_cast<int64_t>(shapeValues[2]);
  int64_t width = *values().getInteger("label_width");
  std::vector<double> logits = numbers(*values().getArray("logits"));
  std::vector<double> labels = numbers(*values().getArray("labels"));
  std::vector<double> x, y;
  for (int64_t r : rows) {
    x.insert(x.end(), logits.begin() + r * steps * classes,
             logits.begin() + (r + 1) * steps * classes);
    for (int64_t t = 0; t < steps; ++t)
      y.push_back(t < width ? labels[r * width + t] : 0.0);
  }
  int64_t n = static_cast<int64_t>(rows.size());
  Batch b;
  b.shape = {n, steps, classes};
  b.logits = NDArray::fromVector(b.shape, x, dtype);
  b.labels = NDArray::fromVector({n, steps}, y, DType::I32);
  return b;
}

/// @f(logits, labels) -> `loss` over the batch, built by buildLoss.
OwningOpRef<ModuleOp> lossModule(MLIRContext &ctx, const LossConfig &loss,
                                 const Shape &shape, Type ft) {
  OpBuilder b(&ctx);
  Location loc = b.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  auto pred = RankedTensorType::get(shape, ft);
  RankedTensorType target = targetType(loss.kind, pred);
  b.setInsertionPointToEnd(module->getBody());
  auto f = b.create<func::FuncOp>(
      loc, "f",
      b.getFunctionType({pred, target}, RankedTensorType::get({}, ft)));
  Block *body = f.addEntryBlock();
  b.setInsertionPointToEnd(body);
  b.create<func::ReturnOp>(
      loc, buildLoss(b, loc, loss, body->getArgument(0), body->getArgument(1)));
  return module;
}

constexpr int64_t kInfeasible = 4;

TEST(CtcGradients, PerExampleLossAndGradientMatchKeras) {
  ASSERT_NE(values().getArray("loss"), nullptr)
      << "cannot read ctc/fit.json's values";
  std::vector<double> keras = numbers(*values().getArray("loss"));
  std::vector<double> kerasGrad = numbers(*values().getArray("grad"));
  std::vector<int64_t> rows;
  for (int64_t r = 0; r < static_cast<int64_t>(keras.size()); ++r)
    rows.push_back(r);
  // float32 as Keras computes, then float64.
  for (DType dtype : {DType::F32, DType::F64}) {
    SCOPED_TRACE(dtypeName(dtype));
    Batch b = fixtureBatch(rows, dtype);
    MLIRContext ctx;
    test::loadDialects(ctx);
    // The per-example values: kc.ctc_loss alone, and its gradient by a
    // seed of ones (the gradient of the sum).
    std::string t = dtype == DType::F32 ? "f32" : "f64";
    std::string n = std::to_string(b.shape[0]);
    std::string x = "tensor<" + n + "x" + std::to_string(b.shape[1]) + "x" +
                    std::to_string(b.shape[2]) + "x" + t + ">";
    std::string y = "tensor<" + n + "x" + std::to_string(b.shape[1]) + "xi32>";
    std::string v = "tensor<" + n + "x" + t + ">";
    OwningOpRef<ModuleOp> module =
        test::parse(ctx, "func.func @f(%x: " + x + ", %y: " + y + ", %g: " + v +
                             ") -> (" + v + ", " + x +
                             ") {\n"
                             "  %l = kc.ctc_loss %x, %y : " +
                             x + ", " + y + " -> " + v +
                             "\n  %d = kc.ctc_loss_grad %x, %y, %g : " + x +
                             ", " + y + ", " + v + " -> " + x +
                             "\n  return %l, %d : " + v + ", " + x + "\n}");
    ASSERT_TRUE(module);
    NDArray ones = NDArray::fromVector(
        {b.shape[0]}, std::vector<double>(b.shape[0], 1.0), dtype);
    Interpreter interpreter;
    std::vector<NDArray> out = interpreter.run(
        module->lookupSymbol<func::FuncOp>("f"), {b.logits, b.labels, ones});
    double worstLoss = 0, worstGrad = 0;
    for (size_t r = 0; r < keras.size(); ++r) {
      double rel = std::abs(out[0].at(r) - keras[r]) / std::abs(keras[r]);
      worstLoss = std::max(worstLoss, rel);
      EXPECT_LE(rel, 2e-6) << "example " << r << ": Keras " << keras[r]
                           << ", kcc " << out[0].at(r);
    }
    // The alignment that cannot fit: Keras's large finite loss, not inf.
    EXPECT_GT(out[0].at(kInfeasible), 1e5);
    EXPECT_TRUE(std::isfinite(out[0].at(kInfeasible)));
    int64_t perExample = b.shape[1] * b.shape[2];
    for (int64_t i = 0; i < out[1].numel(); ++i) {
      // Keras's float32 sums of terms near -1e5 (resolution 0.008) set the
      // infeasible example's posterior; float64 computes it exactly.
      if (dtype == DType::F64 && i / perExample == kInfeasible)
        continue;
      double err = std::abs(out[1].at(i) - kerasGrad[i]);
      worstGrad = std::max(worstGrad, err);
      EXPECT_LE(err, 2e-6) << "gradient element " << i << ": Keras "
                           << kerasGrad[i] << ", kcc " << out[1].at(i);
    }
    std::printf("[ ctc ] %s: worst loss rel error vs Keras %.1e, worst "
                "gradient error %.1e\n",
                t.c_str(), worstLoss, worstGrad);
  }
}

TEST(CtcGradients, GradientMatchesCentralDifferences) {
  ASSERT_NE(values().getArray("loss"), nullptr)
      << "cannot read ctc/fit.json's values";
  // Every feasible example (the infeasible one's loss, ~1e5, leaves
  // central differences too few digits); repeats, padding, no label and a
  // zero inside among them.
  Batch b = fixtureBatch({0, 1, 2, 3, 5}, DType::F64);
  for (const char *text : {"ctc", "CTC(reduction=sum)"}) {
    SCOPED_TRACE(text);
    MLIRContext ctx;
    test::loadDialects(ctx);
    LossConfig loss = llvm::cantFail(LossConfig::parse(text));
    ASSERT_EQ(loss.kind, LossKind::CTC);
    OwningOpRef<ModuleOp> module =
        lossModule(ctx, loss, b.shape, Float64Type::get(&ctx));
    ASSERT_TRUE(succeeded(verify(*module)));
    test::GradCheckResult grad =
        test::checkGradients(*module, {b.logits, b.labels}, /*numWrt=*/1);
    EXPECT_GRADIENTS_MATCH(grad);
    std::printf("[ ctc ] %s: worst gradient error vs central differences "
                "%.1e over %lld elements\n",
                text, grad.maxRelError,
                static_cast<long long>(grad.elementsChecked));
  }
  // A weighted sum of the per-example losses: each example's gradient
  // scales by its own output gradient.
  std::string x = test::f64Tensor(b.shape), v = test::f64Tensor({5});
  MLIRContext ctx;
  OwningOpRef<ModuleOp> weighted = test::parse(
      ctx, "func.func @f(%x: " + x + ", %y: tensor<5x6xi32>, %r: " + v +
               ") -> tensor<f64> {\n"
               "  %l = kc.ctc_loss %x, %y : " +
               x + ", tensor<5x6xi32> -> " + v +
               "\n"
               "  %w = kc.mul %l, %r : " +
               v +
               "\n"
               "  %s = kc.reduce_sum %w {axes = array<i64: 0>} : " +
               v +
               " -> tensor<f64>\n"
               "  return %s : tensor<f64>\n}");
  ASSERT_TRUE(weighted);
  EXPECT_GRADIENTS_MATCH(test::checkGradients(
      *weighted, {b.logits, b.labels, test::uniform({5}, -1, 1, 31)},
      /*numWrt=*/1));
}

} // namespace
