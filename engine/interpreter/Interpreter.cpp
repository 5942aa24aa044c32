//===- Interpreter.cpp - Runs kc functions op by op -----------------------===//
//
// The run loop: check the arguments against the signature, plan the body
// (every op has a kernel, checked before running anything so a bad function
// fails fast; every value gets a slot and the op after which it dies), then
// dispatch op by op, freeing each value right after its last use. Liveness
// is tracked per buffer, not per value, because kc.reshape results share
// their operand's buffer.
//
//===----------------------------------------------------------------------===//

#include "engine/interpreter/Interpreter.h"
#include "runtime/FlushDenormals.h"

#include "engine/interpreter/OpKernels.h"
#include "ir/KcDialect.h"
#include "runtime/Error.h"
#include "runtime/kernels/Kernels.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace mlir;
using namespace kcc;
using namespace kcc::interp;

namespace {

template <typename T> std::string printed(const T &value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  value.print(os);
  return os.str();
}

/// `loc("dense_1"): 'kc.matmul'`: how every op error starts.
std::string opPrefix(Operation *op) {
  return printed(op->getLoc()) + ": '" + op->getName().getStringRef().str() +
         "'";
}

/// "f32 [4, 3]".
std::string describe(DType dtype, const Shape &shape) {
  return std::string(dtypeName(dtype)) + " " + shapeToString(shape);
}

/// Copies converted elements of a constant into `out`; false when the
/// attribute cannot produce values of type T.
template <typename T, typename Convert>
bool fillFrom(ElementsAttr attr, NDArray &out, Convert convert) {
  auto values = attr.tryGetValues<T>();
  if (!values)
    return false;
  int64_t i = 0;
  for (const T &value : *values)
    convert(i++, value);
  return i == out.numel();
}

/// The state of one run: every value's array by its slot in the plan, the
/// constants this run touched and the buffers it allocated (with how many
/// values share each).
class RunState final : public OpEnv {
public:
  RunState(InterpreterStats &stats,
           std::unordered_map<const void *, NDArray> &constants,
           BufferPool &pool, unsigned numSlots)
      : stats(stats), constants(constants), pool(pool), values(numSlots) {}

  NDArray allocate(Value result) override {
    auto type = cast<RankedTensorType>(result.getType());
    Shape shape = shapeOf(type);
    DType dtype = dtypeOf(type.getElementType());
    int64_t bytes = tensorBytes(shape, dtype);
    std::shared_ptr<void> pooled = pool.take(bytes);
    if (!pooled)
      pool.makeRoom(bytes, liveBytes);
    NDArray array = pooled ? NDArray::onStorage(std::move(pooled), shape, dtype)
                           : NDArray::empty(shape, dtype);
    ++stats.buffersAllocated;
    stats.bytesAllocated += bytes;
    buffers[array.rawData()] = {bytes, 0};
    liveBytes += bytes;
    peakLiveBytes = std::max(peakLiveBytes, liveBytes);
    return array;
  }

  NDArray constant(ElementsAttr value) override {
    const void *key = value.getAsOpaquePointer();
    auto it = constants.find(key);
    if (it == constants.end())
      it = constants.emplace(key, elementsToNDArray(value)).first;
    constantBuffers.insert(it->second.rawData());
    return it->second;
  }

  /// Makes `array` the value in `slot` (arguments included: only buffers
  /// this run allocated are counted).
  void bind(unsigned slot, NDArray array) {
    auto it = buffers.find(array.rawData());
    if (it != buffers.end())
      ++it->second.refs;
    values[slot] = std::move(array);
  }

  /// Frees the value in `slot`; its buffer goes back to the pool when it
  /// was the buffer's last value.
  void release(unsigned slot) {
    NDArray dead = std::move(values[slot]);
    auto buffer = buffers.find(dead.rawData());
    if (buffer == buffers.end() || --buffer->second.refs != 0)
      return;
    int64_t bytes = buffer->second.bytes;
    liveBytes -= bytes;
    buffers.erase(buffer);
    std::shared_ptr<void> storage = dead.storage();
    dead = NDArray();
    pool.give(std::move(storage), bytes, liveBytes);
  }

