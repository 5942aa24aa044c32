//===- Collectives.h - Data-parallel collectives over MPI -------*- C++ -*-===//
//
// The one place kcc talks to MPI. A process started by mpirun (Open MPI's
// OMPI_COMM_WORLD_SIZE, or a PMI launcher's PMI_SIZE) is one rank of a
// data-parallel job; otherwise every call here is the single-process
// identity, so code that calls them needs no MPI at all to run.
//
// kcc_rt_all_reduce_{f32,f64} are what `kc.all_reduce` lowers to in
// compiled code; the interpreter's kernel calls the same function, so both
// modes sum in the same order.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_RUNTIME_COLLECTIVES_H
#define KCC_RUNTIME_COLLECTIVES_H

#include <cstddef>
#include <cstdint>

extern "C" {
/// out = sum (mean = 0) or mean (mean = 1) over the ranks of `in` (n
/// elements). `in` and `out` may be the same buffer. Aborts the job on an
/// MPI failure (a JIT frame cannot unwind).
void kcc_rt_all_reduce_f32(const float *in, float *out, int64_t n,
                           int64_t mean);
void kcc_rt_all_reduce_f64(const double *in, double *out, int64_t n,
                           int64_t mean);

/// kc.all_reduce_start: copies `in` into `bucket` and starts an in-place
/// MPI_Iallreduce (sum) of it; earlier buckets still in flight are tested,
/// which lets MPI progress them. `bucket` must stay untouched until the
/// matching wait. `mean` is checked against the wait's.
void kcc_rt_all_reduce_start_f32(const float *in, float *bucket, int64_t n,
                                 int64_t mean);
void kcc_rt_all_reduce_start_f64(const double *in, double *bucket, int64_t n,
                                 int64_t mean);
/// kc.all_reduce_wait: waits for `bucket`'s all-reduce (started above) and
/// writes the result into `out`, divided by the number of ranks for mean.
void kcc_rt_all_reduce_wait_f32(const float *bucket, float *out, int64_t n,
                                int64_t mean);
void kcc_rt_all_reduce_wait_f64(const double *bucket, double *out, int64_t n,
                                int64_t mean);
}

namespace kcc {
namespace collectives {

/// Whether the process environment says it was started by an MPI launcher.
bool launchedByMpi();

/// Initializes MPI once (thread level: funneled) and installs the error
/// handler that turns a failed peer into a message and a non-zero exit. A
/// no-op when already initialized. Throws kcc::Error when MPI cannot start.
void initialize();
/// Whether initialize() ran and the job spans MPI ranks.
bool active();
/// This process's rank and the number of ranks (0 and 1 when not active).
int rank();
int size();

/// Seconds this rank has spent in the steps' all-reduces so far (the wait
/// for the slowest rank included; allReduceSum's logging is left out): the
/// blocking calls, and for buckets the time from the wait's call to its
/// return, i.e. the communication the backward did not hide.
double allReduceSeconds();

/// In-place reductions over the ranks (identity when not active).
void allReduceSum(double *data, size_t n);
void allReduce(float *data, size_t n, bool mean);
/// Rank 0's `bytes` at `data` on every rank (identity when not active).
void broadcast(void *data, size_t bytes);
/// Ends the job on every rank with `code` (MPI_Abort); exits when not active.
[[noreturn]] void abortJob(int code);
/// MPI_Finalize, when initialize() ran. Registered with atexit().
void finalize();

} // namespace collectives
} // namespace kcc

#endif // KCC_RUNTIME_COLLECTIVES_H
