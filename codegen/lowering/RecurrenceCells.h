//===- RecurrenceCells.h - Generated recurrent steps ------------*- C++ -*-===//
//
// What the generated f32 recurrences share: their sizes, the flat memrefs a
// generated function works on, where one step reads and writes, the nonzero
// parts of the states' gradient, and the two loops over time that
// LowerRecurrence.cpp puts in a function's body. The steps of each cell
// (RecurrenceCells.cpp) instantiate the equations of
// runtime/kernels/RecurrentCells.h on f32 vectors; layouts are those of
// runtime/kernels/Recurrence.h.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_CODEGEN_LOWERING_RECURRENCECELLS_H
#define KCC_CODEGEN_LOWERING_RECURRENCECELLS_H

#include "codegen/lowering/RecurrenceVectorBuilder.h"
#include "runtime/kernels/Recurrence.h"

#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

namespace kcc {
namespace codegen {
namespace recurrence {

/// Lanes of the widest vector the steps use (one AVX-512 register of f32).
constexpr int64_t kLanes = 16;
/// Batch rows a block of the forward and of the carry's product works on:
/// each load of U serves this many rows.
constexpr int64_t kRows = 4;
/// Rows of d U kept in registers while the batch is summed.
constexpr int64_t kGradRows = 4;
/// The largest recurrent kernel generated here (bytes): beyond it the rows
/// stream U from memory and oneDNN's blocked products are faster.
constexpr int64_t kMaxKernelBytes = 256 * 1024;

/// The sizes of one recurrence and its attributes: T steps, B examples,
/// H units, G gates, N = G * H, S the width of a states row, KH the width
/// of the initial state.
struct RecurrenceSizes {
  int64_t T, B, H, G, N, S, KH;
  kernels::RecurrenceParams p;
};

/// Where a step reads h_prev and c_prev: `mem` at `base + b * ld` (+ H for
/// c), the initial state at step 0, the previous states row after.
struct PrevState {
  mlir::Value mem, base, ld;
};

/// A part of the states' gradient [T, B, S] that may be nonzero: steps
/// [t0, t1) and columns [s0, s1) (whole slots of the states row), read from
/// `mem`, a flat [t1 - t0, B, s1 - s0].
struct GradBox {
  mlir::Value value; ///< the tensor (before lowering)
  mlir::Value mem;
  int64_t t0, t1, s0, s1;
};

/// The gradient of the states as the backward reads it. Usually most of it
/// is zero: the gradient of a slice of the states (the last step's h, the
/// h of every step) is that slice put back between zeros by kc.concat, and
/// kc.add sums such parts. The compiler sees those zeros, so the backward
/// reads only the nonzero boxes and the [T, B, S] buffer is never written;
/// the interpreter, one op at a time, has to build it.
struct GradStates {
  llvm::SmallVector<GradBox> boxes;

  /// Columns [slot * H + c0, + w) of row b of step s: the sum of the boxes
  /// covering the slot at that step, -0 (x + -0 == x) where none does.
  mlir::Value load(VectorBuilder &vb, const RecurrenceSizes &dims,
                   mlir::Value s, mlir::Value b, int64_t slot, mlir::Value c0,
                   int64_t w) const;
};

/// The flat memrefs of one recurrence, the arguments of its function.
struct RecurrenceMemrefs {
  mlir::Value x, u, init, rb; ///< forward inputs: x, U, the initial state,
                              ///< the recurrent bias (x is null backward)
  mlir::Value states;
  GradStates gradStates; ///< backward: the states' gradient
  mlir::Value grad;      ///< backward: the flat gradient
  mlir::Value ut;        ///< backward: U^T [N, H]
  mlir::Value scratch;   ///< backward, GRU: per-step rows (see the cells)
  mlir::Value reverse;   ///< i1: step s reads x row T-1-s (an argument, so
                         ///< the two directions of a Bidirectional layer
                         ///< share the code)
};

/// Where one step works: its states row, the x (d x) row it reads (writes),
/// where h_prev is, and (backward) the gradient buffer's parts.
struct StepAt {
  mlir::Value s;    ///< the step
  mlir::Value out;  ///< states row s: s * B * S
  mlir::Value xRow; ///< x / d x row: row * B * N
  PrevState prev;
  mlir::Value dU, dInit, dRb;
};

/// The forward over time: fills the states buffer.
void emitForward(VectorBuilder &vb, const RecurrenceSizes &dims,
                 const RecurrenceMemrefs &mem);

/// The backward over time, from the last step down: per block of rows the
/// cell's gate gradients and carries, then per step d U and d rbias.
void emitBackward(VectorBuilder &vb, const RecurrenceSizes &dims,
                  const RecurrenceMemrefs &mem);

} // namespace recurrence
} // namespace codegen
} // namespace kcc

#endif // KCC_CODEGEN_LOWERING_RECURRENCECELLS_H
