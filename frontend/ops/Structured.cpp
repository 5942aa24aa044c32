//===- Structured.cpp - Matmul, softmax, reductions, layout, conv, pool ---===//

#include "frontend/ops/OpSupport.h"

#include <algorithm>

using namespace kcc;
using namespace kcc::ops;
using namespace kcc::ops::detail;

//===----------------------------------------------------------------------===//
// Matmul and softmax
//===----------------------------------------------------------------------===//

Tensor ops::matmul(const Tensor &a, const Tensor &b, bool transposeA,
                   bool transposeB) {
  Mode mode = modeOf("matmul", {&a, &b});
  DType dt = commonDType("matmul", {&a, &b});
  Shape shape = unwrap(
      "matmul", shapes::matmul(a.shape(), b.shape(), transposeA, transposeB));
  if (mode == Mode::Symbolic)
    return Tensor::symbolic(shape, dt);
  if (mode == Mode::Traced)
    return emit<kc::MatmulOp>(shape, dt, valueOf(a), valueOf(b), transposeA,
                              transposeB);
  NDArray out = allocate(shape, dt);
  runKernel("matmul", [&] {
    kernels::matmul(a.array(), b.array(), transposeA, transposeB, out);
  });
  return Tensor(out);
}

Tensor ops::batchMatmul(const Tensor &a, const Tensor &b, bool transposeA,
                        bool transposeB) {
  Mode mode = modeOf("batch_matmul", {&a, &b});
  DType dt = commonDType("batch_matmul", {&a, &b});
  Shape shape =
      unwrap("batch_matmul",
             shapes::batchMatmul(a.shape(), b.shape(), transposeA, transposeB));
  if (mode == Mode::Symbolic)
    return Tensor::symbolic(shape, dt);
  if (mode == Mode::Traced)
    return emit<kc::BatchMatmulOp>(shape, dt, valueOf(a), valueOf(b),
                                   transposeA, transposeB);
  NDArray out = allocate(shape, dt);
  runKernel("batch_matmul", [&] {
    kernels::batchMatmul(a.array(), b.array(), transposeA, transposeB, out);
  });
  return Tensor(out);
}

namespace {
template <typename KcOp, typename Kernel>
Tensor softmaxLike(llvm::StringRef name, const Tensor &x, int64_t axis,
                   Kernel kernel) {
  Mode mode = modeOf(name, {&x});
  DType dt = commonDType(name, {&x});
  int64_t ax = unwrapValue(name, shapes::normalizeAxis(axis, x.rank()));
  if (mode == Mode::Symbolic)
    return Tensor::symbolic(x.shape(), dt);
  if (mode == Mode::Traced)
    return emit<KcOp>(x.shape(), dt, valueOf(x), static_cast<uint64_t>(ax));
  NDArray out = allocate(x.shape(), dt);
  runKernel(name, [&] { kernel(x.array(), ax, out); });
  return Tensor(out);
}
} // namespace

Tensor ops::softmax(const Tensor &x, int64_t axis) {
  return softmaxLike<kc::SoftmaxOp>("softmax", x, axis, kernels::softmax);
}

