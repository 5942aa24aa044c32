//===- Hdf5Child.h - The HDF5 reader process's side -------------*- C++ -*-===//
//
// What the child forked by Hdf5Process runs: libhdf5 (Hdf5Reader) on the
// image it inherited, answering Hdf5File's requests (Hdf5Wire.h) until the
// socket closes. See Hdf5Process.h for why a child and why fork.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_KERAS_HDF5CHILD_H
#define KCC_FRONTEND_KERAS_HDF5CHILD_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

#include <sys/types.h>

namespace kcc {
namespace keras {

/// Limits the reader process sets on itself before it calls libhdf5.
struct Hdf5ChildLimits {
  /// RLIMIT_AS: what the child inherited plus the reader's memory budget
  /// (never above the inherited limit).
  uint64_t addressSpaceBytes;
  /// The budget alone, for the message when it runs out.
  uint64_t budgetBytes;
};

/// Runs in the child right after fork: resets every signal to its default
/// (no handler of the parent's runs in it), dies with the parent, limits
/// its address space and core dumps, opens `image` and serves requests on
/// `socket`. Never returns: it _exits, so no atexit handler or static
/// destructor of the parent's runs either.
[[noreturn]] void runHdf5Child(int socket, llvm::StringRef image,
                               const std::string &source, pid_t parent,
                               const Hdf5ChildLimits &limits);

} // namespace keras
} // namespace kcc

#endif // KCC_FRONTEND_KERAS_HDF5CHILD_H
