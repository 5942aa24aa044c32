//===- LowerRecurrence.cpp - kc.recurrence as generated loops over time ---===//
//
// kc.recurrence and kc.recurrence_grad (layouts in runtime/kernels/
// Recurrence.h) become a loop over time in the IR, so the module's size does
// not depend on T.
//
// In f32 the steps of every cell (LSTM, GRU with reset_after true or false,
// SimpleRNN) are generated here: the compiler knows B, H, the cell and its
// activations, so a step is a few loop nests specialized to them, on the
// calling thread (no OpenMP team per step), with no call per step:
//
//   forward, per block of 4 batch rows and 16 units: the recurrent product
//     h_prev . U of every gate accumulates in vector registers (from the
//     input projection row), each row of U loaded once for the 4 rows; the
//     gate arithmetic follows in the same nest, row by row, while the
//     block is in L1, and writes the states row once;
//   backward, per block of rows: the gate gradients from the saved states
//     row, the carries and the states' gradient, written as the step's d x
//     row; the carry d h = d z . U^T in registers, from U^T transposed once
//     before the loop; then, per step, d U += h_prev^T . d z and d rbias +=
//     sum d z with 4 rows of d U in registers over the batch.
//
// The states' gradient is read only where it can be nonzero: it is usually
// the gradient of a slice of the states (the last h, every h), zeros joined
// by kc.concat, which the compiler sees and the interpreter, running one op
// at a time, has to build as a [T, B, S] buffer (GradStates below).
//
// Each recurrence is an internal function called once per sequence, shared
// by the recurrences with the same cell, sizes and (backward) nonzero
// gradient parts: the direction is an argument, so the two directions of a
// Bidirectional layer, and the forward of @forward and of @train_step, are
// compiled once. Runs of fewer than 16 units use a whole register (the next
// power of two of lanes) with masked loads and stores.
//
// Step 0 reads the initial state where the others read the previous states
// row: a select of the buffer, so the step is emitted once. The activations
// are the kernel library's: the same rational tanh, sigmoid as
// 1 / (1 + exp(-x)) with the same polynomial exp (runtime/kernels/Exp.h),
// relu, linear and hard_sigmoid, so compiled and interpreted steps agree to
// rounding (tests/unit/codegen/CompiledRecurrenceTest.cpp).
//
// Here: the rewrite patterns, the function each generated recurrence lives
// in, and the library-call loop. The loop nests of the cells are in
// RecurrenceCells.cpp, their products with U in RecurrenceProducts.cpp, the
// vector builder they are written with in RecurrenceVectorBuilder.cpp, and
// the gate arithmetic itself in runtime/kernels/RecurrentCells.h.
//
// f64 (the gradient checks) and recurrent kernels beyond 256 KiB (LSTM
// H > 128, where a block of rows would stream U from L2 every step) loop
// over the step entry points of runtime/LibraryCalls.h instead: the
// interpreter's arithmetic, oneDNN for the large products.
//
//===----------------------------------------------------------------------===//

#include "codegen/lowering/LoweringUtils.h"
#include "codegen/lowering/RecurrenceCells.h"
#include "ir/KcDialect.h"
#include "ir/Recurrence.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/DialectConversion.h"

#define DEBUG_TYPE "kc-lower-to-linalg"

using namespace mlir;
using namespace kcc;
using namespace kcc::codegen;
using namespace kcc::codegen::recurrence;

