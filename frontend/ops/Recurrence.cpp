//===- Recurrence.cpp - Recurrent cells over a sequence -------------------===//

#include "runtime/kernels/Recurrence.h"
#include "frontend/ops/OpSupport.h"

using namespace kcc;
using namespace kcc::ops;
using namespace kcc::ops::detail;

namespace {

kernels::RecurrenceParams paramsOf(const RecurrenceSpec &spec) {
  kernels::RecurrenceParams p;
  if (!kernels::parseRecurrentCell(spec.cell, p.cell))
    fail("recurrence", "unknown cell '" + spec.cell + "' (expected " +
                           kernels::recurrentCellNames() + ")");
  for (auto [name, slot] :
       {std::pair{&spec.activation, &p.activation},
        std::pair{&spec.recurrentActivation, &p.recurrentActivation}})
    if (!kernels::parseRecurrentActivation(*name, *slot))
      fail("recurrence", "unsupported activation '" + *name +
                             "' in a recurrent cell (expected " +
                             kernels::recurrentActivationNames() + ")");
  p.resetAfter = spec.resetAfter;
  p.reverse = spec.reverse;
  return p;
}

void expectShape(const Tensor &t, const Shape &shape, const char *what) {
  if (t.shape() != shape)
    fail("recurrence", std::string("expects ") + what + " of shape " +
                           shapes::str(shape) + ", got " + t.shapeString());
}

} // namespace

Tensor ops::recurrence(const Tensor &x, const Tensor &kernel,
                       const Tensor &initialState, const Tensor &recurrentBias,
                       const RecurrenceSpec &spec) {
  const char *op = "recurrence";
  Mode mode = modeOf(op, {&x, &kernel, &initialState, &recurrentBias});
  DType dt = commonDType(op, {&x, &kernel, &initialState, &recurrentBias});
  kernels::RecurrenceParams p = paramsOf(spec);
  if (x.rank() != 3 || kernel.rank() != 2)
    fail(op, "expects a [steps, batch, gates*units] x and a [units, "
             "gates*units] kernel, got " +
                 x.shapeString() + " and " + kernel.shapeString());
  int64_t T = x.dim(0), B = x.dim(1), H = kernel.dim(0);
  int64_t GH = kernels::recurrentGates(p.cell) * H;
  expectShape(x, {T, B, GH}, "x");
  expectShape(kernel, {H, GH}, "kernel");
  expectShape(initialState, {B, kernels::recurrentInitialWidth(p.cell, H)},
              "initial_state");
  expectShape(recurrentBias, {GH}, "recurrent_bias");
  Shape shape{T, B, kernels::recurrentStateWidth(p, H)};
  if (mode == Mode::Symbolic)
    return Tensor::symbolic(shape, dt);
  if (mode == Mode::Traced) {
    TraceContext *tc = TraceContext::current();
    mlir::OpBuilder &b = tc->builder();
    auto type = toTensorType(tc->context(), shape, dt);
    auto rec = b.create<kc::RecurrenceOp>(
        tc->location(), type, valueOf(x), valueOf(kernel),
        valueOf(initialState), valueOf(recurrentBias), spec.cell,
        spec.resetAfter, spec.activation, spec.recurrentActivation,
        spec.reverse);
    return Tensor::traced(rec.getResult(), shape, dt);
  }
  NDArray out = allocate(shape, dt);
  runKernel(op, [&] {
    kernels::recurrence(p, x.array(), kernel.array(), initialState.array(),
                        recurrentBias.array(), out);
  });
  return Tensor(out);
}
