//===- ImageTransform.h - kc.image_transform's kernel parameters -*- C++
//-*-===//
//
// The interpolation, fill mode and fill value of kc.image_transform and its
// gradient as the kernel takes them (runtime/kernels/Kernels.h): the
// verifier, the interpreter and the library-call lowering read the
// attributes through this one function.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_IR_IMAGETRANSFORM_H
#define KCC_IR_IMAGETRANSFORM_H

#include "ir/KcDialect.h"
#include "runtime/kernels/Kernels.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Support/LogicalResult.h"

namespace kcc {
namespace kc {

template <typename OpTy>
mlir::FailureOr<kernels::ImageTransformParams> imageTransformParams(OpTy op) {
  kernels::ImageTransformParams p;
  llvm::StringRef interpolation = op.getInterpolation();
  if (interpolation == "nearest")
    p.interpolation = kernels::ImageInterpolation::Nearest;
  else if (interpolation == "bilinear")
    p.interpolation = kernels::ImageInterpolation::Bilinear;
  else
    return op.emitOpError() << "unknown interpolation '" << interpolation
                            << "' (expected nearest, bilinear)";
  llvm::StringRef mode = op.getFillMode();
  if (mode == "reflect")
    p.fillMode = kernels::ImageFillMode::Reflect;
  else if (mode == "wrap")
    p.fillMode = kernels::ImageFillMode::Wrap;
  else if (mode == "constant")
    p.fillMode = kernels::ImageFillMode::Constant;
  else if (mode == "nearest")
    p.fillMode = kernels::ImageFillMode::Nearest;
  else
    return op.emitOpError() << "unknown fill_mode '" << mode
                            << "' (expected reflect, wrap, constant, nearest)";
  p.fillValue = op.getFillValue().convertToDouble();
  return p;
}

} // namespace kc
} // namespace kcc

#endif // KCC_IR_IMAGETRANSFORM_H
