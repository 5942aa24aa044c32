//===- FuseEpilogues.cpp - Bias and activation into GEMM/conv post-ops ----===//
//
// kc-fuse-epilogues: a Dense or Conv2D layer lowers to a library call and a
// linalg.generic that adds the bias and applies the activation. The library
// call can do both before the output leaves its cache (oneDNN's bias
// argument; the activation over the output right after the product, in
// place), so the generic, its pass over the output and its buffer go.
//
// The generic must read the call's output and nothing else of its size:
// inputs are the output (identity map) and at most one bias (the last loop
// dimension only); its body must be exactly `x + b`, `act(x)` or
// `act(x + b)`, where act is relu (`select(x < 0, 0, x)`, as
// kc-lower-to-linalg emits it, or `maximumf(x, 0)`), or tanh, sigmoid, gelu
// (both forms) or silu/swish in kc-lower-to-linalg's form, or one of the
// activations frontend/ops/Activations.cpp composes of kc ops as
// kc-lower-to-linalg and kc-fuse-elementwise leave it: elu (any alpha),
// selu, leaky_relu (any slope), relu6 and ReLU(max_value) (min(relu(x), m)),
// softplus, mish, hard_sigmoid, hard_silu, exponential and softsign. The
// alpha, slope or maximum is read from the body's constant and passed to
// the call (`actParam`); every other constant must be exactly the one the
// composition has (a body with another is left alone). Operands of
// commutative ops may come in either order, and the value the activation
// applies to may be computed several times (kc-fuse-elementwise inlines a
// shared producer once per use).
//
// In a training step only those whose gradient reads their output (relu,
// tanh, sigmoid, exponential) fuse: the others' gradients read their input
// (or an intermediate), which then has a second use or is a second result
// of the generic, and either keeps the generic; @forward (predict,
// evaluate) fuses them all.
//
// The gradients of poolings fuse the same way with the gradient of the
// activation before the pooling: max pooling's with relu's mask, average
// pooling's with relu's mask, tanh's or sigmoid's factor, each read from
// the activation's output (the pooling's input). After
// kc-pool-before-activation a relu follows the max pooling instead: it
// fuses into the pooling, and its mask on the pooled gradient into the
// pooling's gradient (the same max_pool2d_grad_relu: the mask holds where
// the window's maximum, where the gradient goes, is positive).
//
// The activation matchers are in EpilogueActivations.cpp.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "codegen/fusion/EpilogueActivations.h"
#include "codegen/lowering/LoweringUtils.h"
#include "runtime/LibraryCalls.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"

#include "llvm/ADT/Statistic.h"

#define DEBUG_TYPE "kc-fuse-epilogues"

STATISTIC(numFusedEpilogues, "epilogues fused into library calls");

namespace kcc {
#define GEN_PASS_DEF_KCFUSEEPILOGUES
#include "codegen/Passes.h.inc"
} // namespace kcc

using namespace mlir;
using namespace kcc;

