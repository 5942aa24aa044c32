//===- ShapeFunctions.cpp - Shape rules of the kc ops ---------------------===//

#include "ir/ShapeFunctions.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace kcc {
namespace shapes {

namespace {
Error fail(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message.str());
}

/// `dims` as a rule's result: an error when its element count overflows.
Expected<Dims> checked(Dims dims) {
  if (Expected<int64_t> n = numElements(dims); !n)
    return n.takeError();
  return dims;
}
} // namespace

std::string str(ArrayRef<int64_t> dims) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(dims))
    s += (i ? ", " : "") + std::to_string(d);
  return s + "]";
}

Expected<int64_t> numElements(ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    std::optional<int64_t> next = d < 0 ? std::nullopt : checkedMul(n, d);
    if (!next)
      return fail(
          formatv("shape {0} has {1}", str(dims),
                  d < 0 ? "a negative dim" : "more than 2^63-1 elements"));
    n = *next;
  }
  return n;
}

Expected<Dims> broadcastShapes(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  Dims out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (da != db && da != 1 && db != 1)
      return fail(formatv("shapes {0} and {1} do not broadcast: dim {2} from "
                          "the right is {3} vs {4}",
                          str(a), str(b), i, da, db));
    out[rank - 1 - i] = da == 1 ? db : da;
  }
  return checked(std::move(out));
}

Expected<Dims> broadcastTo(ArrayRef<int64_t> from, ArrayRef<int64_t> to) {
  if (from.size() > to.size())
    return fail(formatv("cannot broadcast {0} to the lower-rank {1}", str(from),
                        str(to)));
  size_t lead = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i] != 1 && from[i] != to[lead + i])
      return fail(formatv("cannot broadcast {0} to {1}: dim {2} is {3}, "
                          "expected 1 or {4}",
                          str(from), str(to), i, from[i], to[lead + i]));
  return checked(Dims(to.begin(), to.end()));
}

Expected<Dims> matmul(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs,
                      bool transposeLhs, bool transposeRhs) {
  if (lhs.size() != 2 || rhs.size() != 2)
    return fail(formatv("expects 2-D operands, got lhs {0} and rhs {1}",
                        str(lhs), str(rhs)));
  int64_t m = transposeLhs ? lhs[1] : lhs[0];
  int64_t k = transposeLhs ? lhs[0] : lhs[1];
  int64_t k2 = transposeRhs ? rhs[1] : rhs[0];
  int64_t n = transposeRhs ? rhs[0] : rhs[1];
  if (k != k2)
    return fail(formatv("expects lhs columns ({0}) to match rhs rows ({1}): "
                        "lhs {2}{3}, rhs {4}{5}",
                        k, k2, str(lhs), transposeLhs ? " transposed" : "",
                        str(rhs), transposeRhs ? " transposed" : ""));
  return checked(Dims{m, n});
}

Expected<Dims> batchMatmul(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs,
                           bool transposeLhs, bool transposeRhs) {
  if (lhs.size() != 3 || rhs.size() != 3)
    return fail(formatv("expects 3-D operands [batch, rows, cols], got lhs "
                        "{0} and rhs {1}",
                        str(lhs), str(rhs)));
  if (lhs[0] != rhs[0])
    return fail(formatv("expects the batch dims to match: lhs {0}, rhs {1}",
                        str(lhs), str(rhs)));
  Expected<Dims> mn =
      matmul(lhs.drop_front(), rhs.drop_front(), transposeLhs, transposeRhs);
  if (!mn)
    return mn.takeError();
  return checked(Dims{lhs[0], (*mn)[0], (*mn)[1]});
}

Expected<Dims> reshape(ArrayRef<int64_t> from, ArrayRef<int64_t> to) {
  Dims out(to.begin(), to.end());
  int64_t known = 1, inferred = -1;
  for (auto [i, d] : llvm::enumerate(to)) {
    if (d == -1) {
      if (inferred >= 0)
        return fail(formatv("target shape {0} has more than one -1", str(to)));
      inferred = i;
    } else if (d < 0) {
      return fail(formatv("target shape {0} has a negative dim", str(to)));
    } else if (std::optional<int64_t> k = checkedMul(known, d)) {
      known = *k;
    } else {
      return fail(
          formatv("target shape {0} has more than 2^63-1 elements", str(to)));
    }
  }
  Expected<int64_t> count = numElements(from);
  if (!count)
    return count.takeError();
  int64_t total = *count;
  if (inferred >= 0) {
    if (known == 0 || total % known != 0)
      return fail(formatv("cannot reshape {0} ({1} elements) to {2}", str(from),
                          total, str(to)));
    out[inferred] = total / known;
  } else if (known != total) {
    return fail(formatv("cannot reshape {0} ({1} elements) to {2} ({3} "
                        "elements)",
                        str(from), total, str(to), known));
  }
  return out;
}

