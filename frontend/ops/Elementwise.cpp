//===- Elementwise.cpp - Elementwise, compare, select, cast, random ops ---===//
//
// Also holds the plumbing every op shares (modes, errors, constants).
//
//===----------------------------------------------------------------------===//

#include "frontend/ops/OpSupport.h"
#include "ir/KcAttributes.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace kcc;
using namespace kcc::ops;
using namespace kcc::ops::detail;

//===----------------------------------------------------------------------===//
// Plumbing
//===----------------------------------------------------------------------===//

void detail::fail(llvm::StringRef op, const std::string &message) {
  throwInLayer(op.str() + ": " + message);
}

Mode detail::modeOf(llvm::StringRef op, llvm::ArrayRef<const Tensor *> inputs) {
  bool traced = false, symbolic = false;
  for (const Tensor *t : inputs) {
    if (!t->defined())
      fail(op, "operand is an undefined tensor");
    traced |= t->isTraced();
    symbolic |= t->isSymbolic();
  }
  if (traced && symbolic)
    fail(op, "cannot mix traced and symbolic tensors");
  if (symbolic)
    return Mode::Symbolic;
  if (traced) {
    if (!TraceContext::current())
      fail(op, "traced tensor used outside its trace");
    return Mode::Traced;
  }
  return Mode::Concrete;
}

DType detail::commonDType(llvm::StringRef op,
                          llvm::ArrayRef<const Tensor *> inputs,
                          bool floatOnly) {
  DType dt = inputs.front()->dtype();
  for (const Tensor *t : inputs)
    if (t->dtype() != dt)
      fail(op, "operands have different dtypes: " + inputs.front()->describe() +
                   " and " + t->describe());
  if (floatOnly && !isFloat(dt))
    fail(op, "expects float operands, got " + inputs.front()->describe());
  return dt;
}

namespace {
/// A dense attribute holding `a` (a splat when all elements are equal, so
/// scalars broadcast by the frontend stay one number in the IR).
template <typename T>
mlir::DenseElementsAttr denseOf(mlir::RankedTensorType type, const T *data,
                                int64_t n) {
  bool splat =
      n > 0 && std::all_of(data, data + n, [&](T v) { return v == data[0]; });
  return mlir::DenseElementsAttr::get(type,
                                      llvm::ArrayRef<T>(data, splat ? 1 : n));
}
} // namespace

mlir::Value detail::valueOf(const Tensor &t) {
  if (t.isTraced())
    return t.value();
  TraceContext *tc = TraceContext::current();
  const NDArray &a = t.array();
  auto type = toTensorType(tc->context(), a.shape(), a.dtype());
  int64_t n = a.numel();
  mlir::DenseElementsAttr attr;
  switch (a.dtype()) {
  case DType::F32:
    attr = denseOf(type, a.data<float>(), n);
    break;
  case DType::F64:
    attr = denseOf(type, a.data<double>(), n);
    break;
  case DType::I32:
    attr = denseOf(type, a.data<int32_t>(), n);
    break;
  case DType::I64:
    attr = denseOf(type, a.data<int64_t>(), n);
    break;
  case DType::BF16: {
    // Keras's bfloat16 constants (a mixed policy's zeros, scalars): the
    // stored bits as they are.
    llvm::SmallVector<llvm::APFloat> values;
    const uint16_t *bits = a.data<uint16_t>();
    bool splat = n > 0 && std::all_of(bits, bits + n,
                                      [&](uint16_t b) { return b == bits[0]; });
    for (int64_t i = 0, e = splat ? 1 : n; i < e; ++i)
      values.emplace_back(llvm::APFloat::BFloat(), llvm::APInt(16, bits[i]));
    attr = mlir::DenseElementsAttr::get(type, values);
    break;
  }
  case DType::I1: {
    llvm::SmallVector<bool> bits(n);
    for (int64_t i = 0; i < n; ++i)
      bits[i] = a.data<uint8_t>()[i] != 0;
    attr = denseOf(type, bits.data(), n);
    break;
  }
  default:
    fail("constant", std::string("cannot embed a ") + dtypeName(a.dtype()) +
                         " array in traced IR");
  }
  return tc->builder()
      .create<kc::ConstantOp>(tc->location(), type, attr)
      .getResult();
}

Tensor detail::broadcastIn(llvm::StringRef op, Mode mode, const Tensor &t,
                           const Shape &shape) {
  if (t.shape() == shape)
    return t;
  unwrap(op, shapes::broadcastTo(t.shape(), shape));
  if (mode == Mode::Symbolic)
    return Tensor::symbolic(shape, t.dtype());
  if (mode == Mode::Traced)
    return emit<kc::BroadcastToOp>(shape, t.dtype(), valueOf(t));
  NDArray out = allocate(shape, t.dtype());
  runKernel(op, [&] { kernels::broadcastTo(t.array(), out); });
  return Tensor(out);
}

//===----------------------------------------------------------------------===//
// Binary and unary arithmetic
//===----------------------------------------------------------------------===//

