//===- OutputFiles.h - Outputs written all or nothing -----------*- C++ -*-===//
//
// kcc --emit=obj writes two files (foo.o and foo.h), --emit=lib a library a
// linker writes. Each output first goes to a temporary next to its final
// path; commit() renames them all, and whatever is not committed is removed,
// so a failed run never leaves a partial or stale-next-to-new output.
// Reserving an output creates its temporary at once: an unwritable -o fails
// before any compilation work.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_CODEGEN_AOT_OUTPUTFILES_H
#define KCC_CODEGEN_AOT_OUTPUTFILES_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"

#include <string>
#include <vector>

namespace kcc {
namespace aot {

class OutputFiles {
public:
  OutputFiles() = default;
  OutputFiles(const OutputFiles &) = delete;
  OutputFiles &operator=(const OutputFiles &) = delete;
  /// Removes every temporary not committed.
  ~OutputFiles();

  /// Creates the temporary for `path`; returns its index.
  llvm::Expected<unsigned> reserve(llvm::StringRef path);
  /// The temporary's path, for a tool that writes the file itself.
  llvm::StringRef tempPath(unsigned index) const;
  /// Writes `contents` into the temporary.
  llvm::Error write(unsigned index, llvm::StringRef contents);
  /// Renames every temporary to its final path.
  llvm::Error commit();

private:
  struct Entry {
    std::string path;
    llvm::sys::fs::TempFile temp;
  };
  std::vector<Entry> entries_;
};

} // namespace aot
} // namespace kcc

#endif // KCC_CODEGEN_AOT_OUTPUTFILES_H
