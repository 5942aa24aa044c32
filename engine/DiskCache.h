//===- DiskCache.h - Compiled functions kept across processes ---*- C++ -*-===//
//
// The persistent layer under CompileCache: one file per compiled function,
// holding its object code and the metadata CompiledFunction::load needs
// (signature, in-place results, kernel count, memory plan), so a second
// `kcc train` of the same model links the step instead of lowering and
// compiling it.
//
// Where: $KCC_CACHE_DIR; when unset, $XDG_CACHE_HOME/kcc or ~/.cache/kcc.
// KCC_CACHE_DIR set to "" or "off" turns the layer off.
//
// Key: CompileCache's key (the function's IR hash, batch, signature and
// CpuOptions::key(): every pipeline option and the target) plus
// environmentKey(): kcc's version and build (the GNU build ID of the binary
// that holds the compiler, so a rebuilt kcc never loads code its old passes
// made), the LLVM version, the process triple and the host CPU with its
// features. The file is named by a 128-bit hash of the whole key and
// stores the key itself; an entry whose key differs is a miss.
//
// Entry (little endian):
//   "KCCCACHE"  magic, 8 bytes
//   u32         format version (kFormatVersion)
//   u32         0
//   u64         metadata bytes (M)
//   u64         object bytes (O)
//   u64         xxh3_64 of the M + O bytes that follow
//   M bytes     metadata, JSON (key, name, args, results, in_place, ...)
//   O bytes     the relocatable object
//
// Writers write a temporary file in the cache folder and rename(2) it over
// the entry, so a reader sees a whole old entry or a whole new one, and
// concurrent writers of one key leave one whole entry. A truncated, garbled
// or foreign entry is a miss, reported in one line; so is an unwritable
// folder. Entries are never evicted: remove the folder to reclaim it.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_ENGINE_DISKCACHE_H
#define KCC_ENGINE_DISKCACHE_H

#include "engine/CompiledFunction.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace kcc {

class DiskCache {
public:
  static constexpr uint32_t kFormatVersion = 2;

  /// The folder the environment names (see the file comment); std::nullopt
  /// when the layer is off or there is no home to put it in.
  static std::optional<std::string> folderFromEnvironment();
  /// What this binary, LLVM and the host add to every key.
  static const std::string &environmentKey();

  /// A cache in `folder` (created on the first store).
  explicit DiskCache(std::string folder);

  const std::string &folder() const { return folder_; }
  /// The entry file of `key` (CompileCache's key; environmentKey() is added).
  std::string pathFor(llvm::StringRef key) const;

  /// The artifact stored for `key`, or std::nullopt: no entry, or one that
  /// is unreadable, truncated, corrupt or of another key (each but the
  /// first reported on `log` in one line, when not null).
  std::optional<CompiledArtifact> load(llvm::StringRef key,
                                       llvm::raw_ostream *log) const;
  /// Stores `artifact` for `key`; a failure is reported on `log` and
  /// otherwise ignored (the caller has its function either way).
  void store(llvm::StringRef key, const CompiledArtifact &artifact,
             llvm::raw_ostream *log) const;

  /// The entry's bytes for `key` and `artifact` (what store() writes).
  static std::string serialize(llvm::StringRef key,
                               const CompiledArtifact &artifact);
  /// Reads an entry's bytes back; the error says what is wrong with them.
  static llvm::Expected<CompiledArtifact> deserialize(llvm::StringRef bytes,
                                                      llvm::StringRef key);

private:
  std::string folder_;
};

} // namespace kcc

#endif // KCC_ENGINE_DISKCACHE_H