namespace {

template <typename KcOp>
Tensor binaryOp(llvm::StringRef name, kernels::BinaryKind kind, const Tensor &a,
                const Tensor &b) {
  Mode mode = modeOf(name, {&a, &b});
  DType dt = commonDType(name, {&a, &b});
  Shape shape = unwrap(name, shapes::broadcastShapes(a.shape(), b.shape()));
  if (mode == Mode::Symbolic)
    return Tensor::symbolic(shape, dt);
  Tensor lhs = broadcastIn(name, mode, a, shape);
  Tensor rhs = broadcastIn(name, mode, b, shape);
  if (mode == Mode::Traced)
    return emit<KcOp>(shape, dt, valueOf(lhs), valueOf(rhs));
  NDArray out = allocate(shape, dt);
  runKernel(name,
            [&] { kernels::binary(kind, lhs.array(), rhs.array(), out); });
  return Tensor(out);
}

template <typename KcOp>
Tensor unaryOp(llvm::StringRef name, kernels::UnaryKind kind, const Tensor &x) {
  Mode mode = modeOf(name, {&x});
  DType dt = commonDType(name, {&x});
  if (mode == Mode::Symbolic)
    return Tensor::symbolic(x.shape(), dt);
  if (mode == Mode::Traced)
    return emit<KcOp>(x.shape(), dt, valueOf(x));
  NDArray out = allocate(x.shape(), dt);
  runKernel(name, [&] { kernels::unary(kind, x.array(), out); });
  return Tensor(out);
}

} // namespace

using BK = kernels::BinaryKind;
using UK = kernels::UnaryKind;

Tensor ops::add(const Tensor &a, const Tensor &b) {
  return binaryOp<kc::AddOp>("add", BK::Add, a, b);
}
Tensor ops::sub(const Tensor &a, const Tensor &b) {
  return binaryOp<kc::SubOp>("sub", BK::Sub, a, b);
}
Tensor ops::mul(const Tensor &a, const Tensor &b) {
  return binaryOp<kc::MulOp>("mul", BK::Mul, a, b);
}
Tensor ops::div(const Tensor &a, const Tensor &b) {
  return binaryOp<kc::DivOp>("div", BK::Div, a, b);
}
Tensor ops::pow(const Tensor &a, const Tensor &b) {
  return binaryOp<kc::PowOp>("pow", BK::Pow, a, b);
}
Tensor ops::maximum(const Tensor &a, const Tensor &b) {
  return binaryOp<kc::MaxOp>("max", BK::Max, a, b);
}
Tensor ops::minimum(const Tensor &a, const Tensor &b) {
  return binaryOp<kc::MinOp>("min", BK::Min, a, b);
}

Tensor ops::neg(const Tensor &x) {
  return unaryOp<kc::NegOp>("neg", UK::Neg, x);
}
Tensor ops::exp(const Tensor &x) {
  return unaryOp<kc::ExpOp>("exp", UK::Exp, x);
}
Tensor ops::log(const Tensor &x) {
  return unaryOp<kc::LogOp>("log", UK::Log, x);
}
Tensor ops::sqrt(const Tensor &x) {
  return unaryOp<kc::SqrtOp>("sqrt", UK::Sqrt, x);
}
Tensor ops::rsqrt(const Tensor &x) {
  return unaryOp<kc::RsqrtOp>("rsqrt", UK::Rsqrt, x);
}
Tensor ops::abs(const Tensor &x) {
  return unaryOp<kc::AbsOp>("abs", UK::Abs, x);
}
Tensor ops::relu(const Tensor &x) {
  return unaryOp<kc::ReluOp>("relu", UK::Relu, x);
}
Tensor ops::sigmoid(const Tensor &x) {
  return unaryOp<kc::SigmoidOp>("sigmoid", UK::Sigmoid, x);
}
Tensor ops::tanh(const Tensor &x) {
  return unaryOp<kc::TanhOp>("tanh", UK::Tanh, x);
}

Tensor ops::gelu(const Tensor &x, bool approximate) {
  Mode mode = modeOf("gelu", {&x});
  DType dt = commonDType("gelu", {&x});
  if (mode == Mode::Symbolic)
    return Tensor::symbolic(x.shape(), dt);
  if (mode == Mode::Traced)
    return emit<kc::GeluOp>(x.shape(), dt, valueOf(x), approximate);
  NDArray out = allocate(x.shape(), dt);
  runKernel("gelu", [&] {
    kernels::unary(approximate ? UK::GeluTanh : UK::Gelu, x.array(), out);
  });
  return Tensor(out);
}

//===----------------------------------------------------------------------===//
// Compare, select, cast, broadcast
//===----------------------------------------------------------------------===//

Tensor ops::compare(CompareKind kind, const Tensor &a, const Tensor &b) {
  Mode mode = modeOf("compare", {&a, &b});
  commonDType("compare", {&a, &b}, /*floatOnly=*/false);
  Shape shape =
      unwrap("compare", shapes::broadcastShapes(a.shape(), b.shape()));
  if (mode == Mode::Symbolic)
    return Tensor::symbolic(shape, DType::I1);
  Tensor lhs = broadcastIn("compare", mode, a, shape);
  Tensor rhs = broadcastIn("compare", mode, b, shape);
  if (mode == Mode::Traced)
    return emit<kc::CompareOp>(shape, DType::I1,
                               static_cast<kc::CompareDirection>(kind),
                               valueOf(lhs), valueOf(rhs));
  NDArray out = allocate(shape, DType::I1);
  runKernel("compare",
            [&] { kernels::compare(kind, lhs.array(), rhs.array(), out); });
  return Tensor(out);
}

