//===- GeometricParityTest.cpp - Keras's geometric augmentations ----------===//
//
// The fixtures of scripts/keras-fixtures/make_geometric_fixtures.py,
// written by Keras 3 on JAX:
//
//  - the images Keras's RandomRotation, RandomZoom and RandomTranslation
//    produce for fixed per-image draws (angles, zooms, shifts), every fill
//    mode and interpolation, against kcc's matrices from the same draws
//    sampled through kc.image_transform, eagerly and through the
//    interpreter and compiled code: 1e-5; Keras's rotation matrices: 1e-5;
//    RandomCrop's window at a fixed offset;
//  - geometric_predict.keras (the four layers with nonzero factors):
//    Keras's predict (the identity, RandomCrop's included) in both modes,
//    and training steps that draw alike compiled and interpreted.
//
// geometric.keras (the layers at factor 0, RandomCrop's deterministic
// training paths) is LayerParityTest's: 5 Adam steps against Keras's losses.
//
//===----------------------------------------------------------------------===//

#include "KerasFixtureUtil.h"

#include "engine/CompiledFunction.h"
#include "engine/interpreter/Interpreter.h"
#include "frontend/Ops.h"
#include "frontend/Trace.h"
#include "frontend/keras/KerasImporter.h"
#include "frontend/layers/GeometricTransforms.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "llvm/Support/JSON.h"
#include "gtest/gtest.h"

#include <cmath>
#include <cstdio>

using namespace kcc;
namespace json = llvm::json;

