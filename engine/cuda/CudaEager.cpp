//===- CudaEager.cpp - Op-by-op execution on the GPU ----------------------===//

#include "engine/cuda/CudaEager.h"
#include "runtime/Error.h"
#include "runtime/cuda/CudaApi.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace kcc;
using namespace kcc::cuda;

CudaEager::CudaEager(const CudaOptions &opts) {
  opts_.chip = std::string(opts.chip);
  opts_.features = std::string(opts.features);
  opts_.toolkitPath = std::string(opts.toolkitPath);
  opts_.blockSize = int64_t(opts.blockSize);
  std::string why;
  const DriverApi *d = driver(&why);
  if (!d)
    throw Error(why);
  CUstream s;
  check(d->cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  stream_ = s;
}

CudaEager::~CudaEager() {
  cache_.clear();
  if (const DriverApi *d = driver(); d && stream_) {
    for (uint64_t p : resident_)
      d->cuMemFree(p);
    d->cuStreamDestroy(static_cast<CUstream>(stream_));
  }
}

CudaExecutable &CudaEager::programFor(Operation *op) {
  std::string key;
  llvm::raw_string_ostream os(key);
  os << op->getName() << op->getAttrDictionary() << " : ";
  llvm::interleaveComma(op->getOperandTypes(), os);
  os << " -> ";
  llvm::interleaveComma(op->getResultTypes(), os);
  auto it = cache_.find(key);
  if (it != cache_.end())
    return *it->second;

  // @op(operands) -> results, holding a clone of the op alone.
  MLIRContext *ctx = op->getContext();
  OpBuilder b(ctx);
  OwningOpRef<ModuleOp> module = ModuleOp::create(op->getLoc());
  b.setInsertionPointToEnd(module->getBody());
  auto type = b.getFunctionType(op->getOperandTypes(), op->getResultTypes());
  auto func = b.create<func::FuncOp>(op->getLoc(), "op", type);
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToEnd(entry);
  IRMapping map;
  map.map(op->getOperands(), entry->getArguments());
  Operation *clone = b.clone(*op, map);
  b.create<func::ReturnOp>(op->getLoc(), clone->getResults());

  FailureOr<CudaProgram> program = compileForCuda(*module, "op", opts_);
  if (failed(program))
    throw Error("GPU eager mode: cannot compile " + key);
  ++counts_.compiles;
  auto exe = CudaExecutable::load(std::move(*program), /*allocateArgs=*/false);
  return *cache_.emplace(key, std::move(exe)).first->second;
}

namespace {

NDArray hostArrayFor(Type type) {
  auto t = cast<RankedTensorType>(type);
  Type e = t.getElementType();
  DType dt = e.isF64()         ? DType::F64
             : e.isInteger(64) ? DType::I64
             : e.isInteger(32) ? DType::I32
             : e.isInteger(1)  ? DType::I1
                               : DType::F32;
  return NDArray::empty(Shape(t.getShape().begin(), t.getShape().end()), dt);
}

} // namespace

std::vector<uint64_t> CudaEager::runDevice(func::FuncOp f,
                                           const std::vector<uint64_t> &args) {
  const DriverApi *d = driver();
  auto stream = static_cast<CUstream>(stream_);
  if (f.getNumArguments() != args.size())
    throw Error("@" + f.getSymName().str() + " takes " +
                std::to_string(f.getNumArguments()) + " arguments, got " +
                std::to_string(args.size()));
  Block &body = f.getBody().front();
  // Each intermediate is freed after its last use (stream-ordered, as an
  // eager framework's caching allocator would); returned values survive.
  llvm::DenseMap<Operation *, unsigned> order;
  unsigned n = 0;
  for (Operation &op : body)
    order[&op] = n++;
  llvm::DenseMap<Value, unsigned> lastUse;
  for (Operation &op : body)
    for (Value v : op.getOperands())
      lastUse[v] = order[&op];

  llvm::DenseMap<Value, CUdeviceptr> buffers;
  for (auto [arg, addr] : llvm::zip(f.getArguments(), args))
    buffers[arg] = addr;
  std::vector<uint64_t> results;
  for (Operation &op : body) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      llvm::DenseSet<Value> returned;
      for (Value v : ret.getOperands()) {
        CUdeviceptr src = buffers.lookup(v);
        if (isa<BlockArgument>(v) || !returned.insert(v).second) {
          // A fresh copy: the caller owns every result buffer.
          size_t bytes = hostArrayFor(v.getType()).bytes();
          CUdeviceptr copy;
          check(d->cuMemAllocAsync(&copy, std::max<size_t>(bytes, 1), stream),
                "cuMemAllocAsync");
          ++counts_.allocations;
          check(d->cuMemcpyAsync(copy, src, bytes, stream), "copy");
          src = copy;
        }
        results.push_back(src);
      }
      break;
    }
    CudaExecutable &exe = programFor(&op);
    const CudaProgram &p = exe.program();
    std::vector<uint64_t> addrs;
    for (Value v : op.getOperands())
      addrs.push_back(buffers.lookup(v));
    for (auto [r, spec] :
         llvm::zip(op.getResults(), llvm::drop_begin(p.args, p.numInputs))) {
      CUdeviceptr b;
      check(d->cuMemAllocAsync(&b, std::max<int64_t>(spec.bytes, 1), stream),
            "cuMemAllocAsync");
      ++counts_.allocations;
      buffers[r] = b;
      addrs.push_back(b);
    }
    exe.enqueue(addrs, 0, stream_);
    ++counts_.opsDispatched;
    counts_.kernelLaunches += int64_t(p.launches.size());
    counts_.gemmCalls += int64_t(p.calls.size());
    unsigned here = order[&op];
    for (Value v : op.getOperands())
      if (lastUse.lookup(v) == here && !isa<BlockArgument>(v) &&
          !llvm::any_of(v.getUsers(),
                        [](Operation *u) { return isa<func::ReturnOp>(u); }) &&
          buffers.count(v)) {
        check(d->cuMemFreeAsync(buffers[v], stream), "cuMemFreeAsync");
        buffers.erase(v);
      }
    for (Value r : op.getResults())
      if (r.use_empty()) {
        check(d->cuMemFreeAsync(buffers[r], stream), "cuMemFreeAsync");
        buffers.erase(r);
      }
  }
  return results;
}

