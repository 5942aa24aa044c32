//===- Linker.cpp - Object file to shared library -------------------------===//
//
// kcc does not reimplement a linker: it runs the compiler driver CMake found
// (AotConfig.inc) as `c++ -shared`, with the kcc runtime archives after the
// objects so the linker pulls in just the kcc_rt_* entry points they call,
// and as `c++ -r` to join the objects of a module's parts into one.
// -Bsymbolic binds the archives' own symbols inside the library, so
// non-PIC-built archive members still link and never resolve to another
// copy of the runtime in the host program.
//
//===----------------------------------------------------------------------===//

#include "codegen/aot/AotCompiler.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include "codegen/aot/AotConfig.inc"

#include <string>
#include <vector>

using namespace kcc;

namespace {

/// The runtime archives: those installed next to this kcc when it runs from
/// an install, else the build tree's.
std::vector<std::string> runtimeArchives() {
  std::string exe = llvm::sys::fs::getMainExecutable(
      nullptr, reinterpret_cast<void *>(&runtimeArchives));
  llvm::SmallString<256> dir = llvm::sys::path::parent_path(exe);
  std::vector<std::string> installed;
  for (const char *relative : kAotInstalledArchives) {
    llvm::SmallString<256> path = dir;
    llvm::sys::path::append(path, relative);
    llvm::sys::path::remove_dots(path, /*remove_dot_dot=*/true);
    if (!llvm::sys::fs::exists(path))
      return {std::begin(kAotBuildArchives), std::end(kAotBuildArchives)};
    installed.push_back(path.str().str());
  }
  return installed;
}

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Runs the driver with `args` (after the program name); `what` names the
/// output in the error, which holds the command and the linker's messages.
llvm::Error runDriver(llvm::ArrayRef<std::string> args, llvm::StringRef what) {
  std::string linker = kAotLinker;
  if (!llvm::sys::fs::can_execute(linker)) {
    auto found = llvm::sys::findProgramByName(linker);
    if (!found)
      return makeError("linker '" + linker + "' not found");
    linker = *found;
  }
  llvm::SmallVector<llvm::StringRef, 32> argv = {linker};
  for (const std::string &a : args)
    argv.push_back(a);

  // The linker's diagnostics go to a temporary file and into the error.
  llvm::SmallString<128> logPath;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("kcc-link", "log", logPath))
    return makeError("cannot create a temporary file: " + ec.message());
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, logPath.str(),
                                                logPath.str()};
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(linker, argv, std::nullopt, redirects,
                                     /*SecondsToWait=*/0, /*MemoryLimit=*/0,
                                     &message);
  std::string log;
  if (auto buffer = llvm::MemoryBuffer::getFile(logPath))
    log = (*buffer)->getBuffer().str();
  llvm::sys::fs::remove(logPath);
  if (rc != 0) {
    std::string command;
    for (llvm::StringRef a : argv)
      command += (command.empty() ? "" : " ") + a.str();
    return makeError("linking " + what + " failed" +
                     (message.empty() ? "" : ": " + message) + "\n  " +
                     command + "\n" + log);
  }
  return llvm::Error::success();
}

} // namespace

llvm::Error aot::linkSharedLibrary(llvm::ArrayRef<std::string> objectPaths,
                                   llvm::StringRef outputPath) {
  std::vector<std::string> args = {"-shared", "-Wl,-Bsymbolic", "-o",
                                   outputPath.str()};
  args.insert(args.end(), objectPaths.begin(), objectPaths.end());
  for (const std::string &archive : runtimeArchives())
    args.push_back(archive);
  for (const char *lib : kAotRuntimeLibs)
    if (*lib)
      args.push_back(lib);
  return runDriver(args, "the shared library");
}

llvm::Error aot::linkRelocatable(llvm::ArrayRef<std::string> objectPaths,
                                 llvm::StringRef outputPath) {
  std::vector<std::string> args = {"-r", "-nostdlib", "-o", outputPath.str()};
  args.insert(args.end(), objectPaths.begin(), objectPaths.end());
  return runDriver(args, "the object");
}
