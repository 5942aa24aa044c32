//===- Image.cpp - Affine image sampling (the geometric augmentations) ----===//

#include "frontend/ops/OpSupport.h"

using namespace kcc;
using namespace kcc::ops;
using namespace kcc::ops::detail;

Tensor ops::imageTransform(const Tensor &images, const Tensor &transforms,
                           const ImageTransformSpec &spec) {
  const char *op = "image_transform";
  Mode mode = modeOf(op, {&images, &transforms});
  DType dtype = commonDType(op, {&images, &transforms});
  if (dtype == DType::F16 || dtype == DType::BF16)
    return cast(imageTransform(cast(images, DType::F32),
                               cast(transforms, DType::F32), spec),
                dtype);
  if (images.rank() != 4)
    fail(op, "expects images [batch, height, width, channels], got " +
                 images.describe());
  if (transforms.shape() != Shape{images.dim(0), 8})
    fail(op, "expects transforms [" + std::to_string(images.dim(0)) +
                 ", 8], got " + transforms.describe());
  if (spec.interpolation != "nearest" && spec.interpolation != "bilinear")
    fail(op, "unknown interpolation '" + spec.interpolation +
                 "' (expected nearest, bilinear)");
  kernels::ImageTransformParams p;
  p.interpolation = spec.interpolation == "nearest"
                        ? kernels::ImageInterpolation::Nearest
                        : kernels::ImageInterpolation::Bilinear;
  if (spec.fillMode == "reflect")
    p.fillMode = kernels::ImageFillMode::Reflect;
  else if (spec.fillMode == "wrap")
    p.fillMode = kernels::ImageFillMode::Wrap;
  else if (spec.fillMode == "constant")
    p.fillMode = kernels::ImageFillMode::Constant;
  else if (spec.fillMode == "nearest")
    p.fillMode = kernels::ImageFillMode::Nearest;
  else
    fail(op, "unknown fill_mode '" + spec.fillMode +
                 "' (expected reflect, wrap, constant, nearest)");
  p.fillValue = spec.fillValue;
  Shape shape = images.shape();
  if (spec.outHeight > 0)
    shape[1] = spec.outHeight;
  if (spec.outWidth > 0)
    shape[2] = spec.outWidth;
  if (mode == Mode::Symbolic)
    return Tensor::symbolic(shape, dtype);
  if (mode == Mode::Traced) {
    mlir::Builder b(TraceContext::current()->context());
    return emit<kc::ImageTransformOp>(
        shape, dtype, valueOf(images), valueOf(transforms),
        b.getStringAttr(spec.interpolation), b.getStringAttr(spec.fillMode),
        b.getF64FloatAttr(spec.fillValue));
  }
  NDArray out = allocate(shape, dtype);
  runKernel(op, [&] {
    kernels::imageTransform(images.array(), transforms.array(), p, out);
  });
  return Tensor(out);
}