namespace {

//===----------------------------------------------------------------------===//
// The library-call loop (every cell and type)
//===----------------------------------------------------------------------===//

/// A loop over time in the IR whose body is one call of the step entry
/// point (runtime/kernels/Recurrence.h). The states buffer is allocated
/// once, before the loop, so the arena holds the [T, B, S] values the
/// backward reads. The backward runs its loop from the last step down.
template <typename OpTy>
LogicalResult emitStepLoop(OpTy op, StringRef base, ValueRange inputs,
                           bool backward, int64_t steps, int64_t batch,
                           int64_t units, ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  FailureOr<kernels::RecurrenceParams> p = kc::recurrenceParams(op);
  if (failed(p))
    return failure();
  auto outType = cast<RankedTensorType>(op.getType());
  Type elt = outType.getElementType();
  if (!elt.isF32() && !elt.isF64())
    return rewriter.notifyMatchFailure(op, "library calls take f32 or f64");
  std::string name =
      (kLibraryCallPrefix + base + (elt.isF32() ? "_f32" : "_f64")).str();

  SmallVector<Value> args;
  for (Value in : inputs) {
    auto t = cast<RankedTensorType>(in.getType());
    Value memref = rewriter.create<bufferization::ToMemrefOp>(
        loc, MemRefType::get(t.getShape(), t.getElementType()), in,
        /*read_only=*/true);
    args.push_back(dataPointer(rewriter, loc, memref));
  }
  Value out = rewriter.create<memref::AllocOp>(
      loc, MemRefType::get(outType.getShape(), elt),
      rewriter.getI64IntegerAttr(64));
  args.push_back(dataPointer(rewriter, loc, out));
  auto i64 = [&](int64_t v) -> Value {
    return rewriter.create<arith::ConstantOp>(loc,
                                              rewriter.getI64IntegerAttr(v));
  };
  SmallVector<Value> trailing = {
      i64(steps),
      i64(batch),
      i64(units),
      i64(static_cast<int64_t>(p->cell)),
      i64(p->resetAfter),
      i64(static_cast<int64_t>(p->activation)),
      i64(static_cast<int64_t>(p->recurrentActivation)),
      i64(p->reverse)};

  SmallVector<Type> types(ValueRange(args).getTypes());
  types.append(1 + trailing.size(), rewriter.getI64Type());
  auto fnType = rewriter.getFunctionType(types, {});
  func::FuncOp callee = codegen::getOrDeclare(
      rewriter, op->template getParentOfType<ModuleOp>(), name, fnType);
  if (callee.getFunctionType() != fnType)
    return op.emitOpError("conflicting declaration of ") << name;

  Value lb = rewriter.create<arith::ConstantIndexOp>(loc, 0);
  Value ub = rewriter.create<arith::ConstantIndexOp>(loc, steps);
  Value one = rewriter.create<arith::ConstantIndexOp>(loc, 1);
  Value last = i64(steps - 1);
  rewriter.create<scf::ForOp>(
      loc, lb, ub, one, ValueRange(),
      [&](OpBuilder &b, Location l, Value iv, ValueRange) {
        Value i = b.create<arith::IndexCastOp>(l, b.getI64Type(), iv);
        Value step = backward ? b.create<arith::SubIOp>(l, last, i) : i;
        SmallVector<Value> callArgs(args);
        callArgs.push_back(step);
        callArgs.append(trailing);
        b.create<func::CallOp>(l, callee, callArgs);
        b.create<scf::YieldOp>(l);
      });
  rewriter.replaceOpWithNewOp<bufferization::ToTensorOp>(
      op, outType, out, /*restrict=*/true, /*writable=*/true);
  return success();
}

//===----------------------------------------------------------------------===//
// Generated steps: one function per recurrence
//===----------------------------------------------------------------------===//

/// A memref flattened to one dimension (a view).
Value flat(OpBuilder &b, Location loc, Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  if (type.getRank() == 1)
    return memref;
  ReassociationIndices all;
  for (int64_t i = 0; i < type.getRank(); ++i)
    all.push_back(i);
  return b.create<memref::CollapseShapeOp>(loc, memref,
                                           ArrayRef<ReassociationIndices>{all});
}

/// The flat read-only memref of a tensor operand.
Value flatInput(OpBuilder &b, Location loc, Value tensor) {
  auto t = cast<RankedTensorType>(tensor.getType());
  Value memref = b.create<bufferization::ToMemrefOp>(
      loc, MemRefType::get(t.getShape(), t.getElementType()), tensor,
      /*read_only=*/true);
  return flat(b, loc, memref);
}
/// Adds to `boxes` the parts of `v` (the region of the states' gradient
/// from step t0 and column s0) that may be nonzero: through kc.concat along
/// steps or columns and kc.add, to zero constants (nothing) and other values
/// (one box each). False when the parts are too many or not whole slots.
bool decompose(Value v, int64_t t0, int64_t s0, int64_t units,
               SmallVector<GradBox> &boxes, int depth = 0) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || type.getRank() != 3 || depth > 8 || boxes.size() > 8)
    return false;
  Operation *def = v.getDefiningOp();
  if (auto c = dyn_cast_or_null<kc::ConstantOp>(def)) {
    auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
    if (dense && dense.isSplat() && isa<FloatType>(dense.getElementType()) &&
        dense.getSplatValue<APFloat>().isZero())
      return true;
  }
  if (auto cat = dyn_cast_or_null<kc::ConcatOp>(def)) {
    int64_t axis = cat.getAxis();
    if (axis == 0 || axis == 2) {
      int64_t off = 0;
      for (Value in : cat.getInputs()) {
        if (!decompose(in, t0 + (axis == 0 ? off : 0),
                       s0 + (axis == 2 ? off : 0), units, boxes, depth + 1))
          return false;
        off += cast<RankedTensorType>(in.getType()).getDimSize(axis);
      }
      return true;
    }
  }
  if (auto add = dyn_cast_or_null<kc::AddOp>(def))
    if (add.getLhs().getType() == type && add.getRhs().getType() == type)
      return decompose(add.getLhs(), t0, s0, units, boxes, depth + 1) &&
             decompose(add.getRhs(), t0, s0, units, boxes, depth + 1);
  int64_t s1 = s0 + type.getDimSize(2);
  if (s0 % units || s1 % units)
    return false;
  boxes.push_back({v, Value(), t0, t0 + type.getDimSize(0), s0, s1});
  return true;
}

