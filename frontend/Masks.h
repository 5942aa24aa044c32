//===- Masks.h - Keras's masks: which layers keep or use them ---*- C++ -*-===//
//
// A mask (Tensor::mask) says which steps of a sequence are real: an f32
// 0/1 [batch, steps] tensor that Embedding(mask_zero=True) and Masking
// attach to their output (a step mask). Keras 3 hands it from layer to
// layer by its rules (Layer.supports_masking and compute_mask): most layers
// that act on each step alone pass it on, the recurrent layers,
// GlobalAveragePooling1D and attention consume it, and every other layer
// drops it. A layer that Keras would let the mask change and kcc does not
// model refuses it, so a result is never silently Keras's unmasked one.
//
// Softmax's explicit mask argument (any tensor broadcastable to its input:
// [batch, 1, keys] for attention scores) is handed on unchanged too, as
// Keras does; the layers that read masks take step masks only, and refuse
// another shape by name.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_MASKS_H
#define KCC_FRONTEND_MASKS_H

#include "frontend/Tensor.h"

#include <string>
#include <vector>

namespace kcc {

/// What a layer call does with its inputs' masks.
enum class MaskRule {
  /// Keras's supports_masking is false: the outputs carry no mask.
  Drop,
  /// The first input's mask passes on to the outputs (Dense, Dropout,
  /// LayerNormalization, activations: Keras's default compute_mask).
  Propagate,
  /// The outputs carry the OR of the inputs' masks when every input has
  /// one (Add, Subtract, Multiply, Average, Maximum, Minimum).
  Merge,
  /// forward() reads the masks and sets its outputs' own (Embedding,
  /// Masking, the recurrent layers, GlobalAveragePooling1D, attention).
  Own,
  /// forward() applies a mask of any shape broadcastable to its input (its
  /// second input, else the input's own) and hands it on (Softmax).
  Apply,
  /// Keras would use the mask in a way kcc does not model: a mask reaching
  /// the layer is an error naming it.
  Refuse,
};

/// The rule of Keras 3's class `className` for the layers kcc has.
MaskRule kerasMaskRule(const std::string &className);

/// Whether `x` carries a step mask: [batch, steps] of x's first two dims.
bool hasStepMask(const Tensor &x);

/// `mask` (f32 0/1 [batch, steps]) as i1, true on the real steps.
Tensor maskAsCondition(const Tensor &mask);

/// `mask` [batch, steps] reshaped to broadcast against a [batch, steps,
/// ...] tensor of rank `rank`.
Tensor maskForRank(const Tensor &mask, int64_t rank);

} // namespace kcc

#endif // KCC_FRONTEND_MASKS_H
