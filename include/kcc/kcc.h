//===- kcc.h - The public C++ API of kcc ------------------------*- C++ -*-===//
//
// The one header users include: tensors and ops (eager, traced, symbolic),
// Keras-style layers, Sequential and functional models, and tracing a model
// into the kc dialect. User errors throw kcc::Error with a message naming
// the layer and the shapes involved.
//
//   #include "kcc/kcc.h"
//   kcc::Sequential model({kcc::Input({28, 28, 1}), kcc::Flatten(),
//                          kcc::Dense(128, "relu"), kcc::Dense(10)});
//   kcc::Tensor y = model(x);                       // eager
//   auto module = kcc::traceForward(ctx, model, {/*batch=*/32});
//   kcc::TrainingConfig config;                    // Keras's defaults (adam)
//   config.metrics = {"accuracy"};
//   kcc::Executable exe = kcc::jit(model, config);  // compiled training step
//
// Training (kcc::jit, kcc::Trainer) lives in the KCCTraining library; link it
// to use those.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_KCC_H
#define KCC_KCC_H

#include "config/TrainingConfig.h"
#include "frontend/Initializers.h"
#include "frontend/Layer.h"
#include "frontend/Layers.h"
#include "frontend/Model.h"
#include "frontend/Ops.h"
#include "frontend/Tensor.h"
#include "frontend/Trace.h"
#include "frontend/training/Distributed.h"
#include "frontend/training/Jit.h"
#include "frontend/training/Trainer.h"
#include "runtime/Error.h"
#include "runtime/NDArray.h"

#endif // KCC_KCC_H