namespace {

const json::Object &geometricJson() {
  static const json::Value value = e2e::readFixtureJson("geometric.json");
  return *value.getAsObject();
}

/// Nested JSON lists as a float32 array of `shape`.
NDArray arrayOf(const json::Value &v, const Shape &shape) {
  std::vector<double> values;
  e2e::flattenNumbers(v, values);
  return NDArray::fromVector(shape, values, DType::F32);
}

/// A column [N, 1] of numbers.
NDArray columnOf(const std::vector<double> &v) {
  return NDArray::fromVector({static_cast<int64_t>(v.size()), 1}, v,
                             DType::F32);
}

/// The largest |a - b| over two arrays of one size.
double worstDifference(const NDArray &a, const NDArray &b) {
  EXPECT_EQ(a.numel(), b.numel());
  double worst = 0;
  for (int64_t i = 0; i < a.numel(); ++i)
    worst = std::max(worst, std::abs(a.at(i) - b.at(i)));
  return worst;
}

/// kcc's transforms for a case's draws, as the layer builds them.
Tensor transformsFor(const json::Object &c, int64_t height, int64_t width) {
  std::string layer = c.getString("layer")->str();
  if (layer == "RandomRotation") {
    std::vector<double> turns = e2e::numbers(*c.getArray("angles"));
    for (double &t : turns)
      t /= 360.0;
    return layers::rotationTransforms(Tensor(columnOf(turns)), height, width);
  }
  if (layer == "RandomZoom") {
    std::vector<double> zy, zx;
    e2e::flattenNumbers(*c.get("height_zoom"), zy);
    e2e::flattenNumbers(*c.get("width_zoom"), zx);
    return layers::zoomTransforms(Tensor(columnOf(zy)), Tensor(columnOf(zx)),
                                  height, width);
  }
  std::vector<double> shifts, rows, cols;
  e2e::flattenNumbers(*c.get("translations"), shifts);
  for (size_t i = 0; i + 1 < shifts.size(); i += 2)
    cols.push_back(shifts[i]), rows.push_back(shifts[i + 1]);
  return layers::translationTransforms(Tensor(columnOf(rows)),
                                       Tensor(columnOf(cols)));
}

/// @f(images, transforms) = kc.image_transform, interpreted and compiled.
std::pair<NDArray, NDArray> runTraced(const NDArray &images,
                                      const NDArray &transforms,
                                      const ops::ImageTransformSpec &spec) {
  mlir::MLIRContext ctx;
  registerFrontendDialects(ctx);
  mlir::OpBuilder b(&ctx);
  mlir::Location loc = b.getUnknownLoc();
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  auto imagesType = toTensorType(&ctx, images.shape(), DType::F32);
  auto transformsType = toTensorType(&ctx, transforms.shape(), DType::F32);
  auto f = b.create<mlir::func::FuncOp>(
      loc, "f", b.getFunctionType({imagesType, transformsType}, {imagesType}));
  mlir::Block *entry = f.addEntryBlock();
  b.setInsertionPointToStart(entry);
  {
    TraceContext tc(b);
    Tensor y = ops::imageTransform(
        Tensor::traced(entry->getArgument(0), images.shape(), DType::F32),
        Tensor::traced(entry->getArgument(1), transforms.shape(), DType::F32),
        spec);
    b.create<mlir::func::ReturnOp>(loc, y.value());
  }
  Interpreter interpreter;
  NDArray interpreted = interpreter.run(f, {images, transforms})[0];
  CompiledFunction compiled = CompiledFunction::compile(*module, "f");
  return {interpreted, compiled.run({images, transforms})[0]};
}

TEST(GeometricParity, TransformsMatchKerasForFixedDraws) {
  const json::Object &root = *geometricJson().getObject("transforms");
  NDArray images = arrayOf(*root.get("images"), {3, 7, 9, 2});
  double worst = 0, worstMatrix = 0;
  int cases = 0;
  for (const json::Value &v : *root.getArray("cases")) {
    const json::Object &c = *v.getAsObject();
    std::string layer = c.getString("layer")->str();
    SCOPED_TRACE(layer + " " + c.getString("fill_mode").value_or("").str() +
                 " " + c.getString("interpolation").value_or("").str());
    if (layer == "RandomCrop") {
      int64_t h = *c.getInteger("height"), w = *c.getInteger("width");
      NDArray t = NDArray::fromVector({1, 8},
                                      {1, 0, double(*c.getInteger("left")), 0,
                                       1, double(*c.getInteger("top")), 0, 0},
                                      DType::F32);
      ops::ImageTransformSpec spec;
      spec.interpolation = "nearest";
      spec.outHeight = h;
      spec.outWidth = w;
      Tensor out = ops::imageTransform(
          Tensor(images), ops::broadcastTo(Tensor(t), {3, 8}), spec);
      EXPECT_EQ(
          worstDifference(out.array(), arrayOf(*c.get("output"), {3, h, w, 2})),
          0.0);
      continue;
    }
    ops::ImageTransformSpec spec;
    spec.interpolation = c.getString("interpolation")->str();
    spec.fillMode = c.getString("fill_mode")->str();
    spec.fillValue = *c.getNumber("fill_value");
    Tensor transforms = transformsFor(c, 7, 9);
    if (layer == "RandomRotation")
      worstMatrix = std::max(
          worstMatrix, worstDifference(transforms.array(),
                                       arrayOf(*c.get("matrix"), {3, 8})));
    NDArray keras = arrayOf(*c.get("output"), {3, 7, 9, 2});
    NDArray eager =
        ops::imageTransform(Tensor(images), transforms, spec).array();
    auto [interpreted, compiled] = runTraced(images, transforms.array(), spec);
    for (const NDArray *got : {&eager, &interpreted, &compiled}) {
      double d = worstDifference(*got, keras);
      EXPECT_LE(d, 1e-5);
      worst = std::max(worst, d);
    }
    ++cases;
  }
  EXPECT_EQ(cases, 24);
  EXPECT_LE(worstMatrix, 1e-5);
  std::printf("[ keras ] geometric transforms: %d cases, worst image error "
              "%.2e (eager, interpreted, compiled), rotation matrices %.2e\n",
              cases, worst, worstMatrix);
}

/// Keras's predict through the four layers with nonzero factors (the
/// identity at inference); training draws the same in both modes
/// (counter-based), so the losses agree, and they move from step to step.
TEST(GeometricParity, PredictAsKerasAndDrawsAlikeInBothModes) {
  const json::Object &record = *geometricJson().getObject("geometric_predict");
  NDArray x, y;
  e2e::kerasBatch(x, y);
  std::vector<std::vector<double>> losses(2);
  for (ExecMode mode : {ExecMode::Compiled, ExecMode::Interpreted}) {
    keras::ImportedModel imported =
        keras::importKerasArchive(e2e::kerasFixture("geometric_predict.keras"));
    ASSERT_TRUE(imported.weightsLoaded);
    TrainingConfig config;
    config.mode = mode;
    Executable exe = e2e::jitQuietly(*imported.model, config);
    double worst =
        e2e::comparePredict(exe.predict(x), *record.getArray("initial_predict"),
                            "geometric_predict");
    std::printf("[ keras ] geometric_predict (%s): predict error %.2e\n",
                execModeName(mode), worst);
    for (int step = 0; step < 3; ++step)
      losses[mode == ExecMode::Compiled ? 0 : 1].push_back(exe.step(x, y).loss);
  }
  for (int step = 0; step < 3; ++step)
    EXPECT_NEAR(losses[0][step], losses[1][step],
                1e-5 * std::abs(losses[1][step]))
        << "step " << step;
}

} // namespace
