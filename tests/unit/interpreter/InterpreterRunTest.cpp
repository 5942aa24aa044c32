//===- InterpreterRunTest.cpp - stats, buffer lifetimes, errors -----------===//
//
// What the interpreter does around the kernels: counting dispatches and
// allocations, freeing values after their last use, caching constants,
// passing the random counter through exactly, and reporting errors with the
// op's location.
//
//===----------------------------------------------------------------------===//

#include "tests/unit/interpreter/InterpreterTestUtil.h"

#include "engine/interpreter/OpKernels.h"
#include "runtime/kernels/Kernels.h"

#include "mlir/IR/Builders.h"

using namespace kcc;
using namespace kcc::testing;

namespace {

using InterpreterRunTest = InterpreterFixture;

/// A chain of `length` unary ops on an n x n f32 tensor: each step
/// alternates neg and abs, so the result is |x|.
std::string unaryChain(int length, int n = 64) {
  std::string type =
      "tensor<" + std::to_string(n) + "x" + std::to_string(n) + "xf32>";
  std::string text = "func.func @chain(%x: " + type + ") -> " + type + " {\n";
  std::string last = "%x";
  for (int i = 0; i < length; ++i) {
    std::string next = "%v" + std::to_string(i);
    text += "  " + next + " = kc." + (i % 2 ? "abs " : "neg ") + last + " : " +
            type + "\n";
    last = next;
  }
  return text + "  return " + last + " : " + type + "\n}\n";
}

TEST_F(InterpreterRunTest, ChainFreesEachValueAfterItsLastUse) {
  const int length = 10;
  const int64_t bytes = 64 * 64 * 4;
  auto x = randomValues(64 * 64, -1, 1, 81);
  int64_t liveBefore = AllocStats::liveBytes();
  auto out = run(unaryChain(length), {NDArray::fromVector({64, 64}, x)});
  ASSERT_EQ(out.size(), 1u);
  std::vector<double> expected(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    expected[i] = std::fabs(static_cast<float>(x[i]));
  expectNear(out[0], {64, 64}, expected, 0);

  const InterpreterStats &stats = interpreter.stats();
  EXPECT_EQ(stats.opsDispatched, length);
  EXPECT_EQ(stats.buffersAllocated, length);
  EXPECT_EQ(stats.bytesAllocated, length * bytes);
  // Each op's input dies as its output is born: two buffers at most, far
  // below the ten a run without freeing would hold.
  EXPECT_EQ(stats.peakLiveBytes, 2 * bytes);
  EXPECT_LT(stats.peakLiveBytes, stats.bytesAllocated);
  // Only the returned result is still allocated (the input is ours).
  EXPECT_EQ(AllocStats::liveBytes() - liveBefore, bytes);
}

TEST_F(InterpreterRunTest, StatsAccumulateOverRunsUntilReset) {
  mlir::func::FuncOp func = parse(unaryChain(4));
  ASSERT_TRUE(func);
  NDArray x = NDArray::fromVector({64, 64}, randomValues(64 * 64));
  interpreter.run(func, {x});
  interpreter.run(func, {x});
  EXPECT_EQ(interpreter.stats().opsDispatched, 8);
  EXPECT_EQ(interpreter.stats().buffersAllocated, 8);
  EXPECT_EQ(interpreter.stats().peakLiveBytes, 2 * 64 * 64 * 4);
  interpreter.resetStats();
  EXPECT_EQ(interpreter.stats().opsDispatched, 0);
  EXPECT_EQ(interpreter.stats().bytesAllocated, 0);
}

TEST_F(InterpreterRunTest, ValuesWithSeveralUsersLiveUntilTheLastOne) {
  // %a is used by %b and, three ops later, by %e: it must survive until %e,
  // and the dead %unused is freed at once.
  const char *text = R"mlir(
    func.func @f(%x: tensor<8xf64>) -> tensor<8xf64> {
      %a = kc.exp %x : tensor<8xf64>
      %b = kc.neg %a : tensor<8xf64>
      %unused = kc.tanh %b : tensor<8xf64>
      %d = kc.abs %b : tensor<8xf64>
      %e = kc.mul %a, %d : tensor<8xf64>
      return %e : tensor<8xf64>
    })mlir";
  auto x = randomValues(8, -1, 1, 82);
  auto out = run(text, {NDArray::fromVector({8}, x, DType::F64)});
  ASSERT_EQ(out.size(), 1u);
  std::vector<double> expected(8);
  for (int i = 0; i < 8; ++i)
    expected[i] = std::exp(x[i]) * std::exp(x[i]);
  expectNear(out[0], {8}, expected, 1e-12);
  // Live at once at most: %a, %b and one new buffer (%unused or %d).
  EXPECT_EQ(interpreter.stats().buffersAllocated, 5);
  EXPECT_EQ(interpreter.stats().peakLiveBytes, 3 * 8 * 8);
}

TEST_F(InterpreterRunTest, ReshapeSharesItsOperandsBuffer) {
  const char *text = R"mlir(
    func.func @f(%x: tensor<4x6xf32>) -> (tensor<4x6xf32>, tensor<24xf32>, tensor<3x8xf32>) {
      %e = kc.exp %x : tensor<4x6xf32>
      %r = kc.reshape %e : tensor<4x6xf32> -> tensor<24xf32>
      %a = kc.reshape %x : tensor<4x6xf32> -> tensor<3x8xf32>
      return %e, %r, %a : tensor<4x6xf32>, tensor<24xf32>, tensor<3x8xf32>
    })mlir";
  auto x = randomValues(24, -1, 1, 83);
  NDArray input = NDArray::fromVector({4, 6}, x);
  auto out = run(text, {input});
  ASSERT_EQ(out.size(), 3u);
  std::vector<double> expected(24);
  for (int i = 0; i < 24; ++i)
    expected[i] = std::exp(static_cast<float>(x[i]));
  expectNear(out[1], {24}, expected, 2e-6);
  EXPECT_EQ(out[1].rawData(), out[0].rawData());
  EXPECT_EQ(out[2].rawData(), input.rawData());
  EXPECT_EQ(interpreter.stats().opsDispatched, 3);
  // Only the exp allocates; the alias does not count twice as live bytes.
  EXPECT_EQ(interpreter.stats().buffersAllocated, 1);
  EXPECT_EQ(interpreter.stats().peakLiveBytes, 24 * 4);
}