/// Whether a recurrence gets generated steps: f32, with a recurrent kernel
/// that stays in cache.
bool generated(const RecurrenceSizes &dims, Type elt) {
  return elt.isF32() && dims.H * dims.N * 4 <= kMaxKernelBytes && dims.T > 0 &&
         dims.B > 0 && dims.H > 0;
}

template <typename OpTy>
FailureOr<RecurrenceSizes> dimsOf(OpTy op, RankedTensorType states,
                                  RankedTensorType kernel) {
  FailureOr<kernels::RecurrenceParams> p = kc::recurrenceParams(op);
  if (failed(p))
    return failure();
  RecurrenceSizes dims;
  dims.p = *p;
  dims.T = states.getDimSize(0);
  dims.B = states.getDimSize(1);
  dims.H = kernel.getDimSize(0);
  dims.G = kernels::recurrentGates(p->cell);
  dims.N = dims.G * dims.H;
  dims.S = kernels::recurrentStateWidth(*p, dims.H);
  dims.KH = kernels::recurrentInitialWidth(p->cell, dims.H);
  return dims;
}

/// Elements of the backward's scratch (0: none).
int64_t scratchSize(const RecurrenceSizes &dims) {
  if (dims.p.cell != kernels::RecurrentCell::Gru)
    return 0;
  return dims.p.resetAfter ? dims.B * dims.N : 2 * dims.B * dims.H;
}

/// The function holding a generated recurrence, `name` in the module,
/// created on first use: a recurrence with the same name (the same cell,
/// sizes and, for the backward, the same nonzero parts of the states'
/// gradient) calls the same code, so the two directions of a Bidirectional
/// layer, and the forward of @forward and of @train_step, are compiled once.
/// Its arguments: flat static memrefs (bare pointers after lowering), then
/// the direction as an i1.
func::FuncOp
getOrCreateRecurrence(ConversionPatternRewriter &rewriter, Operation *op,
                      StringRef name, ArrayRef<Value> memrefs,
                      function_ref<void(VectorBuilder &, ValueRange)> body) {
  auto module = op->getParentOfType<ModuleOp>();
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  SmallVector<Type> types(ValueRange(memrefs).getTypes());
  types.push_back(rewriter.getI1Type());
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToEnd(module.getBody());
  auto f = rewriter.create<func::FuncOp>(op->getLoc(), name,
                                         rewriter.getFunctionType(types, {}));
  f.setPrivate();
  // Internal in LLVM too: no symbol of a library or object file.
  f->setAttr("llvm.linkage", LLVM::LinkageAttr::get(rewriter.getContext(),
                                                    LLVM::Linkage::Internal));
  Block *entry = f.addEntryBlock();
  rewriter.setInsertionPointToStart(entry);
  VectorBuilder vb(rewriter, op->getLoc());
  body(vb, entry->getArguments());
  rewriter.create<func::ReturnOp>(op->getLoc());
  return f;
}

/// The part of a generated function's name every recurrence shares.
std::string recurrenceKey(const RecurrenceSizes &dims, StringRef what) {
  std::string key;
  llvm::raw_string_ostream os(key);
  os << "kc_" << what << "_" << kernels::recurrentCellName(dims.p.cell);
  if (dims.p.cell == kernels::RecurrentCell::Gru && !dims.p.resetAfter)
    os << "_v1";
  os << "_" << dims.T << "x" << dims.B << "x" << dims.H << "_a"
     << static_cast<int>(dims.p.activation) << "r"
     << static_cast<int>(dims.p.recurrentActivation);
  return os.str();
}