  const NDArray &lookup(unsigned slot) const {
    assert(values[slot].defined() &&
           "operand used before definition or after free");
    return values[slot];
  }

  /// A result that aliases a cached constant is copied: the caller may write
  /// to what it gets back (an optimizer updating parameters in place).
  NDArray result(unsigned slot) {
    NDArray array = lookup(slot);
    if (!constantBuffers.contains(array.rawData()))
      return array;
    ++stats.buffersAllocated;
    stats.bytesAllocated += static_cast<int64_t>(array.bytes());
    return array.clone();
  }

  int64_t peak() const { return peakLiveBytes; }

private:
  struct Buffer {
    int64_t bytes;
    int64_t refs; ///< values sharing the buffer (reshape aliases)
  };

  InterpreterStats &stats;
  std::unordered_map<const void *, NDArray> &constants;
  BufferPool &pool;
  std::vector<NDArray> values;
  llvm::DenseMap<const void *, Buffer> buffers;
  llvm::DenseSet<const void *> constantBuffers;
  int64_t liveBytes = 0;
  int64_t peakLiveBytes = 0;
};

/// Throws unless `args` match the signature of `func` one by one.
void checkArguments(func::FuncOp func, const std::vector<NDArray> &args) {
  // Printed only for an error: a location's text costs more than a check.
  auto where = [&] {
    return printed(func.getLoc()) + ": @" + func.getSymName().str() + " ";
  };
  ArrayRef<Type> types = func.getArgumentTypes();
  if (types.size() != args.size())
    throw Error(where() + "expects " + std::to_string(types.size()) +
                " arguments, got " + std::to_string(args.size()));
  for (auto [index, type, arg] : llvm::enumerate(types, args)) {
    auto argument = [&, index = index] {
      return where() + "argument #" + std::to_string(index);
    };
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape())
      throw Error(argument() + " has type " + printed(type) +
                  ", which the interpreter cannot hold");
    DType dtype;
    try {
      dtype = dtypeOf(tensor.getElementType());
    } catch (const Error &e) {
      throw Error(argument() + ": " + e.what());
    }
    if (!arg.defined() || arg.dtype() != dtype ||
        !llvm::equal(arg.shape(), tensor.getShape())) {
      Shape shape = shapeOf(tensor);
      throw Error(argument() + ": expected " + describe(dtype, shape) +
                  ", got " +
                  (arg.defined() ? describe(arg.dtype(), arg.shape())
                                 : std::string("an undefined array")));
    }
  }
}

/// Throws for an op the interpreter cannot run; returns its kernel.
const OpKernel &kernelFor(Operation *op) {
  if (const OpKernel *kernel = lookupOpKernel(op->getName()))
    return *kernel;
  if (op->getName().getDialectNamespace() == "kc")
    throw Error(opPrefix(op) + " has no kernel in the interpreter");
  throw Error(opPrefix(op) +
              " is not a kc op: the interpreter runs kc ops and func.return");
}

//===----------------------------------------------------------------------===//
// bfloat16: kernels compute in float32
//===----------------------------------------------------------------------===//

/// Ops whose kernels take bfloat16 as it is: conversions, constants, views,
/// and the products (oneDNN's bf16 GEMM and convolution, float32
/// accumulation).
bool runsOnBF16(Operation *op) {
  return isa<kc::CastOp, kc::ConstantOp, kc::ReshapeOp, kc::MatmulOp,
             kc::BatchMatmulOp, kc::Conv2DOp, kc::Conv2DBackpropInputOp,
             kc::Conv2DBackpropFilterOp>(op);
}

bool isBF16Tensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getElementType().isBF16();
}

/// Whether `op` reads or writes bfloat16 through a float32 kernel.
bool needsWidening(Operation *op) {
  if (runsOnBF16(op))
    return false;
  return llvm::any_of(op->getOperandTypes(), isBF16Tensor) ||
         llvm::any_of(op->getResultTypes(), isBF16Tensor);
}

