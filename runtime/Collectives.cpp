//===- Collectives.cpp - Data-parallel collectives over MPI ---------------===//

#include "runtime/Collectives.h"
#include "runtime/Error.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

bool gActive = false;
int gRank = 0, gSize = 1;
/// Time spent in MPI_Allreduce (waiting for the slowest rank included).
double gAllReduceSeconds = 0;

/// A failed call (a peer that died, a broken link): say which rank saw it
/// and end the whole job, so no rank waits forever in a collective.
void check(int rc, const char *what) {
  if (rc == MPI_SUCCESS)
    return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  std::fprintf(stderr, "kcc: rank %d: %s failed: %.*s\n", gRank, what, len,
               text);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::_Exit(1);
}

template <typename T>
void allReduceImpl(const T *in, T *out, int64_t n, bool mean, MPI_Datatype type,
                   bool timed = true) {
  if (!gActive) {
    if (in != out)
      for (int64_t i = 0; i < n; ++i)
        out[i] = in[i];
    return;
  }
  auto start = std::chrono::steady_clock::now();
  // MPI counts are int: reduce in chunks so huge buffers stay correct.
  constexpr int64_t kChunk = int64_t(1) << 30;
  for (int64_t off = 0; off < n; off += kChunk) {
    int count = static_cast<int>(std::min(kChunk, n - off));
    const void *send = in == out ? MPI_IN_PLACE : in + off;
    check(MPI_Allreduce(send, out + off, count, type, MPI_SUM, MPI_COMM_WORLD),
          "MPI_Allreduce");
  }
  if (timed)
    gAllReduceSeconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
  if (mean) {
    T scale = T(1) / T(gSize);
    for (int64_t i = 0; i < n; ++i)
      out[i] *= scale;
  }
}

/// A bucket in flight: MPI counts are int, so a huge bucket is several
/// requests over consecutive chunks.
struct Pending {
  const void *bucket;
  bool mean;
  std::vector<MPI_Request> requests;
};
/// In start order. The waits come in the same order (the optimizer's), but
/// are looked up by address so that a mismatch is an error, not a hang.
std::vector<Pending> gPending;

/// MPI_Testall on every bucket in flight: Open MPI progresses non-blocking
/// collectives only inside MPI calls.
void progressPending() {
  for (Pending &p : gPending) {
    int done = 0;
    check(MPI_Testall(static_cast<int>(p.requests.size()), p.requests.data(),
                      &done, MPI_STATUSES_IGNORE),
          "MPI_Testall");
  }
}

template <typename T>
void startImpl(const T *in, T *bucket, int64_t n, bool mean,
               MPI_Datatype type) {
  if (in != bucket)
    std::copy(in, in + n, bucket);
  if (!gActive)
    return;
  progressPending();
  Pending p{bucket, mean, {}};
  constexpr int64_t kChunk = int64_t(1) << 30;
  for (int64_t off = 0; off < n; off += kChunk) {
    p.requests.emplace_back();
    check(MPI_Iallreduce(MPI_IN_PLACE, bucket + off,
                         static_cast<int>(std::min(kChunk, n - off)), type,
                         MPI_SUM, MPI_COMM_WORLD, &p.requests.back()),
          "MPI_Iallreduce");
  }
  gPending.push_back(std::move(p));
}

template <typename T>
void waitImpl(const T *bucket, T *out, int64_t n, bool mean) {
  T scale = T(1);
  if (gActive) {
    auto it =
        std::find_if(gPending.begin(), gPending.end(),
                     [&](const Pending &p) { return p.bucket == bucket; });
    if (it == gPending.end() || it->mean != mean) {
      std::fprintf(stderr,
                   "kcc: rank %d: kc.all_reduce_wait on a bucket that no "
                   "matching kc.all_reduce_start began\n",
                   gRank);
      kcc::collectives::abortJob(1);
    }
    auto start = std::chrono::steady_clock::now();
    check(MPI_Waitall(static_cast<int>(it->requests.size()),
                      it->requests.data(), MPI_STATUSES_IGNORE),
          "MPI_Waitall");
    gAllReduceSeconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    gPending.erase(it);
    if (mean)
      scale = T(1) / T(gSize);
  }
  for (int64_t i = 0; i < n; ++i)
    out[i] = bucket[i] * scale;
}

} // namespace

extern "C" void kcc_rt_all_reduce_start_f32(const float *in, float *bucket,
                                            int64_t n, int64_t mean) {
  startImpl(in, bucket, n, mean != 0, MPI_FLOAT);
}

extern "C" void kcc_rt_all_reduce_start_f64(const double *in, double *bucket,
                                            int64_t n, int64_t mean) {
  startImpl(in, bucket, n, mean != 0, MPI_DOUBLE);
}

extern "C" void kcc_rt_all_reduce_wait_f32(const float *bucket, float *out,
                                           int64_t n, int64_t mean) {
  waitImpl(bucket, out, n, mean != 0);
}

extern "C" void kcc_rt_all_reduce_wait_f64(const double *bucket, double *out,
                                           int64_t n, int64_t mean) {
  waitImpl(bucket, out, n, mean != 0);
}

extern "C" void kcc_rt_all_reduce_f32(const float *in, float *out, int64_t n,
                                      int64_t mean) {
  allReduceImpl(in, out, n, mean != 0, MPI_FLOAT);
}

extern "C" void kcc_rt_all_reduce_f64(const double *in, double *out, int64_t n,
                                      int64_t mean) {
  allReduceImpl(in, out, n, mean != 0, MPI_DOUBLE);
}

namespace kcc {
namespace collectives {

bool launchedByMpi() {
  for (const char *var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(var))
      return true;
  return false;
}

void initialize() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized)
    return;
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) !=
      MPI_SUCCESS)
    throw Error("MPI_Init_thread failed");
  // Errors return to check() instead of aborting silently inside MPI.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &gRank);
  MPI_Comm_size(MPI_COMM_WORLD, &gSize);
  gActive = true;
}

bool active() { return gActive; }
double allReduceSeconds() { return gAllReduceSeconds; }
int rank() { return gRank; }
int size() { return gSize; }

void allReduceSum(double *data, size_t n) {
  allReduceImpl(data, data, static_cast<int64_t>(n), false, MPI_DOUBLE,
                /*timed=*/false);
}

void allReduce(float *data, size_t n, bool mean) {
  allReduceImpl(data, data, static_cast<int64_t>(n), mean, MPI_FLOAT);
}

void broadcast(void *data, size_t bytes) {
  if (!gActive || bytes == 0)
    return;
  auto *p = static_cast<char *>(data);
  constexpr size_t kChunk = size_t(1) << 30;
  for (size_t off = 0; off < bytes; off += kChunk)
    check(MPI_Bcast(p + off, static_cast<int>(std::min(kChunk, bytes - off)),
                    MPI_BYTE, 0, MPI_COMM_WORLD),
          "MPI_Bcast");
}

void abortJob(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  if (gActive)
    MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

void finalize() {
  if (!gActive)
    return;
  gActive = false;
  MPI_Finalize();
}

} // namespace collectives
} // namespace kcc
