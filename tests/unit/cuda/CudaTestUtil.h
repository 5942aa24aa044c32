//===- CudaTestUtil.h - Reference train steps for the CUDA tests -*- C++
//-*-===//
//
// Traces one of the reference models, builds its @train_step (adam, sparse
// categorical crossentropy, accuracy) and makes seeded arguments for it.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_TESTS_UNIT_CUDA_CUDATESTUTIL_H
#define KCC_TESTS_UNIT_CUDA_CUDATESTUTIL_H

#include "engine/interpreter/Interpreter.h"
#include "frontend/Trace.h"
#include "frontend/models/ReferenceModels.h"
#include "kcc/kcc.h"
#include "passes/TrainStep.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include <memory>
#include <random>
#include <string>
#include <vector>

namespace kcc {
namespace testing {

struct TrainStepCase {
  std::string model; ///< "mlp", "cnn", "residual"
  int64_t batch = 16;
};

inline std::unique_ptr<Model> referenceModel(const std::string &name) {
  if (name == "mlp")
    return models::buildMlp(3);
  if (name == "cnn")
    return models::buildCnn(3);
  return models::buildResidual(3);
}

/// @train_step of `name`; the MLP ends in softmax, the others in logits.
inline mlir::OwningOpRef<mlir::ModuleOp> buildTrainStep(mlir::MLIRContext &ctx,
                                                        Model &model,
                                                        const std::string &name,
                                                        int64_t batch) {
  registerFrontendDialects(ctx);
  TraceOptions opts;
  opts.batch = batch;
  opts.training = true;
  auto module = traceForward(ctx, model, opts);
  if (!module)
    return module;
  TrainingConfig train; // adam, sparse_categorical_crossentropy
  train.loss.fromLogits = name != "mlp";
  train.metrics = {"accuracy"};
  mlir::PassManager pm(&ctx);
  buildTrainPipeline(pm, train);
  if (mlir::failed(pm.run(*module)))
    return {};
  return module;
}

/// Params from the model, zero optimizer state, iterations 0, lr 1e-3,
/// images in [0, 1) and labels i % 10.
inline std::vector<NDArray> trainStepArgs(mlir::func::FuncOp step,
                                          const TrainStepLayout &layout,
                                          Model &model) {
  std::vector<NDArray> args;
  std::vector<Parameter> params = model.parameters();
  std::mt19937 gen(5);
  std::uniform_real_distribution<double> pixel(0, 1);
  for (unsigned i = 0; i < step.getNumArguments(); ++i) {
    auto t = mlir::cast<mlir::RankedTensorType>(step.getArgument(i).getType());
    Shape shape(t.getShape().begin(), t.getShape().end());
    DType dt = dtypeOf(t.getElementType());
    if (i < layout.numParams) {
      args.push_back(params.at(i).value);
    } else if (i == layout.iterationsArg()) {
      args.push_back(NDArray::scalar(0, DType::I64));
    } else if (i == layout.learningRateArg()) {
      args.push_back(NDArray::scalar(1e-3, dt));
    } else if (i == layout.targetArg()) {
      NDArray y = NDArray::empty(shape, dt);
      for (int64_t k = 0; k < y.numel(); ++k)
        y.set(k, k % 10);
      args.push_back(y);
    } else if (i >= layout.firstInputArg()) {
      NDArray x = NDArray::empty(shape, dt);
      for (int64_t k = 0; k < x.numel(); ++k)
        x.set(k, pixel(gen));
      args.push_back(x);
    } else {
      args.push_back(NDArray::zeros(shape, dt));
    }
  }
  return args;
}

} // namespace testing
} // namespace kcc

#endif // KCC_TESTS_UNIT_CUDA_CUDATESTUTIL_H
