//===- LaunchPlan.cpp - Read a lowered module into a CudaProgram ----------===//
//
// After kc-cuda-pipeline the entry function is straight-line host code:
// arena views, GEMM library calls and gpu.launch_func ops with constant grid
// and block sizes. This file replays it symbolically, naming every memref by
// (argument | arena | constant, byte offset), so the runtime needs no MLIR.
// Anything else left on the host is an error with the op's location.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/CudaPasses.h"
#include "codegen/lowering/LoweringUtils.h"
#include "ir/KcAttributes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace kcc;
using cuda::BufferRef;

namespace {

std::string dtypeName(Type t) {
  if (t.isF32())
    return "f32";
  if (t.isF64())
    return "f64";
  if (t.isInteger(64) || t.isIndex())
    return "i64";
  if (t.isInteger(32))
    return "i32";
  if (t.isInteger(1))
    return "i1";
  return "";
}

int64_t elementBytes(Type t) {
  if (t.isInteger(1))
    return 1; // memrefs of i1 hold one byte per element
  if (t.isIndex())
    return 8;
  return t.getIntOrFloatBitWidth() / 8;
}

class Extractor {
public:
  Extractor(ModuleOp module, cuda::CudaProgram &program)
      : module(module), p(program) {}

  LogicalResult run(func::FuncOp f, unsigned numInputs, unsigned numResults);

private:
  LogicalResult visit(Operation *op);
  FailureOr<BufferRef> ref(Operation *user, Value v);
  FailureOr<int64_t> constInt(Operation *user, Value v);
  LogicalResult launch(gpu::LaunchFuncOp op);
  LogicalResult call(func::CallOp op);
  LogicalResult constant(memref::GetGlobalOp op);

