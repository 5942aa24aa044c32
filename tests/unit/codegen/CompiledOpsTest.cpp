//===- CompiledOpsTest.cpp - Compiled kc ops against the interpreter ------===//
//
// Each op family compiled through kc-cpu-pipeline and the JIT, compared with
// the interpreter (the numerics oracle) on random inputs, f32 and f64.
//
//===----------------------------------------------------------------------===//

#include "tests/unit/codegen/CodegenTestUtil.h"

using namespace kcc;
using namespace kcc::testing;

namespace {

TEST_P(CompiledVsInterpreted, ElementwiseChainWithBroadcast) {
  check(R"mlir(
func.func @f(%x: tensor<4x37x$T>, %b: tensor<37x$T>, %c: tensor<4x1x$T>)
    -> (tensor<4x37x$T>, tensor<4x37x$T>, tensor<4x37x$T>) {
  %bb = kc.broadcast_to %b : tensor<37x$T> -> tensor<4x37x$T>
  %cb = kc.broadcast_to %c : tensor<4x1x$T> -> tensor<4x37x$T>
  %0 = kc.add %x, %bb : tensor<4x37x$T>
  %1 = kc.mul %0, %cb : tensor<4x37x$T>
  %2 = kc.sub %1, %x : tensor<4x37x$T>
  %3 = kc.max %2, %bb : tensor<4x37x$T>
  %4 = kc.min %3, %cb : tensor<4x37x$T>
  %5 = kc.relu %1 : tensor<4x37x$T>
  %6 = kc.sigmoid %2 : tensor<4x37x$T>
  %7 = kc.tanh %3 : tensor<4x37x$T>
  %8 = kc.gelu %4 : tensor<4x37x$T>
  %9 = kc.gelu %x {approximate = true} : tensor<4x37x$T>
  %a = kc.abs %x : tensor<4x37x$T>
  %e = kc.exp %a : tensor<4x37x$T>
  %l = kc.log %e : tensor<4x37x$T>
  %s = kc.sqrt %e : tensor<4x37x$T>
  %r = kc.rsqrt %e : tensor<4x37x$T>
  %p = kc.pow %e, %x : tensor<4x37x$T>
  %d = kc.div %p, %s : tensor<4x37x$T>
  %n = kc.neg %d : tensor<4x37x$T>
  %t0 = kc.add %5, %6 : tensor<4x37x$T>
  %t1 = kc.add %7, %8 : tensor<4x37x$T>
  %t2 = kc.add %9, %l : tensor<4x37x$T>
  %t3 = kc.add %r, %n : tensor<4x37x$T>
  %u = kc.add %t2, %t3 : tensor<4x37x$T>
  return %t0, %t1, %u : tensor<4x37x$T>, tensor<4x37x$T>, tensor<4x37x$T>
}
)mlir");
}

TEST_P(CompiledVsInterpreted, Reductions) {
  check(R"mlir(
func.func @f(%x: tensor<3x5x7x$T>) -> (tensor<3x1x7x$T>, tensor<5x$T>, tensor<$T>, tensor<1x1x1x$T>) {
  %0 = kc.reduce_sum %x {axes = array<i64: 1>, keepdims = true} : tensor<3x5x7x$T> -> tensor<3x1x7x$T>
  %1 = kc.reduce_max %x {axes = array<i64: 0, 2>} : tensor<3x5x7x$T> -> tensor<5x$T>
  %2 = kc.reduce_mean %x {axes = array<i64: 0, 1, 2>} : tensor<3x5x7x$T> -> tensor<$T>
  %3 = kc.reduce_mean %x {axes = array<i64: 0, 1, 2>, keepdims = true} : tensor<3x5x7x$T> -> tensor<1x1x1x$T>
  return %0, %1, %2, %3 : tensor<3x1x7x$T>, tensor<5x$T>, tensor<$T>, tensor<1x1x1x$T>
}
)mlir");
}

TEST_P(CompiledVsInterpreted, SoftmaxAndLogSoftmax) {
  check(R"mlir(
func.func @f(%x: tensor<6x10x$T>) -> (tensor<6x10x$T>, tensor<6x10x$T>, tensor<6x10x$T>) {
  %0 = kc.softmax %x : tensor<6x10x$T>
  %1 = kc.log_softmax %x {axis = 1 : i64} : tensor<6x10x$T>
  %2 = kc.softmax %x {axis = 0 : i64} : tensor<6x10x$T>
  return %0, %1, %2 : tensor<6x10x$T>, tensor<6x10x$T>, tensor<6x10x$T>
}
)mlir",
        {}, -1, -20, 20);
}

