//===- Matmul.cpp - GEMM through oneDNN, f64 by blocked loops -------------===//
//
// f32 GEMMs run oneDNN's matmul primitive. Creating a primitive costs far more
// than running a small one, so primitives are cached by (M, N, K, transA,
// transB) and reused, per thread. Transposed operands are described to oneDNN
// as strided memory (format tag `ba`), so no transpose is ever materialized. A
// batched GEMM ([B, M, K] x [B, K, N]) is one primitive with a batch dim (tags
// abc / acb), keyed by its batch count too.
//
// f64 (the numerics oracle path) uses a cache-blocked loop nest.
//
//===----------------------------------------------------------------------===//

#include "runtime/kernels/DnnlContext.h"
#include "runtime/kernels/KernelSupport.h"
#include "runtime/kernels/Kernels.h"

#include <omp.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cstring>
#include <unordered_map>

using namespace kcc;
using namespace kcc::kernels;
using namespace kcc::kernels::detail;

namespace {

struct GemmKey {
  int64_t m, n, k;
  bool transA, transB;
  bool bias = false, relu = false; ///< the epilogue
  int64_t batch = 0;               ///< 0: a 2-D GEMM; else [batch, M, N]
  /// bfloat16 operands and output, float32 accumulation.
  bool bf16 = false;
  bool operator==(const GemmKey &o) const {
    return m == o.m && n == o.n && k == o.k && transA == o.transA &&
           transB == o.transB && bias == o.bias && relu == o.relu &&
           batch == o.batch && bf16 == o.bf16;
  }
};

struct GemmKeyHash {
  size_t operator()(const GemmKey &key) const {
    size_t h = std::hash<int64_t>()(key.m);
    for (int64_t v : {key.n, key.k, key.batch,
                      int64_t(key.bf16) * 16 + int64_t(key.transA) * 8 +
                          key.transB * 4 + key.bias * 2 + key.relu})
      h = h * 0x9E3779B97F4A7C15ull + std::hash<int64_t>()(v);
    return h;
  }
};

struct GemmEntry {
  dnnl::memory::desc a, b, c, bias;
  dnnl::matmul prim;
};

/// Returns the cached primitive for this problem, creating it on first use.
/// The cache is per thread: one primitive executed by two threads at once
/// shares its scratch memory between them (seen: one thread's product in
/// the other's output).
const GemmEntry &getGemm(const GemmKey &key) {
  thread_local std::unordered_map<GemmKey, GemmEntry, GemmKeyHash> cache;
  auto it = cache.find(key);
  if (it != cache.end())
    return it->second;
  using tag = dnnl::memory::format_tag;
  using dt = dnnl::memory::data_type;
  GemmEntry e;
  dt t = key.bf16 ? dt::bf16 : dt::f32;
  if (key.batch) {
    e.a = dnnl::memory::desc({key.batch, key.m, key.k}, t,
                             key.transA ? tag::acb : tag::abc);
    e.b = dnnl::memory::desc({key.batch, key.k, key.n}, t,
                             key.transB ? tag::acb : tag::abc);
    e.c = dnnl::memory::desc({key.batch, key.m, key.n}, t, tag::abc);
  } else {
    e.a = dnnl::memory::desc({key.m, key.k}, t, key.transA ? tag::ba : tag::ab);
    e.b = dnnl::memory::desc({key.k, key.n}, t, key.transB ? tag::ba : tag::ab);
    e.c = dnnl::memory::desc({key.m, key.n}, t, tag::ab);
  }
  try {
    // The epilogue: oneDNN adds the bias (broadcast over rows) inside the
    // GEMM; relu runs after it (reluInPlace: oneDNN's relu eats NaN).
    dnnl::primitive_attr attr;
    if (key.bias)
      e.bias = dnnl::memory::desc({1, key.n}, dt::f32, tag::ab);
    dnnl::matmul::desc desc = key.bias
                                  ? dnnl::matmul::desc(e.a, e.b, e.bias, e.c)
                                  : dnnl::matmul::desc(e.a, e.b, e.c);
    e.prim =
        dnnl::matmul(dnnl::matmul::primitive_desc(desc, attr, cpuEngine()));
  } catch (const dnnl::error &err) {
    throw KernelError(std::string("matmul: oneDNN rejected the problem: ") +
                      err.what());
  }
  return cache.emplace(key, std::move(e)).first->second;
}

/// Multiply-adds below which a GEMM runs on one thread (dispatch-bound
/// models: mlp_small's 16x64x64 GEMMs take about a microsecond).
constexpr int64_t kSmallGemmMacs = 1 << 17;

/// Limits OpenMP regions opened in its scope to the calling thread when
/// `work` is below `threshold`.
class SerialBelow {
public:
  SerialBelow(int64_t work, int64_t threshold)
      : saved_(work < threshold ? omp_get_max_threads() : 0) {
    if (saved_ > 1)
      omp_set_num_threads(1);
  }
  ~SerialBelow() {
    if (saved_ > 1)
      omp_set_num_threads(saved_);
  }
  SerialBelow(const SerialBelow &) = delete;
  SerialBelow &operator=(const SerialBelow &) = delete;

private:
  int saved_;
};

/// Memory objects bound to one cached primitive's descriptors.
struct GemmMemories {
  dnnl::memory a, b, c, bias;
  /// The execute() argument map over these handles, built once: a map per
  /// call is several allocations, a visible cost on a microsecond GEMM.
  std::unordered_map<int, dnnl::memory> args;
};

/// C = op(A) op(B) (+ bias, relu) on oneDNN: float32, or bfloat16 operands
/// and output with float32 accumulation (key.bf16; no epilogue).
void gemmDnnl(const void *a, const void *b, const void *bias, void *c,
              const GemmKey &key) {
  const GemmEntry &e = getGemm(key);
  // Rebinding the data handle of an existing memory object is much cheaper
  // than creating one per operand per call (~0.2 us each, which dominates a
  // tiny GEMM). They are per thread, so concurrent callers never share one.
  thread_local std::unordered_map<const GemmEntry *, GemmMemories> memories;
  auto it = memories.find(&e);
  if (it == memories.end()) {
    dnnl::engine &eng = cpuEngine();
    it = memories
             .emplace(&e, GemmMemories{dnnl::memory(e.a, eng, DNNL_MEMORY_NONE),
                                       dnnl::memory(e.b, eng, DNNL_MEMORY_NONE),
                                       dnnl::memory(e.c, eng, DNNL_MEMORY_NONE),
                                       {},
                                       {}})
             .first;
    GemmMemories &m = it->second;
    m.args = {
        {DNNL_ARG_SRC, m.a}, {DNNL_ARG_WEIGHTS, m.b}, {DNNL_ARG_DST, m.c}};
    if (key.bias) {
      m.bias = dnnl::memory(e.bias, eng, DNNL_MEMORY_NONE);
      m.args.emplace(DNNL_ARG_BIAS, m.bias);
    }
  }
  GemmMemories &m = it->second;
  m.a.set_data_handle(const_cast<void *>(a));
  m.b.set_data_handle(const_cast<void *>(b));
  m.c.set_data_handle(c);
  // oneDNN opens a parallel region for every GEMM; waking the team costs
  // more than a small GEMM itself, so those run on the calling thread.
  SerialBelow serial(std::max<int64_t>(key.batch, 1) * key.m * key.n * key.k,
                     kSmallGemmMacs);
  if (key.bias)
    m.bias.set_data_handle(const_cast<void *>(bias));
  e.prim.execute(cpuStream(), m.args);
  cpuStream().wait();
  if (key.relu)
    reluInPlace(static_cast<float *>(c), key.m * key.n);
}

void gemmF32(const float *a, const float *b, const float *bias, float *c,
             const GemmKey &key) {
  gemmDnnl(a, b, bias, c, key);
}

/// Whether oneDNN runs bfloat16 GEMMs here (AMX or AVX512 with or without
/// its bf16 extension); decided once, from a tiny primitive.
bool dnnlHasBF16Gemm() {
  static const bool has = [] {
    try {
      GemmKey probe{16, 16, 16, false, false};
      probe.bf16 = true;
      getGemm(probe);
      return true;
    } catch (const KernelError &) {
      return false;
    }
  }();
  return has;
}

/// A bfloat16 GEMM: oneDNN's where it has one, else (a CPU without AVX512)
/// the float32 GEMM on widened copies, rounded once: the same products.
void gemmBF16(const NDArray &a, const NDArray &b, NDArray &out, GemmKey key) {
  key.bf16 = true;
  if (dnnlHasBF16Gemm())
    return gemmDnnl(a.rawData(), b.rawData(), nullptr, out.rawData(), key);
  NDArray wa = NDArray::empty(a.shape(), DType::F32);
  NDArray wb = NDArray::empty(b.shape(), DType::F32);
  NDArray wo = NDArray::empty(out.shape(), DType::F32);
  kernels::cast(a, wa);
  kernels::cast(b, wb);
  key.bf16 = false;
  gemmDnnl(wa.rawData(), wb.rawData(), nullptr, wo.rawData(), key);
  kernels::cast(wo, out);
}

/// C = op(A) * op(B) in f64. op(B) is packed a block of K rows at a time into
/// a contiguous panel so the innermost loop is a unit-stride axpy over N.
void gemmF64(const double *a, const double *b, double *c, const GemmKey &key) {
  const int64_t m = key.m, n = key.n, k = key.k;
  constexpr int64_t kBlockK = 128, kBlockN = 512;
  std::memset(c, 0, sizeof(double) * m * n);
  std::vector<double> panel(std::min(k, kBlockK) * std::min(n, kBlockN));
  for (int64_t j0 = 0; j0 < n; j0 += kBlockN) {
    int64_t nb = std::min(kBlockN, n - j0);
    for (int64_t k0 = 0; k0 < k; k0 += kBlockK) {
      int64_t kb = std::min(kBlockK, k - k0);
      for (int64_t kk = 0; kk < kb; ++kk)
        for (int64_t j = 0; j < nb; ++j)
          panel[kk * nb + j] = key.transB ? b[(j0 + j) * k + k0 + kk]
                                          : b[(k0 + kk) * n + j0 + j];
      const double *pp = panel.data();
#pragma omp parallel for schedule(static) if (m * nb * kb >= (1 << 16))
      for (int64_t i = 0; i < m; ++i) {
        double *__restrict ci = c + i * n + j0;
        for (int64_t kk = 0; kk < kb; ++kk) {
          double aik = key.transA ? a[(k0 + kk) * m + i] : a[i * k + k0 + kk];
          const double *__restrict bk = pp + kk * nb;
          for (int64_t j = 0; j < nb; ++j)
            ci[j] += aik * bk[j];
        }
      }
    }
  }
}

/// The epilogue in plain loops, for the paths oneDNN does not run.
template <typename T> void applyEpilogue(const Epilogue &e, NDArray &out) {
  int64_t n = out.dim(out.rank() - 1),
          rows = out.numel() / std::max<int64_t>(n, 1);
  T *o = out.data<T>();
  const T *bias = e.bias ? e.bias->data<T>() : nullptr;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < n; ++j) {
      T v = o[i * n + j] + (bias ? bias[j] : T(0));
      o[i * n + j] = e.relu && v < T(0) ? T(0) : v;
    }
}