  ModuleOp module;
  cuda::CudaProgram &p;
  DenseMap<Value, BufferRef> refs; ///< memrefs and the pointers taken of them
  llvm::StringMap<unsigned> moduleIndex;
  llvm::StringMap<unsigned> globalIndex;
};

FailureOr<BufferRef> Extractor::ref(Operation *user, Value v) {
  auto it = refs.find(v);
  if (it != refs.end())
    return it->second;
  InFlightDiagnostic diag = user->emitOpError(
      "uses a buffer the CUDA runtime cannot name (not an argument, the "
      "arena or a constant)");
  if (Operation *def = v.getDefiningOp())
    diag.attachNote(def->getLoc()) << "defined by " << *def;
  return diag;
}

FailureOr<int64_t> Extractor::constInt(Operation *user, Value v) {
  APInt value;
  if (matchPattern(v, m_ConstantInt(&value)))
    return value.getSExtValue();
  return user->emitOpError("expects a constant operand for the CUDA runtime");
}

LogicalResult Extractor::run(func::FuncOp f, unsigned numInputs,
                             unsigned numResults) {
  p.function = f.getSymName().str();
  for (auto binary : module.getOps<gpu::BinaryOp>()) {
    auto objects = binary.getObjects();
    auto object = objects.empty() ? gpu::ObjectAttr()
                                  : dyn_cast<gpu::ObjectAttr>(objects[0]);
    if (!object)
      return binary.emitOpError("has no object to load");
    moduleIndex[binary.getSymName()] = p.modules.size();
    p.modules.push_back({binary.getSymName().str(),
                         // The serializer keeps the C string's NUL.
                         object.getObject().getValue().rtrim('\0').str()});
  }

  p.numInputs = numInputs;
  p.numResults = numResults;
  if (!f.getBody().hasOneBlock())
    return f.emitOpError("expects straight-line host code (one block)");
  for (BlockArgument arg : f.getArguments()) {
    auto type = dyn_cast<MemRefType>(arg.getType());
    if (!type || !type.hasStaticShape())
      return f.emitOpError("expects statically shaped memref arguments, got ")
             << arg.getType();
    if (kc::isArenaArg(f, arg.getArgNumber())) {
      p.arenaBytes = type.getNumElements();
      refs[arg] = {BufferRef::Kind::Arena, 0, 0};
      continue;
    }
    cuda::ArgSpec spec;
    spec.shape.assign(type.getShape().begin(), type.getShape().end());
    spec.dtype = dtypeName(type.getElementType());
    spec.bytes = type.getNumElements() * elementBytes(type.getElementType());
    refs[arg] = {BufferRef::Kind::Arg, int64_t(p.args.size()), 0};
    p.args.push_back(spec);
  }
  if (p.args.size() != numInputs + numResults)
    return f.emitOpError("has ")
           << p.args.size() << " buffer arguments after lowering, expected "
           << numInputs << " inputs + " << numResults << " results";
  for (Operation &op : f.getBody().front())
    if (failed(visit(&op)))
      return failure();
  return success();
}

LogicalResult Extractor::constant(memref::GetGlobalOp op) {
  auto it = globalIndex.find(op.getName());
  if (it == globalIndex.end()) {
    auto global = module.lookupSymbol<memref::GlobalOp>(op.getNameAttr());
    auto init =
        global
            ? dyn_cast_or_null<DenseElementsAttr>(global.getInitialValueAttr())
            : DenseElementsAttr();
    Type elt = op.getType().getElementType();
    if (!init || elt.isInteger(1))
      return op.emitOpError("constant the CUDA runtime cannot upload");
    std::string bytes;
    ArrayRef<char> raw = init.getRawData();
    int64_t n = op.getType().getNumElements();
    if (init.isSplat())
      for (int64_t i = 0; i < n; ++i)
        bytes.append(raw.data(), raw.size());
    else
      bytes.assign(raw.data(), raw.size());
    it = globalIndex.insert({op.getName(), unsigned(p.constants.size())}).first;
    p.constants.push_back(std::move(bytes));
  }
  refs[op.getResult()] = {BufferRef::Kind::Constant, it->second, 0};
  return success();
}

LogicalResult Extractor::launch(gpu::LaunchFuncOp op) {
  cuda::Launch l;
  auto it = moduleIndex.find(op.getKernelModuleName().getValue());
  if (it == moduleIndex.end())
    return op.emitOpError("launches a kernel of a module without PTX");
  l.module = it->second;
  l.kernel = op.getKernelName().str();
  if (op.getDynamicSharedMemorySize())
    return op.emitOpError("dynamic shared memory is not supported");
  gpu::KernelDim3 grid = op.getGridSizeOperandValues(),
                  block = op.getBlockSizeOperandValues();
  Value dims[6] = {grid.x, grid.y, grid.z, block.x, block.y, block.z};
  for (int i = 0; i < 6; ++i) {
    FailureOr<int64_t> d = constInt(op, dims[i]);
    if (failed(d))
      return failure();
    (i < 3 ? l.grid[i] : l.block[i - 3]) = *d;
  }
  for (Value operand : op.getKernelOperands()) {
    cuda::KernelArg a;
    Type t = operand.getType();
    if (auto mt = dyn_cast<MemRefType>(t)) {
      FailureOr<BufferRef> base = ref(op, operand);
      if (failed(base))
        return failure();
      SmallVector<int64_t> strides;
      int64_t offset;
      if (failed(getStridesAndOffset(mt, strides, offset)) ||
          !mt.hasStaticShape() || ShapedType::isDynamic(offset) ||
          llvm::any_of(strides, ShapedType::isDynamic))
        return op.emitOpError("kernel operand with a dynamic layout: ") << mt;
      a.kind = cuda::KernelArg::Kind::Memref;
      a.base = *base;
      a.offset = offset;
      a.sizes.assign(mt.getShape().begin(), mt.getShape().end());
      a.strides.assign(strides.begin(), strides.end());
    } else if (t.isIndex() || t.isInteger(64) || t.isInteger(32)) {
      FailureOr<int64_t> v = constInt(op, operand);
      if (failed(v))
        return failure();
      a.kind = t.isInteger(32) ? cuda::KernelArg::Kind::I32
                               : cuda::KernelArg::Kind::I64;
      a.intValue = *v;
    } else if (t.isF32() || t.isF64()) {
      FloatAttr value;
      if (!matchPattern(operand, m_Constant(&value)))
        return op.emitOpError("expects a constant float kernel operand");
      a.kind =
          t.isF32() ? cuda::KernelArg::Kind::F32 : cuda::KernelArg::Kind::F64;
      a.floatValue = value.getValueAsDouble();
    } else {
      return op.emitOpError("kernel operand of unsupported type ") << t;
    }
    l.args.push_back(std::move(a));
  }
  p.steps.push_back({cuda::Step::Kind::Launch, unsigned(p.launches.size())});
  p.launches.push_back(std::move(l));
  return success();
}

LogicalResult Extractor::call(func::CallOp op) {
  StringRef callee = op.getCallee();
  if (!callee.consume_front(codegen::kLibraryCallPrefix))
    return op.emitOpError("calls @")
           << op.getCallee() << ", which the CUDA runtime cannot run";
  cuda::LibraryCall c;
  auto [name, dtype] = callee.rsplit('_');
  c.name = name.str();
  c.dtype = dtype.str();
  for (Value operand : op.getOperands()) {
    if (isa<LLVM::LLVMPointerType>(operand.getType())) {
      FailureOr<BufferRef> r = ref(op, operand);
      if (failed(r))
        return failure();
      c.buffers.push_back(*r);
      continue;
    }
    FailureOr<int64_t> v = constInt(op, operand);
    if (failed(v))
      return failure();
    c.ints.push_back(*v);
  }
  p.steps.push_back({cuda::Step::Kind::Call, unsigned(p.calls.size())});
  p.calls.push_back(std::move(c));
  return success();
}

LogicalResult Extractor::visit(Operation *op) {
  // Views keep their source's base address (their own offset and strides
  // are in their types); memref.view moves it by a constant byte shift.
  auto alias = [&](Value result, Value source, int64_t shift) {
    FailureOr<BufferRef> r = ref(op, source);
    if (failed(r))
      return failure();
    BufferRef moved = *r;
    moved.byteOffset += shift;
    refs[result] = moved;
    return success();
  };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<arith::ConstantOp, func::ReturnOp, memref::DeallocOp>(
          [](Operation *) { return success(); })
      .Case([&](memref::ViewOp v) -> LogicalResult {
        FailureOr<int64_t> shift = constInt(op, v.getByteShift());
        if (failed(shift))
          return failure();
        return alias(v.getResult(), v.getSource(), *shift);
      })
      .Case<memref::SubViewOp, memref::CollapseShapeOp, memref::ExpandShapeOp,
            memref::CastOp, memref::ReinterpretCastOp>([&](Operation *o) {
        return alias(o->getResult(0), o->getOperand(0), 0);
      })
      .Case([&](memref::ExtractAlignedPointerAsIndexOp e) {
        return alias(e.getResult(), e.getSource(), 0);
      })
      .Case([&](arith::IndexCastOp c) {
        if (refs.count(c.getIn()))
          return alias(c.getResult(), c.getIn(), 0);
        return success(); // a plain integer: resolved where used
      })
      .Case([&](LLVM::IntToPtrOp c) {
        return alias(c.getResult(), c.getArg(), 0);
      })
      .Case([&](arith::AddIOp a) -> LogicalResult {
        // Pointer arithmetic folded out of a view: address + constant.
        for (auto [addr, off] : {std::pair(a.getLhs(), a.getRhs()),
                                 std::pair(a.getRhs(), a.getLhs())}) {
          APInt value;
          if (refs.count(addr) && matchPattern(off, m_ConstantInt(&value)))
            return alias(a.getResult(), addr, value.getSExtValue());
        }
        return success(); // plain integer math: resolved where used
      })
      .Case([&](memref::GetGlobalOp g) { return constant(g); })
      .Case([&](gpu::LaunchFuncOp l) { return launch(l); })
      .Case([&](func::CallOp c) { return call(c); })
      .Case([&](memref::CopyOp c) -> LogicalResult {
        auto from = cast<MemRefType>(c.getSource().getType());
        auto to = cast<MemRefType>(c.getTarget().getType());
        if (!from.getLayout().isIdentity() || !to.getLayout().isIdentity())
          return op->emitOpError("strided copy left on the host");
        FailureOr<BufferRef> a = ref(op, c.getSource()),
                             b = ref(op, c.getTarget());
        if (failed(a) || failed(b))
          return failure();
        p.steps.push_back({cuda::Step::Kind::Copy, unsigned(p.copies.size())});
        p.copies.push_back(
            {*a, *b,
             from.getNumElements() * elementBytes(from.getElementType())});
        return success();
      })
      .Default([](Operation *o) -> LogicalResult {
        // Side-effect-free scalar math (index arithmetic the launch
        // conversion left behind) is harmless: what a launch or call needs
        // must fold to a constant, which constInt checks.
        if (o->getNumRegions() == 0 && isMemoryEffectFree(o) &&
            llvm::none_of(o->getResultTypes(),
                          [](Type t) { return isa<ShapedType>(t); }))
          return success();
        return o->emitOpError("left on the host: the CUDA runtime runs only "
                              "kernel launches, GEMM calls and copies");
      });
}

} // namespace

FailureOr<cuda::CudaProgram> kcc::extractCudaProgram(ModuleOp lowered,
                                                     StringRef funcName,
                                                     unsigned numInputs,
                                                     unsigned numResults) {
  auto f = lowered.lookupSymbol<func::FuncOp>(funcName);
  if (!f)
    return lowered.emitError("no function @") << funcName << " after lowering";
  cuda::CudaProgram program;
  Extractor extractor(lowered, program);
  if (failed(extractor.run(f, numInputs, numResults)))
    return failure();
  return program;
}
