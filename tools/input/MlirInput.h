//===- MlirInput.h - Reading .mlir input that may be hostile ----*- C++ -*-===//
//
// kcc and kcc-opt read .mlir text through these, before MLIR's parser sees
// it: the input must be a regular file (or stdin) of bounded size, and its
// brackets may nest only so deep, since the parser recurses once per level
// (50,000 nested '[' overflow the stack).
//
//===----------------------------------------------------------------------===//

#ifndef KCC_TOOLS_INPUT_MLIRINPUT_H
#define KCC_TOOLS_INPUT_MLIRINPUT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace kcc {
namespace tools {

/// The largest .mlir input: kc modules take their weights as arguments and
/// are kilobytes; MLIR holds a parsed module in several times its text.
constexpr uint64_t kMaxMlirBytes = uint64_t(256) << 20;

/// How deep (, [, { and < may nest. Real IR nests a few dozen levels
/// (regions in regions, types in types); each level costs the parser
/// several stack frames, and this many stay far inside 8 MB.
constexpr unsigned kMaxMlirNesting = 1024;

/// The text of `path` ("-" for stdin), null-terminated for the parser:
/// refuses a file that is not regular (a device or a pipe could be read
/// forever) and input beyond kMaxMlirBytes. Sets `error` on failure.
std::unique_ptr<llvm::MemoryBuffer> readMlirInput(llvm::StringRef path,
                                                  std::string &error);

/// The offset of the first bracket nested deeper than `limit` in `text`,
/// skipping string literals and // comments; an iterative scan.
std::optional<size_t> findDeepNesting(llvm::StringRef text,
                                      unsigned limit = kMaxMlirNesting);

/// Prints "file:line:col: error: ..." and returns false when buffer
/// `bufferId` of `sourceMgr` nests deeper than kMaxMlirNesting.
bool checkMlirNesting(llvm::SourceMgr &sourceMgr, unsigned bufferId);

} // namespace tools
} // namespace kcc

#endif // KCC_TOOLS_INPUT_MLIRINPUT_H
