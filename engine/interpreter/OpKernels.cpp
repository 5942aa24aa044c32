//===- OpKernels.cpp - The interpreter's kc op -> kernel table ------------===//
//
// One entry per kc op in the ODS. Each entry turns the op's attributes into
// the kernel's arguments (enums, axes, window parameters), allocates the
// result from the op's result type and calls the kernel. Shape checks are
// the kernels' business: an IR that passed the verifiers agrees with them,
// and a kernel that disagrees throws KernelError, which the interpreter
// prefixes with the op's location.
//
//===----------------------------------------------------------------------===//

#include "engine/interpreter/OpKernels.h"

#include "ir/ImageTransform.h"
#include "ir/KcDialect.h"
#include "ir/Recurrence.h"
#include "runtime/Collectives.h"
#include "runtime/Error.h"
#include "runtime/kernels/Kernels.h"
#include "runtime/kernels/Recurrence.h"

#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace kcc;
using namespace kcc::interp;
namespace kk = kcc::kernels;

namespace {

using KernelTable = llvm::DenseMap<TypeID, OpKernel>;

/// Registers `fn(OpT, Operands, OpEnv &)` as the kernel of OpT.
template <typename OpT, typename Fn> void add(KernelTable &table, Fn fn) {
  table[TypeID::get<OpT>()] = [fn](Operation *op, Operands in, OpEnv &env) {
    return fn(cast<OpT>(op), in, env);
  };
}

std::vector<int64_t> toVector(ArrayRef<int64_t> values) {
  return {values.begin(), values.end()};
}

/// Makes a possibly negative axis (softmax defaults to -1) non-negative.
int64_t normalizeAxis(uint64_t rawAxis, int64_t rank) {
  auto axis = static_cast<int64_t>(rawAxis);
  return axis < 0 ? axis + rank : axis;
}

/// The two entries of a window attribute (strides, dilations, window). The
/// verifiers guarantee two; a hand-built op that skipped them gets an error.
std::pair<int64_t, int64_t> hw(ArrayRef<int64_t> values, const char *name) {
  if (values.size() != 2)
    throw Error(std::string("expects 2 values in '") + name + "', got " +
                std::to_string(values.size()));
  return {values[0], values[1]};
}

kk::Padding toKernel(kc::Padding padding) {
  return padding == kc::Padding::Same ? kk::Padding::Same : kk::Padding::Valid;
}

kk::CompareKind toKernel(kc::CompareDirection direction) {
  switch (direction) {
  case kc::CompareDirection::EQ:
    return kk::CompareKind::EQ;
  case kc::CompareDirection::NE:
    return kk::CompareKind::NE;
  case kc::CompareDirection::LT:
    return kk::CompareKind::LT;
  case kc::CompareDirection::LE:
    return kk::CompareKind::LE;
  case kc::CompareDirection::GT:
    return kk::CompareKind::GT;
  case kc::CompareDirection::GE:
    return kk::CompareKind::GE;
  }
  throw Error("unknown compare direction");
}

template <typename OpT> kk::Conv2DParams convParams(OpT op) {
  kk::Conv2DParams p;
  std::tie(p.strideH, p.strideW) = hw(op.getStrides(), "strides");
  std::tie(p.dilationH, p.dilationW) = hw(op.getDilations(), "dilations");
  p.padding = toKernel(op.getPadding());
  p.groups = op.getGroups();
  return p;
}

template <typename OpT> kk::Pool2DParams poolParams(OpT op) {
  kk::Pool2DParams p;
  std::tie(p.windowH, p.windowW) = hw(op.getWindow(), "window");
  std::tie(p.strideH, p.strideW) = hw(op.getStrides(), "strides");
  p.padding = toKernel(op.getPadding());
  return p;
}

template <typename OpT>
void addBinary(KernelTable &table, kk::BinaryKind kind) {
  add<OpT>(table, [kind](OpT op, Operands in, OpEnv &env) {
    NDArray out = env.allocate(op.getResult());
    kk::binary(kind, *in[0], *in[1], out);
    return out;
  });
}

template <typename OpT> void addUnary(KernelTable &table, kk::UnaryKind kind) {
  add<OpT>(table, [kind](OpT op, Operands in, OpEnv &env) {
    NDArray out = env.allocate(op.getResult());
    kk::unary(kind, *in[0], out);
    return out;
  });
}

template <typename OpT>
void addReduce(KernelTable &table, kk::ReduceKind kind) {
  add<OpT>(table, [kind](OpT op, Operands in, OpEnv &env) {
    NDArray out = env.allocate(op.getResult());
    kk::reduce(kind, *in[0], toVector(op.getAxes()), out);
    return out;
  });
}

void addElementwise(KernelTable &t) {
  addBinary<kc::AddOp>(t, kk::BinaryKind::Add);
  addBinary<kc::SubOp>(t, kk::BinaryKind::Sub);
  addBinary<kc::MulOp>(t, kk::BinaryKind::Mul);
  addBinary<kc::DivOp>(t, kk::BinaryKind::Div);
  addBinary<kc::PowOp>(t, kk::BinaryKind::Pow);
  addBinary<kc::MaxOp>(t, kk::BinaryKind::Max);
  addBinary<kc::MinOp>(t, kk::BinaryKind::Min);

  addUnary<kc::NegOp>(t, kk::UnaryKind::Neg);
  addUnary<kc::ExpOp>(t, kk::UnaryKind::Exp);
  addUnary<kc::LogOp>(t, kk::UnaryKind::Log);
  addUnary<kc::SqrtOp>(t, kk::UnaryKind::Sqrt);
  addUnary<kc::RsqrtOp>(t, kk::UnaryKind::Rsqrt);
  addUnary<kc::AbsOp>(t, kk::UnaryKind::Abs);
  addUnary<kc::ReluOp>(t, kk::UnaryKind::Relu);
  addUnary<kc::SigmoidOp>(t, kk::UnaryKind::Sigmoid);
  addUnary<kc::TanhOp>(t, kk::UnaryKind::Tanh);
  add<kc::GeluOp>(t, [](kc::GeluOp op, Operands in, OpEnv &env) {
    NDArray out = env.allocate(op.getResult());
    kk::unary(op.getApproximate() ? kk::UnaryKind::GeluTanh
                                  : kk::UnaryKind::Gelu,
              *in[0], out);
    return out;
  });

  add<kc::CompareOp>(t, [](kc::CompareOp op, Operands in, OpEnv &env) {
    NDArray out = env.allocate(op.getResult());
    kk::compare(toKernel(op.getDirection()), *in[0], *in[1], out);
    return out;
  });
  add<kc::SelectOp>(t, [](kc::SelectOp op, Operands in, OpEnv &env) {
    NDArray out = env.allocate(op.getResult());
    kk::select(*in[0], *in[1], *in[2], out);
    return out;
  });
  add<kc::CastOp>(t, [](kc::CastOp op, Operands in, OpEnv &env) {
    NDArray out = env.allocate(op.getResult());
    kk::cast(*in[0], out);
    return out;
  });
}

void addShape(KernelTable &t) {
  add<kc::ConstantOp>(t, [](kc::ConstantOp op, Operands, OpEnv &env) {
    return env.constant(op.getValue());
  });
  add<kc::BroadcastToOp>(t, [](kc::BroadcastToOp op, Operands in, OpEnv &env) {
    NDArray out = env.allocate(op.getResult());
    kk::broadcastTo(*in[0], out);
    return out;
  });
  // Row-major reshape never moves data, so the result shares the operand's
  // buffer (as a PyTorch view): no dispatch to a copy kernel, no allocation.
  add<kc::ReshapeOp>(t, [](kc::ReshapeOp op, Operands in, OpEnv &) {
    return in[0]->reshaped(shapeOf(op.getType()));
  });
  add<kc::TransposeOp>(t, [](kc::TransposeOp op, Operands in, OpEnv &env) {
    NDArray out = env.allocate(op.getResult());
    kk::transpose(*in[0], toVector(op.getPerm()), out);
    return out;
  });
  add<kc::ConcatOp>(t, [](kc::ConcatOp op, Operands in, OpEnv &env) {
    NDArray out = env.allocate(op.getResult());
    std::vector<NDArray> inputs;
    inputs.reserve(in.size());
    for (const NDArray *x : in)
      inputs.push_back(*x);
    kk::concat(inputs, normalizeAxis(op.getAxis(), out.rank()), out);
    return out;
  });
  add<kc::SliceOp>(t, [](kc::SliceOp op, Operands in, OpEnv &env) {
    NDArray out = env.allocate(op.getResult());
    kk::slice(*in[0], toVector(op.getStart()), toVector(op.getStrides()), out);
    return out;
  });
  addReduce<kc::ReduceSumOp>(t, kk::ReduceKind::Sum);
  addReduce<kc::ReduceMaxOp>(t, kk::ReduceKind::Max);
  addReduce<kc::ReduceMeanOp>(t, kk::ReduceKind::Mean);
  add<kc::ArgmaxOp>(t, [](kc::ArgmaxOp op, Operands in, OpEnv &env) {
    NDArray out = env.allocate(op.getResult());
    kk::argmax(*in[0], normalizeAxis(op.getAxis(), in[0]->rank()), out);
    return out;
  });
  add<kc::OneHotOp>(t, [](kc::OneHotOp op, Operands in, OpEnv &env) {
    NDArray out = env.allocate(op.getResult());
    kk::oneHot(*in[0], out);
    return out;
  });
}

void addNN(KernelTable &t) {
  add<kc::MatmulOp>(t, [](kc::MatmulOp op, Operands in, OpEnv &env) {
    NDArray out = env.allocate(op.getResult());
    kk::matmul(*in[0], *in[1], op.getTransposeLhs(), op.getTransposeRhs(), out);
    return out;
  });
  add<kc::BatchMatmulOp>(t, [](kc::BatchMatmulOp op, Operands in, OpEnv &env) {
    NDArray out = env.allocate(op.getResult());
    kk::batchMatmul(*in[0], *in[1], op.getTransposeLhs(), op.getTransposeRhs(),
                    out);
    return out;
  });
  add<kc::SoftmaxOp>(t, [](kc::SoftmaxOp op, Operands in, OpEnv &env) {
    NDArray out = env.allocate(op.getResult());
    kk::softmax(*in[0], normalizeAxis(op.getAxis(), in[0]->rank()), out);
    return out;
  });
  add<kc::LogSoftmaxOp>(t, [](kc::LogSoftmaxOp op, Operands in, OpEnv &env) {
    NDArray out = env.allocate(op.getResult());
    kk::logSoftmax(*in[0], normalizeAxis(op.getAxis(), in[0]->rank()), out);
    return out;
  });

  add<kc::Conv2DOp>(t, [](kc::Conv2DOp op, Operands in, OpEnv &env) {
    NDArray out = env.allocate(op.getResult());
    kk::conv2d(*in[0], *in[1], convParams(op), out);
    return out;
  });
  add<kc::Conv2DBackpropInputOp>(
      t, [](kc::Conv2DBackpropInputOp op, Operands in, OpEnv &env) {
        NDArray out = env.allocate(op.getResult());
        kk::conv2dBackpropInput(*in[0], *in[1], convParams(op), out);
        return out;
      });
  add<kc::Conv2DBackpropFilterOp>(
      t, [](kc::Conv2DBackpropFilterOp op, Operands in, OpEnv &env) {
        NDArray out = env.allocate(op.getResult());
        kk::conv2dBackpropFilter(*in[0], *in[1], convParams(op), out);
        return out;
      });

  add<kc::MaxPool2DOp>(t, [](kc::MaxPool2DOp op, Operands in, OpEnv &env) {
    NDArray out = env.allocate(op.getResult());
    kk::maxPool2d(*in[0], poolParams(op), out);
    return out;
  });
  add<kc::AvgPool2DOp>(t, [](kc::AvgPool2DOp op, Operands in, OpEnv &env) {
    NDArray out = env.allocate(op.getResult());
    kk::avgPool2d(*in[0], poolParams(op), out);
    return out;
  });
  add<kc::MaxPool2DGradOp>(
      t, [](kc::MaxPool2DGradOp op, Operands in, OpEnv &env) {
        NDArray out = env.allocate(op.getResult());
        kk::maxPool2dGrad(*in[0], *in[1], poolParams(op), out);
        return out;
      });
  add<kc::AvgPool2DGradOp>(t,
                           [](kc::AvgPool2DGradOp op, Operands in, OpEnv &env) {
                             NDArray out = env.allocate(op.getResult());
                             kk::avgPool2dGrad(*in[0], poolParams(op), out);
                             return out;
                           });

  add<kc::AllReduceOp>(t, [](kc::AllReduceOp op, Operands in, OpEnv &env) {
    NDArray out = env.allocate(op.getResult());
    bool mean = op.getReduction() == "mean";
    if (in[0]->dtype() == DType::F64)
      kcc_rt_all_reduce_f64(in[0]->data<double>(), out.data<double>(),
                            out.numel(), mean);
    else
      kcc_rt_all_reduce_f32(in[0]->data<float>(), out.data<float>(),
                            out.numel(), mean);
    return out;
  });
  add<kc::AllReduceStartOp>(
      t, [](kc::AllReduceStartOp op, Operands in, OpEnv &env) {
        NDArray out = env.allocate(op.getResult());
        bool mean = op.getReduction() == "mean";
        if (in[0]->dtype() == DType::F64)
          kcc_rt_all_reduce_start_f64(in[0]->data<double>(), out.data<double>(),
                                      out.numel(), mean);
        else
          kcc_rt_all_reduce_start_f32(in[0]->data<float>(), out.data<float>(),
                                      out.numel(), mean);
        return out;
      });
  add<kc::AllReduceWaitOp>(
      t, [](kc::AllReduceWaitOp op, Operands in, OpEnv &env) {
        NDArray out = env.allocate(op.getResult());
        bool mean = op.getReduction() == "mean";
        if (in[0]->dtype() == DType::F64)
          kcc_rt_all_reduce_wait_f64(in[0]->data<double>(), out.data<double>(),
                                     out.numel(), mean);
        else
          kcc_rt_all_reduce_wait_f32(in[0]->data<float>(), out.data<float>(),
                                     out.numel(), mean);
        return out;
      });
  add<kc::GatherOp>(t, [](kc::GatherOp op, Operands in, OpEnv &env) {
    NDArray out = env.allocate(op.getResult());
    kk::gather(*in[0], *in[1], out);
    return out;
  });
  add<kc::GatherGradOp>(t, [](kc::GatherGradOp op, Operands in, OpEnv &env) {
    NDArray out = env.allocate(op.getResult());
    kk::gatherGrad(*in[0], *in[1], out);
    return out;
  });

  add<kc::CtcLossOp>(t, [](kc::CtcLossOp op, Operands in, OpEnv &env) {
    NDArray out = env.allocate(op.getResult());
    kk::ctcLoss(*in[0], *in[1], out);
    return out;
  });
  add<kc::CtcLossGradOp>(t, [](kc::CtcLossGradOp op, Operands in, OpEnv &env) {
    NDArray out = env.allocate(op.getResult());
    kk::ctcLossGrad(*in[0], *in[1], *in[2], out);
    return out;
  });

  add<kc::ImageTransformOp>(
      t, [](kc::ImageTransformOp op, Operands in, OpEnv &env) {
        NDArray out = env.allocate(op.getResult());
        kk::imageTransform(*in[0], *in[1], *kc::imageTransformParams(op), out);
        return out;
      });
  add<kc::ImageTransformGradOp>(t, [](kc::ImageTransformGradOp op, Operands in,
                                      OpEnv &env) {
    NDArray out = env.allocate(op.getResult());
    kk::imageTransformGrad(*in[0], *in[1], *kc::imageTransformParams(op), out);
    return out;
  });

  add<kc::RecurrenceOp>(t, [](kc::RecurrenceOp op, Operands in, OpEnv &env) {
    NDArray out = env.allocate(op.getResult());
    kk::recurrence(*kc::recurrenceParams(op), *in[0], *in[1], *in[2], *in[3],
                   out);
    return out;
  });
  add<kc::RecurrenceGradOp>(
      t, [](kc::RecurrenceGradOp op, Operands in, OpEnv &env) {
        NDArray out = env.allocate(op.getResult());
        kk::recurrenceGrad(*kc::recurrenceParams(op), *in[0], *in[1], *in[2],
                           *in[3], out);
        return out;
      });

  add<kc::RandomUniformOp>(t, [](kc::RandomUniformOp op, Operands in,
                                 OpEnv &env) {
    const NDArray &counter = *in[0];
    if (counter.dtype() != DType::I64 || counter.numel() != 1)
      throw Error(std::string("expects a scalar i64 counter, got ") +
                  dtypeName(counter.dtype()) + " " +
                  shapeToString(counter.shape()));
    NDArray out = env.allocate(op.getResult());
    // Read the integer directly: a double would round counters past 2^53.
    kk::randomUniform(op.getSeed(),
                      static_cast<uint64_t>(counter.data<int64_t>()[0]), out);
    return out;
  });
}

KernelTable buildTable() {
  KernelTable table;
  addElementwise(table);
  addShape(table);
  addNN(table);
  return table;
}

} // namespace

const OpKernel *kcc::interp::lookupOpKernel(OperationName name) {
  static const KernelTable table = buildTable();
  auto it = table.find(name.getTypeID());
  return it == table.end() ? nullptr : &it->second;
}
