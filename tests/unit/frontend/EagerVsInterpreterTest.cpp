//===- EagerVsInterpreterTest.cpp - Eager calls vs interpreted @forward ---===//
//
// The same model and batch, run two ways: eagerly (op by op through the
// frontend) and by the interpreter on the traced @forward fed with
// model.parameters(). Both call the same f32 kernels in the same order, so
// they agree to rounding: we allow |a - b| <= 1e-6 * max(1, |b|).
//
//===----------------------------------------------------------------------===//

#include "engine/interpreter/Interpreter.h"
#include "frontend/models/ReferenceModels.h"
#include "kcc/kcc.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace kcc;

namespace {

NDArray images(int64_t batch, uint64_t seed) {
  NDArray a = NDArray::empty({batch, 28, 28, 1}, DType::F32);
  uint64_t s = seed;
  for (int64_t i = 0; i < a.numel(); ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    a.set(i, static_cast<double>(s >> 11) * 0x1.0p-53); // pixels in [0, 1)
  }
  return a;
}

void expectClose(const NDArray &eager, const NDArray &interp) {
  ASSERT_EQ(eager.shape(), interp.shape());
  ASSERT_EQ(eager.dtype(), interp.dtype());
  double worst = 0;
  for (int64_t i = 0; i < eager.numel(); ++i) {
    double a = eager.at(i), b = interp.at(i);
    worst = std::max(worst, std::abs(a - b) / std::max(1.0, std::abs(b)));
  }
  EXPECT_LE(worst, 1e-6);
}

void compare(Model &model, int64_t batch, bool training = false,
             int64_t step = 0) {
  NDArray x = images(batch, 77);
  Tensor eager = model(x, training, step);
  ASSERT_TRUE(eager.isConcrete());

  mlir::MLIRContext ctx;
  TraceOptions opts;
  opts.batch = batch;
  opts.training = training;
  auto module = traceForward(ctx, model, opts);
  auto func = module->lookupSymbol<mlir::func::FuncOp>("forward");
  std::vector<NDArray> args;
  for (Parameter &p : model.parameters())
    args.push_back(p.value);
  args.push_back(x);
  if (training && model.usesRandomness())
    args.push_back(NDArray::scalar(static_cast<double>(step), DType::I64));
  Interpreter interp;
  std::vector<NDArray> out = interp.run(func, args);
  ASSERT_EQ(out.size(), 1u);
  expectClose(eager.array(), out[0]);
  EXPECT_GT(interp.stats().opsDispatched, 0);
}

TEST(EagerVsInterpreter, Mlp) {
  auto m = models::buildMlp(11);
  compare(*m, 16);
}

TEST(EagerVsInterpreter, Cnn) {
  auto m = models::buildCnn(12);
  compare(*m, 4);
}

TEST(EagerVsInterpreter, Residual) {
  auto m = models::buildResidual(13);
  compare(*m, 8);
}

TEST(EagerVsInterpreter, DropoutTrainingUsesTheSameMask) {
  Sequential m({Input({28, 28, 1}), Flatten(), Dense(32, "relu"), Dropout(0.4),
                Dense(10)},
               "dropout_mlp", 14);
  compare(m, 8, /*training=*/true, /*step=*/3);
  compare(m, 8, /*training=*/false);
}

/// A transformer block: eager batch_matmul, causal mask and
/// LayerNormalization against the interpreted trace.
TEST(EagerVsInterpreter, AttentionBlock) {
  Tensor in = Input({28, 28, 1});
  Tensor x = Reshape({28, 28})(in);
  Tensor a =
      MultiHeadAttention(4, 5, 3, true, {}, /*useCausalMask=*/true)({x, x});
  Tensor h = LayerNormalization()(Add()({x, a}));
  h = EinsumDense("abc,cd->abd", {-1, 8}, "d", "relu")(h);
  Model m(in, Dense(10)(GlobalAveragePooling1D()(h)), "block", 13);
  compare(m, 3);
}

/// Rows of the image as 28 steps: a Bidirectional LSTM returning
/// sequences (the backward half put back in time order), a GRU without
/// reset_after going backwards, and a SimpleRNN's return_state outputs.
TEST(EagerVsInterpreter, RecurrentLayers) {
  Tensor in = Input({28, 28, 1});
  Tensor x = Reshape({28, 28})(in);
  RecurrentOptions sequences;
  sequences.returnSequences = true;
  Tensor h = Bidirectional(LSTM(6, "tanh", "sigmoid", true, "glorot_uniform",
                                "orthogonal", "zeros", true, sequences))(x);
  RecurrentOptions backwards = sequences;
  backwards.goBackwards = true;
  h = GRU(5, "tanh", "sigmoid", true, "glorot_uniform", "orthogonal", "zeros",
          backwards, /*resetAfter=*/false)(h);
  RecurrentOptions state;
  state.returnState = true;
  std::vector<Tensor> outs =
      SimpleRNN(4, "relu", true, "glorot_uniform", "orthogonal", "zeros", state)
          .call({h}, CallContext{});
  ASSERT_EQ(outs.size(), 2u);
  Model m(in, Dense(10)(Concatenate()({outs[0], outs[1]})), "recurrent", 14);
  compare(m, 3);
}

} // namespace
