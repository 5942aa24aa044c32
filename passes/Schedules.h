//===- Schedules.h - Learning-rate schedules as kc IR -----------*- C++ -*-===//
//
// A keras.optimizers.schedules object evaluated inside @train_step: the
// step's learning rate is a rank-0 function of %iterations, so a schedule
// runs for any number of steps without a recompile, compiled or interpreted
// alike. The formulas follow keras/src/optimizers/schedules/
// learning_rate_schedule.py op for op, in the float type of the params (as
// Keras computes them in the dtype of initial_learning_rate, float32).
//
//===----------------------------------------------------------------------===//

#ifndef KCC_PASSES_SCHEDULES_H
#define KCC_PASSES_SCHEDULES_H

#include "config/TrainingConfig.h"

#include "mlir/IR/Builders.h"

namespace kcc {

/// `schedule`'s learning rate at `iterations` (the rank-0 i64 count of
/// finished steps, which Keras passes to the schedule), as a rank-0 tensor
/// of `floatType`.
mlir::Value buildScheduledLearningRate(mlir::OpBuilder &b, mlir::Location loc,
                                       const LearningRateSchedule &schedule,
                                       mlir::Value iterations,
                                       mlir::Type floatType);

/// floor(x), element by element, from kc.cast (which truncates toward zero)
/// and a select: kc has no floor op, and the schedules need it only on
/// rank-0 values.
mlir::Value buildFloor(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x);

/// cos(x) for |x| <= pi (all a schedule needs: pi times a fraction in
/// [0, 1]), as -sin(|x| - pi/2) by its Taylor series to degree 15 evaluated
/// in f64 (error below 1e-11) and rounded to x's type. kc has no cos op; a
/// rank-0 polynomial once per step costs nothing.
mlir::Value buildCos(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x);

} // namespace kcc

#endif // KCC_PASSES_SCHEDULES_H
