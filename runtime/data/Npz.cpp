//===- Npz.cpp - NumPy .npy files and .npz archives -----------------------===//
//
// The .npy header is parsed by a small recursive-descent reader of the one
// dict literal NumPy writes; nothing is evaluated. Archives are opened from
// memory so a file and a fuzzer's bytes take the same path.
//
//===----------------------------------------------------------------------===//

#include "runtime/data/Npz.h"
#include "runtime/Error.h"

#include <zip.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>
#include <vector>

using namespace kcc;

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the .npy reader assumes a little-endian host");

namespace {

/// Headers longer than this are not NumPy's (it caps them at 10000 bytes
/// when reading unless told otherwise).
constexpr uint64_t kMaxHeaderBytes = 1 << 20;
/// Deflate cannot expand a stream by more than this factor (RFC 1951: at
/// most 258 bytes from a 2-bit code), so a member claiming more is corrupt.
constexpr uint64_t kMaxDeflateRatio = 1032;

/// One supported 'descr'.
struct NpyDtype {
  std::string descr;
  char kind = 0;       // 'f', 'i', 'u' or 'b'
  size_t itemSize = 0; // bytes per element in the file
  bool bigEndian = false;
  DType stored = DType::F32;
};

struct NpyHeader {
  NpyDtype dtype;
  Shape shape;
  size_t dataOffset = 0;
};

std::optional<NpyDtype> decodeDescr(const std::string &descr) {
  if (descr.size() < 3)
    return std::nullopt;
  NpyDtype d;
  char order = descr[0];
  std::string code = descr.substr(1);
  if (code == "f4")
    d = {descr, 'f', 4, false, DType::F32};
  else if (code == "f8")
    d = {descr, 'f', 8, false, DType::F64};
  else if (code == "i4")
    d = {descr, 'i', 4, false, DType::I32};
  else if (code == "i8")
    d = {descr, 'i', 8, false, DType::I64};
  else if (code == "u1")
    d = {descr, 'u', 1, false, DType::I32};
  else if (code == "b1")
    d = {descr, 'b', 1, false, DType::I1};
  else
    return std::nullopt;
  // '|' (not applicable) only makes sense for one-byte types; '=' is the
  // writer's native order, which NumPy resolves before writing.
  if (order == '>')
    d.bigEndian = d.itemSize > 1;
  else if (order == '|' ? d.itemSize != 1 : order != '<')
    return std::nullopt;
  return d;
}

/// Reads the header dict: {'descr': '<f4', 'fortran_order': False,
/// 'shape': (2, 3), } followed by padding spaces and a newline.
class HeaderParser {
public:
  HeaderParser(std::string_view text, const std::string &where)
      : text_(text), where_(where) {}

