//===- GradientBuckets.h - Data-parallel gradients in buckets ---*- C++ -*-===//
//
// The data-parallel step averages every gradient over the ranks. As
// Horovod's tensor fusion and PyTorch DDP's buckets do, the gradients are
// packed into a few contiguous buckets in the order the backward produces
// them, and each bucket's all-reduce starts as soon as its last gradient
// exists, so the exchange overlaps the rest of the backward; the optimizer
// waits for each bucket.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_PASSES_GRADIENTBUCKETS_H
#define KCC_PASSES_GRADIENTBUCKETS_H

#include "mlir/IR/Builders.h"

namespace kcc {

/// Replaces each of `grads` (values of `b`'s block) by its mean over the
/// ranks: kc.all_reduce_start "mean" on each bucket of at most `bucketBytes`
/// (a larger gradient is a bucket of its own) right after the bucket's last
/// gradient, and kc.all_reduce_wait plus the gradients sliced back out at
/// `b`'s insertion point, which must follow every gradient.
void reduceGradientsInBuckets(mlir::OpBuilder &b, mlir::Location loc,
                              llvm::MutableArrayRef<mlir::Value> grads,
                              int64_t bucketBytes);

} // namespace kcc

#endif // KCC_PASSES_GRADIENTBUCKETS_H
