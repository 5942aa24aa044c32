//===- Shape.cpp - transpose, concat, slice and oneHot --------------------===//
//
// Data movement kernels. They only copy elements, so they dispatch on the
// element size rather than the dtype and work for every dtype. Each walks the
// output row by row (the innermost output dim), computing the source offset
// of a row once and running a unit-stride or fixed-stride inner loop.
//
//===----------------------------------------------------------------------===//

#include "runtime/kernels/KernelSupport.h"
#include "runtime/kernels/Kernels.h"

#include <algorithm>
#include <cstring>

using namespace kcc;
using namespace kcc::kernels;
using namespace kcc::kernels::detail;

namespace {

template <typename Fn> void dispatchBytes(size_t size, Fn &&fn) {
  switch (size) {
  case 1:
    return fn(uint8_t());
  case 2:
    return fn(uint16_t());
  case 4:
    return fn(uint32_t());
  default:
    return fn(uint64_t());
  }
}

/// Runs rowFn(r) for every row, in parallel when `work` elements are moved.
template <typename RowFn>
void forEachRow(int64_t rows, int64_t work, const RowFn &rowFn) {
  if (work < kParallelThreshold) {
    for (int64_t r = 0; r < rows; ++r)
      rowFn(r);
    return;
  }
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r)
    rowFn(r);
}

/// Copies rows of an output with dims `dims` whose element at multi-index i
/// comes from src[base + sum_d i_d * srcStride[d]]. The last dim is the row.
template <typename T>
void stridedCopy(const T *src, int64_t base, const std::vector<int64_t> &dims,
                 const std::vector<int64_t> &srcStride, T *dst) {
  int64_t rank = static_cast<int64_t>(dims.size());
  int64_t inner = rank ? dims[rank - 1] : 1;
  int64_t innerStride = rank ? srcStride[rank - 1] : 0;
  int64_t total = numElements(dims);
  if (total == 0)
    return;
  forEachRow(total / inner, total, [&](int64_t r) {
    int64_t off = base, rem = r;
    for (int64_t d = rank - 2; d >= 0; --d) {
      off += (rem % dims[d]) * srcStride[d];
      rem /= dims[d];
    }
    const T *__restrict s = src + off;
    T *__restrict o = dst + r * inner;
    if (innerStride == 1) {
      std::memcpy(o, s, inner * sizeof(T));
      return;
    }
    for (int64_t j = 0; j < inner; ++j)
      o[j] = s[j * innerStride];
  });
}

/// Batched 2D transpose [b, m, n] -> [b, n, m] in square tiles so both the
/// reads and the writes stay within a few cache lines.
template <typename T>
void tiledTranspose(const T *src, T *dst, int64_t b, int64_t m, int64_t n) {
  constexpr int64_t kTile = 32;
  int64_t tilesM = (m + kTile - 1) / kTile, tilesN = (n + kTile - 1) / kTile;
  forEachRow(b * tilesM * tilesN, b * m * n, [&](int64_t t) {
    int64_t batch = t / (tilesM * tilesN), rest = t % (tilesM * tilesN);
    int64_t i0 = rest / tilesN * kTile, j0 = rest % tilesN * kTile;
    const T *s = src + batch * m * n;
    T *o = dst + batch * m * n;
    int64_t i1 = std::min(m, i0 + kTile), j1 = std::min(n, j0 + kTile);
    for (int64_t j = j0; j < j1; ++j)
      for (int64_t i = i0; i < i1; ++i)
        o[j * m + i] = s[i * n + j];
  });
}

} // namespace

void kernels::transpose(const NDArray &x, const std::vector<int64_t> &perm,
                        NDArray &out) {
  int64_t rank = x.rank();
  auto mismatch = [&](const std::string &why) {
    fail("transpose", why + ": " + shapeToString(x.shape()) + " -> " +
                          shapeToString(out.shape()));
  };
  if (static_cast<int64_t>(perm.size()) != rank || out.rank() != rank ||
      out.dtype() != x.dtype())
    mismatch("rank or dtype mismatch");
  std::vector<bool> seen(rank, false);
  for (int64_t d = 0; d < rank; ++d) {
    if (perm[d] < 0 || perm[d] >= rank || seen[perm[d]])
      mismatch("invalid permutation");
    seen[perm[d]] = true;
    if (out.dim(d) != x.dim(perm[d]))
      mismatch("output dim " + std::to_string(d) + " does not match");
  }
  // Merge output dims that are also adjacent, in order, in the input: a
  // [0, 2, 3, 1] NHWC->NCHW-style perm becomes a batched 2D transpose.
  std::vector<int64_t> inStride(rank);
  for (int64_t d = rank - 1, s = 1; d >= 0; --d) {
    inStride[d] = s;
    s *= x.dim(d);
  }
  std::vector<int64_t> dims, strides;
  for (int64_t d = 0; d < rank; ++d) {
    if (out.dim(d) == 1)
      continue;
    int64_t st = inStride[perm[d]];
    if (!dims.empty() && strides.back() == st * out.dim(d)) {
      dims.back() *= out.dim(d);
      strides.back() = st;
    } else {
      dims.push_back(out.dim(d));
      strides.push_back(st);
    }
  }
  dispatchBytes(dtypeSize(x.dtype()), [&](auto tag) {
    using T = decltype(tag);
    // Out [.., P, Q] read from an input [.., Q, P]: (batched) 2D transpose.
    size_t nd = dims.size();
    bool is2D = (nd == 2 || nd == 3) && strides[nd - 2] == 1 &&
                strides[nd - 1] == dims[nd - 2] &&
                (nd == 2 || strides[0] == dims[1] * dims[2]);
    if (is2D)
      return tiledTranspose(x.data<T>(), out.data<T>(), nd == 3 ? dims[0] : 1,
                            dims[nd - 1], dims[nd - 2]);
    stridedCopy(x.data<T>(), 0, dims, strides, out.data<T>());
  });
}

