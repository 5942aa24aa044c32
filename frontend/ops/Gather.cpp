//===- Gather.cpp - Row lookups (Embedding) -------------------------------===//

#include "frontend/ops/OpSupport.h"

using namespace kcc;
using namespace kcc::ops;
using namespace kcc::ops::detail;

Tensor ops::gather(const Tensor &table, const Tensor &indices) {
  Mode mode = modeOf("gather", {&table, &indices});
  DType dtype = commonDType("gather", {&table});
  if (indices.dtype() != DType::I32 && indices.dtype() != DType::I64)
    fail("gather", std::string("expects int32 or int64 indices, got ") +
                       dtypeName(indices.dtype()));
  Shape shape =
      unwrap("gather", shapes::gather(table.shape(), indices.shape()));
  if (mode == Mode::Symbolic)
    return Tensor::symbolic(shape, dtype);
  if (mode == Mode::Traced)
    return emit<kc::GatherOp>(shape, dtype, valueOf(table), valueOf(indices));
  NDArray out = allocate(shape, dtype);
  runKernel("gather",
            [&] { kernels::gather(table.array(), indices.array(), out); });
  return Tensor(out);
}