namespace {

/// The entry points with an epilogue variant, and where their output
/// pointer is.
struct FusableCall {
  StringRef base; ///< e.g. "kcc_rt_matmul"
  unsigned outPointer;
  unsigned numTrailing; ///< dims + attributes after the pointers
};
constexpr FusableCall kFusable[] = {{"kcc_rt_matmul", 2, 8},
                                    {"kcc_rt_conv2d", 2, 18}};

using Activation = EpilogueActivation;

/// What a matched generic computes.
struct Epilogue {
  Value bias; ///< null when there is none
  Activation activation = Activation::None;
  double param = 0; ///< elu's alpha, leaky_relu's slope, the relu's maximum
};

bool isZero(Value v) { return matchPattern(v, m_AnyZeroFloat()); }

/// Matches `generic` as an epilogue of the tensor `product`.
std::optional<Epilogue> matchEpilogue(linalg::GenericOp generic,
                                      Value product) {
  if (generic.getNumResults() != 1 || generic.getNumDpsInits() != 1 ||
      generic.getNumLoops() != generic.getNumParallelLoops() ||
      generic.getNumDpsInputs() < 1 || generic.getNumDpsInputs() > 2)
    return std::nullopt;
  auto type = cast<RankedTensorType>(product.getType());
  if (generic.getResult(0).getType() != type)
    return std::nullopt;
  unsigned rank = type.getRank();
  Block &body = generic.getRegion().front();
  // The output's initial value must not be read.
  if (!body.getArgument(generic.getNumDpsInputs()).use_empty())
    return std::nullopt;
  Value x, b;
  Value bias;
  for (OpOperand *in : generic.getDpsInputOperands()) {
    AffineMap map = generic.getMatchingIndexingMap(in);
    Value arg = body.getArgument(in->getOperandNumber());
    if (in->get() == product && map.isIdentity() && !x) {
      x = arg;
      continue;
    }
    auto biasType = dyn_cast<RankedTensorType>(in->get().getType());
    if (!bias && biasType && biasType.getRank() == 1 &&
        biasType.getDimSize(0) == type.getDimSize(rank - 1) &&
        map.getNumResults() == 1 &&
        map.getResult(0) == getAffineDimExpr(rank - 1, generic.getContext())) {
      bias = in->get();
      b = arg;
      continue;
    }
    return std::nullopt;
  }
  if (!x)
    return std::nullopt;
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  Value result = yield.getOperand(0);
  Epilogue e;
  result = codegen::matchActivation(result, e.activation, e.param);
  if (bias) {
    auto add = result.getDefiningOp<arith::AddFOp>();
    if (!add || !((add.getLhs() == x && add.getRhs() == b) ||
                  (add.getLhs() == b && add.getRhs() == x)))
      return std::nullopt;
    e.bias = bias;
  } else if (result != x) {
    return std::nullopt;
  }
  // Nothing else in the body: every op is one of those matched above.
  for (Operation &op : body.without_terminator())
    if (!isa<arith::AddFOp, arith::SubFOp, arith::SelectOp, arith::CmpFOp,
             arith::OrIOp, arith::MaximumFOp, arith::MinimumFOp,
             arith::ConstantOp, arith::DivFOp, arith::MulFOp, arith::NegFOp,
             math::AbsFOp, math::ErfOp, math::ExpOp, math::LogOp, math::TanhOp>(
            op))
      return std::nullopt;
  if (!e.bias && e.activation == Activation::None)
    return std::nullopt;
  return e;
}

/// The memref.alloc a library call's pointer argument was taken from.
memref::AllocOp pointerSource(Value ptr) {
  Value m = codegen::pointerMemref(ptr);
  return m ? m.getDefiningOp<memref::AllocOp>() : memref::AllocOp();
}

bool dominatesCall(Value v, func::CallOp call) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return arg.getOwner() == call->getBlock() ||
           arg.getOwner()->getParentOp()->isProperAncestor(call);
  Operation *def = v.getDefiningOp();
  return def->getBlock() == call->getBlock() && def->isBeforeInBlock(call);
}

/// The tensor a library call's pointer argument was taken from.
Value pointerTensor(Value ptr) {
  Value m = codegen::pointerMemref(ptr);
  auto toMemref = m ? m.getDefiningOp<bufferization::ToMemrefOp>()
                    : bufferization::ToMemrefOp();
  return toMemref ? toMemref.getTensor() : Value();
}

/// The product's single generic user, when it is the only use.
linalg::GenericOp singleGenericUser(memref::AllocOp out,
                                    bufferization::ToTensorOp &product) {
  for (Operation *user : out->getUsers())
    if (auto t = dyn_cast<bufferization::ToTensorOp>(user)) {
      if (product)
        return {};
      product = t;
    }
  if (!product || !product->hasOneUse())
    return {};
  return dyn_cast<linalg::GenericOp>(*product->user_begin());
}

/// A private declaration of `name` of type `type` in `call`'s module (null,
/// with an error, when one of another type exists).
func::FuncOp declare(func::CallOp call, StringRef name, FunctionType type) {
  OpBuilder b(call);
  func::FuncOp callee =
      codegen::getOrDeclare(b, call->getParentOfType<ModuleOp>(), name, type);
  if (callee.getFunctionType() != type) {
    call.emitOpError("conflicting declaration of ") << name;
    return {};
  }
  return callee;
}

