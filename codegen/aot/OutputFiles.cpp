//===- OutputFiles.cpp - Outputs written all or nothing -------------------===//

#include "codegen/aot/OutputFiles.h"

#include "llvm/Support/raw_ostream.h"

using namespace kcc::aot;

OutputFiles::~OutputFiles() {
  for (Entry &e : entries_)
    llvm::consumeError(e.temp.discard());
}

llvm::Expected<unsigned> OutputFiles::reserve(llvm::StringRef path) {
  auto temp = llvm::sys::fs::TempFile::create(path + "-%%%%%%.tmp");
  if (!temp)
    return llvm::handleErrors(
        temp.takeError(), [&](const llvm::ECError &e) -> llvm::Error {
          return llvm::createStringError(e.convertToErrorCode(),
                                         "cannot write '" + path +
                                             "': " + e.message());
        });
  entries_.push_back({path.str(), std::move(*temp)});
  return entries_.size() - 1;
}

llvm::StringRef OutputFiles::tempPath(unsigned index) const {
  return entries_[index].temp.TmpName;
}

llvm::Error OutputFiles::write(unsigned index, llvm::StringRef contents) {
  Entry &e = entries_[index];
  llvm::raw_fd_ostream os(e.temp.FD, /*shouldClose=*/false);
  os << contents;
  os.flush();
  if (os.has_error()) {
    std::error_code ec = os.error();
    os.clear_error();
    return llvm::createStringError(ec, "cannot write '" + e.path +
                                           "': " + ec.message());
  }
  return llvm::Error::success();
}

llvm::Error OutputFiles::commit() {
  for (Entry &e : entries_)
    if (llvm::Error err = e.temp.keep(e.path))
      return llvm::handleErrors(
          std::move(err), [&](const llvm::ECError &ec) -> llvm::Error {
            return llvm::createStringError(ec.convertToErrorCode(),
                                           "cannot write '" + e.path +
                                               "': " + ec.message());
          });
  entries_.clear();
  return llvm::Error::success();
}