TEST_F(InterpreterRunTest, ConstantsAreCachedAndReturnedAsCopies) {
  const char *text = R"mlir(
    func.func @f(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
      %c = kc.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
      %y = kc.mul %x, %c : tensor<3xf32>
      return %y, %c : tensor<3xf32>, tensor<3xf32>
    })mlir";
  mlir::func::FuncOp func = parse(text);
  ASSERT_TRUE(func);
  NDArray x = NDArray::fromVector({3}, {2, 2, 2});
  auto first = interpreter.run(func, {x});
  // The caller owns what it gets back: scribbling on the returned constant
  // must not change the next run.
  first[1].set(0, 100.0);
  auto second = interpreter.run(func, {x});
  expectNear(second[0], {3}, {2, 4, 6}, 0, "x * c");
  expectNear(second[1], {3}, {1, 2, 3}, 0, "c");
  // Two dispatches per run; the constant is converted once (not counted) and
  // copied once per run for the caller.
  EXPECT_EQ(interpreter.stats().opsDispatched, 4);
  EXPECT_EQ(interpreter.stats().buffersAllocated, 4);
}

TEST_F(InterpreterRunTest, LaterRunsTakeTheirBuffersFromThePool) {
  mlir::func::FuncOp func = parse(unaryChain(10));
  ASSERT_TRUE(func);
  auto x = randomValues(64 * 64, -1, 1, 84);
  NDArray input = NDArray::fromVector({64, 64}, x);
  std::vector<double> expected(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    expected[i] = std::fabs(static_cast<float>(x[i]));
  int64_t allocsBefore = AllocStats::numAllocs();
  interpreter.run(func, {input});
  int64_t firstRun = AllocStats::numAllocs() - allocsBefore;
  EXPECT_EQ(firstRun, 10);
  // The pool keeps at most the live peak: the chain's two buffers.
  interpreter.run(func, {input});
  EXPECT_LE(interpreter.pooledBytes(), interpreter.stats().peakLiveBytes);
  allocsBefore = AllocStats::numAllocs();
  std::vector<NDArray> out = interpreter.run(func, {input});
  // The values reuse freed buffers but one: the buffer the last run's
  // result took away with it. The stats still count one buffer per op.
  EXPECT_EQ(AllocStats::numAllocs() - allocsBefore, 1);
  EXPECT_EQ(interpreter.stats().buffersAllocated, 30);
  expectNear(out[0], {64, 64}, expected, 0);
}

TEST_F(InterpreterRunTest, PooledAndLiveBuffersStayWithinThePeak) {
  // Two functions of other sizes through one interpreter: what one leaves in
  // the pool fits none of the other's values, and makes room for them.
  mlir::OwningOpRef<mlir::ModuleOp> small =
      mlir::parseSourceString<mlir::ModuleOp>(unaryChain(6, 40), &context);
  mlir::OwningOpRef<mlir::ModuleOp> large =
      mlir::parseSourceString<mlir::ModuleOp>(unaryChain(6, 96), &context);
  ASSERT_TRUE(small && large);
  auto fn = [](mlir::ModuleOp m) {
    return *m.getOps<mlir::func::FuncOp>().begin();
  };
  NDArray xs = NDArray::fromVector({40, 40}, randomValues(40 * 40));
  NDArray xl = NDArray::fromVector({96, 96}, randomValues(96 * 96));
  int64_t baseline = 0, worst = 0;
  interpreter.setObserver([&](mlir::Operation *, const NDArray &) {
    worst = std::max(worst, AllocStats::liveBytes() - baseline);
    return true;
  });
  for (int i = 0; i < 4; ++i)
    for (auto [func, x] :
         {std::pair(fn(*large), xl), std::pair(fn(*small), xs)}) {
      // Held outside the interpreter: the arguments (pooled buffers are
      // allocated arrays too, and count).
      baseline = AllocStats::liveBytes() - interpreter.pooledBytes();
      interpreter.run(func, {x});
    }
  // The large chain's two 36 KB buffers at its peak, less than a pool that
  // kept every size it saw would hold.
  EXPECT_EQ(interpreter.stats().peakLiveBytes, 2 * 96 * 96 * 4);
  EXPECT_LE(worst, interpreter.stats().peakLiveBytes);
}

TEST_F(InterpreterRunTest, AReturnedBufferIsNeverReused) {
  mlir::func::FuncOp func = parse(unaryChain(4));
  ASSERT_TRUE(func);
  auto x = randomValues(64 * 64, -1, 1, 85);
  std::vector<double> expected(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    expected[i] = std::fabs(static_cast<float>(x[i]));
  std::vector<NDArray> kept =
      interpreter.run(func, {NDArray::fromVector({64, 64}, x)});
  NDArray other = NDArray::fromVector({64, 64}, randomValues(64 * 64, 2, 3));
  for (int i = 0; i < 3; ++i)
    interpreter.run(func, {other});
  expectNear(kept[0], {64, 64}, expected, 0, "the first run's result");
}

TEST_F(InterpreterRunTest, AChangedBodyIsPlannedAgain) {
  const char *text = R"mlir(
    func.func @f(%x: tensor<8xf64>) -> tensor<8xf64> {
      %a = kc.neg %x : tensor<8xf64>
      %b = kc.abs %a : tensor<8xf64>
      %c = kc.exp %b : tensor<8xf64>
      return %c : tensor<8xf64>
    })mlir";
  mlir::func::FuncOp func = parse(text);
  ASSERT_TRUE(func);
  auto x = randomValues(8, -1, 1, 86);
  NDArray input = NDArray::fromVector({8}, x, DType::F64);
  std::vector<double> expected(8);
  for (int i = 0; i < 8; ++i)
    expected[i] = std::exp(std::fabs(x[i]));
  expectNear(interpreter.run(func, {input})[0], {8}, expected, 1e-12);

  // Same ops, another operand: exp reads %a now.
  auto ops = func.getBody().front().getOperations().begin();
  mlir::Operation *neg = &*ops, *abs = &*std::next(ops),
                  *exp = &*std::next(ops, 2);
  exp->setOperand(0, neg->getResult(0));
  for (int i = 0; i < 8; ++i)
    expected[i] = std::exp(-x[i]);
  expectNear(interpreter.run(func, {input})[0], {8}, expected, 1e-12,
             "exp(neg(x))");

  // Another op in abs's place: tanh of %a, which exp then reads.
  mlir::OpBuilder builder(abs);
  mlir::OperationState state(abs->getLoc(), "kc.tanh");
  state.addOperands(neg->getResult(0));
  state.addTypes(abs->getResult(0).getType());
  mlir::Operation *tanh = builder.create(state);
  abs->getResult(0).replaceAllUsesWith(tanh->getResult(0));
  abs->erase();
  exp->setOperand(0, tanh->getResult(0));
  for (int i = 0; i < 8; ++i)
    expected[i] = std::exp(std::tanh(-x[i]));
  expectNear(interpreter.run(func, {input})[0], {8}, expected, 1e-12,
             "exp(tanh(neg(x)))");
}

TEST_F(InterpreterRunTest, RandomUniformReadsTheCounterExactly) {
  const char *text = R"mlir(
    func.func @f(%step: tensor<i64>) -> tensor<4x8xf32> {
      %u = kc.random_uniform %step {seed = 7 : i64} : tensor<i64> -> tensor<4x8xf32>
      return %u : tensor<4x8xf32>
    })mlir";
  mlir::func::FuncOp func = parse(text);
  ASSERT_TRUE(func);
  // 2^53 + 1 is not a double: a counter read through double would collide
  // with 2^53.
  const int64_t big = (int64_t(1) << 53) + 1;
  auto step = [](int64_t value) {
    NDArray counter = NDArray::empty({}, DType::I64);
    counter.data<int64_t>()[0] = value;
    return counter;
  };
  NDArray a = interpreter.run(func, {step(big)})[0];
  NDArray b = interpreter.run(func, {step(big - 1)})[0];
  NDArray again = interpreter.run(func, {step(big)})[0];
  NDArray reference = NDArray::empty({4, 8}, DType::F32);
  kernels::randomUniform(7, static_cast<uint64_t>(big), reference);
  int differing = 0;
  for (int64_t i = 0; i < 32; ++i) {
    EXPECT_GE(a.at(i), 0.0);
    EXPECT_LT(a.at(i), 1.0);
    EXPECT_EQ(a.at(i), again.at(i));
    EXPECT_EQ(a.at(i), reference.at(i));
    differing += a.at(i) != b.at(i);
  }
  EXPECT_GT(differing, 28);
}

