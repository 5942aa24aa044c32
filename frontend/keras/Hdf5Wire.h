//===- Hdf5Wire.h - Messages between kcc and its HDF5 reader ----*- C++ -*-===//
//
// Hdf5File (kcc's side) and the reader process (Hdf5Child.cpp) talk over a
// stream socket in little frames of native-endian integers (both ends are
// the same binary):
//
//   request  u8 op, u32 path length, u32 name length, path, name
//   reply    u8 status (kOk or kFailed), u64 payload length, payload
//
// The first reply, to no request, says whether the image opened. A failed
// reply's payload is the kcc::Error message; an ok reply's depends on the
// op (see Hdf5Op). kcc checks every length against a bound before it
// allocates, so a reader that lies cannot make it allocate more than the
// file could hold.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_KERAS_HDF5WIRE_H
#define KCC_FRONTEND_KERAS_HDF5WIRE_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace kcc {
namespace keras {
namespace wire {

/// What a request asks; each ok reply's payload follows.
enum class Hdf5Op : uint8_t {
  Open = 0,       ///< (never sent: the first reply) empty
  Exists,         ///< u8 0 or 1
  IsGroup,        ///< u8 0 or 1
  Members,        ///< a string list
  StringListAttr, ///< u8 present, then (if 1) a string list
  DatasetShape,   ///< u64 rank, rank x i64 dims
  ReadFloat,      ///< u64 rank, rank x i64 dims, the f32 elements
};

/// The reply's first byte.
constexpr uint8_t kOk = 0;
constexpr uint8_t kFailed = 1;

/// A reply header: status and payload length.
constexpr size_t kReplyHeaderBytes = 1 + 8;
/// A request header: op and the two string lengths.
constexpr size_t kRequestHeaderBytes = 1 + 4 + 4;
/// The most dimensions a dataset may have (Hdf5Reader's limit too).
constexpr uint64_t kMaxRank = 16;

/// Appends the bytes of a trivially copyable value.
template <typename T> void put(std::string &out, T value) {
  out.append(reinterpret_cast<const char *>(&value), sizeof(T));
}

/// Appends u64 count, then each string as u64 length and bytes.
inline void putStrings(std::string &out, const std::vector<std::string> &v) {
  put<uint64_t>(out, v.size());
  for (const std::string &s : v) {
    put<uint64_t>(out, s.size());
    out += s;
  }
}

/// Reads values from a payload, refusing to read past its end.
class Decoder {
public:
  explicit Decoder(llvm::StringRef bytes) : rest_(bytes) {}

  /// The next value, or false when the payload is too short.
  template <typename T> bool get(T &value) {
    if (rest_.size() < sizeof(T))
      return false;
    std::memcpy(&value, rest_.data(), sizeof(T));
    rest_ = rest_.drop_front(sizeof(T));
    return true;
  }

  /// A string list; no count or length may exceed what is left, so the
  /// list is never sized by an unchecked number.
  bool getStrings(std::vector<std::string> &out) {
    uint64_t count;
    if (!get(count) || count > rest_.size() / 8)
      return false;
    out.reserve(count);
    for (uint64_t i = 0; i < count; ++i) {
      uint64_t n;
      if (!get(n) || n > rest_.size())
        return false;
      out.emplace_back(rest_.take_front(n).str());
      rest_ = rest_.drop_front(n);
    }
    return true;
  }

  bool atEnd() const { return rest_.empty(); }

private:
  llvm::StringRef rest_;
};

} // namespace wire
} // namespace keras
} // namespace kcc

#endif // KCC_FRONTEND_KERAS_HDF5WIRE_H
