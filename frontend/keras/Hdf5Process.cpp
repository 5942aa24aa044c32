//===- Hdf5Process.cpp - libhdf5 in a child process -----------------------===//

#include "frontend/keras/Hdf5Process.h"
#include "frontend/keras/Hdf5Child.h"
#include "runtime/Error.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>

#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace kcc;
using namespace kcc::keras;
using namespace kcc::keras::wire;

namespace {

constexpr double kDefaultTimeoutSeconds = 30;
constexpr uint64_t kGiB = uint64_t(1) << 30;
/// An error message is the reader's text with paths from the file in it:
/// no longer than the file plus this.
constexpr uint64_t kMessageSlackBytes = 64 << 10;

/// A positive number from the environment variable `name`, or nullopt
/// when it is unset. Throws kcc::Error for anything else.
std::optional<double> positiveFromEnvironment(const char *name,
                                              const char *unit) {
  const char *text = std::getenv(name);
  if (!text || !*text)
    return std::nullopt;
  errno = 0;
  char *end = nullptr;
  double v = std::strtod(text, &end);
  if (errno || *end || !(v > 0) || v > 1e15)
    throw Error(std::string(name) + " must be a positive number of " + unit +
                ", got '" + text + "'");
  return v;
}

/// The address space this process has mapped (VmSize), or 0 if unknown.
uint64_t addressSpaceInUse() {
  std::ifstream statm("/proc/self/statm");
  uint64_t pages = 0;
  if (!(statm >> pages))
    return 0;
  return pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

std::string signalName(int sig) {
  if (const char *abbrev = sigabbrev_np(sig))
    return std::string("SIG") + abbrev;
  return "signal " + std::to_string(sig);
}

std::string secondsText(std::chrono::milliseconds ms) {
  std::string s = std::to_string(ms.count() / 1000);
  if (ms.count() % 1000)
    s += "." + std::to_string(ms.count() % 1000 + 1000).substr(1);
  return s + " s";
}

} // namespace

Hdf5ProcessLimits keras::hdf5ProcessLimits(uint64_t imageBytes) {
  Hdf5ProcessLimits limits;
  double seconds =
      positiveFromEnvironment("KCC_HDF5_TIMEOUT_SECONDS", "seconds")
          .value_or(kDefaultTimeoutSeconds);
  // Past a million seconds (11 days) there is no limit to speak of, and the
  // deadline would overflow the clock.
  seconds = std::min(seconds, 1e6);
  limits.timeout = std::chrono::milliseconds(
      std::max<int64_t>(1, static_cast<int64_t>(seconds * 1000)));
  std::optional<double> bytes =
      positiveFromEnvironment("KCC_HDF5_MEMORY_BYTES", "bytes");
  limits.memoryBytes = bytes ? static_cast<uint64_t>(*bytes)
                             : kGiB + 4 * std::min(imageBytes, 64 * kGiB);
  return limits;
}

Hdf5Process::Hdf5Process(llvm::StringRef image, std::string source)
    : source_(std::move(source)), imageBytes_(image.size()),
      limits_(hdf5ProcessLimits(image.size())) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    throw Error(source_ +
                ": cannot start the HDF5 reader: " + std::strerror(errno));
  Hdf5ChildLimits childLimits{addressSpaceInUse() + limits_.memoryBytes,
                              limits_.memoryBytes};
  pid_t parent = ::getpid();
  deadline_ = std::chrono::steady_clock::now() + limits_.timeout;
  pid_ = ::fork();
  if (pid_ == 0) {
    ::close(fds[0]);
    runHdf5Child(fds[1], image, source_, parent, childLimits);
  }
  ::close(fds[1]);
  if (pid_ < 0) {
    ::close(fds[0]);
    throw Error(source_ +
                ": cannot start the HDF5 reader: " + std::strerror(errno));
  }
  socket_ = fds[0];
  // The first reply says whether the image opened. No destructor runs for
  // a constructor that throws: end the child here.
  try {
    if (request(Hdf5Op::Open, "", "") != 0)
      abandon("the HDF5 reader's reply is malformed");
  } catch (...) {
    end();
    throw;
  }
}

Hdf5Process::~Hdf5Process() { end(); }

void Hdf5Process::end() {
  if (socket_ >= 0) {
    ::close(socket_);
    socket_ = -1;
  }
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }
}

std::string Hdf5Process::where() const {
  return source_ + ": " + (path_.empty() ? "" : path_ + ": ");
}

uint64_t Hdf5Process::request(Hdf5Op op, const std::string &path,
                              const std::string &name) {
  if (!stopped_.empty())
    throw Error(stopped_);
  path_ = path;
  // The open's reply comes unasked.
  if (op != Hdf5Op::Open) {
    deadline_ = std::chrono::steady_clock::now() + limits_.timeout;
    std::string req;
    put<uint8_t>(req, static_cast<uint8_t>(op));
    put<uint32_t>(req, static_cast<uint32_t>(path.size()));
    put<uint32_t>(req, static_cast<uint32_t>(name.size()));
    req += path;
    req += name;
    for (size_t sent = 0; sent < req.size();) {
      ssize_t w =
          ::send(socket_, req.data() + sent, req.size() - sent, MSG_NOSIGNAL);
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0)
        stop(where() + reapedStatus());
      sent += static_cast<size_t>(w);
    }
  }
  char header[kReplyHeaderBytes];
  readReply(header, sizeof(header));
  Decoder d(llvm::StringRef(header, sizeof(header)));
  uint8_t status;
  uint64_t n;
  d.get(status);
  d.get(n);
  if (status == kOk)
    return n;
  if (status != kFailed || n > imageBytes_ + kMessageSlackBytes)
    abandon("the HDF5 reader's reply is malformed");
  std::string message(n, '\0');
  readReply(message.data(), n);
  throw Error(message);
}

void Hdf5Process::receive(void *data, uint64_t n) { readReply(data, n); }

void Hdf5Process::readReply(void *data, uint64_t n) {
  char *p = static_cast<char *>(data);
  while (n > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline_ - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      stop(where() + "libhdf5 did not answer within " +
           secondsText(limits_.timeout) +
           " (KCC_HDF5_TIMEOUT_SECONDS); the file is corrupt");
    struct pollfd pfd = {socket_, POLLIN, 0};
    int ready =
        ::poll(&pfd, 1,
               static_cast<int>(std::min<int64_t>(left.count() + 1, 1 << 30)));
    if (ready < 0 && errno != EINTR)
      stop(where() +
           "cannot read from the HDF5 reader: " + std::strerror(errno));
    if (ready <= 0)
      continue;
    ssize_t r = ::read(socket_, p, std::min<uint64_t>(n, 1 << 20));
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      stop(where() + reapedStatus());
    p += r;
    n -= static_cast<uint64_t>(r);
  }
}

std::string Hdf5Process::reapedStatus() {
  int status = 0;
  pid_t r;
  while ((r = ::waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
  }
  if (r == pid_) {
    pid_ = -1;
    if (WIFSIGNALED(status))
      return "libhdf5 crashed (" + signalName(WTERMSIG(status)) +
             "); the file is corrupt";
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
      return "the HDF5 reader failed (exit status " +
             std::to_string(WEXITSTATUS(status)) + "); the file is corrupt";
  }
  return "the HDF5 reader stopped without an answer; the file is corrupt";
}

void Hdf5Process::abandon(const std::string &message) {
  stop(where() + message);
}

void Hdf5Process::stop(const std::string &message) {
  end();
  stopped_ = message;
  throw Error(message);
}