void checkEpilogue(const char *op, const Epilogue &e, const NDArray &out) {
  if (!e.bias)
    return;
  if (e.bias->rank() != 1 || e.bias->dim(0) != out.dim(out.rank() - 1) ||
      e.bias->dtype() != out.dtype())
    throw KernelError(
        std::string(op) + ": bias " + shapeToString(e.bias->shape()) +
        " does not match the output " + shapeToString(out.shape()));
}

} // namespace

void kernels::matmulF32(const float *a, const float *b, const float *bias,
                        float *out, int64_t m, int64_t n, int64_t k,
                        bool transposeA, bool transposeB, bool relu) {
  GemmKey key{m, n, k, transposeA, transposeB, bias != nullptr, relu};
  gemmF32(a, b, bias, out, key);
}

void kernels::matmul(const NDArray &a, const NDArray &b, bool transposeA,
                     bool transposeB, NDArray &out, const Epilogue &epilogue) {
  auto mismatch = [&] {
    throw KernelError(
        "matmul: incompatible shapes " + shapeToString(a.shape()) +
        (transposeA ? "^T" : "") + " x " + shapeToString(b.shape()) +
        (transposeB ? "^T" : "") + " -> " + shapeToString(out.shape()));
  };
  if (a.rank() != 2 || b.rank() != 2 || out.rank() != 2)
    mismatch();
  int64_t m = transposeA ? a.dim(1) : a.dim(0);
  int64_t k = transposeA ? a.dim(0) : a.dim(1);
  int64_t kb = transposeB ? b.dim(1) : b.dim(0);
  int64_t n = transposeB ? b.dim(0) : b.dim(1);
  if (k != kb || out.dim(0) != m || out.dim(1) != n)
    mismatch();
  if (a.dtype() != b.dtype() || a.dtype() != out.dtype())
    throw KernelError(std::string("matmul: dtype mismatch ") +
                      dtypeName(a.dtype()) + ", " + dtypeName(b.dtype()) +
                      " -> " + dtypeName(out.dtype()));
  checkEpilogue("matmul", epilogue, out);
  if (m == 0 || n == 0)
    return;
  bool fused = epilogue.bias || epilogue.relu;
  if (k == 0) {
    std::memset(out.rawData(), 0, out.bytes());
    if (fused && out.dtype() == DType::F32)
      applyEpilogue<float>(epilogue, out);
    else if (fused && out.dtype() == DType::F64)
      applyEpilogue<double>(epilogue, out);
    return;
  }
  GemmKey key{
      m, n, k, transposeA, transposeB, epilogue.bias != nullptr, epilogue.relu};
  switch (a.dtype()) {
  case DType::F32:
    return gemmF32(a.data<float>(), b.data<float>(),
                   epilogue.bias ? epilogue.bias->data<float>() : nullptr,
                   out.data<float>(), key);
  case DType::F64:
    gemmF64(a.data<double>(), b.data<double>(), out.data<double>(), key);
    if (fused)
      applyEpilogue<double>(epilogue, out);
    return;
  case DType::BF16:
    if (fused)
      throw KernelError("matmul: a bf16 GEMM takes no epilogue");
    key.bias = key.relu = false;
    return gemmBF16(a, b, out, key);
  default:
    throw KernelError(std::string("matmul: unsupported dtype ") +
                      dtypeName(a.dtype()));
  }
}

