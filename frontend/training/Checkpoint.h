//===- Checkpoint.h - Executable state to and from .keras ------*- C++ -*-===//
//
// The bridge between the engine's Executable (weights, optimizer slots,
// step count, learning rate) and the Keras archive writer and reader
// (frontend/keras/Saving.h): what ModelCheckpoint, `kcc train --save` and
// `--resume` call.
//
//   keras::saveKerasArchive(path, model, captureState(exe, epoch), config);
//   keras::Checkpoint ckpt = keras::loadCheckpoint(path);
//   Executable exe = jit(*ckpt.imported.model, config);  // saved weights
//   restoreState(exe, ckpt);  // slots, iterations, learning rate
//   // continue at epoch ckpt.epoch: bit-identical to never stopping
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_TRAINING_CHECKPOINT_H
#define KCC_FRONTEND_TRAINING_CHECKPOINT_H

#include "engine/Executable.h"
#include "frontend/keras/Saving.h"

namespace kcc {

/// `exe`'s weights and, when it has a training step, its optimizer state,
/// step count and learning rate; `epoch` is the number of epochs finished.
keras::ModelState captureState(const Executable &exe, int64_t epoch = 0);

/// Sets `exe`'s weights, optimizer slots, step count and learning rate
/// from `checkpoint`. Throws kcc::Error naming the file when the
/// checkpoint has no optimizer state or it does not fit `exe`.
void restoreState(Executable &exe, const keras::Checkpoint &checkpoint);

} // namespace kcc

#endif // KCC_FRONTEND_TRAINING_CHECKPOINT_H