Expected<Dims> transpose(ArrayRef<int64_t> x, ArrayRef<int64_t> perm) {
  if (perm.size() != x.size())
    return fail(formatv("perm {0} has {1} entries for an operand of rank {2}",
                        str(perm), perm.size(), x.size()));
  SmallVector<bool> seen(x.size(), false);
  Dims out;
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(x.size()) || seen[p])
      return fail(formatv("perm {0} is not a permutation of [0, {1})",
                          str(perm), x.size()));
    seen[p] = true;
    out.push_back(x[p]);
  }
  return out;
}

Expected<int64_t> normalizeAxis(int64_t axis, int64_t rank, StringRef what) {
  if (axis < -rank || axis >= rank)
    return fail(
        formatv("{0} {1} is out of range for rank {2}", what, axis, rank));
  return axis < 0 ? axis + rank : axis;
}

Expected<Dims> concat(ArrayRef<SmallVector<int64_t, 4>> inputs, int64_t axis) {
  if (inputs.empty())
    return fail("expects at least one input");
  int64_t rank = inputs[0].size();
  auto ax = normalizeAxis(axis, rank);
  if (!ax)
    return ax.takeError();
  Dims out(inputs[0].begin(), inputs[0].end());
  out[*ax] = 0;
  for (auto [i, in] : llvm::enumerate(inputs)) {
    if (static_cast<int64_t>(in.size()) != rank)
      return fail(
          formatv("input {0} has rank {1}, expected {2}", i, in.size(), rank));
    for (int64_t d = 0; d < rank; ++d)
      if (d != *ax && in[d] != inputs[0][d])
        return fail(formatv("input {0} {1} differs from input 0 {2} in dim "
                            "{3} (concat axis {4})",
                            i, str(in), str(inputs[0]), d, *ax));
    std::optional<int64_t> sum = checkedAdd(out[*ax], in[*ax]);
    if (!sum)
      return fail(formatv("the inputs' dim {0} sums to more than 2^63-1", *ax));
    out[*ax] = *sum;
  }
  return checked(std::move(out));
}

Expected<Dims> slice(ArrayRef<int64_t> x, ArrayRef<int64_t> start,
                     ArrayRef<int64_t> limit, ArrayRef<int64_t> strides) {
  if (start.size() != x.size() || limit.size() != x.size() ||
      strides.size() != x.size())
    return fail(formatv("start, limit and strides need {0} entries (the "
                        "operand's rank)",
                        x.size()));
  Dims out;
  for (size_t d = 0; d < x.size(); ++d) {
    if (strides[d] <= 0 || start[d] < 0 || limit[d] > x[d] ||
        start[d] > limit[d])
      return fail(formatv("dim {0}: slice [{1}:{2}:{3}] is invalid for size "
                          "{4}",
                          d, start[d], limit[d], strides[d], x[d]));
    // ceil((limit - start) / stride) without overflowing for huge strides.
    int64_t extent = limit[d] - start[d];
    out.push_back(extent / strides[d] + (extent % strides[d] != 0));
  }
  return out;
}

Expected<Dims> reduce(ArrayRef<int64_t> x, ArrayRef<int64_t> axes,
                      bool keepdims) {
  Dims out;
  for (auto [i, a] : llvm::enumerate(axes)) {
    if (a < 0 || a >= static_cast<int64_t>(x.size()))
      return fail(formatv("axis {0} is out of range for an operand of rank "
                          "{1}",
                          a, x.size()));
    if (i > 0 && a <= axes[i - 1])
      return fail(formatv("axes {0} must be sorted and unique", str(axes)));
  }
  for (auto [d, size] : llvm::enumerate(x)) {
    bool reduced = llvm::is_contained(axes, static_cast<int64_t>(d));
    if (!reduced)
      out.push_back(size);
    else if (keepdims)
      out.push_back(1);
  }
  return out;
}

Expected<Dims> argmax(ArrayRef<int64_t> x, int64_t axis) {
  auto ax = normalizeAxis(axis, x.size());
  if (!ax)
    return ax.takeError();
  Dims out(x.begin(), x.end());
  out.erase(out.begin() + *ax);
  return out;
}