Tensor ops::select(const Tensor &cond, const Tensor &a, const Tensor &b) {
  Mode mode = modeOf("select", {&cond, &a, &b});
  if (cond.dtype() != DType::I1)
    fail("select", "expects an i1 condition, got " + cond.describe());
  DType dt = commonDType("select", {&a, &b}, /*floatOnly=*/false);
  Shape shape = unwrap("select", shapes::broadcastShapes(a.shape(), b.shape()));
  shape = unwrap("select", shapes::broadcastShapes(cond.shape(), shape));
  if (mode == Mode::Symbolic)
    return Tensor::symbolic(shape, dt);
  Tensor c = broadcastIn("select", mode, cond, shape);
  Tensor t = broadcastIn("select", mode, a, shape);
  Tensor f = broadcastIn("select", mode, b, shape);
  if (mode == Mode::Traced)
    return emit<kc::SelectOp>(shape, dt, valueOf(c), valueOf(t), valueOf(f));
  NDArray out = allocate(shape, dt);
  runKernel("select",
            [&] { kernels::select(c.array(), t.array(), f.array(), out); });
  return Tensor(out);
}

Tensor ops::cast(const Tensor &x, DType dtype) {
  Mode mode = modeOf("cast", {&x});
  if (x.dtype() == dtype)
    return x;
  if (mode == Mode::Symbolic)
    return Tensor::symbolic(x.shape(), dtype);
  if (mode == Mode::Traced)
    return emit<kc::CastOp>(x.shape(), dtype, valueOf(x));
  NDArray out = allocate(x.shape(), dtype);
  runKernel("cast", [&] { kernels::cast(x.array(), out); });
  return Tensor(out);
}

Tensor ops::cast(const Tensor &x, DType dtype, llvm::StringRef why) {
  Tensor y = cast(x, dtype);
  if (y.kind() == Tensor::Kind::Traced && x.dtype() != dtype)
    if (mlir::Operation *op = valueOf(y).getDefiningOp())
      op->setAttr(kc::attr::kPrecision,
                  mlir::StringAttr::get(op->getContext(), why));
  return y;
}

Tensor ops::broadcastTo(const Tensor &x, const Shape &shape) {
  return broadcastIn("broadcast_to", modeOf("broadcast_to", {&x}), x, shape);
}

//===----------------------------------------------------------------------===//
// Constants and randomness
//===----------------------------------------------------------------------===//

Tensor ops::full(const Shape &shape, double value, DType dtype) {
  NDArray out = allocate(shape, dtype);
  for (int64_t i = 0, n = out.numel(); i < n; ++i)
    out.set(i, value);
  return Tensor(out);
}

Tensor ops::scalar(double value, DType dtype) { return full({}, value, dtype); }

Tensor ops::fillLike(const Tensor &like, const Shape &shape, double value) {
  Mode mode = modeOf("fill", {&like});
  DType dt = like.dtype();
  if (mode == Mode::Symbolic)
    return Tensor::symbolic(shape, dt);
  if (mode == Mode::Concrete || (dt != DType::F32 && dt != DType::F64))
    return full(shape, value, dt);
  checkTensorSize(shape, dt, "the constant");
  TraceContext *tc = TraceContext::current();
  auto type = toTensorType(tc->context(), shape, dt);
  mlir::DenseElementsAttr attr =
      dt == DType::F32
          ? mlir::DenseElementsAttr::get(type, static_cast<float>(value))
          : mlir::DenseElementsAttr::get(type, value);
  mlir::Value v =
      tc->builder().create<kc::ConstantOp>(tc->location(), type, attr);
  return Tensor::traced(v, shape, dt);
}

Tensor ops::randomUniform(const Shape &shape, uint64_t seed,
                          const Tensor &counter, DType dtype) {
  Tensor step = counter.defined() ? counter : full({}, 0, DType::I64);
  if (step.dtype() != DType::I64 || step.rank() != 0)
    fail("random_uniform",
         "expects a rank-0 i64 counter, got " + step.describe());
  if (!isFloat(dtype))
    fail("random_uniform",
         std::string("expects a float dtype, got ") + dtypeName(dtype));
  Mode mode = modeOf("random_uniform", {&step});
  if (mode == Mode::Symbolic)
    return Tensor::symbolic(shape, dtype);
  if (mode == Mode::Traced)
    return emit<kc::RandomUniformOp>(shape, dtype, valueOf(step), seed);
  NDArray out = allocate(shape, dtype);
  uint64_t c = static_cast<uint64_t>(step.array().data<int64_t>()[0]);
  runKernel("random_uniform", [&] { kernels::randomUniform(seed, c, out); });
  return Tensor(out);
}
