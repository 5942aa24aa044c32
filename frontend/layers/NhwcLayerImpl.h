//===- NhwcLayerImpl.h - Layers of one NHWC image input ---------*- C++ -*-===//
//
// The base of the layers whose call takes exactly one rank-4 NHWC tensor
// (padding, cropping, upsampling, global pooling): one check and one
// message for all of them.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_LAYERS_NHWCLAYERIMPL_H
#define KCC_FRONTEND_LAYERS_NHWCLAYERIMPL_H

#include "frontend/Layer.h"

namespace kcc {

class NhwcLayerImpl : public LayerImpl {
public:
  using LayerImpl::LayerImpl;

protected:
  /// The one input, checked to be NHWC (rank 4); fails naming its shape.
  const Tensor &nhwcInput(const std::vector<Tensor> &inputs) const {
    expectInputs(inputs, 1);
    const Tensor &x = inputs[0];
    if (x.rank() != 4)
      fail("expects an NHWC input of rank 4, got " + x.shapeString());
    return x;
  }
};

} // namespace kcc

#endif // KCC_FRONTEND_LAYERS_NHWCLAYERIMPL_H
