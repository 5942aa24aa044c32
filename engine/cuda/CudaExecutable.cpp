//===- CudaExecutable.cpp - Run a CudaProgram on one stream ---------------===//

#include "engine/cuda/CudaExecutable.h"
#include "runtime/Error.h"
#include "runtime/cuda/CudaApi.h"

#include <cstring>
#include <set>

using namespace kcc;
using namespace kcc::cuda;

DType kcc::cuda::dtypeOf(const std::string &name) {
  if (name == "f32")
    return DType::F32;
  if (name == "f64")
    return DType::F64;
  if (name == "i64")
    return DType::I64;
  if (name == "i32")
    return DType::I32;
  if (name == "i1")
    return DType::I1;
  throw Error("CUDA program: unsupported element type '" + name + "'");
}

namespace {

/// One cuBLASLt GEMM, planned at load: row-major C = op(A) op(B) is run as
/// column-major C^T = op(B)^T op(A)^T, so no data moves. FP32 compute
/// (CUBLAS_COMPUTE_32F, never TF32): results match the CPU within f32
/// rounding.
struct GemmPlan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo;
  bool f64 = false;
  BufferRef lhs, rhs, out;
};

} // namespace

struct CudaExecutable::Impl {
  const DriverApi *d = nullptr;
  const BlasLtApi *blas = nullptr;
  cublasLtHandle_t lt = nullptr;
  CUstream stream = nullptr;
  std::vector<CUmodule> modules;
  std::vector<CUfunction> functions; ///< per launch
  std::vector<GemmPlan> gemms;       ///< per call
  CUdeviceptr workspace = 0;
  size_t workspaceBytes = 32 << 20;
  CUdeviceptr arena = 0;
  std::vector<CUdeviceptr> constants;
  // Argument buffers: addr[p][i] is argument i's buffer at parity p.
  std::vector<CUdeviceptr> owned;
  std::vector<CUdeviceptr> addr[2];
  std::vector<std::pair<unsigned, unsigned>> carry;
  int parity = 0;
  // The training loop's graphs and pinned staging buffers.
  CUgraphExec graphs[2] = {nullptr, nullptr};
  std::set<unsigned> stagedInputs;
  std::vector<unsigned> fetched;
  std::map<unsigned, void *> pinned;
  int64_t replays = 0;

  ~Impl() {
    if (!d)
      return;
    for (CUgraphExec g : graphs)
      if (g)
        d->cuGraphExecDestroy(g);
    for (auto &[_, p] : pinned)
      d->cuMemFreeHost(p);
    for (CUdeviceptr p : owned)
      d->cuMemFree(p);
    for (CUdeviceptr p : constants)
      d->cuMemFree(p);
    if (arena)
      d->cuMemFree(arena);
    if (workspace)
      d->cuMemFree(workspace);
    for (GemmPlan &g : gemms) {
      blas->cublasLtMatrixLayoutDestroy(g.a);
      blas->cublasLtMatrixLayoutDestroy(g.b);
      blas->cublasLtMatrixLayoutDestroy(g.c);
      blas->cublasLtMatmulDescDestroy(g.desc);
    }
    if (lt)
      blas->cublasLtDestroy(lt);
    for (CUmodule m : modules)
      d->cuModuleUnload(m);
    if (stream)
      d->cuStreamDestroy(stream);
  }

  CUdeviceptr alloc(size_t bytes) {
    CUdeviceptr p = 0;
    check(d->cuMemAlloc(&p, std::max<size_t>(bytes, 1)), "cuMemAlloc");
    return p;
  }

  CUdeviceptr resolve(const BufferRef &r, const std::vector<uint64_t> &args,
                      uint64_t arenaAddr) const {
    switch (r.kind) {
    case BufferRef::Kind::Arg:
      return args.at(r.index) + r.byteOffset;
    case BufferRef::Kind::Arena:
      return arenaAddr + r.byteOffset;
    case BufferRef::Kind::Constant:
      return constants.at(r.index) + r.byteOffset;
    }
    return 0;
  }