Tensor ops::logSoftmax(const Tensor &x, int64_t axis) {
  return softmaxLike<kc::LogSoftmaxOp>("log_softmax", x, axis,
                                       kernels::logSoftmax);
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

namespace {
template <typename KcOp>
Tensor reduceOp(llvm::StringRef name, kernels::ReduceKind kind, const Tensor &x,
                std::vector<int64_t> axes, bool keepdims) {
  Mode mode = modeOf(name, {&x});
  DType dt = commonDType(name, {&x});
  // The kc op wants sorted, non-negative axes; users may write -1.
  for (int64_t &a : axes)
    a = unwrapValue(name, shapes::normalizeAxis(a, x.rank()));
  std::sort(axes.begin(), axes.end());
  Shape shape = unwrap(name, shapes::reduce(x.shape(), axes, keepdims));
  if (mode == Mode::Symbolic)
    return Tensor::symbolic(shape, dt);
  if (mode == Mode::Traced)
    return emit<KcOp>(shape, dt, valueOf(x), llvm::ArrayRef<int64_t>(axes),
                      keepdims);
  NDArray out = allocate(shape, dt);
  runKernel(name, [&] { kernels::reduce(kind, x.array(), axes, out); });
  return Tensor(out);
}
} // namespace

Tensor ops::reduceSum(const Tensor &x, std::vector<int64_t> axes,
                      bool keepdims) {
  return reduceOp<kc::ReduceSumOp>("reduce_sum", kernels::ReduceKind::Sum, x,
                                   std::move(axes), keepdims);
}

Tensor ops::reduceMax(const Tensor &x, std::vector<int64_t> axes,
                      bool keepdims) {
  return reduceOp<kc::ReduceMaxOp>("reduce_max", kernels::ReduceKind::Max, x,
                                   std::move(axes), keepdims);
}

Tensor ops::reduceMean(const Tensor &x, std::vector<int64_t> axes,
                       bool keepdims) {
  return reduceOp<kc::ReduceMeanOp>("reduce_mean", kernels::ReduceKind::Mean, x,
                                    std::move(axes), keepdims);
}

Tensor ops::l2Normalize(const Tensor &x, std::vector<int64_t> axes,
                        double epsilon) {
  Tensor squares = reduceSum(mul(x, x), std::move(axes), /*keepdims=*/true);
  return mul(x, minimum(rsqrt(squares), fillLike(squares, {}, 1 / epsilon)));
}

Tensor ops::argmax(const Tensor &x, int64_t axis) {
  Mode mode = modeOf("argmax", {&x});
  commonDType("argmax", {&x});
  int64_t ax = unwrapValue("argmax", shapes::normalizeAxis(axis, x.rank()));
  Shape shape = unwrap("argmax", shapes::argmax(x.shape(), ax));
  if (mode == Mode::Symbolic)
    return Tensor::symbolic(shape, DType::I64);
  if (mode == Mode::Traced)
    return emit<kc::ArgmaxOp>(shape, DType::I64, valueOf(x),
                              static_cast<uint64_t>(ax));
  NDArray out = allocate(shape, DType::I64);
  runKernel("argmax", [&] { kernels::argmax(x.array(), ax, out); });
  return Tensor(out);
}

//===----------------------------------------------------------------------===//
// Layout
//===----------------------------------------------------------------------===//

Tensor ops::reshape(const Tensor &x, const Shape &target) {
  Mode mode = modeOf("reshape", {&x});
  Shape shape = unwrap("reshape", shapes::reshape(x.shape(), target));
  if (mode == Mode::Symbolic)
    return Tensor::symbolic(shape, x.dtype());
  if (mode == Mode::Traced)
    return emit<kc::ReshapeOp>(shape, x.dtype(), valueOf(x));
  // Row-major storage makes an eager reshape a view: no copy, no kernel.
  return Tensor(x.array().reshaped(shape));
}

Tensor ops::transpose(const Tensor &x, const std::vector<int64_t> &perm) {
  Mode mode = modeOf("transpose", {&x});
  Shape shape = unwrap("transpose", shapes::transpose(x.shape(), perm));
  if (mode == Mode::Symbolic)
    return Tensor::symbolic(shape, x.dtype());
  if (mode == Mode::Traced)
    return emit<kc::TransposeOp>(shape, x.dtype(), valueOf(x),
                                 llvm::ArrayRef<int64_t>(perm));
  NDArray out = allocate(shape, x.dtype());
  runKernel("transpose", [&] { kernels::transpose(x.array(), perm, out); });
  return Tensor(out);
}

Tensor ops::concat(const std::vector<Tensor> &xs, int64_t axis) {
  if (xs.empty())
    fail("concat", "expects at least one input");
  llvm::SmallVector<const Tensor *> ptrs;
  llvm::SmallVector<llvm::SmallVector<int64_t, 4>> inShapes;
  for (const Tensor &x : xs) {
    ptrs.push_back(&x);
    inShapes.emplace_back(x.shape().begin(), x.shape().end());
  }
  Mode mode = modeOf("concat", ptrs);
  DType dt = commonDType("concat", ptrs, /*floatOnly=*/false);
  int64_t ax = unwrapValue("concat", shapes::normalizeAxis(axis, xs[0].rank()));
  Shape shape = unwrap("concat", shapes::concat(inShapes, ax));
  if (mode == Mode::Symbolic)
    return Tensor::symbolic(shape, dt);
  if (mode == Mode::Traced) {
    llvm::SmallVector<mlir::Value> values;
    for (const Tensor &x : xs)
      values.push_back(valueOf(x));
    return emit<kc::ConcatOp>(shape, dt, mlir::ValueRange(values),
                              static_cast<uint64_t>(ax));
  }
  std::vector<NDArray> arrays;
  for (const Tensor &x : xs)
    arrays.push_back(x.array());
  NDArray out = allocate(shape, dt);
  runKernel("concat", [&] { kernels::concat(arrays, ax, out); });
  return Tensor(out);
}

Tensor ops::slice(const Tensor &x, const std::vector<int64_t> &start,
                  const std::vector<int64_t> &limit,
                  const std::vector<int64_t> &strides) {
  Mode mode = modeOf("slice", {&x});
  Shape shape =
      unwrap("slice", shapes::slice(x.shape(), start, limit, strides));
  if (mode == Mode::Symbolic)
    return Tensor::symbolic(shape, x.dtype());
  if (mode == Mode::Traced)
    return emit<kc::SliceOp>(
        shape, x.dtype(), valueOf(x), llvm::ArrayRef<int64_t>(start),
        llvm::ArrayRef<int64_t>(limit), llvm::ArrayRef<int64_t>(strides));
  NDArray out = allocate(shape, x.dtype());
  runKernel("slice", [&] { kernels::slice(x.array(), start, strides, out); });
  return Tensor(out);
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

namespace {
kc::Padding toKc(Padding p) {
  return p == Padding::Same ? kc::Padding::Same : kc::Padding::Valid;
}

void expectPair(llvm::StringRef op, llvm::StringRef what,
                const std::vector<int64_t> &v) {
  if (v.size() != 2)
    fail(op, "expects 2 " + what.str() + " ({h, w}), got " + shapes::str(v));
}
} // namespace

namespace {
kernels::Conv2DParams convParams(const std::vector<int64_t> &strides,
                                 Padding padding,
                                 const std::vector<int64_t> &dilations,
                                 int64_t groups) {
  kernels::Conv2DParams p;
  p.strideH = strides[0];
  p.strideW = strides[1];
  p.dilationH = dilations[0];
  p.dilationW = dilations[1];
  p.padding = padding;
  p.groups = groups;
  return p;
}
} // namespace

Tensor ops::conv2d(const Tensor &x, const Tensor &filter,
                   const std::vector<int64_t> &strides, Padding padding,
                   const std::vector<int64_t> &dilations, int64_t groups) {
  Mode mode = modeOf("conv2d", {&x, &filter});
  DType dt = commonDType("conv2d", {&x, &filter});
  bool same = padding == Padding::Same;
  Shape shape =
      unwrap("conv2d", shapes::conv2d(x.shape(), filter.shape(), strides,
                                      dilations, same, groups));
  if (mode == Mode::Symbolic)
    return Tensor::symbolic(shape, dt);
  if (mode == Mode::Traced)
    return emit<kc::Conv2DOp>(shape, dt, valueOf(x), valueOf(filter),
                              llvm::ArrayRef<int64_t>(strides),
                              llvm::ArrayRef<int64_t>(dilations), toKc(padding),
                              groups);
  kernels::Conv2DParams p = convParams(strides, padding, dilations, groups);
  NDArray out = allocate(shape, dt);
  runKernel("conv2d",
            [&] { kernels::conv2d(x.array(), filter.array(), p, out); });
  return Tensor(out);
}

Tensor ops::conv2dTranspose(const Tensor &x, const Tensor &filter,
                            const std::vector<int64_t> &strides,
                            Padding padding,
                            const std::vector<int64_t> &dilations) {
  const char *op = "conv2d_transpose";
  Mode mode = modeOf(op, {&x, &filter});
  DType dt = commonDType(op, {&x, &filter});
  expectPair(op, "strides", strides);
  expectPair(op, "dilations", dilations);
  const Shape &in = x.shape(), &w = filter.shape();
  if (in.size() != 4 || w.size() != 4)
    fail(op, "expects a 4-D NHWC input and a 4-D [KH, KW, out, in] filter, "
             "got " +
                 shapes::str(in) + " and " + shapes::str(w));
  if (in[3] != w[3])
    fail(op, "expects input channels (" + std::to_string(in[3]) +
                 ") to match the filter's last dim: filter " + shapes::str(w));
  // Keras's deconv_output_length with output_padding None.
  Shape shape{in[0], 0, 0, w[2]};
  for (int d = 0; d < 2; ++d) {
    int64_t k = (w[d] - 1) * dilations[d] + 1, s = strides[d];
    shape[1 + d] = padding == Padding::Same
                       ? in[1 + d] * s
                       : in[1 + d] * s + std::max<int64_t>(k - s, 0);
  }
  // The forward convolution of the result must give x back.
  Shape check = unwrap(op, shapes::conv2d(shape, w, strides, dilations,
                                          padding == Padding::Same));
  if (check != Shape{in[0], in[1], in[2], w[3]})
    fail(op, "no convolution of " + shapes::str(shape) + " gives " +
                 shapes::str(in));
  if (mode == Mode::Symbolic)
    return Tensor::symbolic(shape, dt);
  if (mode == Mode::Traced)
    return emit<kc::Conv2DBackpropInputOp>(
        shape, dt, valueOf(x), valueOf(filter),
        llvm::ArrayRef<int64_t>(strides), llvm::ArrayRef<int64_t>(dilations),
        toKc(padding), int64_t(1));
  kernels::Conv2DParams p = convParams(strides, padding, dilations, 1);
  NDArray out = allocate(shape, dt);
  runKernel(op, [&] {
    kernels::conv2dBackpropInput(x.array(), filter.array(), p, out);
  });
  return Tensor(out);
}

namespace {
template <typename KcOp, typename Kernel>
Tensor poolOp(llvm::StringRef name, const Tensor &x,
              const std::vector<int64_t> &window,
              const std::vector<int64_t> &strides, Padding padding,
              Kernel kernel) {
  Mode mode = modeOf(name, {&x});
  DType dt = commonDType(name, {&x});
  expectPair(name, "window dims", window);
  Shape shape = unwrap(name, shapes::pool2d(x.shape(), window, strides,
                                            padding == Padding::Same));
  if (mode == Mode::Symbolic)
    return Tensor::symbolic(shape, dt);
  if (mode == Mode::Traced)
    return emit<KcOp>(shape, dt, valueOf(x), llvm::ArrayRef<int64_t>(window),
                      llvm::ArrayRef<int64_t>(strides), toKc(padding));
  kernels::Pool2DParams p;
  p.windowH = window[0];
  p.windowW = window[1];
  p.strideH = strides[0];
  p.strideW = strides[1];
  p.padding = padding;
  NDArray out = allocate(shape, dt);
  runKernel(name, [&] { kernel(x.array(), p, out); });
  return Tensor(out);
}
} // namespace

Tensor ops::maxPool2d(const Tensor &x, const std::vector<int64_t> &window,
                      const std::vector<int64_t> &strides, Padding padding) {
  return poolOp<kc::MaxPool2DOp>("max_pool2d", x, window, strides, padding,
                                 kernels::maxPool2d);
}

Tensor ops::avgPool2d(const Tensor &x, const std::vector<int64_t> &window,
                      const std::vector<int64_t> &strides, Padding padding) {
  return poolOp<kc::AvgPool2DOp>("avg_pool2d", x, window, strides, padding,
                                 kernels::avgPool2d);
}