/// Gives a kernel float32 buffers where the op's result is bfloat16.
class WideningEnv final : public OpEnv {
public:
  explicit WideningEnv(OpEnv &inner) : inner(inner) {}
  NDArray allocate(Value result) override {
    if (isBF16Tensor(result.getType()))
      return NDArray::empty(shapeOf(result.getType()), DType::F32);
    return inner.allocate(result);
  }
  NDArray constant(ElementsAttr value) override {
    return inner.constant(value);
  }

private:
  OpEnv &inner;
};

/// Runs `op` as compiled code does: bfloat16 operands widened to float32
/// (exactly), the float32 kernel, its result rounded to bfloat16 once.
NDArray runWidened(Operation *op, const OpKernel &kernel, Operands in,
                   OpEnv &env) {
  SmallVector<NDArray, 4> wide;
  wide.reserve(in.size());
  SmallVector<const NDArray *, 4> operands;
  for (const NDArray *a : in) {
    if (a->dtype() != DType::BF16) {
      operands.push_back(a);
      continue;
    }
    wide.push_back(NDArray::empty(a->shape(), DType::F32));
    kernels::cast(*a, wide.back());
    operands.push_back(&wide.back());
  }
  WideningEnv widening(env);
  NDArray out = kernel(op, operands, widening);
  if (!isBF16Tensor(op->getResult(0).getType()) || out.dtype() == DType::BF16)
    return out;
  NDArray narrow = env.allocate(op->getResult(0));
  kernels::cast(out, narrow);
  return narrow;
}

} // namespace

//===----------------------------------------------------------------------===//
// Types and constants
//===----------------------------------------------------------------------===//

DType kcc::dtypeOf(Type elementType) {
  if (elementType.isF32())
    return DType::F32;
  if (elementType.isF64())
    return DType::F64;
  if (elementType.isF16())
    return DType::F16;
  if (elementType.isBF16())
    return DType::BF16;
  if (auto integer = dyn_cast<IntegerType>(elementType)) {
    switch (integer.getWidth()) {
    case 1:
      return DType::I1;
    case 32:
      return DType::I32;
    case 64:
      return DType::I64;
    default:
      break;
    }
  }
  throw Error("element type " + printed(elementType) + " has no NDArray dtype");
}

Shape kcc::interp::shapeOf(Type tensorType) {
  ArrayRef<int64_t> dims = cast<RankedTensorType>(tensorType).getShape();
  return Shape(dims.begin(), dims.end());
}

NDArray kcc::interp::elementsToNDArray(ElementsAttr value) {
  ShapedType type = value.getShapedType();
  DType dtype = dtypeOf(type.getElementType());
  NDArray out = NDArray::empty(shapeOf(type), dtype);
  bool ok = false;
  switch (dtype) {
  case DType::F32:
    ok = fillFrom<float>(value, out,
                         [&](int64_t i, float v) { out.data<float>()[i] = v; });
    break;
  case DType::F64:
    ok = fillFrom<double>(
        value, out, [&](int64_t i, double v) { out.data<double>()[i] = v; });
    break;
  case DType::I32:
    ok = fillFrom<int32_t>(
        value, out, [&](int64_t i, int32_t v) { out.data<int32_t>()[i] = v; });
    break;
  case DType::I64:
    ok = fillFrom<int64_t>(
        value, out, [&](int64_t i, int64_t v) { out.data<int64_t>()[i] = v; });
    break;
  case DType::I1:
    ok = fillFrom<bool>(value, out, [&](int64_t i, bool v) {
      out.data<uint8_t>()[i] = v ? 1 : 0;
    });
    break;
  case DType::F16:
  case DType::BF16:
    // NDArray stores both as their IEEE / bfloat16 bit patterns.
    ok = fillFrom<APFloat>(value, out, [&](int64_t i, const APFloat &v) {
      out.data<uint16_t>()[i] =
          static_cast<uint16_t>(v.bitcastToAPInt().getZExtValue());
    });
    break;
  }
  if (!ok)
    throw Error("cannot read the elements of a constant of type " +
                printed(type));
  return out;
}

//===----------------------------------------------------------------------===//
// Interpreter
//===----------------------------------------------------------------------===//