/// max_pool2d_grad followed by relu's gradient mask on the pooling's input
/// (`select(x > 0, g, 0)`, the relu before the pooling) becomes
/// max_pool2d_grad_relu: the mask is applied where the gradient is routed,
/// and the pooling's input is then dead after the call, so
/// kc-reuse-buffers can write the gradient over it.
LogicalResult fuseMaxPoolGradMask(func::CallOp call, StringRef suffix,
                                  bool remarks) {
  // Windows that tile the input: the fused kernel's requirement.
  if (!codegen::isTiledMaxPoolGrad(call))
    return failure();
  Value x = pointerTensor(call.getOperand(0));
  memref::AllocOp out = pointerSource(call.getOperand(2));
  if (!x || !out)
    return failure();
  bufferization::ToTensorOp product;
  linalg::GenericOp mask = singleGenericUser(out, product);
  if (!mask || mask.getNumResults() != 1 || mask.getNumDpsInputs() != 2 ||
      mask.getNumLoops() != mask.getNumParallelLoops() ||
      mask.getResult(0).getType() != product.getType())
    return failure();
  Block &body = mask.getRegion().front();
  Value g, xArg;
  for (OpOperand *in : mask.getDpsInputOperands()) {
    if (!mask.getMatchingIndexingMap(in).isIdentity())
      return failure();
    if (in->get() == product.getResult())
      g = body.getArgument(in->getOperandNumber());
    else if (in->get() == x)
      xArg = body.getArgument(in->getOperandNumber());
  }
  if (!g || !xArg)
    return failure();
  auto select = cast<linalg::YieldOp>(body.getTerminator())
                    .getOperand(0)
                    .getDefiningOp<arith::SelectOp>();
  auto cmp = select ? select.getCondition().getDefiningOp<arith::CmpFOp>()
                    : arith::CmpFOp();
  if (!cmp || cmp.getPredicate() != arith::CmpFPredicate::OGT ||
      cmp.getLhs() != xArg || !isZero(cmp.getRhs()) ||
      select.getTrueValue() != g || !isZero(select.getFalseValue()))
    return failure();

  std::string name = ("kcc_rt_max_pool2d_grad_relu" + suffix).str();
  func::FuncOp callee = declare(call, name, call.getCalleeType());
  if (!callee)
    return failure();
  OpBuilder b(call);
  auto fused =
      b.create<func::CallOp>(call.getLoc(), callee, call.getOperands());
  if (remarks)
    fused.emitRemark() << "fused into " << name
                       << ": relu's gradient mask (one pass over the input "
                          "gradient and its buffer saved)";
  mask.getResult(0).replaceAllUsesWith(product.getResult());
  mask.erase();
  call.erase();
  ++numFusedEpilogues;
  return success();
}

/// max_pool2d followed by relu (kc-pool-before-activation's order) becomes
/// max_pool2d_relu: relu applied to each maximum as the pooling writes it.
LogicalResult fuseMaxPoolRelu(func::CallOp call, StringRef suffix,
                              bool remarks) {
  // ABI: x and output pointers, 8 dims, window h/w, strides h/w, padding.
  if (call.getNumOperands() != 15)
    return failure();
  memref::AllocOp out = pointerSource(call.getOperand(1));
  if (!out)
    return failure();
  bufferization::ToTensorOp product;
  linalg::GenericOp relu = singleGenericUser(out, product);
  std::optional<Epilogue> e =
      relu ? matchEpilogue(relu, product) : std::nullopt;
  if (!e || e->bias || e->activation != Activation::Relu || e->param != 0)
    return failure();
  std::string name = ("kcc_rt_max_pool2d_relu" + suffix).str();
  func::FuncOp callee = declare(call, name, call.getCalleeType());
  if (!callee)
    return failure();
  OpBuilder b(call);
  auto fused =
      b.create<func::CallOp>(call.getLoc(), callee, call.getOperands());
  if (remarks)
    fused.emitRemark() << "fused into " << name
                       << ": relu (one pass over the pooled output and its "
                          "buffer saved)";
  relu.getResult(0).replaceAllUsesWith(product.getResult());
  relu.erase();
  call.erase();
  ++numFusedEpilogues;
  return success();
}

/// Whether two library call pointer arguments were taken from the same
/// buffer (one memref, or one tensor made a memref twice).
bool sameBuffer(Value a, Value b) {
  Value ma = codegen::pointerMemref(a), mb = codegen::pointerMemref(b);
  if (!ma || !mb)
    return false;
  if (ma == mb)
    return true;
  Value ta = pointerTensor(a), tb = pointerTensor(b);
  return ta && ta == tb;
}

