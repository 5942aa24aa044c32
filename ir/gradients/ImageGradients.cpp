//===- ImageGradients.cpp - Gradient rule of image_transform --------------===//
//
// The images' gradient is the transpose of the sampling
// (kc.image_transform_grad: a scatter-add with the forward's weights). The
// transforms get none: the augmentation layers draw them from
// kc.random_uniform, which nothing trains.
//
//===----------------------------------------------------------------------===//

#include "ir/KcDialect.h"
#include "ir/gradients/GradientBuilder.h"

using namespace mlir;
using namespace kcc::kc;

llvm::SmallVector<Value> ImageTransformOp::buildGradients(OpBuilder &builder,
                                                          Value g) {
  GradientBuilder gb(builder, *this);
  Value dImages = builder.create<ImageTransformGradOp>(
      gb.location(), getImages().getType(), getTransforms(), g,
      getInterpolationAttr(), getFillModeAttr(), getFillValueAttr());
  return {dImages, Value()};
}