TEST_F(InterpreterRunTest, NonKcOpNamesLocationAndOp) {
  const char *text = R"mlir(
    func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
      %a = kc.exp %x : tensor<4xf32>
      %b = arith.addf %a, %a : tensor<4xf32> loc("dense_1")
      return %b : tensor<4xf32>
    })mlir";
  mlir::func::FuncOp func = parse(text);
  ASSERT_TRUE(func);
  std::string message = errorOf(func, {NDArray::fromVector({4}, {1, 2, 3, 4})});
  EXPECT_EQ(message.rfind("loc(\"dense_1\"): 'arith.addf'", 0), 0u) << message;
  EXPECT_NE(message.find("not a kc op"), std::string::npos) << message;
  // Checked before running: nothing was dispatched.
  EXPECT_EQ(interpreter.stats().opsDispatched, 0);
}

TEST_F(InterpreterRunTest, WrongArgumentsNameIndexAndBothShapes) {
  const char *text = R"mlir(
    func.func @f(%x: tensor<4x3xf32>, %w: tensor<3x2xf32>) -> tensor<4x2xf32> {
      %y = kc.matmul %x, %w : tensor<4x3xf32>, tensor<3x2xf32> -> tensor<4x2xf32>
      return %y : tensor<4x2xf32>
    })mlir";
  mlir::func::FuncOp func = parse(text);
  ASSERT_TRUE(func);
  NDArray x = NDArray::zeros({4, 3}, DType::F32);
  std::string shape = errorOf(func, {x, NDArray::zeros({2, 3}, DType::F32)});
  EXPECT_NE(shape.find("argument #1"), std::string::npos) << shape;
  EXPECT_NE(shape.find("expected f32 [3, 2], got f32 [2, 3]"),
            std::string::npos)
      << shape;
  std::string dtype = errorOf(func, {x, NDArray::zeros({3, 2}, DType::F64)});
  EXPECT_NE(dtype.find("expected f32 [3, 2], got f64 [3, 2]"),
            std::string::npos)
      << dtype;
  std::string count = errorOf(func, {x});
  EXPECT_NE(count.find("expects 2 arguments, got 1"), std::string::npos)
      << count;
}