struct RecurrenceLowering : OpConversionPattern<kc::RecurrenceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kc::RecurrenceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto states = cast<RankedTensorType>(op.getType());
    auto kernel = cast<RankedTensorType>(op.getKernel().getType());
    FailureOr<RecurrenceSizes> dims = dimsOf(op, states, kernel);
    if (failed(dims))
      return failure();
    if (!generated(*dims, states.getElementType()))
      return emitStepLoop(
          op, "recurrence_step",
          {adaptor.getX(), adaptor.getKernel(), adaptor.getInitialState(),
           adaptor.getRecurrentBias()},
          /*backward=*/false, dims->T, dims->B, dims->H, rewriter);
    Location loc = op.getLoc();
    Value out = rewriter.create<memref::AllocOp>(
        loc, MemRefType::get(states.getShape(), states.getElementType()),
        rewriter.getI64IntegerAttr(64));
    SmallVector<Value> args = {
        flatInput(rewriter, loc, adaptor.getX()),
        flatInput(rewriter, loc, adaptor.getKernel()),
        flatInput(rewriter, loc, adaptor.getInitialState()),
        flatInput(rewriter, loc, adaptor.getRecurrentBias()),
        flat(rewriter, loc, out)};
    func::FuncOp fn = getOrCreateRecurrence(
        rewriter, op, recurrenceKey(*dims, "recurrence"), args,
        [&](VectorBuilder &vb, ValueRange arguments) {
          RecurrenceMemrefs mem;
          mem.x = arguments[0];
          mem.u = arguments[1];
          mem.init = arguments[2];
          mem.rb = arguments[3];
          mem.states = arguments[4];
          mem.reverse = arguments[5];
          emitForward(vb, *dims, mem);
        });
    args.push_back(rewriter.create<arith::ConstantOp>(
        loc, rewriter.getBoolAttr(dims->p.reverse)));
    rewriter.create<func::CallOp>(loc, fn, args);
    rewriter.replaceOpWithNewOp<bufferization::ToTensorOp>(
        op, states, out, /*restrict=*/true, /*writable=*/true);
    return success();
  }
};

struct RecurrenceGradLowering : OpConversionPattern<kc::RecurrenceGradOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kc::RecurrenceGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto states = cast<RankedTensorType>(op.getStates().getType());
    auto kernel = cast<RankedTensorType>(op.getKernel().getType());
    auto gradType = cast<RankedTensorType>(op.getType());
    FailureOr<RecurrenceSizes> dims = dimsOf(op, states, kernel);
    if (failed(dims))
      return failure();
    if (!generated(*dims, gradType.getElementType()))
      return emitStepLoop(op, "recurrence_grad_step",
                          {adaptor.getKernel(), adaptor.getInitialState(),
                           adaptor.getStates(), adaptor.getGradStates()},
                          /*backward=*/true, dims->T, dims->B, dims->H,
                          rewriter);
    Location loc = op.getLoc();
    // The states' gradient: its nonzero parts, or the whole buffer.
    GradStates gradStates;
    if (!decompose(op.getGradStates(), 0, 0, dims->H, gradStates.boxes))
      gradStates.boxes = {
          {op.getGradStates(), Value(), 0, dims->T, 0, dims->S}};
    auto alloc = [&](int64_t n) -> Value {
      return rewriter.create<memref::AllocOp>(
          loc, MemRefType::get({n}, rewriter.getF32Type()),
          rewriter.getI64IntegerAttr(64));
    };
    Value grad = alloc(gradType.getNumElements());
    SmallVector<Value> args = {
        flatInput(rewriter, loc, adaptor.getKernel()),
        flatInput(rewriter, loc, adaptor.getInitialState()),
        flatInput(rewriter, loc, adaptor.getStates()), grad,
        alloc(dims->N * dims->H)};
    int64_t scratch = scratchSize(*dims);
    if (scratch)
      args.push_back(alloc(scratch));
    std::string name = recurrenceKey(*dims, "recurrence_grad");
    llvm::raw_string_ostream os(name);
    for (const GradBox &box : gradStates.boxes) {
      args.push_back(
          flatInput(rewriter, loc, rewriter.getRemappedValue(box.value)));
      os << "_g" << box.t0 << "_" << box.t1 << "_" << box.s0 << "_" << box.s1;
    }
    os.flush();
    func::FuncOp fn = getOrCreateRecurrence(
        rewriter, op, name, args, [&](VectorBuilder &vb, ValueRange arguments) {
          RecurrenceMemrefs mem;
          mem.u = arguments[0];
          mem.init = arguments[1];
          mem.states = arguments[2];
          mem.grad = arguments[3];
          mem.ut = arguments[4];
          size_t nextArgument = 5;
          if (scratch)
            mem.scratch = arguments[nextArgument++];
          mem.gradStates = gradStates;
          for (GradBox &box : mem.gradStates.boxes)
            box.mem = arguments[nextArgument++];
          mem.reverse = arguments[nextArgument];
          emitBackward(vb, *dims, mem);
        });
    args.push_back(rewriter.create<arith::ConstantOp>(
        loc, rewriter.getBoolAttr(dims->p.reverse)));
    rewriter.create<func::CallOp>(loc, fn, args);
    rewriter.replaceOpWithNewOp<bufferization::ToTensorOp>(
        op, gradType, grad, /*restrict=*/true, /*writable=*/true);
    return success();
  }
};

} // namespace

void kcc::codegen::populateRecurrencePatterns(RewritePatternSet &patterns) {
  patterns.add<RecurrenceLowering, RecurrenceGradLowering>(
      patterns.getContext());
}