TEST_P(CompiledVsInterpreted, TransposeReshapeConcatSlice) {
  check(R"mlir(
func.func @f(%x: tensor<2x3x4x$T>, %y: tensor<2x5x4x$T>)
    -> (tensor<3x2x4x$T>, tensor<6x4x$T>, tensor<2x8x4x$T>, tensor<2x3x2x$T>, tensor<3x4x$T>) {
  %t = kc.transpose %x {perm = array<i64: 1, 0, 2>} : tensor<2x3x4x$T> -> tensor<3x2x4x$T>
  %r = kc.reshape %t : tensor<3x2x4x$T> -> tensor<6x4x$T>
  %c = kc.concat %x, %y {axis = 1 : i64} : (tensor<2x3x4x$T>, tensor<2x5x4x$T>) -> tensor<2x8x4x$T>
  %s = kc.slice %c {start = array<i64: 0, 1, 0>, limit = array<i64: 2, 7, 4>, strides = array<i64: 1, 2, 2>} : tensor<2x8x4x$T> -> tensor<2x3x2x$T>
  %e = kc.exp %s : tensor<2x3x2x$T>
  %q = kc.reshape %e : tensor<2x3x2x$T> -> tensor<12x$T>
  %u = kc.reshape %q : tensor<12x$T> -> tensor<4x3x1x1x$T>
  %v = kc.reshape %u : tensor<4x3x1x1x$T> -> tensor<3x4x$T>
  return %t, %r, %c, %s, %v : tensor<3x2x4x$T>, tensor<6x4x$T>, tensor<2x8x4x$T>, tensor<2x3x2x$T>, tensor<3x4x$T>
}
)mlir");
}

TEST_P(CompiledVsInterpreted, MatmulAllTransposes) {
  check(R"mlir(
func.func @f(%a: tensor<9x13x$T>, %b: tensor<13x7x$T>, %at: tensor<13x9x$T>, %bt: tensor<7x13x$T>)
    -> (tensor<9x7x$T>, tensor<9x7x$T>, tensor<9x7x$T>, tensor<9x7x$T>) {
  %0 = kc.matmul %a, %b : tensor<9x13x$T>, tensor<13x7x$T> -> tensor<9x7x$T>
  %1 = kc.matmul %at, %b {transpose_lhs = true} : tensor<13x9x$T>, tensor<13x7x$T> -> tensor<9x7x$T>
  %2 = kc.matmul %a, %bt {transpose_rhs = true} : tensor<9x13x$T>, tensor<7x13x$T> -> tensor<9x7x$T>
  %3 = kc.matmul %at, %bt {transpose_lhs = true, transpose_rhs = true} : tensor<13x9x$T>, tensor<7x13x$T> -> tensor<9x7x$T>
  return %0, %1, %2, %3 : tensor<9x7x$T>, tensor<9x7x$T>, tensor<9x7x$T>, tensor<9x7x$T>
}
)mlir");
}

TEST_P(CompiledVsInterpreted, MatmulOfSlice) {
  // The lhs is a strided view: bufferization must hand the library a
  // contiguous copy.
  check(R"mlir(
func.func @f(%a: tensor<8x12x$T>, %b: tensor<6x5x$T>) -> tensor<4x5x$T> {
  %s = kc.slice %a {start = array<i64: 0, 0>, limit = array<i64: 8, 12>, strides = array<i64: 2, 2>} : tensor<8x12x$T> -> tensor<4x6x$T>
  %0 = kc.matmul %s, %b : tensor<4x6x$T>, tensor<6x5x$T> -> tensor<4x5x$T>
  return %0 : tensor<4x5x$T>
}
)mlir");
}