/// Whether `v` is relu(max_pool2d(x)) on the buffer `grad` routes into (its
/// first pointer) with `grad`'s window, strides and padding
/// (kc-pool-before-activation's forward): a max_pool2d_relu call's output,
/// or a relu generic over a max_pool2d call's.
bool isReluOfMaxPool(Value v, func::CallOp grad, StringRef suffix) {
  std::string poolName = ("kcc_rt_max_pool2d_relu" + suffix).str();
  if (auto relu = v.getDefiningOp<linalg::GenericOp>()) {
    if (relu.getNumDpsInputs() != 1 || relu.getNumResults() != 1 ||
        !relu.getMatchingIndexingMap(relu.getDpsInputOperand(0)).isIdentity())
      return false;
    Block &body = relu.getRegion().front();
    EpilogueActivation act = EpilogueActivation::None;
    double param = 0;
    Value yielded = cast<linalg::YieldOp>(body.getTerminator()).getOperand(0);
    if (codegen::matchActivation(yielded, act, param) != body.getArgument(0) ||
        act != EpilogueActivation::Relu || param != 0)
      return false;
    v = relu.getDpsInputOperand(0)->get();
    poolName = ("kcc_rt_max_pool2d" + suffix).str();
  }
  auto pooled = v.getDefiningOp<bufferization::ToTensorOp>();
  if (!pooled)
    return false;
  // The call that wrote the pooled buffer. ABI: x and output pointers, 8
  // dims, window h/w, strides h/w, padding.
  func::CallOp pool;
  grad->getParentOp()->walk([&](func::CallOp c) {
    if (c.getCallee() == poolName && c.getNumOperands() == 15 &&
        codegen::pointerMemref(c.getOperand(1)) == pooled.getMemref())
      pool = c;
  });
  if (!pool || !sameBuffer(pool.getOperand(0), grad.getOperand(0)))
    return false;
  for (unsigned i = 0; i < 5; ++i) {
    APInt a, b;
    if (!matchPattern(pool.getOperand(10 + i), m_ConstantInt(&a)) ||
        !matchPattern(grad.getOperand(15 + i), m_ConstantInt(&b)) || a != b)
      return false;
  }
  return true;
}

/// max_pool2d_grad(x, select(y > 0, g, 0)) where y = relu(max_pool2d(x))
/// (kc-pool-before-activation moved relu after the pooling) is
/// max_pool2d_grad_relu(x, g): y > 0 exactly where the window's first
/// maximum, where the gradient is routed, is above 0. The mask's pass over
/// the pooled gradient and its buffer go.
LogicalResult fusePooledReluMask(func::CallOp call, StringRef suffix,
                                 bool remarks) {
  if (!codegen::isTiledMaxPoolGrad(call))
    return failure();
  Value masked = pointerTensor(call.getOperand(1));
  auto mask =
      masked ? masked.getDefiningOp<linalg::GenericOp>() : linalg::GenericOp();
  if (!mask || !masked.hasOneUse() || mask.getNumResults() != 1 ||
      mask.getNumDpsInputs() != 2 ||
      mask.getNumLoops() != mask.getNumParallelLoops())
    return failure();
  Block &body = mask.getRegion().front();
  auto select = cast<linalg::YieldOp>(body.getTerminator())
                    .getOperand(0)
                    .getDefiningOp<arith::SelectOp>();
  auto cmp = select ? select.getCondition().getDefiningOp<arith::CmpFOp>()
                    : arith::CmpFOp();
  if (!cmp || cmp.getPredicate() != arith::CmpFPredicate::OGT ||
      !isZero(cmp.getRhs()) || !isZero(select.getFalseValue()))
    return failure();
  Value g, y;
  for (OpOperand *in : mask.getDpsInputOperands()) {
    if (!mask.getMatchingIndexingMap(in).isIdentity())
      return failure();
    Value arg = body.getArgument(in->getOperandNumber());
    if (arg == cmp.getLhs())
      y = in->get();
    else if (arg == select.getTrueValue())
      g = in->get();
  }
  if (!g || !y || !isReluOfMaxPool(y, call, suffix) || !dominatesCall(g, call))
    return failure();

  std::string name = ("kcc_rt_max_pool2d_grad_relu" + suffix).str();
  func::FuncOp callee = declare(call, name, call.getCalleeType());
  if (!callee)
    return failure();
  OpBuilder b(call);
  auto t = cast<RankedTensorType>(g.getType());
  Value m = b.create<bufferization::ToMemrefOp>(
      call.getLoc(), MemRefType::get(t.getShape(), t.getElementType()), g,
      /*read_only=*/true);
  SmallVector<Value> args(call.getOperands());
  args[1] = codegen::dataPointer(b, call.getLoc(), m);
  auto fused = b.create<func::CallOp>(call.getLoc(), callee, args);
  if (remarks)
    fused.emitRemark() << "fused into " << name
                       << ": relu's gradient mask after the pooling (one pass "
                          "over the pooled gradient and its buffer saved)";
  // The mask's pointer chain, then the mask itself, are dead.
  SmallVector<Operation *> dead;
  if (Operation *def = call.getOperand(1).getDefiningOp())
    dead.push_back(def);
  call.erase();
  while (!dead.empty()) {
    Operation *op = dead.pop_back_val();
    if (!op->use_empty() ||
        !(isOpTriviallyDead(op) || isa<bufferization::ToMemrefOp>(op)))
      continue;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        if (def != op)
          dead.push_back(def);
    op->erase();
  }
  ++numFusedEpilogues;
  return success();
}