  NpyHeader parse() {
    NpyHeader h;
    bool haveDescr = false, haveOrder = false, haveShape = false;
    expect('{');
    while (true) {
      skipSpace();
      if (peek() == '}')
        break;
      std::string key = parseString();
      expect(':');
      if (key == "descr") {
        once(haveDescr, key);
        skipSpace();
        if (peek() != '\'' && peek() != '"')
          fail("'descr' is not a string: structured dtypes are not supported");
        std::string descr = parseString();
        std::optional<NpyDtype> d = decodeDescr(descr);
        if (!d)
          fail("unsupported dtype '" + descr +
               "' (supported: float32, float64, int32, int64, uint8, bool)");
        h.dtype = *d;
      } else if (key == "fortran_order") {
        once(haveOrder, key);
        if (parseBool())
          fail("Fortran-order arrays are not supported: save a C-order "
               "array (numpy.ascontiguousarray)");
      } else if (key == "shape") {
        once(haveShape, key);
        h.shape = parseShape();
      } else {
        fail("unexpected header key '" + key + "'");
      }
      skipSpace();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != '}')
        fail("expected ',' or '}' in the header dict");
    }
    ++pos_;
    skipSpace();
    if (pos_ != text_.size())
      fail("unexpected text after the header dict");
    if (!haveDescr || !haveOrder || !haveShape)
      fail("the header lacks '" +
           std::string(!haveDescr   ? "descr"
                       : !haveOrder ? "fortran_order"
                                    : "shape") +
           "'");
    return h;
  }

private:
  [[noreturn]] void fail(const std::string &msg) const {
    throw Error(where_ + ": malformed .npy header: " + msg);
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }
  void expect(char c) {
    skipSpace();
    if (peek() != c)
      fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  void once(bool &seen, const std::string &key) {
    if (seen)
      fail("duplicate key '" + key + "'");
    seen = true;
  }
  std::string parseString() {
    skipSpace();
    char quote = peek();
    if (quote != '\'' && quote != '"')
      fail("expected a quoted key or string");
    size_t end = text_.find(quote, ++pos_);
    if (end == std::string_view::npos)
      fail("unterminated string");
    std::string s(text_.substr(pos_, end - pos_));
    if (s.find('\\') != std::string::npos)
      fail("escapes in strings are not supported");
    pos_ = end + 1;
    return s;
  }
  bool parseBool() {
    skipSpace();
    for (const char *word : {"True", "False"}) {
      size_t n = std::strlen(word);
      if (text_.substr(pos_, n) == word) {
        pos_ += n;
        return word[0] == 'T';
      }
    }
    fail("'fortran_order' is not True or False");
  }
  int64_t parseDim() {
    skipSpace();
    if (peek() < '0' || peek() > '9')
      fail("a shape dimension is not a non-negative integer");
    int64_t v = 0;
    while (peek() >= '0' && peek() <= '9') {
      if (__builtin_mul_overflow(v, int64_t(10), &v) ||
          __builtin_add_overflow(v, int64_t(peek() - '0'), &v))
        fail("a shape dimension overflows 64 bits");
      ++pos_;
    }
    if (peek() == 'L') // Python 2's long literals
      ++pos_;
    return v;
  }
  /// A tuple: (), (3,), (2, 3) with an optional trailing comma.
  Shape parseShape() {
    expect('(');
    Shape shape;
    while (true) {
      skipSpace();
      if (peek() == ')')
        break;
      shape.push_back(parseDim());
      if (shape.size() > 64) // NumPy's NPY_MAXDIMS
        fail("more than 64 dimensions");
      skipSpace();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != ')')
        fail("expected ',' or ')' in 'shape'");
    }
    ++pos_;
    return shape;
  }

  std::string_view text_;
  const std::string &where_;
  size_t pos_ = 0;
};

uint32_t readLE(std::string_view bytes, size_t offset, size_t n) {
  uint32_t v = 0;
  for (size_t i = 0; i < n; ++i)
    v |= uint32_t(uint8_t(bytes[offset + i])) << (8 * i);
  return v;
}

NpyHeader parseHeader(std::string_view bytes, const std::string &where) {
  static const char kMagic[] = "\x93NUMPY";
  if (bytes.size() < 8 || bytes.substr(0, 6) != std::string_view(kMagic, 6))
    throw Error(where + ": not a .npy file (no \\x93NUMPY magic)");
  int major = uint8_t(bytes[6]), minor = uint8_t(bytes[7]);
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    throw Error(where + ": unsupported .npy format version " +
                std::to_string(major) + "." + std::to_string(minor) +
                " (supported: 1.0, 2.0, 3.0)");
  // 1.0 has a 2-byte header length, 2.0 and 3.0 (UTF-8 header) 4 bytes.
  size_t lenBytes = major == 1 ? 2 : 4;
  if (bytes.size() < 8 + lenBytes)
    throw Error(where + ": truncated .npy header");
  uint64_t headerLen = readLE(bytes, 8, lenBytes);
  size_t start = 8 + lenBytes;
  if (headerLen > kMaxHeaderBytes)
    throw Error(where + ": .npy header length " + std::to_string(headerLen) +
                " exceeds " + std::to_string(kMaxHeaderBytes) + " bytes");
  if (headerLen > bytes.size() - start)
    throw Error(where + ": truncated .npy header (claims " +
                std::to_string(headerLen) + " bytes, " +
                std::to_string(bytes.size() - start) + " present)");
  NpyHeader h = HeaderParser(bytes.substr(start, headerLen), where).parse();
  h.dataOffset = start + headerLen;
  return h;
}

std::string shapeTuple(const Shape &shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

template <typename T> T byteSwapped(T v) {
  if constexpr (sizeof(T) == 4)
    return __builtin_bswap32(v);
  else
    return __builtin_bswap64(v);
}

/// Copies `n` items of sizeof(T) bytes into `dst`, swapping them if needed.
template <typename T>
void copyItems(const char *src, void *dst, size_t n, bool swap) {
  std::memcpy(dst, src, n * sizeof(T));
  if (!swap)
    return;
  T *out = static_cast<T *>(dst);
  for (size_t i = 0; i < n; ++i)
    out[i] = byteSwapped(out[i]);
}

/// Reads everything of `path` into memory.
std::string readWholeFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(path + ": cannot open: " + std::strerror(errno));
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  if (in.bad())
    throw Error(path + ": cannot read: " + std::strerror(errno));
  return bytes;
}

