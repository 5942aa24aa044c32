//===- Hdf5Process.h - libhdf5 in a child process ---------------*- C++ -*-===//
//
// libhdf5 1.10 has bugs that corrupt files trigger: a use-after-free in
// H5O__msg_iterate_real, segfaults, an endless loop in H5HG_read, a 7 TiB
// malloc in H5C_protect (tests/fuzz/findings). kcc cannot fix the library,
// so it never runs it on a file in its own process: Hdf5Process forks a
// child that opens the image with libhdf5 and answers requests over a
// socket (Hdf5Wire.h). A crash, a hang or a giant allocation in libhdf5
// ends the child, not kcc, and becomes a kcc::Error naming the file:
//
//   x.h5: model_weights: libhdf5 crashed (SIGSEGV); the file is corrupt
//   x.h5: libhdf5 did not answer within 30 s (KCC_HDF5_TIMEOUT_SECONDS) ...
//
// Limits (read from the environment at each open):
//  - KCC_HDF5_TIMEOUT_SECONDS: wall-clock seconds one request (the open
//    included) may take; default 30. A request over it kills the child.
//  - KCC_HDF5_MEMORY_BYTES: address space the child may map beyond what it
//    inherits (RLIMIT_AS); default 1 GiB plus 4x the image (libhdf5 copies
//    the image twice, and a dataset converted to f32 may be twice its
//    stored size). The limit is relative so that an ASan process (terabytes
//    of reserved shadow) and a large kcc (oneDNN, thread stacks) can fork
//    a reader too.
//
// Why fork, not posix_spawn of a helper binary: the child needs the image,
// which it inherits without a copy, and the importer is a library that
// embedders, the unit tests and the fuzz targets link, none of which could
// count on finding a helper next to them. fork is sound here although kcc
// is multithreaded (OpenMP, oneDNN, libFuzzer's monitor) because the child
// touches no state another thread may have held at the fork: it runs on
// one thread, resets every signal to its default, and calls only system
// calls, malloc (glibc's fork takes and resets malloc's locks), C++
// exceptions (libgcc finds frames with _dl_find_object, which takes no
// lock) and libhdf5, which kcc's process never calls (so no thread holds
// its lock, and no state of an earlier file is inherited). It ends with
// _exit: no atexit
// handler, static destructor or sanitizer report of the parent's runs.
// What could still go wrong in the child (a lock held by a thread of an
// embedder that uses libhdf5 at the same time) is a hang, which the
// timeout turns into an error.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_KERAS_HDF5PROCESS_H
#define KCC_FRONTEND_KERAS_HDF5PROCESS_H

#include "frontend/keras/Hdf5Wire.h"

#include "llvm/ADT/StringRef.h"

#include <chrono>
#include <cstdint>
#include <string>

#include <sys/types.h>

namespace kcc {
namespace keras {

/// The reader process's limits, from the environment.
struct Hdf5ProcessLimits {
  std::chrono::milliseconds timeout;
  /// Address space the child may map beyond what it inherits.
  uint64_t memoryBytes;
};
/// KCC_HDF5_TIMEOUT_SECONDS and KCC_HDF5_MEMORY_BYTES, or their defaults
/// for an image of `imageBytes`. Throws kcc::Error for a malformed value.
Hdf5ProcessLimits hdf5ProcessLimits(uint64_t imageBytes);

/// A child process reading one in-memory HDF5 image with libhdf5. Not
/// copyable. Every failure of the child (an error of the reader, a crash,
/// a timeout, a malformed reply) throws kcc::Error naming `source`; after
/// one that ends the child, every later call throws the same error.
class Hdf5Process {
public:
  /// Forks the reader and waits until it has opened `image` (which must
  /// outlive the object), or throws why it could not.
  Hdf5Process(llvm::StringRef image, std::string source);
  /// Kills and reaps the child.
  ~Hdf5Process();
  Hdf5Process(const Hdf5Process &) = delete;
  Hdf5Process &operator=(const Hdf5Process &) = delete;

  /// Sends a request and reads the reply's header: returns the length of an
  /// ok reply's payload, which the caller then reads with receive(). A
  /// failed reply throws its message. `path` names the object in errors.
  uint64_t request(wire::Hdf5Op op, const std::string &path,
                   const std::string &name);
  /// Reads `n` more bytes of the current reply.
  void receive(void *data, uint64_t n);
  /// Ends the child and throws "source: path: message": for a reply the
  /// caller found malformed, after which the stream cannot be trusted.
  [[noreturn]] void abandon(const std::string &message);
  /// Kills the child, reaps it, and throws (and keeps) `message` as it is.
  [[noreturn]] void stop(const std::string &message);

private:
  /// Reads `n` bytes before the request's deadline, or ends the child and
  /// throws why they did not come.
  void readReply(void *data, uint64_t n);
  /// Closes the socket, kills and reaps the child (if still there).
  void end();
  /// Why the child ended, once it closed its end: reaps it.
  std::string reapedStatus();
  std::string where() const;

  std::string source_;
  uint64_t imageBytes_;
  Hdf5ProcessLimits limits_;
  pid_t pid_ = -1;
  int socket_ = -1;
  /// The object of the current request ("" for the open).
  std::string path_;
  std::chrono::steady_clock::time_point deadline_;
  /// Set once the child is gone: what every later call throws.
  std::string stopped_;
};

} // namespace keras
} // namespace kcc

#endif // KCC_FRONTEND_KERAS_HDF5PROCESS_H