void kernels::concat(const std::vector<NDArray> &inputs, int64_t axis,
                     NDArray &out) {
  int64_t rank = out.rank();
  if (axis < 0 || axis >= rank)
    fail("concat", "axis " + std::to_string(axis) + " out of range for " +
                       shapeToString(out.shape()));
  int64_t total = 0;
  for (const NDArray &in : inputs) {
    bool ok = in.rank() == rank && in.dtype() == out.dtype();
    for (int64_t d = 0; ok && d < rank; ++d)
      ok = d == axis || in.dim(d) == out.dim(d);
    if (!ok)
      fail("concat", "input " + shapeToString(in.shape()) +
                         " does not fit output " + shapeToString(out.shape()) +
                         " along axis " + std::to_string(axis));
    total += in.dim(axis);
  }
  if (total != out.dim(axis))
    fail("concat", "inputs add up to " + std::to_string(total) +
                       " along axis " + std::to_string(axis) + ", output is " +
                       shapeToString(out.shape()));
  int64_t outer = 1, inner = dtypeSize(out.dtype()); // inner is in bytes.
  for (int64_t d = 0; d < axis; ++d)
    outer *= out.dim(d);
  for (int64_t d = axis + 1; d < rank; ++d)
    inner *= out.dim(d);
  // Each input contributes one contiguous block of bytes per outer index.
  int64_t outRow = total * inner;
  char *po = static_cast<char *>(out.rawData());
  int64_t offset = 0;
  for (const NDArray &in : inputs) {
    int64_t block = in.dim(axis) * inner;
    const char *pi = static_cast<const char *>(in.rawData());
    if (block)
      forEachRow(outer, outer * block / 4, [&](int64_t o) {
        std::memcpy(po + o * outRow + offset, pi + o * block, block);
      });
    offset += block;
  }
}

void kernels::slice(const NDArray &x, const std::vector<int64_t> &start,
                    const std::vector<int64_t> &strides, NDArray &out) {
  int64_t rank = x.rank();
  auto mismatch = [&](const std::string &why) {
    fail("slice", why + ": " + shapeToString(x.shape()) + " -> " +
                      shapeToString(out.shape()));
  };
  if (static_cast<int64_t>(start.size()) != rank ||
      static_cast<int64_t>(strides.size()) != rank || out.rank() != rank ||
      out.dtype() != x.dtype())
    mismatch("rank or dtype mismatch");
  std::vector<int64_t> inStride(rank), srcStride(rank);
  int64_t base = 0;
  for (int64_t d = rank - 1, s = 1; d >= 0; --d) {
    inStride[d] = s;
    s *= x.dim(d);
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (out.dim(d) == 0)
      return;
    int64_t last = start[d] + (out.dim(d) - 1) * strides[d];
    if (strides[d] == 0 || start[d] < 0 || start[d] >= x.dim(d) || last < 0 ||
        last >= x.dim(d))
      mismatch("dim " + std::to_string(d) + " start " +
               std::to_string(start[d]) + " stride " +
               std::to_string(strides[d]) + " out of bounds");
    base += start[d] * inStride[d];
    srcStride[d] = strides[d] * inStride[d];
  }
  dispatchBytes(dtypeSize(x.dtype()), [&](auto tag) {
    using T = decltype(tag);
    stridedCopy(x.data<T>(), base, out.shape(), srcStride, out.data<T>());
  });
}

void kernels::oneHot(const NDArray &labels, NDArray &out) {
  int64_t rank = labels.rank();
  bool ok = out.rank() == rank + 1 &&
            (labels.dtype() == DType::I32 || labels.dtype() == DType::I64) &&
            (out.dtype() == DType::F32 || out.dtype() == DType::F64);
  for (int64_t d = 0; ok && d < rank; ++d)
    ok = labels.dim(d) == out.dim(d);
  if (!ok)
    fail("oneHot", std::string("labels ") + dtypeName(labels.dtype()) + " " +
                       shapeToString(labels.shape()) + " vs output " +
                       dtypeName(out.dtype()) + " " +
                       shapeToString(out.shape()));
  int64_t depth = out.dim(rank), n = labels.numel();
  std::memset(out.rawData(), 0, out.bytes());
  for (int64_t i = 0; i < n; ++i) {
    int64_t c = labels.dtype() == DType::I32 ? labels.data<int32_t>()[i]
                                             : labels.data<int64_t>()[i];
    if (c < 0 || c >= depth) // Out-of-range labels give a zero row, as in TF.
      continue;
    if (out.dtype() == DType::F32)
      out.data<float>()[i * depth + c] = 1.0f;
    else
      out.data<double>()[i * depth + c] = 1.0;
  }
}
