//===- MlirInput.cpp - Reading .mlir input that may be hostile ------------===//

#include "tools/input/MlirInput.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <vector>

using namespace kcc;
using namespace kcc::tools;

namespace {
std::string tooLarge(llvm::StringRef what) {
  return (what + " is larger than " + llvm::Twine(kMaxMlirBytes >> 20) +
          " MB, the limit for .mlir input")
      .str();
}
} // namespace

std::unique_ptr<llvm::MemoryBuffer> tools::readMlirInput(llvm::StringRef path,
                                                         std::string &error) {
  if (path == "-") {
    // Read in chunks, stopping past the limit: stdin may never end.
    llvm::SmallString<0> text;
    std::vector<char> chunk(size_t(1) << 20);
    while (true) {
      llvm::Expected<size_t> n =
          llvm::sys::fs::readNativeFile(llvm::sys::fs::getStdinHandle(), chunk);
      if (!n) {
        error = "cannot read stdin: " + llvm::toString(n.takeError());
        return nullptr;
      }
      if (*n == 0)
        break;
      text.append(chunk.data(), chunk.data() + *n);
      if (text.size() > kMaxMlirBytes) {
        error = tooLarge("stdin");
        return nullptr;
      }
    }
    return llvm::MemoryBuffer::getMemBufferCopy(text, "<stdin>");
  }
  llvm::sys::fs::file_status st;
  if (std::error_code ec = llvm::sys::fs::status(path, st)) {
    error = "cannot open input file '" + path.str() + "': " + ec.message();
    return nullptr;
  }
  if (st.type() != llvm::sys::fs::file_type::regular_file) {
    error = "input file '" + path.str() + "' is not a regular file";
    return nullptr;
  }
  if (st.getSize() > kMaxMlirBytes) {
    error = tooLarge("input file '" + path.str() + "'");
    return nullptr;
  }
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false);
  if (!buf) {
    error = "cannot open input file '" + path.str() +
            "': " + buf.getError().message();
    return nullptr;
  }
  return std::move(*buf);
}

std::optional<size_t> tools::findDeepNesting(llvm::StringRef text,
                                             unsigned limit) {
  unsigned depth = 0;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    switch (text[i]) {
    case '"':
      // A string literal, escapes included.
      for (++i; i < e && text[i] != '"' && text[i] != '\n'; ++i)
        if (text[i] == '\\')
          ++i;
      break;
    case '/':
      if (i + 1 < e && text[i + 1] == '/')
        i = std::min(text.find('\n', i), e);
      break;
    case '(':
    case '[':
    case '{':
    case '<':
      if (++depth > limit)
        return i;
      break;
    case '>':
      // "->" and ">=" are no brackets.
      if ((i > 0 && text[i - 1] == '-') || (i + 1 < e && text[i + 1] == '='))
        break;
      [[fallthrough]];
    case ')':
    case ']':
    case '}':
      if (depth > 0) // Unbalanced text is the parser's to report.
        --depth;
      break;
    default:
      break;
    }
  }
  return std::nullopt;
}

bool tools::checkMlirNesting(llvm::SourceMgr &sourceMgr, unsigned bufferId) {
  llvm::StringRef text = sourceMgr.getMemoryBuffer(bufferId)->getBuffer();
  std::optional<size_t> at = findDeepNesting(text);
  if (!at)
    return true;
  // Not SourceMgr::PrintMessage: it would quote the line, which may be
  // megabytes of brackets.
  auto [line, column] = sourceMgr.getLineAndColumn(
      llvm::SMLoc::getFromPointer(text.data() + *at), bufferId);
  llvm::errs() << sourceMgr.getMemoryBuffer(bufferId)->getBufferIdentifier()
               << ":" << line << ":" << column
               << ": error: brackets nested deeper than " << kMaxMlirNesting
               << " levels\n";
  return false;
}