/// A read-only zip archive over bytes the caller keeps alive.
class ZipView {
public:
  ZipView(std::string_view bytes, const std::string &source) : bytes_(bytes) {
    // libzip reads an empty source as an empty archive; a file is not one.
    if (bytes.empty())
      throw Error(source + ": not a .npz archive (zip): the file is empty");
    zip_error_t err;
    zip_error_init(&err);
    zip_source_t *src =
        zip_source_buffer_create(bytes.data(), bytes.size(), 0, &err);
    if (src)
      zip_ = zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &err);
    if (!zip_) {
      if (src)
        zip_source_free(src);
      std::string msg = zip_error_strerror(&err);
      zip_error_fini(&err);
      throw Error(source + ": not a .npz archive (zip): " + msg);
    }
    zip_error_fini(&err);
  }
  ~ZipView() { zip_discard(zip_); }
  ZipView(const ZipView &) = delete;
  ZipView &operator=(const ZipView &) = delete;

  /// The names of all members, in archive order.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    zip_int64_t n = zip_get_num_entries(zip_, 0);
    for (zip_int64_t i = 0; i < n; ++i)
      if (const char *name = zip_get_name(zip_, i, 0))
        out.push_back(name);
    return out;
  }

  /// The bytes of `member`; `where` names it in errors.
  std::string read(const std::string &member, const std::string &where) const {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat(zip_, member.c_str(), 0, &st) != 0)
      throw Error(where + ": cannot read the member: " + zip_strerror(zip_));
    if (!(st.valid & ZIP_STAT_SIZE) || !(st.valid & ZIP_STAT_COMP_SIZE) ||
        !(st.valid & ZIP_STAT_COMP_METHOD))
      throw Error(where + ": the archive does not record the member's size");
    if (st.comp_method != ZIP_CM_STORE && st.comp_method != ZIP_CM_DEFLATE)
      throw Error(where + ": unsupported zip compression method " +
                  std::to_string(st.comp_method) +
                  " (stored or deflated only)");
    // The declared sizes must fit in the archive: what libzip will allocate
    // and inflate is bounded by the bytes actually given.
    uint64_t limit = st.comp_method == ZIP_CM_STORE
                         ? st.comp_size
                         : st.comp_size * kMaxDeflateRatio + 1024;
    if (st.comp_size > bytes_.size() || st.size > limit)
      throw Error(where + ": the archive declares " + std::to_string(st.size) +
                  " bytes (" + std::to_string(st.comp_size) +
                  " compressed) for the member, more than its " +
                  std::to_string(bytes_.size()) + "-byte archive can hold");
    zip_file_t *f = zip_fopen(zip_, member.c_str(), 0);
    if (!f)
      throw Error(where + ": cannot open the member: " + zip_strerror(zip_));
    std::string data(static_cast<size_t>(st.size), '\0');
    zip_int64_t n = zip_fread(f, data.data(), st.size);
    // One byte more must not be there: the declared size is the whole.
    char extra;
    zip_int64_t more = n >= 0 ? zip_fread(f, &extra, 1) : 0;
    zip_fclose(f);
    if (n < 0 || static_cast<zip_uint64_t>(n) != st.size || more != 0)
      throw Error(where + ": the member is truncated or corrupt");
    return data;
  }

private:
  std::string_view bytes_;
  zip_t *zip_ = nullptr;
};

bool endsWithNpy(const std::string &name) {
  return name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0;
}

std::string memberWhere(const std::string &source, const std::string &member) {
  return source + ": array '" + member.substr(0, member.size() - 4) + "' (" +
         member + ")";
}

/// The number of elements of `h`'s shape, or an error naming `source` when
/// 64 bits cannot count them.
int64_t elementCount(const NpyHeader &h, const std::string &source) {
  int64_t count = 1;
  for (int64_t d : h.shape)
    if (__builtin_mul_overflow(count, d, &count))
      throw Error(source + ": shape " + shapeTuple(h.shape) +
                  " has more elements than 64 bits can count");
  return count;
}

