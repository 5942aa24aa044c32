//===- Masks.cpp - Keras's masks: which layers keep, merge or use them ----===//

#include "frontend/Masks.h"
#include "frontend/Ops.h"

#include "llvm/ADT/StringSwitch.h"

using namespace kcc;

MaskRule kcc::kerasMaskRule(const std::string &className) {
  // keras/src/layers: the classes whose supports_masking is true. Those
  // without a compute_mask or a `mask` argument of their own pass it on.
  return llvm::StringSwitch<MaskRule>(className)
      .Cases("Dense", "Identity", "Activation", "ReLU", "ELU", "LeakyReLU",
             "PReLU", MaskRule::Propagate)
      .Cases("Dropout", "SpatialDropout1D", "SpatialDropout2D",
             "SpatialDropout3D", "GaussianNoise", "GaussianDropout",
             "AlphaDropout", "ActivityRegularization", MaskRule::Propagate)
      .Cases("LayerNormalization", "UnitNormalization", "GroupNormalization",
             "Rescaling", "Normalization", MaskRule::Propagate)
      .Cases("Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum",
             MaskRule::Merge)
      // (Softmax applies its mask, Concatenate joins the masks,
      // BatchNormalization's moments skip masked steps and the attention
      // layers mask their scores in the layers themselves; TimeDistributed
      // decides by the layers it wraps.)
      .Default(MaskRule::Drop);
}

bool kcc::hasStepMask(const Tensor &x) {
  const Tensor *m = x.mask();
  return m && m->rank() == 2 && x.rank() >= 2 && m->dim(0) == x.dim(0) &&
         m->dim(1) == x.dim(1);
}

Tensor kcc::maskAsCondition(const Tensor &mask) {
  return ops::compare(ops::CompareKind::GT, mask, ops::fillLike(mask, {}, 0.0));
}

Tensor kcc::maskForRank(const Tensor &mask, int64_t rank) {
  Shape shape = mask.shape();
  while (static_cast<int64_t>(shape.size()) < rank)
    shape.push_back(1);
  return ops::reshape(mask, shape);
}