std::vector<NDArray> CudaEager::run(func::FuncOp f,
                                    const std::vector<NDArray> &args) {
  const DriverApi *d = driver();
  auto stream = static_cast<CUstream>(stream_);
  std::vector<uint64_t> argBufs;
  for (const NDArray &a : args) {
    CUdeviceptr p;
    check(d->cuMemAlloc(&p, std::max<size_t>(a.bytes(), 1)), "cuMemAlloc");
    check(d->cuMemcpyHtoD(p, a.rawData(), a.bytes()), "upload");
    argBufs.push_back(p);
  }
  std::vector<uint64_t> resultBufs = runDevice(f, argBufs);
  check(d->cuStreamSynchronize(stream), "cuStreamSynchronize");
  std::vector<NDArray> results;
  for (auto [type, p] : llvm::zip(f.getResultTypes(), resultBufs)) {
    NDArray out = hostArrayFor(type);
    check(d->cuMemcpyDtoH(out.rawData(), p, out.bytes()), "download");
    d->cuMemFreeAsync(p, stream);
    results.push_back(std::move(out));
  }
  for (uint64_t p : argBufs)
    d->cuMemFree(p);
  check(d->cuStreamSynchronize(stream), "cuStreamSynchronize");
  return results;
}

void CudaEager::setResident(func::FuncOp f, const std::vector<NDArray> &args) {
  const DriverApi *d = driver();
  for (uint64_t p : resident_)
    d->cuMemFree(p);
  resident_.clear();
  if (args.size() != f.getNumArguments())
    throw Error("setResident: wrong number of arguments");
  for (const NDArray &a : args) {
    CUdeviceptr p;
    check(d->cuMemAlloc(&p, std::max<size_t>(a.bytes(), 1)), "cuMemAlloc");
    check(d->cuMemcpyHtoD(p, a.rawData(), a.bytes()), "upload");
    resident_.push_back(p);
  }
}

std::vector<NDArray>
CudaEager::stepResident(func::FuncOp f,
                        const std::vector<std::pair<unsigned, unsigned>> &carry,
                        const std::map<unsigned, NDArray> &perStep,
                        const std::vector<unsigned> &fetch) {
  const DriverApi *d = driver();
  auto stream = static_cast<CUstream>(stream_);
  for (auto &[a, value] : perStep)
    check(d->cuMemcpyHtoDAsync(resident_.at(a), value.rawData(), value.bytes(),
                               stream),
          "upload");
  std::vector<uint64_t> results = runDevice(f, resident_);
  std::vector<NDArray> out;
  for (unsigned r : fetch) {
    NDArray v = hostArrayFor(f.getResultTypes()[r]);
    check(d->cuMemcpyDtoHAsync(v.rawData(), results.at(r), v.bytes(), stream),
          "fetch");
    out.push_back(std::move(v));
  }
  std::vector<bool> kept(results.size(), false);
  for (auto [r, a] : carry) {
    d->cuMemFreeAsync(resident_.at(a), stream);
    resident_[a] = results.at(r);
    kept.at(r) = true;
  }
  for (size_t r = 0; r < results.size(); ++r)
    if (!kept[r])
      d->cuMemFreeAsync(results[r], stream);
  check(d->cuStreamSynchronize(stream), "cuStreamSynchronize");
  return out;
}
