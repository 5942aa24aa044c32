//===- AtomicFile.h - Files that appear whole or not at all -----*- C++ -*-===//
//
// Everything kcc writes for a user to keep (a .keras archive, a checkpoint,
// a predictions .npy) is written to a temporary file in the same directory,
// flushed to disk and renamed over the destination with rename(2). A
// process killed mid-write, or a write that fails, leaves the previous file
// as it was: a reader sees the old file or the new one, never half of one.
// A kill can leave the temporary (".NAME.kcc-tmp-PID-N") behind; a failure
// that kcc sees removes it.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_RUNTIME_DATA_ATOMICFILE_H
#define KCC_RUNTIME_DATA_ATOMICFILE_H

#include <functional>
#include <string>
#include <string_view>

namespace kcc {

/// Writes `path` through `write`, which receives the temporary path to
/// create and fill (and may throw). The temporary is fsynced, renamed over
/// `path` and the directory fsynced. Throws kcc::Error naming `path` when
/// the directory is not writable or a system call fails; `path` is then
/// untouched and the temporary removed.
void writeFileAtomically(const std::string &path,
                         const std::function<void(const std::string &)> &write);

/// Throws the kcc::Error writeFileAtomically would throw for an unwritable
/// `path` (a missing or read-only directory), without writing anything:
/// for commands that should fail before hours of work, not after.
void checkWritable(const std::string &path);

/// The same for bytes held in memory.
void writeFileAtomically(const std::string &path, std::string_view bytes);

} // namespace kcc

#endif // KCC_RUNTIME_DATA_ATOMICFILE_H
