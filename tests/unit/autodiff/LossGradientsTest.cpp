//===- LossGradientsTest.cpp - Every loss against Keras and differences ---===//
//
// tests/fixtures/keras/losses/values.json (written by Keras 3 in float64,
// see scripts/keras-fixtures/make_loss_fixtures.py) holds, per case, a
// loss with its arguments, a 4x3 prediction and target, optional sample
// weights and Keras's loss value. Each case builds kcc's loss from its text
// form into @f(pred, target[, weight]) with kcc::buildLoss, checks the value
// the interpreter computes against Keras's (to Keras's float32 means), and
// the gradient with respect to the prediction against central differences,
// in float64.
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

const json::Object &fixture() {
  return test::kerasValues("losses/values.json");
}

using test::numbers;

/// @f(pred, target[, weight]) -> the loss `loss`, built by buildLoss.
OwningOpRef<ModuleOp> lossModule(MLIRContext &ctx, const LossConfig &loss,
                                 const Shape &shape, bool weighted) {
  OpBuilder b(&ctx);
  Location loc = b.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  auto pred = RankedTensorType::get(shape, b.getF64Type());
  RankedTensorType target = targetType(loss.kind, pred);
  llvm::SmallVector<Type> args = {pred, target};
  if (weighted)
    args.push_back(RankedTensorType::get({shape[0]}, b.getF64Type()));
  auto scalar = RankedTensorType::get({}, b.getF64Type());
  b.setInsertionPointToEnd(module->getBody());
  auto f = b.create<func::FuncOp>(loc, "f", b.getFunctionType(args, scalar));
  Block *body = f.addEntryBlock();
  b.setInsertionPointToEnd(body);
  Value weight = weighted ? body->getArgument(2) : Value();
  Value value = buildLoss(b, loc, loss, body->getArgument(0),
                          body->getArgument(1), weight);
  b.create<func::ReturnOp>(loc, value);
  return module;
}

TEST(LossGradients, EveryLossMatchesKerasAndCentralDifferences) {
  const json::Array *cases = fixture().getArray("cases");
  ASSERT_NE(cases, nullptr) << "cannot read losses/values.json";
  const json::Array *shapeJson = fixture().getArray("shape");
  Shape shape;
  for (double d : numbers(*shapeJson))
    shape.push_back(static_cast<int64_t>(d));
  double worstValue = 0, worstGradient = 0;
  for (const json::Value &c : *cases) {
    const json::Object &o = *c.getAsObject();
    std::string name = o.getString("name")->str();
    SCOPED_TRACE(name);
    llvm::Expected<LossConfig> loss = LossConfig::parse(*o.getString("kcc"));
    ASSERT_TRUE(static_cast<bool>(loss)) << llvm::toString(loss.takeError());
    ASSERT_FALSE(static_cast<bool>(loss->validate()));
    bool weighted = o.getArray("weights") != nullptr;
    bool sparse = *o.getBoolean("sparse");

    MLIRContext ctx;
    test::loadDialects(ctx);
    OwningOpRef<ModuleOp> module = lossModule(ctx, *loss, shape, weighted);
    ASSERT_TRUE(succeeded(verify(*module)));
    std::vector<NDArray> inputs = {
        NDArray::fromVector(shape, numbers(*o.getArray("pred")), DType::F64)};
    std::vector<double> target = numbers(*o.getArray("target"));
    inputs.push_back(sparse
                         ? NDArray::fromVector({shape[0]}, target, DType::I32)
                         : NDArray::fromVector(shape, target, DType::F64));
    if (weighted)
      inputs.push_back(NDArray::fromVector(
          {shape[0]}, numbers(*o.getArray("weights")), DType::F64));

    Interpreter interpreter;
    double value =
        interpreter.run(module->lookupSymbol<func::FuncOp>("f"), inputs)[0].at(
            0);
    double keras = *o.getNumber("value");
    double err = std::abs(value - keras) / std::max(1.0, std::abs(keras));
    worstValue = std::max(worstValue, err);
    // Keras's ops.mean accumulates in float32 even for float64 inputs
    // (keras/src/backend/jax/numpy.py), so its values hold ~7 digits.
    EXPECT_LE(err, 2e-7) << "Keras " << keras << ", kcc " << value;

    test::GradCheckResult grad =
        test::checkGradients(*module, inputs, /*numWrt=*/1);
    EXPECT_TRUE(grad.built);
    EXPECT_GT(grad.elementsChecked, 0);
    EXPECT_LT(grad.maxRelError, test::kGradTolerance) << grad.worst;
    worstGradient = std::max(worstGradient, grad.maxRelError);
  }
  std::printf("[ losses ] %zu cases: worst value error vs Keras %.1e, worst "
              "gradient error vs central differences %.1e\n",
              cases->size(), worstValue, worstGradient);
}

} // namespace