void kernels::batchMatmulF32(const float *a, const float *b, float *out,
                             int64_t batch, int64_t m, int64_t n, int64_t k,
                             bool transposeA, bool transposeB) {
  GemmKey key{m, n, k, transposeA, transposeB};
  key.batch = batch;
  gemmF32(a, b, nullptr, out, key);
}

void kernels::batchMatmul(const NDArray &a, const NDArray &b, bool transposeA,
                          bool transposeB, NDArray &out) {
  auto mismatch = [&] {
    throw KernelError(
        "batch_matmul: incompatible shapes " + shapeToString(a.shape()) +
        (transposeA ? "^T" : "") + " x " + shapeToString(b.shape()) +
        (transposeB ? "^T" : "") + " -> " + shapeToString(out.shape()));
  };
  if (a.rank() != 3 || b.rank() != 3 || out.rank() != 3)
    mismatch();
  int64_t batch = a.dim(0);
  int64_t m = transposeA ? a.dim(2) : a.dim(1);
  int64_t k = transposeA ? a.dim(1) : a.dim(2);
  int64_t kb = transposeB ? b.dim(2) : b.dim(1);
  int64_t n = transposeB ? b.dim(1) : b.dim(2);
  if (b.dim(0) != batch || out.dim(0) != batch || k != kb || out.dim(1) != m ||
      out.dim(2) != n)
    mismatch();
  if (a.dtype() != b.dtype() || a.dtype() != out.dtype())
    throw KernelError(std::string("batch_matmul: dtype mismatch ") +
                      dtypeName(a.dtype()) + ", " + dtypeName(b.dtype()) +
                      " -> " + dtypeName(out.dtype()));
  if (batch == 0 || m == 0 || n == 0)
    return;
  if (k == 0) {
    std::memset(out.rawData(), 0, out.bytes());
    return;
  }
  switch (a.dtype()) {
  case DType::F32:
    return batchMatmulF32(a.data<float>(), b.data<float>(), out.data<float>(),
                          batch, m, n, k, transposeA, transposeB);
  case DType::F64: {
    GemmKey key{m, n, k, transposeA, transposeB};
    for (int64_t i = 0; i < batch; ++i)
      gemmF64(a.data<double>() + i * m * k, b.data<double>() + i * k * n,
              out.data<double>() + i * m * n, key);
    return;
  }
  case DType::BF16: {
    GemmKey key{m, n, k, transposeA, transposeB};
    key.batch = batch;
    return gemmBF16(a, b, out, key);
  }
  default:
    throw KernelError(std::string("batch_matmul: unsupported dtype ") +
                      dtypeName(a.dtype()));
  }
}