  void planGemm(const LibraryCall &call) {
    if (call.name != "matmul" || call.buffers.size() != 3 ||
        call.ints.size() != 8)
      throw Error("CUDA program: no GPU implementation of library call '" +
                  call.name + "'");
    if (!blas) {
      std::string why;
      blas = blasLt(&why);
      if (!blas)
        throw Error(why);
      checkBlas(blas->cublasLtCreate(&lt), "cublasLtCreate");
      workspace = alloc(workspaceBytes);
    }
    GemmPlan g;
    g.f64 = call.dtype == "f64";
    g.lhs = call.buffers[0];
    g.rhs = call.buffers[1];
    g.out = call.buffers[2];
    const std::vector<int64_t> &n = call.ints;
    int64_t a0 = n[0], a1 = n[1], b0 = n[2], b1 = n[3], o0 = n[4], o1 = n[5];
    bool ta = n[6] != 0, tb = n[7] != 0;
    cudaDataType_t type = g.f64 ? CUDA_R_64F : CUDA_R_32F;
    checkBlas(
        blas->cublasLtMatmulDescCreate(
            &g.desc, g.f64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F, type),
        "cublasLtMatmulDescCreate");
    // Column-major view: cuBLAS's A is our B (b1 x b0), its B is our A.
    cublasOperation_t opA = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t opB = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    checkBlas(blas->cublasLtMatmulDescSetAttribute(
                  g.desc, CUBLASLT_MATMUL_DESC_TRANSA, &opA, sizeof(opA)),
              "TRANSA");
    checkBlas(blas->cublasLtMatmulDescSetAttribute(
                  g.desc, CUBLASLT_MATMUL_DESC_TRANSB, &opB, sizeof(opB)),
              "TRANSB");
    checkBlas(blas->cublasLtMatrixLayoutCreate(&g.a, type, b1, b0, b1),
              "layout A");
    checkBlas(blas->cublasLtMatrixLayoutCreate(&g.b, type, a1, a0, a1),
              "layout B");
    checkBlas(blas->cublasLtMatrixLayoutCreate(&g.c, type, o1, o0, o1),
              "layout C");
    cublasLtMatmulPreference_t pref;
    checkBlas(blas->cublasLtMatmulPreferenceCreate(&pref), "preference");
    uint64_t ws = workspaceBytes;
    blas->cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
    cublasLtMatmulHeuristicResult_t result;
    int found = 0;
    cublasStatus_t s = blas->cublasLtMatmulAlgoGetHeuristic(
        lt, g.desc, g.a, g.b, g.c, g.c, pref, 1, &result, &found);
    blas->cublasLtMatmulPreferenceDestroy(pref);
    if (s != CUBLAS_STATUS_SUCCESS || found == 0)
      throw Error("cuBLASLt has no algorithm for a " + std::to_string(o0) +
                  "x" + std::to_string(o1) + " GEMM");
    g.algo = result.algo;
    gemms.push_back(g);
  }
};

