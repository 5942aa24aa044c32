//===- CallbackFlags.h - kcc train's callback flags, parsed -----*- C++ -*-===//
//
// The callbacks of `kcc train` take Keras's arguments as one comma-separated
// list of key=value pairs per flag, with Keras's names and defaults:
//
//   --early-stopping=monitor=val_loss,patience=3,min_delta=0.001,
//                    mode=min,restore_best_weights=true,baseline=0.4,
//                    start_from_epoch=0,verbose=1
//   --reduce-lr-on-plateau=monitor=val_loss,factor=0.5,patience=2,
//                    min_delta=0.0001,cooldown=1,min_lr=1e-5,mode=auto
//   --checkpoint=filepath=ckpt-{epoch:02d}.keras,monitor=val_loss,
//                    save_best_only=true,save_weights_only=false,mode=auto,
//                    initial_value_threshold=0.5,verbose=1
//
// An empty value (`--early-stopping`) takes every default. Errors name the
// flag and the key.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_TOOLS_KCC_CALLBACKFLAGS_H
#define KCC_TOOLS_KCC_CALLBACKFLAGS_H

#include "frontend/training/Callbacks.h"

#include "llvm/Support/Error.h"

#include <string>

namespace kcc {
namespace driver {

llvm::Expected<EarlyStopping::Options>
parseEarlyStopping(const std::string &value);
llvm::Expected<ReduceLROnPlateau::Options>
parseReduceLROnPlateau(const std::string &value);
/// filepath is required (a value holding no comma); the suffix is checked
/// as Keras checks it (.keras, or .weights.h5 with save_weights_only).
llvm::Expected<ModelCheckpoint::Options>
parseModelCheckpoint(const std::string &value);

} // namespace driver
} // namespace kcc

#endif // KCC_TOOLS_KCC_CALLBACKFLAGS_H
