//===- Gather.cpp - Row lookups and their scatter-add gradient ------------===//
//
// Indices follow jnp.take (Keras's Embedding on JAX): i in [-V, 0) reads row
// V + i, any other index outside [0, V) gives a row of NaN and contributes
// no gradient. Every index is checked before it addresses the table.
//
//===----------------------------------------------------------------------===//

#include "runtime/kernels/KernelSupport.h"
#include "runtime/kernels/Kernels.h"

#include <algorithm>
#include <cstring>
#include <limits>

using namespace kcc;
using namespace kcc::kernels;
using namespace kcc::kernels::detail;

namespace {

/// The table row `index` names, or -1 outside [-rows, rows).
inline int64_t rowOf(int64_t index, int64_t rows) {
  if (index < 0)
    index += rows;
  return index >= 0 && index < rows ? index : -1;
}

template <typename I> int64_t indexAt(const NDArray &indices, int64_t i) {
  return static_cast<int64_t>(indices.data<I>()[i]);
}

/// Table [rows, width], indices of `n` elements, output [n, width].
struct GatherGeom {
  int64_t rows, width, n;
};

GatherGeom checkGather(const char *op, const NDArray &table,
                       const NDArray &indices, const NDArray &rowsOut) {
  bool ok = table.rank() >= 1 && table.dim(0) >= 1 &&
            (indices.dtype() == DType::I32 || indices.dtype() == DType::I64) &&
            (table.dtype() == DType::F32 || table.dtype() == DType::F64) &&
            rowsOut.dtype() == table.dtype() &&
            rowsOut.rank() == indices.rank() + table.rank() - 1;
  for (int64_t d = 0; ok && d < indices.rank(); ++d)
    ok = rowsOut.dim(d) == indices.dim(d);
  for (int64_t d = 1; ok && d < table.rank(); ++d)
    ok = rowsOut.dim(indices.rank() + d - 1) == table.dim(d);
  if (!ok)
    fail(op, std::string("table ") + dtypeName(table.dtype()) + " " +
                 shapeToString(table.shape()) + ", indices " +
                 dtypeName(indices.dtype()) + " " +
                 shapeToString(indices.shape()) + ", rows " +
                 dtypeName(rowsOut.dtype()) + " " +
                 shapeToString(rowsOut.shape()) + " do not match");
  int64_t rows = table.dim(0);
  return {rows, rows ? table.numel() / rows : 0, indices.numel()};
}

template <typename T, typename I>
void gatherRows(const NDArray &table, const NDArray &indices, NDArray &out,
                GatherGeom g) {
  const T *src = table.data<T>();
  T *dst = out.data<T>();
  runTasks(g.n, g.n * g.width, [&](int64_t i) {
    int64_t row = rowOf(indexAt<I>(indices, i), g.rows);
    T *o = dst + i * g.width;
    if (row < 0) {
      std::fill(o, o + g.width, std::numeric_limits<T>::quiet_NaN());
      return;
    }
    std::memcpy(o, src + row * g.width, g.width * sizeof(T));
  });
}

template <typename T, typename I>
void scatterAddRows(const NDArray &indices, const NDArray &gradOut,
                    NDArray &out, GatherGeom g) {
  const T *src = gradOut.data<T>();
  T *dst = out.data<T>();
  std::memset(out.rawData(), 0, out.bytes());
  // In index order, serially: repeated indices add up in a fixed order, so
  // the result does not depend on the thread count.
  for (int64_t i = 0; i < g.n; ++i) {
    int64_t row = rowOf(indexAt<I>(indices, i), g.rows);
    if (row < 0)
      continue;
    T *o = dst + row * g.width;
    const T *s = src + i * g.width;
    for (int64_t j = 0; j < g.width; ++j)
      o[j] += s[j];
  }
}

template <template <typename, typename> class Fn, typename... Args>
void dispatchGather(DType value, DType index, Args &&...args) {
  bool f32 = value == DType::F32, i32 = index == DType::I32;
  if (f32 && i32)
    Fn<float, int32_t>::run(args...);
  else if (f32)
    Fn<float, int64_t>::run(args...);
  else if (i32)
    Fn<double, int32_t>::run(args...);
  else
    Fn<double, int64_t>::run(args...);
}

template <typename T, typename I> struct GatherFn {
  static void run(const NDArray &t, const NDArray &i, NDArray &o,
                  GatherGeom g) {
    gatherRows<T, I>(t, i, o, g);
  }
};
template <typename T, typename I> struct GatherGradFn {
  static void run(const NDArray &i, const NDArray &g, NDArray &o,
                  GatherGeom geom) {
    scatterAddRows<T, I>(i, g, o, geom);
  }
};

} // namespace

void kernels::gather(const NDArray &table, const NDArray &indices,
                     NDArray &out) {
  GatherGeom g = checkGather("gather", table, indices, out);
  dispatchGather<GatherFn>(table.dtype(), indices.dtype(), table, indices, out,
                           g);
}

void kernels::gatherGrad(const NDArray &indices, const NDArray &gradOut,
                         NDArray &out) {
  GatherGeom g = checkGather("gatherGrad", out, indices, gradOut);
  dispatchGather<GatherGradFn>(out.dtype(), indices.dtype(), indices, gradOut,
                               out, g);
}