TEST_P(CompiledVsInterpreted, Conv2DAndBackprops) {
  check(R"mlir(
func.func @f(%x: tensor<2x9x9x3x$T>, %w: tensor<3x3x3x4x$T>, %dy: tensor<2x5x5x4x$T>, %dyv: tensor<2x7x7x4x$T>)
    -> (tensor<2x5x5x4x$T>, tensor<2x7x7x4x$T>, tensor<2x9x9x3x$T>, tensor<3x3x3x4x$T>, tensor<2x9x9x3x$T>, tensor<3x3x3x4x$T>) {
  %0 = kc.conv2d %x, %w {padding = #kc<padding same>, strides = array<i64: 2, 2>} : tensor<2x9x9x3x$T>, tensor<3x3x3x4x$T> -> tensor<2x5x5x4x$T>
  %1 = kc.conv2d %x, %w : tensor<2x9x9x3x$T>, tensor<3x3x3x4x$T> -> tensor<2x7x7x4x$T>
  %2 = kc.conv2d_backprop_input %dy, %w {padding = #kc<padding same>, strides = array<i64: 2, 2>} : tensor<2x5x5x4x$T>, tensor<3x3x3x4x$T> -> tensor<2x9x9x3x$T>
  %3 = kc.conv2d_backprop_filter %x, %dy {padding = #kc<padding same>, strides = array<i64: 2, 2>} : tensor<2x9x9x3x$T>, tensor<2x5x5x4x$T> -> tensor<3x3x3x4x$T>
  %4 = kc.conv2d_backprop_input %dyv, %w : tensor<2x7x7x4x$T>, tensor<3x3x3x4x$T> -> tensor<2x9x9x3x$T>
  %5 = kc.conv2d_backprop_filter %x, %dyv : tensor<2x9x9x3x$T>, tensor<2x7x7x4x$T> -> tensor<3x3x3x4x$T>
  return %0, %1, %2, %3, %4, %5 : tensor<2x5x5x4x$T>, tensor<2x7x7x4x$T>, tensor<2x9x9x3x$T>, tensor<3x3x3x4x$T>, tensor<2x9x9x3x$T>, tensor<3x3x3x4x$T>
}
)mlir");
}

TEST_P(CompiledVsInterpreted, PoolingAndGrads) {
  check(R"mlir(
func.func @f(%x: tensor<2x7x7x3x$T>, %dy: tensor<2x4x4x3x$T>)
    -> (tensor<2x4x4x3x$T>, tensor<2x4x4x3x$T>, tensor<2x7x7x3x$T>, tensor<2x7x7x3x$T>, tensor<2x3x3x3x$T>) {
  %0 = kc.max_pool2d %x {window = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = #kc<padding same>} : tensor<2x7x7x3x$T> -> tensor<2x4x4x3x$T>
  %1 = kc.avg_pool2d %x {window = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = #kc<padding same>} : tensor<2x7x7x3x$T> -> tensor<2x4x4x3x$T>
  %2 = kc.max_pool2d_grad %x, %dy {window = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = #kc<padding same>} : tensor<2x7x7x3x$T>, tensor<2x4x4x3x$T> -> tensor<2x7x7x3x$T>
  %3 = kc.avg_pool2d_grad %dy {window = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = #kc<padding same>} : tensor<2x4x4x3x$T> -> tensor<2x7x7x3x$T>
  %4 = kc.max_pool2d %x {window = array<i64: 3, 3>, strides = array<i64: 2, 2>} : tensor<2x7x7x3x$T> -> tensor<2x3x3x3x$T>
  return %0, %1, %2, %3, %4 : tensor<2x4x4x3x$T>, tensor<2x4x4x3x$T>, tensor<2x7x7x3x$T>, tensor<2x7x7x3x$T>, tensor<2x3x3x3x$T>
}
)mlir");
}

TEST_P(CompiledVsInterpreted, OneHotArgmaxCompareSelectCast) {
  check(R"mlir(
func.func @f(%l: tensor<6xi32>, %x: tensor<6x10x$T>, %y: tensor<6x10x$T>, %i: tensor<6xi64>)
    -> (tensor<6x10x$T>, tensor<6xi64>, tensor<6x10xi1>, tensor<6x10x$T>, tensor<6x10xi32>, tensor<6xi1>, tensor<6x$T>, tensor<10xi64>) {
  %oh = kc.one_hot %l : tensor<6xi32> -> tensor<6x10x$T>
  %am = kc.argmax %x {axis = 1 : i64} : tensor<6x10x$T> -> tensor<6xi64>
  %gt = kc.compare gt, %x, %y : tensor<6x10x$T> -> tensor<6x10xi1>
  %sel = kc.select %gt, %x, %y : tensor<6x10xi1>, tensor<6x10x$T>
  %sc = kc.mul %x, %x : tensor<6x10x$T>
  %ci = kc.cast %sc : tensor<6x10x$T> -> tensor<6x10xi32>
  %eq = kc.compare eq, %am, %i : tensor<6xi64> -> tensor<6xi1>
  %acc = kc.cast %eq : tensor<6xi1> -> tensor<6x$T>
  %a0 = kc.argmax %x {axis = 0 : i64} : tensor<6x10x$T> -> tensor<10xi64>
  return %oh, %am, %gt, %sel, %ci, %eq, %acc, %a0 : tensor<6x10x$T>, tensor<6xi64>, tensor<6x10xi1>, tensor<6x10x$T>, tensor<6x10xi32>, tensor<6xi1>, tensor<6x$T>, tensor<10xi64>
}
)mlir",
        {}, -1, -3, 3);
}

/// ctc_loss and its gradient call the interpreter's kernel: bit for bit.
/// Random labels in [0, 5) of width 7 over 7 steps: some sequences cannot
/// align (Keras's large finite loss), zeros inside sequences.
TEST_P(CompiledVsInterpreted, CtcLossBitIdentical) {
  check(R"mlir(
func.func @f(%x: tensor<3x7x5x$T>, %l: tensor<3x7xi32>, %g: tensor<3x$T>)
    -> (tensor<3x$T>, tensor<3x7x5x$T>) {
  %0 = kc.ctc_loss %x, %l : tensor<3x7x5x$T>, tensor<3x7xi32> -> tensor<3x$T>
  %1 = kc.ctc_loss_grad %x, %l, %g : tensor<3x7x5x$T>, tensor<3x7xi32>, tensor<3x$T> -> tensor<3x7x5x$T>
  return %0, %1 : tensor<3x$T>, tensor<3x7x5x$T>
}
)mlir",
        {}, /*tol=*/0, -3, 3, /*intRange=*/5);
}

TEST_P(CompiledVsInterpreted, RandomUniformBitIdentical) {
  check(R"mlir(
func.func @f(%step: tensor<i64>) -> (tensor<5x33x$T>, tensor<7x$T>) {
  %0 = kc.random_uniform %step {seed = 7 : i64} : tensor<i64> -> tensor<5x33x$T>
  %1 = kc.random_uniform %step {seed = 123456789 : i64} : tensor<i64> -> tensor<7x$T>
  return %0, %1 : tensor<5x33x$T>, tensor<7x$T>
}
)mlir",
        {NDArray::scalar(41, DType::I64)}, /*tol=*/0);
}

TEST_P(CompiledVsInterpreted, ConstantsAndPassThrough) {
  // A result that is an argument, a constant and a view of an argument:
  // each must land in its own caller buffer.
  check(R"mlir(
func.func @f(%x: tensor<2x3x$T>) -> (tensor<2x3x$T>, tensor<2x3x$T>, tensor<6x$T>, tensor<2x3x$T>) {
  %c = kc.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3x$T>
  %r = kc.reshape %x : tensor<2x3x$T> -> tensor<6x$T>
  %a = kc.add %x, %c : tensor<2x3x$T>
  return %x, %c, %r, %a : tensor<2x3x$T>, tensor<2x3x$T>, tensor<6x$T>, tensor<2x3x$T>
}
)mlir");
}

TEST_P(CompiledVsInterpreted, MlpForward) {
  check(R"mlir(
func.func @f(%w1: tensor<20x16x$T>, %b1: tensor<16x$T>, %w2: tensor<16x10x$T>, %b2: tensor<10x$T>, %x: tensor<8x20x$T>)
    -> tensor<8x10x$T> {
  %0 = kc.matmul %x, %w1 : tensor<8x20x$T>, tensor<20x16x$T> -> tensor<8x16x$T>
  %1 = kc.broadcast_to %b1 : tensor<16x$T> -> tensor<8x16x$T>
  %2 = kc.add %0, %1 : tensor<8x16x$T>
  %3 = kc.relu %2 : tensor<8x16x$T>
  %4 = kc.matmul %3, %w2 : tensor<8x16x$T>, tensor<16x10x$T> -> tensor<8x10x$T>
  %5 = kc.broadcast_to %b2 : tensor<10x$T> -> tensor<8x10x$T>
  %6 = kc.add %4, %5 : tensor<8x10x$T>
  %7 = kc.softmax %6 : tensor<8x10x$T>
  return %7 : tensor<8x10x$T>
}
)mlir");
}

INSTANTIATE_TEST_SUITE_P(Types, CompiledVsInterpreted,
                         ::testing::Values("f32", "f64"),
                         [](const auto &info) { return info.param; });

//===----------------------------------------------------------------------===//
// The CompiledFunction API itself
//===----------------------------------------------------------------------===//

class CompiledFunctionTest : public CodegenFixture {};

const char *kAddOne = R"mlir(
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = kc.constant dense<1.0> : tensor<4xf32>
  %0 = kc.add %x, %c : tensor<4xf32>
  return %0 : tensor<4xf32>
}
)mlir";

TEST_F(CompiledFunctionTest, RunIntoReusesOutputsAndLeavesArgsAlone) {
  ASSERT_TRUE(parseText(kAddOne));
  CompiledFunction fn = CompiledFunction::compile(*module, "f");
  NDArray x = NDArray::fromVector({4}, {1, 2, 3, 4});
  std::vector<NDArray> outs = {NDArray::zeros({4}, DType::F32)};
  void *buffer = outs[0].rawData();
  fn.runInto({x}, outs);
  fn.runInto({outs[0].clone()}, outs);
  EXPECT_EQ(outs[0].rawData(), buffer);
  EXPECT_EQ(outs[0].toVector(), (std::vector<double>{3, 4, 5, 6}));
  EXPECT_EQ(x.toVector(), (std::vector<double>{1, 2, 3, 4}));
}

TEST_F(CompiledFunctionTest, WrongArgumentsThrow) {
  ASSERT_TRUE(parseText(kAddOne));
  CompiledFunction fn = CompiledFunction::compile(*module, "f");
  EXPECT_THROW(fn.run({}), Error);
  EXPECT_THROW(fn.run({NDArray::zeros({5}, DType::F32)}), Error);
  EXPECT_THROW(fn.run({NDArray::zeros({4}, DType::F64)}), Error);
}

TEST_F(CompiledFunctionTest, MissingFunctionThrows) {
  ASSERT_TRUE(parseText(kAddOne));
  EXPECT_THROW(CompiledFunction::compile(*module, "nope"), Error);
}

TEST_F(CompiledFunctionTest, DumpsLlvmDialectAndIR) {
  ASSERT_TRUE(parseText(kAddOne));
  CpuOptions options;
  options.keepIR = true;
  CompiledFunction fn = CompiledFunction::compile(*module, "f", options);
  EXPECT_NE(fn.llvmDialect().find("llvm.func @f(%arg0: !llvm.ptr"),
            std::string::npos)
      << fn.llvmDialect();
  EXPECT_NE(fn.llvmIR().find("define void @f(ptr"), std::string::npos)
      << fn.llvmIR();
}

} // namespace

namespace kcc {
namespace testing {
namespace {

// Shapes past the pipeline's parallel threshold (64k iteration points): the
// elementwise chain and the softmax's elementwise parts run as OpenMP
// worksharing loops (libomp); reductions stay serial. Results must not
// depend on the team.
TEST_P(CompiledVsInterpreted, ParallelLoopsOnLargeShapes) {
  check(R"mlir(
func.func @f(%a: tensor<512x256x$T>, %b: tensor<512x256x$T>, %c: tensor<256x$T>)
    -> (tensor<512x256x$T>, tensor<512x$T>, tensor<256x$T>, tensor<512x256x$T>) {
  %0 = kc.broadcast_to %c : tensor<256x$T> -> tensor<512x256x$T>
  %1 = kc.mul %a, %b : tensor<512x256x$T>
  %2 = kc.add %1, %0 : tensor<512x256x$T>
  %3 = kc.relu %2 : tensor<512x256x$T>
  %4 = kc.reduce_sum %3 {axes = array<i64: 1>} : tensor<512x256x$T> -> tensor<512x$T>
  %5 = kc.reduce_sum %3 {axes = array<i64: 0>} : tensor<512x256x$T> -> tensor<256x$T>
  %6 = kc.softmax %2 : tensor<512x256x$T>
  return %3, %4, %5, %6 : tensor<512x256x$T>, tensor<512x$T>, tensor<256x$T>, tensor<512x256x$T>
}
)mlir",
        {}, type() == "f32" ? 1e-4 : 1e-10);
}

} // namespace
} // namespace testing
} // namespace kcc