int64_t windowOutputSize(int64_t in, int64_t window, int64_t stride,
                         int64_t dilation, bool samePadding) {
  if (samePadding)
    return in / stride + (in % stride != 0);
  std::optional<int64_t> span = checkedMul(window - 1, dilation);
  std::optional<int64_t> effective =
      span ? checkedAdd(*span, int64_t(1)) : std::nullopt;
  if (!effective || in < *effective)
    return 0;
  return (in - *effective) / stride + 1;
}

namespace {
Error checkWindowAttrs(ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations) {
  if (strides.size() != 2 || dilations.size() != 2)
    return fail(formatv("expects 2 strides and 2 dilations, got {0} and {1}",
                        str(strides), str(dilations)));
  if (strides[0] < 1 || strides[1] < 1 || dilations[0] < 1 || dilations[1] < 1)
    return fail(formatv("strides {0} and dilations {1} must be positive",
                        str(strides), str(dilations)));
  return Error::success();
}

Expected<Dims> windowed(ArrayRef<int64_t> x, int64_t kh, int64_t kw,
                        int64_t channels, ArrayRef<int64_t> strides,
                        ArrayRef<int64_t> dilations, bool same) {
  int64_t oh = windowOutputSize(x[1], kh, strides[0], dilations[0], same);
  int64_t ow = windowOutputSize(x[2], kw, strides[1], dilations[1], same);
  if (oh < 1 || ow < 1)
    return fail(formatv("window {0}x{1} (dilations {2}) is larger than the "
                        "input {3} with valid padding",
                        kh, kw, str(dilations), str(x)));
  if (same) {
    // The kernels pad by (out - 1) * stride + extent - in: it must exist.
    int64_t outs[] = {oh, ow}, windows[] = {kh, kw};
    for (int d = 0; d < 2; ++d) {
      std::optional<int64_t> span = checkedMul(outs[d] - 1, strides[d]);
      std::optional<int64_t> extent = checkedMul(windows[d] - 1, dilations[d]);
      if (!span || !extent || !checkedAdd(*span, *extent))
        return fail(formatv("window {0}x{1} with strides {2} and dilations "
                            "{3} overflows int64 when padded",
                            kh, kw, str(strides), str(dilations)));
    }
  }
  return checked(Dims{x[0], oh, ow, channels});
}
} // namespace

Expected<Dims> conv2d(ArrayRef<int64_t> input, ArrayRef<int64_t> filter,
                      ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations,
                      bool samePadding, int64_t groups) {
  if (input.size() != 4 || filter.size() != 4)
    return fail(formatv("expects a 4-D NHWC input and a 4-D HWIO filter, got "
                        "{0} and {1}",
                        str(input), str(filter)));
  if (Error e = checkWindowAttrs(strides, dilations))
    return e;
  if (groups < 1)
    return fail(formatv("groups ({0}) must be positive", groups));
  if (input[3] % groups != 0 || filter[3] % groups != 0)
    return fail(formatv("expects input channels ({0}) and filters ({1}) to be "
                        "multiples of groups ({2})",
                        input[3], filter[3], groups));
  if (groups == 1 && input[3] != filter[2])
    return fail(formatv("expects input channels ({0}) to match filter input "
                        "channels ({1}): input {2}, filter {3}",
                        input[3], filter[2], str(input), str(filter)));
  if (input[3] / groups != filter[2])
    return fail(formatv("expects input channels ({0}) / groups ({1}) to match "
                        "filter input channels ({2}): input {3}, filter {4}",
                        input[3], groups, filter[2], str(input), str(filter)));
  return windowed(input, filter[0], filter[1], filter[3], strides, dilations,
                  samePadding);
}

Expected<Dims> pool2d(ArrayRef<int64_t> x, ArrayRef<int64_t> window,
                      ArrayRef<int64_t> strides, bool samePadding) {
  if (x.size() != 4)
    return fail(formatv("expects a 4-D NHWC operand, got {0}", str(x)));
  if (window.size() != 2 || window[0] < 1 || window[1] < 1)
    return fail(
        formatv("window {0} must have 2 positive entries", str(window)));
  int64_t ones[] = {1, 1};
  if (Error e = checkWindowAttrs(strides, ones))
    return e;
  return windowed(x, window[0], window[1], x[3], strides, ones, samePadding);
}

Expected<Dims> gather(ArrayRef<int64_t> table, ArrayRef<int64_t> indices) {
  if (table.empty() || table[0] < 1)
    return fail("gather: expects a table of rank >= 1 with at least one row, "
                "got " +
                str(table));
  Dims out(indices.begin(), indices.end());
  out.append(table.begin() + 1, table.end());
  return checked(std::move(out));
}

} // namespace shapes
} // namespace kcc
