//===- Hdf5Child.cpp - The HDF5 reader process's side ---------------------===//
//
// Between fork and _exit this code calls only system calls, malloc (glibc
// keeps it usable in the child of a multithreaded fork), C++ exceptions and
// libhdf5, all on the one thread the child has; Hdf5Process.h says why that
// is sound.
//
//===----------------------------------------------------------------------===//

#include "frontend/keras/Hdf5Child.h"
#include "frontend/keras/Hdf5Reader.h"
#include "frontend/keras/Hdf5Wire.h"
#include "runtime/Error.h"
#include "runtime/MemoryBudget.h"

#include <cerrno>
#include <csignal>
#include <new>
#include <optional>

#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace kcc;
using namespace kcc::keras;
using namespace kcc::keras::wire;

namespace {

/// Writes all of `data`; _exits when kcc has gone (closed its end).
void writeAll(int fd, const void *data, size_t n) {
  const char *p = static_cast<const char *>(data);
  while (n > 0) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      _exit(0);
    p += w;
    n -= static_cast<size_t>(w);
  }
}

/// Reads exactly `n` bytes; false at the end of the stream.
bool readAll(int fd, void *data, size_t n) {
  char *p = static_cast<char *>(data);
  while (n > 0) {
    ssize_t r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

void reply(int fd, uint8_t status, const std::string &payload,
           const void *tail = nullptr, size_t tailBytes = 0) {
  std::string header;
  put<uint8_t>(header, status);
  put<uint64_t>(header, payload.size() + tailBytes);
  header += payload;
  writeAll(fd, header.data(), header.size());
  if (tailBytes)
    writeAll(fd, tail, tailBytes);
}

void putShape(std::string &out, const Shape &shape) {
  put<uint64_t>(out, shape.size());
  for (int64_t d : shape)
    put<int64_t>(out, d);
}

/// Answers one request from `reader`.
void serve(int fd, const Hdf5Reader &reader, Hdf5Op op, const std::string &path,
           const std::string &name) {
  std::string out;
  switch (op) {
  case Hdf5Op::Exists:
    put<uint8_t>(out, reader.exists(path));
    return reply(fd, kOk, out);
  case Hdf5Op::IsGroup:
    put<uint8_t>(out, reader.isGroup(path));
    return reply(fd, kOk, out);
  case Hdf5Op::Members:
    putStrings(out, reader.members(path));
    return reply(fd, kOk, out);
  case Hdf5Op::StringListAttr: {
    std::optional<std::vector<std::string>> list =
        reader.stringListAttr(path, name);
    put<uint8_t>(out, list.has_value());
    if (list)
      putStrings(out, *list);
    return reply(fd, kOk, out);
  }
  case Hdf5Op::DatasetShape:
    putShape(out, reader.datasetShape(path));
    return reply(fd, kOk, out);
  case Hdf5Op::ReadFloat: {
    NDArray a = reader.readFloat(path);
    putShape(out, a.shape());
    return reply(fd, kOk, out, a.rawData(), a.bytes());
  }
  case Hdf5Op::Open:
    break;
  }
  reply(fd, kFailed, "unknown request to the HDF5 reader");
}

/// "source: path: ", the prefix of an error about `path`.
std::string where(const std::string &source, const std::string &path) {
  return source + ": " + (path.empty() ? "" : path + ": ");
}

/// Every signal back to its default action: the parent's handlers (LLVM's
/// stack printer, its remove-output-files-on-signal) must not run here.
void resetSignals() {
  struct sigaction dfl = {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  for (int sig = 1; sig < NSIG; ++sig)
    if (sig != SIGKILL && sig != SIGSTOP)
      sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
}

void setLimits(const Hdf5ChildLimits &limits) {
  struct rlimit core = {0, 0};
  setrlimit(RLIMIT_CORE, &core);
  struct rlimit as;
  if (getrlimit(RLIMIT_AS, &as) != 0)
    return;
  if (as.rlim_cur == RLIM_INFINITY || as.rlim_cur > limits.addressSpaceBytes)
    as.rlim_cur = limits.addressSpaceBytes;
  setrlimit(RLIMIT_AS, &as);
}

} // namespace

void keras::runHdf5Child(int fd, llvm::StringRef image,
                         const std::string &source, pid_t parent,
                         const Hdf5ChildLimits &limits) {
  resetSignals();
  // A reader left behind by a kcc that died would hold its memory. (The
  // signal follows the thread that forked: kcc opens and reads a file on
  // one thread.)
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent)
    _exit(0);
  // Only the socket and the standard streams stay open: a copy of another
  // reader's socket, forked by another thread, would hide that reader's
  // end from kcc, and the parent's output files are none of the child's.
  if (fd > 3)
    close_range(3, static_cast<unsigned>(fd) - 1, 0);
  close_range(static_cast<unsigned>(fd) + 1, ~0u, 0);
  setLimits(limits);
  std::string outOfMemory =
      source + ": the HDF5 reader ran out of its " +
      formatBytes(static_cast<int64_t>(limits.budgetBytes)) +
      " of memory (KCC_HDF5_MEMORY_BYTES); the file is corrupt or too large";
  try {
    Hdf5Reader reader(image, source);
    reply(fd, kOk, "");
    for (;;) {
      char header[kRequestHeaderBytes];
      if (!readAll(fd, header, sizeof(header)))
        _exit(0);
      Decoder d(llvm::StringRef(header, sizeof(header)));
      uint8_t op;
      uint32_t pathBytes, nameBytes;
      d.get(op);
      d.get(pathBytes);
      d.get(nameBytes);
      std::string path(pathBytes, '\0'), name(nameBytes, '\0');
      if (!readAll(fd, path.data(), pathBytes) ||
          !readAll(fd, name.data(), nameBytes))
        _exit(0);
      try {
        serve(fd, reader, static_cast<Hdf5Op>(op), path, name);
      } catch (const Error &e) {
        reply(fd, kFailed, e.what());
      } catch (const std::bad_alloc &) {
        reply(fd, kFailed, outOfMemory);
      } catch (const std::exception &e) {
        reply(fd, kFailed, where(source, path) + e.what());
      }
    }
  } catch (const Error &e) {
    reply(fd, kFailed, e.what());
  } catch (const std::bad_alloc &) {
    reply(fd, kFailed, outOfMemory);
  } catch (...) {
  }
  _exit(0);
}