/// avg_pool2d_grad followed by the gradient of the activation before the
/// pooling, read from that activation's output y (relu's `select(y > 0, g,
/// 0)`, tanh's `g * (1 - y * y)`, sigmoid's `g * (y * (1 - y))`), becomes
/// avg_pool2d_grad_<activation>(y, grad_output): the factor is applied
/// where the input gradient is written, and the generic's pass over it and
/// its buffer go. y is whatever tensor of the input gradient's shape the
/// generic reads (in a training step the activation's output, which the
/// gradient reads anyway), defined before the call.
LogicalResult fuseAvgPoolGradActivation(func::CallOp call, StringRef suffix,
                                        bool remarks) {
  // ABI: grad_output and output pointers, 8 dims, window, strides, padding.
  if (call.getNumOperands() != 15)
    return failure();
  memref::AllocOp out = pointerSource(call.getOperand(1));
  if (!out)
    return failure();
  bufferization::ToTensorOp product;
  linalg::GenericOp generic = singleGenericUser(out, product);
  if (!generic || generic.getNumResults() != 1 ||
      generic.getNumDpsInputs() != 2 ||
      generic.getNumLoops() != generic.getNumParallelLoops() ||
      generic.getResult(0).getType() != product.getType())
    return failure();
  Block &body = generic.getRegion().front();
  if (!body.getArgument(generic.getNumDpsInputs()).use_empty())
    return failure();
  Value g, yArg, y;
  for (OpOperand *in : generic.getDpsInputOperands()) {
    if (!generic.getMatchingIndexingMap(in).isIdentity())
      return failure();
    if (in->get() == product.getResult() && !g) {
      g = body.getArgument(in->getOperandNumber());
    } else {
      y = in->get();
      yArg = body.getArgument(in->getOperandNumber());
    }
  }
  if (!g || !y || y.getType() != product.getType() || !dominatesCall(y, call))
    return failure();
  Activation act = codegen::matchActivationGradient(
      cast<linalg::YieldOp>(body.getTerminator()).getOperand(0), g, yArg);
  if (act == Activation::None)
    return failure();

  OpBuilder b(call);
  Location loc = call.getLoc();
  auto type = cast<RankedTensorType>(y.getType());
  Value yMemref = b.create<bufferization::ToMemrefOp>(
      loc, MemRefType::get(type.getShape(), type.getElementType()), y,
      /*read_only=*/true);
  // The POOL2 layout: y, grad_output, out, then y's dims (the output's),
  // grad_output's, the output's, window, strides, padding.
  ValueRange ops = call.getOperands();
  SmallVector<Value> args = {codegen::dataPointer(b, loc, yMemref), ops[0],
                             ops[1]};
  llvm::append_range(args, ops.slice(6, 4));
  llvm::append_range(args, ops.slice(2, 4));
  llvm::append_range(args, ops.slice(6, 4));
  llvm::append_range(args, ops.slice(10, 5));
  std::string name =
      ("kcc_rt_avg_pool2d_grad_" + codegen::activationName(act) + suffix).str();
  func::FuncOp callee =
      declare(call, name, b.getFunctionType(ValueRange(args).getTypes(), {}));
  if (!callee)
    return failure();
  auto fused = b.create<func::CallOp>(loc, callee, args);
  if (remarks)
    fused.emitRemark() << "fused into " << name << ": "
                       << codegen::activationName(act)
                       << "'s gradient (one pass over the input gradient and "
                          "its buffer saved)";
  generic.getResult(0).replaceAllUsesWith(product.getResult());
  generic.erase();
  call.erase();
  ++numFusedEpilogues;
  return success();
}