/// How to run one function body: each op with its kernel and the slots of
/// its operands and result (arguments first, then one per op), and after
/// each op the slots that die there (their last user; func.return's
/// operands live to the end). It records the body it was made from, ops,
/// operand values and types, so a run can check that it still applies.
struct Interpreter::Plan {
  struct Step {
    Operation *op;
    OperationName name;
    const OpKernel *kernel;
    Type resultType;
    unsigned firstOperand, numOperands; ///< into operandSlots
    unsigned firstDeath, numDeaths;     ///< into deaths
  };
  SmallVector<Type> argumentTypes;
  SmallVector<Step> steps;
  SmallVector<unsigned> operandSlots;
  SmallVector<const void *> operandValues; ///< operandSlots' values
  SmallVector<unsigned> deaths;
  SmallVector<unsigned> unusedArguments;
  Operation *returnOp = nullptr;
  SmallVector<unsigned> resultSlots;
  SmallVector<const void *> resultValues;
  /// Whether any value is bfloat16: a float32 step checks no op's types for
  /// widening (every value is an argument or one op's result).
  bool anyBF16 = false;

  unsigned numSlots() const { return argumentTypes.size() + steps.size(); }
  unsigned resultSlot(size_t step) const { return argumentTypes.size() + step; }

  /// Plans `body`; throws for an op without a kernel or a missing return.
  static std::unique_ptr<Plan> make(func::FuncOp func);
  /// Whether `body` is still the body this plan was made from.
  bool matches(Block &body) const;
};

std::unique_ptr<Interpreter::Plan> Interpreter::Plan::make(func::FuncOp func) {
  auto plan = std::make_unique<Plan>();
  Block &body = func.getBody().front();
  llvm::DenseMap<Value, unsigned> slotOf;
  for (BlockArgument arg : body.getArguments()) {
    slotOf[arg] = plan->argumentTypes.size();
    plan->argumentTypes.push_back(arg.getType());
  }
  plan->anyBF16 = llvm::any_of(plan->argumentTypes, isBF16Tensor);
  // A slot dies at the index of its last user; func.return's index (the
  // number of steps) keeps results alive to the end.
  SmallVector<unsigned> lastUse(plan->argumentTypes.size(), ~0u);
  for (Operation &op : body) {
    unsigned index = plan->steps.size();
    // Values come from the block: its arguments and the single result of
    // each op before (the verifier's dominance, and the check below).
    auto slots = llvm::map_range(op.getOperands(), [&](Value v) {
      auto it = slotOf.find(v);
      if (it == slotOf.end())
        throw Error(opPrefix(&op) + " reads a value the interpreter does " +
                    "not hold (not a block argument or an earlier result)");
      return it->second;
    });
    if (isa<func::ReturnOp>(op)) {
      plan->returnOp = &op;
      for (auto [value, slot] : llvm::zip(op.getOperands(), slots)) {
        plan->resultSlots.push_back(slot);
        plan->resultValues.push_back(value.getAsOpaquePointer());
        lastUse[slot] = index;
      }
      break;
    }
    const OpKernel &kernel = kernelFor(&op);
    if (op.getNumResults() != 1)
      throw Error(opPrefix(&op) + " has " + std::to_string(op.getNumResults()) +
                  " results: the interpreter runs ops of one result");
    Step step{&op,
              op.getName(),
              &kernel,
              op.getResult(0).getType(),
              static_cast<unsigned>(plan->operandSlots.size()),
              op.getNumOperands(),
              0,
              0};
    for (auto [value, slot] : llvm::zip(op.getOperands(), slots)) {
      plan->operandSlots.push_back(slot);
      plan->operandValues.push_back(value.getAsOpaquePointer());
      lastUse[slot] = index;
    }
    slotOf[op.getResult(0)] = lastUse.size();
    lastUse.push_back(~0u);
    plan->anyBF16 = plan->anyBF16 || isBF16Tensor(step.resultType);
    plan->steps.push_back(step);
  }
  if (!plan->returnOp)
    throw Error(printed(func.getLoc()) + ": @" + func.getSymName().str() +
                " does not end in func.return");
  // Who dies where: an unused argument before the first op, an unused
  // result right after its op.
  SmallVector<SmallVector<unsigned, 2>> diesAt(plan->steps.size());
  for (auto [slot, last] : llvm::enumerate(lastUse)) {
    bool argument = slot < plan->argumentTypes.size();
    if (last == ~0u && argument)
      plan->unusedArguments.push_back(slot);
    else if (last == ~0u)
      diesAt[slot - plan->argumentTypes.size()].push_back(slot);
    else if (last < plan->steps.size())
      diesAt[last].push_back(slot);
  }
  for (auto [step, slots] : llvm::zip(plan->steps, diesAt)) {
    step.firstDeath = plan->deaths.size();
    step.numDeaths = slots.size();
    plan->deaths.append(slots.begin(), slots.end());
  }
  return plan;
}

