//===- Collectives.cpp - Reductions over the ranks of a job ---------------===//

#include "runtime/Collectives.h"
#include "frontend/ops/OpSupport.h"

using namespace kcc;
using namespace kcc::ops;
using namespace kcc::ops::detail;

Tensor ops::allReduce(const Tensor &x, bool mean) {
  Mode mode = modeOf("all_reduce", {&x});
  DType dtype = commonDType("all_reduce", {&x});
  if (dtype != DType::F32 && dtype != DType::F64)
    fail("all_reduce",
         std::string("expects float32 or float64, got ") + dtypeName(dtype));
  if (mode == Mode::Symbolic)
    return Tensor::symbolic(x.shape(), dtype);
  if (mode == Mode::Traced) {
    mlir::Builder b(valueOf(x).getContext());
    return emit<kc::AllReduceOp>(x.shape(), dtype, valueOf(x),
                                 b.getStringAttr(mean ? "mean" : "sum"));
  }
  NDArray out = allocate(x.shape(), dtype);
  runKernel("all_reduce", [&] {
    const NDArray &in = x.array();
    if (dtype == DType::F64)
      kcc_rt_all_reduce_f64(in.data<double>(), out.data<double>(), out.numel(),
                            mean);
    else
      kcc_rt_all_reduce_f32(in.data<float>(), out.data<float>(), out.numel(),
                            mean);
  });
  return Tensor(out);
}
