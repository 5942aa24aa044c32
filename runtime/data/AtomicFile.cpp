//===- AtomicFile.cpp - Files that appear whole or not at all -------------===//

#include "runtime/data/AtomicFile.h"
#include "runtime/Error.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

using namespace kcc;

namespace {

std::string errnoText() { return std::strerror(errno); }

/// The directory part of `path` ("." for a bare name).
std::string directoryOf(const std::string &path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

/// Forces `path`'s data (or a directory's entries) to disk.
void syncPath(const std::string &path, bool directory,
              const std::string &what) {
  int fd = ::open(path.c_str(), directory ? O_RDONLY | O_DIRECTORY : O_RDONLY);
  if (fd < 0)
    throw Error(what + ": cannot open " + path + ": " + errnoText());
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  // Some file systems cannot sync directories (EINVAL): the rename is done.
  if (rc != 0 && !(directory && err == EINVAL))
    throw Error(what + ": cannot flush " + path +
                " to disk: " + std::strerror(err));
}

} // namespace

void kcc::writeFileAtomically(
    const std::string &path,
    const std::function<void(const std::string &)> &write) {
  static std::atomic<unsigned> counter{0};
  std::string dir = directoryOf(path);
  std::string base = path.substr(path.rfind('/') + 1);
  if (base.empty())
    throw Error(path + ": cannot write: the path names a directory");
  std::string tmp = (dir == "/" ? "" : dir) + "/." + base + ".kcc-tmp-" +
                    std::to_string(::getpid()) + "-" +
                    std::to_string(counter++);
  // Created here first, so an unwritable directory is reported as such
  // before any work is done.
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0)
    throw Error(path + ": cannot write: " + errnoText());
  ::close(fd);
  try {
    write(tmp);
    syncPath(tmp, /*directory=*/false, path);
    if (::rename(tmp.c_str(), path.c_str()) != 0)
      throw Error(path + ": cannot write: " + errnoText());
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
  syncPath(dir, /*directory=*/true, path);
}

void kcc::checkWritable(const std::string &path) {
  std::string dir = directoryOf(path);
  if (path.empty() || path.back() == '/')
    throw Error(path + ": cannot write: the path names a directory");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw Error(path + ": cannot write: " + errnoText());
}

void kcc::writeFileAtomically(const std::string &path, std::string_view bytes) {
  writeFileAtomically(path, [&](const std::string &tmp) {
    std::FILE *f = std::fopen(tmp.c_str(), "wb");
    if (!f)
      throw Error(path + ": cannot write: " + errnoText());
    size_t n = std::fwrite(bytes.data(), 1, bytes.size(), f);
    int err = errno;
    if (std::fclose(f) != 0 || n != bytes.size())
      throw Error(path + ": cannot write: " +
                  std::strerror(n != bytes.size() ? err : errno));
  });
}