/// `container` says what holds the bytes in errors: "file" or "member".
NDArray decodeNpy(std::string_view bytes, const std::string &source,
                  const char *container) {
  NpyHeader h = parseHeader(bytes, source);
  int64_t count = elementCount(h, source);
  uint64_t need;
  if (__builtin_mul_overflow(uint64_t(count), uint64_t(h.dtype.itemSize),
                             &need))
    throw Error(source + ": shape " + shapeTuple(h.shape) + " of " +
                h.dtype.descr + " overflows 64 bits of bytes");
  uint64_t have = bytes.size() - h.dataOffset;
  if (need != have)
    throw Error(source + ": shape " + shapeTuple(h.shape) + " of " +
                h.dtype.descr + " needs " + std::to_string(need) +
                " data bytes, the " + container + " holds " +
                std::to_string(have));

  NDArray out = NDArray::empty(h.shape, h.dtype.stored);
  const char *src = bytes.data() + h.dataOffset;
  size_t n = static_cast<size_t>(count);
  switch (h.dtype.kind) {
  case 'f':
  case 'i':
    if (h.dtype.itemSize == 4)
      copyItems<uint32_t>(src, out.rawData(), n, h.dtype.bigEndian);
    else
      copyItems<uint64_t>(src, out.rawData(), n, h.dtype.bigEndian);
    break;
  case 'u': {
    int32_t *dst = out.data<int32_t>();
    for (size_t i = 0; i < n; ++i)
      dst[i] = uint8_t(src[i]);
    break;
  }
  case 'b': {
    uint8_t *dst = out.data<uint8_t>();
    for (size_t i = 0; i < n; ++i)
      dst[i] = src[i] != 0;
    break;
  }
  }
  return out;
}

} // namespace

NpyLayout kcc::parseNpyLayout(std::string_view header, uint64_t fileBytes,
                              const std::string &source) {
  NpyHeader h = parseHeader(header, source);
  int64_t count = elementCount(h, source);
  uint64_t need;
  if (__builtin_mul_overflow(uint64_t(count), uint64_t(h.dtype.itemSize),
                             &need) ||
      fileBytes < h.dataOffset || need != fileBytes - h.dataOffset)
    throw Error(source + ": shape " + shapeTuple(h.shape) + " of " +
                h.dtype.descr + " needs " + std::to_string(need) +
                " data bytes, the file holds " +
                std::to_string(
                    fileBytes < h.dataOffset ? 0 : fileBytes - h.dataOffset));
  return {h.dtype.descr,     h.dtype.kind, h.dtype.itemSize,
          h.dtype.bigEndian, h.shape,      h.dataOffset};
}

NDArray kcc::parseNpy(std::string_view bytes, const std::string &source) {
  return decodeNpy(bytes, source, "file");
}

NDArray kcc::readNpy(const std::string &path) {
  return parseNpy(readWholeFile(path), path);
}

std::map<std::string, NDArray> kcc::parseNpz(std::string_view bytes,
                                             const std::string &source) {
  ZipView zip(bytes, source);
  std::map<std::string, NDArray> arrays;
  for (const std::string &member : zip.names()) {
    if (!endsWithNpy(member))
      continue;
    std::string where = memberWhere(source, member);
    std::string name = member.substr(0, member.size() - 4);
    if (arrays.count(name))
      throw Error(where + ": the archive holds the array twice");
    arrays[name] = decodeNpy(zip.read(member, where), where, "member");
  }
  return arrays;
}

std::map<std::string, NDArray> kcc::readNpz(const std::string &path) {
  return parseNpz(readWholeFile(path), path);
}

NDArray kcc::readNpzArray(const std::string &path, const std::string &name) {
  std::string bytes = readWholeFile(path);
  ZipView zip(bytes, path);
  std::string member = name + ".npy";
  std::vector<std::string> names = zip.names();
  bool found = false;
  std::string present;
  for (const std::string &m : names) {
    found |= m == member;
    if (endsWithNpy(m))
      present += (present.empty() ? "" : ", ") + m.substr(0, m.size() - 4);
  }
  if (!found)
    throw Error(path + ": no array '" + name + "' (" + member +
                ") in the archive; it holds: " +
                (present.empty() ? "no arrays" : present));
  std::string where = memberWhere(path, member);
  return decodeNpy(zip.read(member, where), where, "member");
}