/// Whether `values` are the values recorded as `recorded`, one by one.
static bool sameValues(OperandRange values, ArrayRef<const void *> recorded) {
  return llvm::equal(values, recorded, [](Value v, const void *p) {
    return v.getAsOpaquePointer() == p;
  });
}

bool Interpreter::Plan::matches(Block &body) const {
  if (!llvm::equal(body.getArgumentTypes(), argumentTypes))
    return false;
  const Step *step = steps.begin();
  for (Operation &op : body) {
    if (step == steps.end())
      return &op == returnOp && sameValues(op.getOperands(), resultValues);
    if (&op != step->op || op.getName() != step->name ||
        op.getNumResults() != 1 ||
        op.getResult(0).getType() != step->resultType)
      return false;
    if (!sameValues(op.getOperands(),
                    ArrayRef(operandValues)
                        .slice(step->firstOperand, step->numOperands)))
      return false;
    ++step;
  }
  return false;
}

Interpreter::Interpreter() = default;
Interpreter::~Interpreter() = default;
Interpreter::Interpreter(Interpreter &&) = default;
Interpreter &Interpreter::operator=(Interpreter &&) = default;

const Interpreter::Plan &Interpreter::planFor(func::FuncOp func) {
  std::unique_ptr<Plan> &plan = plans_[func.getOperation()];
  if (!plan || !plan->matches(func.getBody().front()))
    plan = Plan::make(func);
  return *plan;
}

std::vector<NDArray> Interpreter::run(func::FuncOp func,
                                      const std::vector<NDArray> &args) {
  if (func.isExternal() || !func.getBody().hasOneBlock())
    throw Error(printed(func.getLoc()) + ": @" + func.getSymName().str() +
                " must have a body of one block to be interpreted");
  checkArguments(func, args);
  const Plan &plan = planFor(func);
  ScopedFlushDenormals ftz;

  RunState state(stats_, constants_, pool_, plan.numSlots());
  for (auto [slot, array] : llvm::enumerate(args))
    state.bind(slot, array);
  for (unsigned slot : plan.unusedArguments)
    state.release(slot);

  SmallVector<const NDArray *, 4> operands;
  for (auto [index, step] : llvm::enumerate(plan.steps)) {
    Operation *op = step.op;
    operands.clear();
    for (unsigned k = 0; k < step.numOperands; ++k)
      operands.push_back(
          &state.lookup(plan.operandSlots[step.firstOperand + k]));
    NDArray out;
    try {
      out = plan.anyBF16 && needsWidening(op)
                ? runWidened(op, *step.kernel, operands, state)
                : (*step.kernel)(op, operands, state);
    } catch (const Error &e) {
      // KernelError included: say which op failed, and where.
      throw Error(opPrefix(op) + ": " + e.what());
    }
    ++stats_.opsDispatched;
    if (observer_ && !observer_(op, out))
      return {};
    state.bind(plan.resultSlot(index), std::move(out));
    for (unsigned k = 0; k < step.numDeaths; ++k)
      state.release(plan.deaths[step.firstDeath + k]);
  }

  std::vector<NDArray> results;
  results.reserve(plan.resultSlots.size());
  for (unsigned slot : plan.resultSlots)
    results.push_back(state.result(slot));
  stats_.peakLiveBytes = std::max(stats_.peakLiveBytes, state.peak());
  // Pooled and live bytes stay within what a run had live at its peak.
  pool_.raiseLimit(state.peak());
  return results;
}
