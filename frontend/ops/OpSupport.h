//===- OpSupport.h - Shared plumbing of the frontend ops --------*- C++ -*-===//
//
// Private to frontend/ops: deciding whether an op runs eagerly, traces or
// only computes a shape, turning shape-rule failures into kcc::Error, and
// emitting kc ops at the current layer's location.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_OPS_OPSUPPORT_H
#define KCC_FRONTEND_OPS_OPSUPPORT_H

#include "frontend/Ops.h"
#include "frontend/Trace.h"
#include "ir/KcDialect.h"
#include "ir/ShapeFunctions.h"

#include "llvm/ADT/ArrayRef.h"

namespace kcc {
namespace ops {
namespace detail {

enum class Mode { Concrete, Traced, Symbolic };

/// How an op on `inputs` runs: symbolic if any input is symbolic, traced if
/// any is traced (concrete ones become constants), else concrete. Throws for
/// undefined inputs, traced and symbolic mixed, or tracing with no active
/// TraceContext.
Mode modeOf(llvm::StringRef op, llvm::ArrayRef<const Tensor *> inputs);

/// Throws "layer 'L': OP: MESSAGE".
[[noreturn]] void fail(llvm::StringRef op, const std::string &message);

/// The value of a shape rule, or a kcc::Error naming the layer and op.
template <typename T> T unwrapValue(llvm::StringRef op, llvm::Expected<T> v) {
  if (!v)
    fail(op, llvm::toString(v.takeError()));
  return std::move(*v);
}
inline Shape unwrap(llvm::StringRef op, llvm::Expected<shapes::Dims> dims) {
  shapes::Dims d = unwrapValue(op, std::move(dims));
  return Shape(d.begin(), d.end());
}

/// Checks that all tensors share one dtype (and it is a float type when
/// `floatOnly`); returns it.
DType commonDType(llvm::StringRef op, llvm::ArrayRef<const Tensor *> inputs,
                  bool floatOnly = true);

/// An operand for a traced op: the traced value, or a kc.constant holding a
/// concrete tensor.
mlir::Value valueOf(const Tensor &t);

/// `t` broadcast to `shape` in `mode` (no-op when the shapes match): a
/// kc.broadcast_to when tracing, a broadcast kernel when eager.
Tensor broadcastIn(llvm::StringRef op, Mode mode, const Tensor &t,
                   const Shape &shape);

/// Appends `OpTy` typed `shape` x `dtype` at the trace's insertion point.
template <typename OpTy, typename... Args>
Tensor emit(const Shape &shape, DType dtype, Args &&...args) {
  TraceContext *tc = TraceContext::current();
  auto type = toTensorType(tc->context(), shape, dtype);
  auto op = tc->builder().create<OpTy>(tc->location(), type,
                                       std::forward<Args>(args)...);
  return Tensor::traced(op.getResult(), shape, dtype);
}

/// Output storage for an eager op; a size or memory error names the layer.
inline NDArray allocate(const Shape &shape, DType dtype) {
  checkTensorSize(shape, dtype, "the result");
  try {
    return NDArray::empty(shape, dtype);
  } catch (const Error &e) {
    throwInLayer(e.what());
  }
}

/// Runs a kernel, re-throwing its errors under the layer's name.
template <typename Fn> void runKernel(llvm::StringRef op, Fn &&fn) {
  try {
    fn();
  } catch (const Error &e) {
    fail(op, e.what());
  }
}

} // namespace detail
} // namespace ops
} // namespace kcc

#endif // KCC_FRONTEND_OPS_OPSUPPORT_H