/// Fuses the epilogue of `call` if it has one.
LogicalResult fuse(func::CallOp call, bool remarks) {
  StringRef callee = call.getCallee();
  for (StringRef suffix : {"_f32", "_f64"}) {
    if (callee == ("kcc_rt_max_pool2d_grad" + suffix).str())
      return success(succeeded(fuseMaxPoolGradMask(call, suffix, remarks)) ||
                     succeeded(fusePooledReluMask(call, suffix, remarks)));
    if (callee == ("kcc_rt_max_pool2d" + suffix).str())
      return fuseMaxPoolRelu(call, suffix, remarks);
    if (callee == ("kcc_rt_avg_pool2d_grad" + suffix).str())
      return fuseAvgPoolGradActivation(call, suffix, remarks);
  }
  const FusableCall *kind = nullptr;
  StringRef suffix;
  for (const FusableCall &k : kFusable)
    if (callee.starts_with(k.base) &&
        (callee.drop_front(k.base.size()) == "_f32" ||
         callee.drop_front(k.base.size()) == "_f64")) {
      kind = &k;
      suffix = callee.drop_front(k.base.size());
    }
  if (!kind ||
      call.getNumOperands() != kind->outPointer + 1 + kind->numTrailing)
    return failure();
  memref::AllocOp out = pointerSource(call.getOperand(kind->outPointer));
  if (!out)
    return failure();
  // The output becomes a tensor once, and that tensor feeds one generic.
  bufferization::ToTensorOp product;
  for (Operation *user : out->getUsers())
    if (auto t = dyn_cast<bufferization::ToTensorOp>(user)) {
      if (product)
        return failure();
      product = t;
    }
  if (!product || !product->hasOneUse())
    return failure();
  auto generic = dyn_cast<linalg::GenericOp>(*product->user_begin());
  if (!generic)
    return failure();
  std::optional<Epilogue> epilogue = matchEpilogue(generic, product);
  if (!epilogue || (epilogue->bias && !dominatesCall(epilogue->bias, call)))
    return failure();

  OpBuilder b(call);
  Location loc = call.getLoc();
  auto elt = cast<RankedTensorType>(product.getType()).getElementType();
  Value biasPtr;
  if (epilogue->bias) {
    auto t = cast<RankedTensorType>(epilogue->bias.getType());
    Value m = b.create<bufferization::ToMemrefOp>(
        loc, MemRefType::get(t.getShape(), elt), epilogue->bias,
        /*read_only=*/true);
    biasPtr = codegen::dataPointer(b, loc, m);
  } else {
    // Any valid pointer: the kernel reads no bias when has_bias is 0.
    biasPtr = call.getOperand(kind->outPointer);
  }
  SmallVector<Value> args(call.getOperands().take_front(kind->outPointer));
  args.push_back(biasPtr);
  llvm::append_range(args, call.getOperands().drop_front(kind->outPointer));
  auto i64 = [&](int64_t v) {
    return b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(v));
  };
  args.push_back(i64(epilogue->bias ? 1 : 0));
  args.push_back(i64(static_cast<int64_t>(epilogue->activation)));
  args.push_back(
      b.create<arith::ConstantOp>(loc, b.getF64FloatAttr(epilogue->param)));

  std::string name = (kind->base + "_epilogue" + suffix).str();
  func::FuncOp callee2 =
      declare(call, name, b.getFunctionType(ValueRange(args).getTypes(), {}));
  if (!callee2)
    return failure();
  auto fused = b.create<func::CallOp>(loc, callee2, args);
  if (remarks) {
    bool act = epilogue->activation != Activation::None;
    fused.emitRemark() << "fused into " << name << ": "
                       << (epilogue->bias ? "bias" : "")
                       << (epilogue->bias && act ? " + " : "")
                       << codegen::describeActivation(epilogue->activation,
                                                      epilogue->param)
                       << " (one pass over the output and its buffer saved)";
  }
  generic.getResult(0).replaceAllUsesWith(product.getResult());
  generic.erase();
  call.erase();
  ++numFusedEpilogues;
  return success();
}

struct KcFuseEpiloguesPass
    : public kcc::impl::KcFuseEpiloguesBase<KcFuseEpiloguesPass> {
  using KcFuseEpiloguesBase::KcFuseEpiloguesBase;

  void runOnOperation() override {
    SmallVector<func::CallOp> calls;
    getOperation()->walk([&](func::CallOp call) { calls.push_back(call); });
    for (func::CallOp call : calls)
      (void)fuse(call, remarks);
    // Declarations the fused calls replaced.
    for (auto f :
         llvm::make_early_inc_range(getOperation().getOps<func::FuncOp>()))
      if (f.isExternal() &&
          f.getSymName().starts_with(codegen::kLibraryCallPrefix) &&
          f.symbolKnownUseEmpty(getOperation()))
        f.erase();
  }
};

} // namespace
