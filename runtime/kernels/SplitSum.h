//===- SplitSum.h - When a sum over the batch runs as partial sums --*- C++
//-*-===//
//
// A sum whose outermost dimension and at least one more are reduced (over N,
// H and W; over B and T) is computed in two steps, one partial sum per index
// of the outermost dimension, then the partials added in order, when it is
// big enough to pay for running the partials on all cores. The compiled
// step (codegen/fusion/SplitReductions.cpp) and the kernel library's reduce
// apply this one rule, so both modes add in the same order and round alike.
//
// Header-only: codegen reads it without linking the kernel library.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_RUNTIME_KERNELS_SPLITSUM_H
#define KCC_RUNTIME_KERNELS_SPLITSUM_H

#include <cstdint>

namespace kcc {
namespace kernels {

/// Points from which a sum splits (kc-split-reductions' default threshold,
/// kc-lower-loops' parallel one).
constexpr int64_t kSplitSumMinPoints = 65536;
/// Each partial element sums at least this many points; else the partials
/// are as large as the input and nothing is saved.
constexpr int64_t kSplitSumMinPointsPerPartial = 8;
/// The most partial rows.
constexpr int64_t kSplitSumMaxPartials = 512;

/// Whether a sum of `points` input points into `results` outputs, reducing
/// its outermost dimension (of extent `rows`) and `reducedDims - 1` more,
/// splits.
constexpr bool splitsSum(int64_t points, int64_t results, int64_t rows,
                         int64_t reducedDims,
                         int64_t minPoints = kSplitSumMinPoints) {
  return minPoints > 0 && reducedDims >= 2 && points >= minPoints &&
         rows >= 2 && rows <= kSplitSumMaxPartials &&
         rows * results * kSplitSumMinPointsPerPartial <= points;
}

} // namespace kernels
} // namespace kcc

#endif // KCC_RUNTIME_KERNELS_SPLITSUM_H