std::unique_ptr<CudaExecutable> CudaExecutable::load(CudaProgram program,
                                                     bool allocateArgs) {
  std::string why;
  const DriverApi *d = driver(&why);
  if (!d)
    throw Error(why);
  std::unique_ptr<CudaExecutable> exe(new CudaExecutable());
  exe->impl_ = std::make_unique<Impl>();
  Impl &m = *exe->impl_;
  m.d = d;
  check(d->cuStreamCreate(&m.stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");

  for (const PtxModule &ptx : program.modules) {
    // The driver JITs the PTX for this device; its log names the problem.
    char log[8192] = {0};
    CUjit_option opts[2] = {CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *vals[2] = {log, reinterpret_cast<void *>(sizeof(log))};
    CUmodule mod;
    CUresult r = d->cuModuleLoadDataEx(&mod, ptx.ptx.c_str(), 2, opts, vals);
    if (r != CUDA_SUCCESS)
      throw Error("loading PTX module " + ptx.name + " failed: " + log);
    m.modules.push_back(mod);
  }
  for (const Launch &l : program.launches) {
    CUfunction f;
    check(d->cuModuleGetFunction(&f, m.modules.at(l.module), l.kernel.c_str()),
          ("cuModuleGetFunction " + l.kernel).c_str());
    m.functions.push_back(f);
  }
  for (const LibraryCall &c : program.calls)
    m.planGemm(c);
  m.arena = program.arenaBytes ? m.alloc(program.arenaBytes) : 0;
  for (const std::string &bytes : program.constants) {
    CUdeviceptr p = m.alloc(bytes.size());
    check(d->cuMemcpyHtoD(p, bytes.data(), bytes.size()), "constant upload");
    m.constants.push_back(p);
  }
  for (const ArgSpec &a : program.args) {
    CUdeviceptr p = allocateArgs ? m.alloc(a.bytes) : 0;
    if (p)
      m.owned.push_back(p);
    m.addr[0].push_back(p);
  }
  m.addr[1] = m.addr[0];
  exe->program_ = std::move(program);
  return exe;
}

CudaExecutable::~CudaExecutable() = default;

CudaCounts CudaExecutable::counts() const {
  CudaCounts c;
  c.kernelLaunches = int64_t(program_.launches.size());
  c.gemmCalls = int64_t(program_.calls.size());
  c.arenaBytes = program_.arenaBytes;
  c.graphReplays = impl_->replays;
  return c;
}

void CudaExecutable::enqueue(const std::vector<uint64_t> &args, uint64_t arena,
                             void *streamHandle) {
  Impl &m = *impl_;
  CUstream stream =
      streamHandle ? static_cast<CUstream>(streamHandle) : m.stream;
  if (args.size() != program_.args.size())
    throw Error("CUDA program @" + program_.function + " takes " +
                std::to_string(program_.args.size()) + " buffers, got " +
                std::to_string(args.size()));
  uint64_t arenaAddr = arena ? arena : m.arena;
  for (const Step &s : program_.steps) {
    switch (s.kind) {
    case Step::Kind::Launch: {
      const Launch &l = program_.launches[s.index];
      // Expanded memref descriptors: cuLaunchKernel copies the values.
      std::vector<uint64_t> slots;
      for (const KernelArg &a : l.args) {
        switch (a.kind) {
        case KernelArg::Kind::Memref: {
          uint64_t p = m.resolve(a.base, args, arenaAddr);
          slots.push_back(p);
          slots.push_back(p);
          slots.push_back(uint64_t(a.offset));
          for (int64_t v : a.sizes)
            slots.push_back(uint64_t(v));
          for (int64_t v : a.strides)
            slots.push_back(uint64_t(v));
          break;
        }
        case KernelArg::Kind::I32:
        case KernelArg::Kind::I64:
          slots.push_back(uint64_t(a.intValue));
          break;
        case KernelArg::Kind::F32: {
          float f = float(a.floatValue);
          uint64_t bits = 0;
          std::memcpy(&bits, &f, sizeof(f));
          slots.push_back(bits);
          break;
        }
        case KernelArg::Kind::F64: {
          uint64_t bits;
          std::memcpy(&bits, &a.floatValue, sizeof(bits));
          slots.push_back(bits);
          break;
        }
        }
      }
      std::vector<void *> params;
      for (uint64_t &slot : slots)
        params.push_back(&slot);
      check(m.d->cuLaunchKernel(
                m.functions[s.index], unsigned(l.grid[0]), unsigned(l.grid[1]),
                unsigned(l.grid[2]), unsigned(l.block[0]), unsigned(l.block[1]),
                unsigned(l.block[2]), 0, stream, params.data(), nullptr),
            ("launch " + l.kernel).c_str());
      break;
    }
    case Step::Kind::Call: {
      GemmPlan &g = m.gemms[s.index];
      double one = 1, zero = 0;
      float onef = 1, zerof = 0;
      const void *alpha = g.f64 ? static_cast<const void *>(&one) : &onef;
      const void *beta = g.f64 ? static_cast<const void *>(&zero) : &zerof;
      CUdeviceptr lhs = m.resolve(g.lhs, args, arenaAddr),
                  rhs = m.resolve(g.rhs, args, arenaAddr),
                  out = m.resolve(g.out, args, arenaAddr);
      checkBlas(m.blas->cublasLtMatmul(
                    m.lt, g.desc, alpha, reinterpret_cast<void *>(rhs), g.a,
                    reinterpret_cast<void *>(lhs), g.b, beta,
                    reinterpret_cast<void *>(out), g.c,
                    reinterpret_cast<void *>(out), g.c, &g.algo,
                    reinterpret_cast<void *>(m.workspace), m.workspaceBytes,
                    stream),
                "cublasLtMatmul");
      break;
    }
    case Step::Kind::Copy: {
      const Copy &c = program_.copies[s.index];
      check(m.d->cuMemcpyAsync(m.resolve(c.to, args, arenaAddr),
                               m.resolve(c.from, args, arenaAddr), c.bytes,
                               stream),
            "cuMemcpyAsync");
      break;
    }
    }
  }
}

void CudaExecutable::synchronize() {
  check(impl_->d->cuStreamSynchronize(impl_->stream), "cuStreamSynchronize");
}

std::vector<NDArray> CudaExecutable::run(const std::vector<NDArray> &inputs) {
  Impl &m = *impl_;
  if (inputs.size() != program_.numInputs)
    throw Error("@" + program_.function + " takes " +
                std::to_string(program_.numInputs) + " inputs, got " +
                std::to_string(inputs.size()));
  for (unsigned i = 0; i < program_.numInputs; ++i)
    upload(i, inputs[i]);
  std::vector<uint64_t> args(m.addr[m.parity].begin(), m.addr[m.parity].end());
  enqueue(args);
  synchronize();
  std::vector<NDArray> results;
  for (unsigned r = 0; r < program_.numResults; ++r)
    results.push_back(download(program_.numInputs + r));
  return results;
}

void CudaExecutable::setCarry(
    const std::vector<std::pair<unsigned, unsigned>> &resultToArg) {
  Impl &m = *impl_;
  m.carry.clear();
  m.addr[1] = m.addr[0];
  for (auto [r, a] : resultToArg) {
    unsigned res = program_.numInputs + r;
    if (res >= program_.args.size() || a >= program_.numInputs ||
        program_.args[res].bytes != program_.args[a].bytes)
      throw Error("setCarry: result " + std::to_string(r) +
                  " cannot feed input " + std::to_string(a));
    m.carry.push_back({res, a});
    std::swap(m.addr[1][res], m.addr[1][a]);
  }
}

void CudaExecutable::upload(unsigned arg, const NDArray &value) {
  Impl &m = *impl_;
  const ArgSpec &spec = program_.args.at(arg);
  if (value.bytes() != size_t(spec.bytes) ||
      value.dtype() != dtypeOf(spec.dtype))
    throw Error("@" + program_.function + " argument " + std::to_string(arg) +
                " expects " + spec.dtype + " " + shapeToString(spec.shape) +
                ", got " + dtypeName(value.dtype()) + " " +
                shapeToString(value.shape()));
  check(
      m.d->cuMemcpyHtoD(m.addr[m.parity][arg], value.rawData(), value.bytes()),
      "cuMemcpyHtoD");
}

NDArray CudaExecutable::download(unsigned arg) {
  Impl &m = *impl_;
  const ArgSpec &spec = program_.args.at(arg);
  NDArray out = NDArray::empty(spec.shape, dtypeOf(spec.dtype));
  check(m.d->cuMemcpyDtoH(out.rawData(), m.addr[m.parity][arg], out.bytes()),
        "cuMemcpyDtoH");
  return out;
}

std::vector<NDArray>
CudaExecutable::step(const std::map<unsigned, NDArray> &perStep,
                     const std::vector<unsigned> &fetch) {
  Impl &m = *impl_;
  std::set<unsigned> inputs;
  for (auto &[a, _] : perStep)
    inputs.insert(a);
  if (m.graphs[0] || m.graphs[1]) {
    if (inputs != m.stagedInputs || fetch != m.fetched)
      throw Error("step: the per-step inputs and fetched results must stay "
                  "the same from step to step (they are part of the graph)");
  } else {
    m.stagedInputs = inputs;
    m.fetched = fetch;
  }
  // Pinned staging: the graph copies from and to these fixed addresses.
  auto staging = [&](unsigned arg) {
    void *&p = m.pinned[arg];
    if (!p)
      check(m.d->cuMemAllocHost(&p, program_.args.at(arg).bytes),
            "cuMemAllocHost");
    return p;
  };
  for (auto &[a, value] : perStep) {
    const ArgSpec &spec = program_.args.at(a);
    if (value.bytes() != size_t(spec.bytes) ||
        value.dtype() != dtypeOf(spec.dtype))
      throw Error("step: input " + std::to_string(a) + " expects " +
                  spec.dtype + " " + shapeToString(spec.shape));
    std::memcpy(staging(a), value.rawData(), value.bytes());
  }
  for (unsigned r : fetch)
    staging(program_.numInputs + r);

  int p = m.parity;
  if (!m.graphs[p]) {
    std::vector<uint64_t> args(m.addr[p].begin(), m.addr[p].end());
    check(m.d->cuStreamBeginCapture(m.stream, CU_STREAM_CAPTURE_MODE_GLOBAL),
          "cuStreamBeginCapture");
    for (unsigned a : m.stagedInputs)
      check(m.d->cuMemcpyAsync(args[a], CUdeviceptr(m.pinned[a]),
                               program_.args[a].bytes, m.stream),
            "capture: upload");
    enqueue(args);
    for (unsigned r : m.fetched) {
      unsigned a = program_.numInputs + r;
      check(m.d->cuMemcpyAsync(CUdeviceptr(m.pinned[a]), args[a],
                               program_.args[a].bytes, m.stream),
            "capture: fetch");
    }
    CUgraph graph;
    check(m.d->cuStreamEndCapture(m.stream, &graph), "cuStreamEndCapture");
    CUresult r = m.d->cuGraphInstantiateWithFlags(&m.graphs[p], graph, 0);
    m.d->cuGraphDestroy(graph);
    check(r, "cuGraphInstantiate");
  }
  check(m.d->cuGraphLaunch(m.graphs[p], m.stream), "cuGraphLaunch");
  synchronize();
  ++m.replays;
  std::vector<NDArray> out;
  for (unsigned r : fetch) {
    const ArgSpec &spec = program_.args[program_.numInputs + r];
    NDArray v = NDArray::empty(spec.shape, dtypeOf(spec.dtype));
    std::memcpy(v.rawData(), m.pinned[program_.numInputs + r], v.bytes());
    out.push_back(std::move(v));
  }
  // The carried results are the next step's inputs: flip the parity.
  if (!m.carry.empty())
    m.parity ^= 1;
  return out;
}