TEST_F(InterpreterRunTest, KernelErrorsArePrefixedWithTheOpLocation) {
  // The kernels have no f16 arithmetic: the interpreter must say which op
  // asked for it.
  const char *text = R"mlir(
    func.func @f(%x: tensor<4xf16>) -> tensor<4xf16> {
      %y = kc.add %x, %x : tensor<4xf16> loc("half_add")
      return %y : tensor<4xf16>
    })mlir";
  mlir::func::FuncOp func = parse(text);
  ASSERT_TRUE(func);
  std::string message = errorOf(func, {NDArray::zeros({4}, DType::F16)});
  EXPECT_EQ(message.rfind("loc(\"half_add\"): 'kc.add': ", 0), 0u) << message;
  EXPECT_NE(message.find("f16"), std::string::npos) << message;
}

TEST_F(InterpreterRunTest, EveryKcOpHasAKernel) {
  // Fails when an op is added to the ODS without an interpreter entry.
  int kcOps = 0;
  for (mlir::RegisteredOperationName name : context.getRegisteredOperations()) {
    if (name.getDialectNamespace() != "kc")
      continue;
    ++kcOps;
    EXPECT_NE(interp::lookupOpKernel(name), nullptr)
        << name.getStringRef().str() << " has no interpreter kernel";
  }
  EXPECT_GE(kcOps, 42);
  auto addf = mlir::OperationName("arith.addf", &context);
  EXPECT_EQ(interp::lookupOpKernel(addf), nullptr);
}

TEST(DTypeOfTest, MapsElementTypesAndRejectsOthers) {
  mlir::MLIRContext context;
  mlir::Builder b(&context);
  EXPECT_EQ(dtypeOf(b.getF32Type()), DType::F32);
  EXPECT_EQ(dtypeOf(b.getF64Type()), DType::F64);
  EXPECT_EQ(dtypeOf(b.getF16Type()), DType::F16);
  EXPECT_EQ(dtypeOf(b.getBF16Type()), DType::BF16);
  EXPECT_EQ(dtypeOf(b.getI1Type()), DType::I1);
  EXPECT_EQ(dtypeOf(b.getI32Type()), DType::I32);
  EXPECT_EQ(dtypeOf(b.getI64Type()), DType::I64);
  try {
    dtypeOf(b.getI8Type());
    ADD_FAILURE() << "i8 has no NDArray dtype";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("i8"), std::string::npos) << e.what();
  }
}

} // namespace
