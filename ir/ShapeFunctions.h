//===- ShapeFunctions.h - Shape rules of the kc ops -------------*- C++ -*-===//
//
// One definition of each kc op's shape rule, used by the op verifiers, by the
// frontend to type traced ops, and by eager mode to size its outputs. A rule
// returns the result dims or an error whose message names the offending dims,
// so a bad Dense call and a bad kc.matmul say the same thing. Sizes are
// computed with checked arithmetic: a result whose element count overflows
// int64 is an error, never a wrapped dim.
//
// Depends on LLVM Support only.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_IR_SHAPEFUNCTIONS_H
#define KCC_IR_SHAPEFUNCTIONS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <string>

namespace kcc {
namespace shapes {

using Dims = llvm::SmallVector<int64_t, 4>;

/// "[32, 784]".
std::string str(llvm::ArrayRef<int64_t> dims);

/// The element count of `dims`, or an error naming them when a dim is
/// negative or the count overflows int64.
llvm::Expected<int64_t> numElements(llvm::ArrayRef<int64_t> dims);

/// numpy broadcasting of two shapes (for elementwise frontend calls).
llvm::Expected<Dims> broadcastShapes(llvm::ArrayRef<int64_t> a,
                                     llvm::ArrayRef<int64_t> b);
/// Checks that `from` broadcasts to `to`; returns `to`.
llvm::Expected<Dims> broadcastTo(llvm::ArrayRef<int64_t> from,
                                 llvm::ArrayRef<int64_t> to);
llvm::Expected<Dims> matmul(llvm::ArrayRef<int64_t> lhs,
                            llvm::ArrayRef<int64_t> rhs, bool transposeLhs,
                            bool transposeRhs);
/// [B, M, K] x [B, K, N] -> [B, M, N], transposes per batch as matmul's.
llvm::Expected<Dims> batchMatmul(llvm::ArrayRef<int64_t> lhs,
                                 llvm::ArrayRef<int64_t> rhs, bool transposeLhs,
                                 bool transposeRhs);
/// `to` may hold one -1, inferred from the element count.
llvm::Expected<Dims> reshape(llvm::ArrayRef<int64_t> from,
                             llvm::ArrayRef<int64_t> to);
llvm::Expected<Dims> transpose(llvm::ArrayRef<int64_t> x,
                               llvm::ArrayRef<int64_t> perm);
llvm::Expected<Dims>
concat(llvm::ArrayRef<llvm::SmallVector<int64_t, 4>> inputs, int64_t axis);
llvm::Expected<Dims> slice(llvm::ArrayRef<int64_t> x,
                           llvm::ArrayRef<int64_t> start,
                           llvm::ArrayRef<int64_t> limit,
                           llvm::ArrayRef<int64_t> strides);
/// `axes` must be sorted, unique and in range.
llvm::Expected<Dims> reduce(llvm::ArrayRef<int64_t> x,
                            llvm::ArrayRef<int64_t> axes, bool keepdims);
/// Checks `axis` in [-rank, rank) and returns it made non-negative.
llvm::Expected<int64_t> normalizeAxis(int64_t axis, int64_t rank,
                                      llvm::StringRef what = "axis");
llvm::Expected<Dims> argmax(llvm::ArrayRef<int64_t> x, int64_t axis);

/// TF/Keras window rules: SAME gives ceil(in / stride). Never overflows: a
/// window whose extent overflows int64 is larger than any input (0).
int64_t windowOutputSize(int64_t in, int64_t window, int64_t stride,
                         int64_t dilation, bool samePadding);
/// NHWC input, HWIO filter -> NHWC result. With `groups` the filter is
/// [KH, KW, C / groups, F] and F a multiple of groups.
llvm::Expected<Dims> conv2d(llvm::ArrayRef<int64_t> input,
                            llvm::ArrayRef<int64_t> filter,
                            llvm::ArrayRef<int64_t> strides,
                            llvm::ArrayRef<int64_t> dilations, bool samePadding,
                            int64_t groups = 1);
/// NHWC pooling.
llvm::Expected<Dims> pool2d(llvm::ArrayRef<int64_t> x,
                            llvm::ArrayRef<int64_t> window,
                            llvm::ArrayRef<int64_t> strides, bool samePadding);
/// Rows of a [V, D...] table by [I...] indices -> [I..., D...].
llvm::Expected<Dims> gather(llvm::ArrayRef<int64_t> table,
                            llvm::ArrayRef<int64_t> indices);

} // namespace shapes
} // namespace kcc

#endif // KCC_IR_SHAPEFUNCTIONS_H
