//===- NpzTest.cpp - .npy / .npz reading against NumPy's own files --------===//
//
// The fixtures in tests/fixtures/npz are written by NumPy
// (scripts/npz-fixtures/make_npz_fixtures.py) with values from formulas this
// test recomputes. The hostile inputs are derived from them here.
//
//===----------------------------------------------------------------------===//

#include "runtime/data/Npz.h"
#include "runtime/Error.h"
#include "tests/unit/ErrorOf.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

using namespace kcc;
using kcc::testing::errorOf;

namespace {

std::string fixture(const std::string &name) {
  return std::string(KCC_NPZ_FIXTURES) + "/" + name;
}

std::string slurp(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

/// The formulas of make_npz_fixtures.py, per NumPy kind.
double expectedValue(char kind, int64_t i) {
  switch (kind) {
  case 'f':
    return 0.5 * i - 1;
  case 'i':
    return 7.0 * i - 3;
  case 'u':
    return (37 * i) % 256;
  default:
    return i % 3 == 0 ? 1 : 0;
  }
}

void expectValues(const NDArray &a, char kind) {
  for (int64_t i = 0; i < a.numel(); ++i)
    ASSERT_EQ(a.at(i), expectedValue(kind, i)) << "element " << i;
}

/// A .npy image with the given header dict and `dataBytes` zero bytes.
std::string npyWith(const std::string &dict, size_t dataBytes) {
  std::string header = dict;
  while ((10 + header.size() + 1) % 64 != 0)
    header += ' ';
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += char(header.size() & 0xff);
  out += char(header.size() >> 8);
  return out + header + std::string(dataBytes, '\0');
}

TEST(Npy, ReadsEachDtypeAsWrittenByNumPy) {
  struct Case {
    const char *file;
    Shape shape;
    DType dtype;
    char kind;
  } cases[] = {
      {"f32.npy", {2, 3}, DType::F32, 'f'},
      {"f64_be.npy", {3, 2}, DType::F64, 'f'},
      {"i32_be.npy", {5}, DType::I32, 'i'},
      {"i64.npy", {2, 2, 2}, DType::I64, 'i'},
      {"u8.npy", {4, 4}, DType::I32, 'u'}, // uint8 widens to I32
      {"bool.npy", {7}, DType::I1, 'b'},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.file);
    NDArray a = readNpy(fixture(c.file));
    EXPECT_EQ(a.shape(), c.shape);
    EXPECT_EQ(a.dtype(), c.dtype);
    expectValues(a, c.kind);
  }
  // uint8 keeps values above 127 (37 * 7 % 256 = 3, 37 * 4 = 148).
  EXPECT_EQ(readNpy(fixture("u8.npy")).at(4), 148);
}

TEST(Npy, ReadsFormatVersionsTwoAndThree) {
  NDArray v1 = readNpy(fixture("f32.npy"));
  for (const char *file : {"f32_v2.npy", "f32_v3.npy"}) {
    std::string bytes = slurp(fixture(file));
    ASSERT_EQ(bytes[6], file[5] - '0'); // the major version NumPy wrote
    NDArray a = readNpy(fixture(file));
    EXPECT_EQ(a.shape(), v1.shape());
    EXPECT_EQ(a.toVector(), v1.toVector());
  }
}

TEST(Npy, ReadsScalarsAndEmptyArrays) {
  NDArray s = readNpy(fixture("scalar.npy"));
  EXPECT_EQ(s.rank(), 0);
  EXPECT_EQ(s.at(0), 2.5);
  NDArray e = readNpy(fixture("empty.npy"));
  EXPECT_EQ(e.shape(), (Shape{0, 3}));
  EXPECT_EQ(e.numel(), 0);
}

TEST(Npy, FortranOrderAndOtherDtypesAreClearErrors) {
  std::string f = errorOf([] { readNpy(fixture("fortran.npy")); });
  EXPECT_NE(f.find("fortran.npy: "), std::string::npos) << f;
  EXPECT_NE(f.find("Fortran-order arrays are not supported"), std::string::npos)
      << f;
  std::string h = errorOf([] { readNpy(fixture("f16.npy")); });
  EXPECT_NE(h.find("unsupported dtype '<f2'"), std::string::npos) << h;
}

TEST(Npz, ReadsStoredAndDeflatedArchives) {
  for (const char *file : {"stored.npz", "deflated.npz"}) {
    SCOPED_TRACE(file);
    std::map<std::string, NDArray> arrays = readNpz(fixture(file));
    ASSERT_EQ(arrays.size(), 3u);
    EXPECT_EQ(arrays["x"].shape(), (Shape{4, 3}));
    EXPECT_EQ(arrays["x"].dtype(), DType::F32);
    expectValues(arrays["x"], 'f');
    EXPECT_EQ(arrays["y"].dtype(), DType::I64);
    expectValues(arrays["y"], 'i');
    EXPECT_EQ(arrays["mask"].dtype(), DType::I1);
    expectValues(arrays["mask"], 'b');
    NDArray y = readNpzArray(fixture(file), "y");
    EXPECT_EQ(y.toVector(), arrays["y"].toVector());
  }
  // savez_compressed really deflated: its file is not the stored one.
  EXPECT_NE(slurp(fixture("stored.npz")), slurp(fixture("deflated.npz")));
}

TEST(Npz, MissingArrayNamesTheFileAndListsTheArrays) {
  std::string msg =
      errorOf([] { readNpzArray(fixture("stored.npz"), "weights"); });
  EXPECT_NE(msg.find("stored.npz: no array 'weights' (weights.npy)"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("it holds: "), std::string::npos) << msg;
  for (const char *name : {"x", "y", "mask"})
    EXPECT_NE(msg.find(name), std::string::npos) << msg;
}

TEST(Npz, MissingOrNonZipFileIsAnErrorNamingIt) {
  std::string missing = errorOf([] { readNpz("/nonexistent/kcc.npz"); });
  EXPECT_EQ(missing.rfind("/nonexistent/kcc.npz: cannot open", 0), 0u)
      << missing;
  std::string notZip = errorOf([] { readNpz(fixture("f32.npy")); });
  EXPECT_NE(notZip.find("f32.npy: not a .npz archive (zip)"), std::string::npos)
      << notZip;
}

TEST(NpyHostile, EveryTruncationIsAnError) {
  for (const char *file : {"f32.npy", "f64_be.npy", "f32_v2.npy"}) {
    std::string bytes = slurp(fixture(file));
    for (size_t n = 0; n < bytes.size(); ++n)
      EXPECT_THROW(parseNpy(std::string_view(bytes).substr(0, n), file), Error)
          << file << " cut at " << n;
  }
}

TEST(NpzHostile, EveryTruncationIsAnError) {
  for (const char *file : {"stored.npz", "deflated.npz"}) {
    std::string bytes = slurp(fixture(file));
    for (size_t n = 0; n < bytes.size(); ++n)
      EXPECT_THROW(parseNpz(std::string_view(bytes).substr(0, n), file), Error)
          << file << " cut at " << n;
  }
}

TEST(NpyHostile, WrongMagicOrVersion) {
  std::string bytes = slurp(fixture("f32.npy"));
  std::string magic = bytes;
  magic[1] = 'n';
  EXPECT_NE(
      errorOf([&] { parseNpy(magic, "m.npy"); }).find("m.npy: not a .npy file"),
      std::string::npos);
  std::string version = bytes;
  version[6] = 4;
  EXPECT_NE(errorOf([&] {
              parseNpy(version, "v.npy");
            }).find("unsupported .npy format version 4.0"),
            std::string::npos);
}

TEST(NpyHostile, ShapeProductOverflowIsCaught) {
  // 2^32 * 2^32 elements: the product wraps to 0 in 64 bits, which would
  // match an empty data section if it were not checked.
  std::string img =
      npyWith("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, "
              "4294967296), }",
              0);
  std::string msg = errorOf([&] { parseNpy(img, "big.npy"); });
  EXPECT_NE(msg.find("big.npy: shape (4294967296, 4294967296) has more "
                     "elements than 64 bits can count"),
            std::string::npos)
      << msg;
  // Elements fit, bytes do not: 2^62 float32s.
  std::string bytesOverflow =
      npyWith("{'descr': '<f4', 'fortran_order': False, 'shape': "
              "(4611686018427387904,), }",
              0);
  EXPECT_NE(errorOf([&] {
              parseNpy(bytesOverflow, "b.npy");
            }).find("overflows 64 bits of bytes"),
            std::string::npos);
  std::string digits = npyWith("{'descr': '<f4', 'fortran_order': False, "
                               "'shape': (99999999999999999999,), }",
                               0);
  EXPECT_NE(errorOf([&] {
              parseNpy(digits, "d.npy");
            }).find("a shape dimension overflows 64 bits"),
            std::string::npos);
}

TEST(NpyHostile, HeaderClaimingMoreDataThanPresent) {
  std::string img = npyWith(
      "{'descr': '<f8', 'fortran_order': False, 'shape': (1000, 1000), }", 24);
  std::string msg = errorOf([&] { parseNpy(img, "short.npy"); });
  EXPECT_NE(msg.find("short.npy: shape (1000, 1000) of <f8 needs 8000000 "
                     "data bytes, the file holds 24"),
            std::string::npos)
      << msg;
  // Trailing bytes after the data are as wrong as missing ones.
  std::string extra =
      npyWith("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 9);
  EXPECT_NE(errorOf([&] { parseNpy(extra, "x.npy"); }).find("holds 9"),
            std::string::npos);
  // A header length past the end of the file.
  std::string longHeader = slurp(fixture("f32.npy")).substr(0, 20);
  longHeader[8] = char(0xff);
  longHeader[9] = char(0x7f);
  EXPECT_NE(errorOf([&] {
              parseNpy(longHeader, "h.npy");
            }).find("truncated .npy header (claims 32767 bytes"),
            std::string::npos);
}

TEST(NpyHostile, MalformedHeaderDicts) {
  const char *dicts[] = {
      "{'descr': '<f4', 'fortran_order': False}", // no shape
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}",
      "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': ()}",
      "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,)}",
      "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}",
      "{'descr': '|f4', 'fortran_order': False, 'shape': (2,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} trailing",
      "{'descr': '<f4, 'fortran_order': False, 'shape': (2,)}",
  };
  for (const char *d : dicts)
    EXPECT_NE(
        errorOf([&] { parseNpy(npyWith(d, 8), "bad.npy"); }).find("bad.npy: "),
        std::string::npos)
        << d;
}

TEST(NpzHostile, DeclaredSizeBeyondTheArchiveIsAnError) {
  std::string bytes = slurp(fixture("stored.npz"));
  // Patch the uncompressed and compressed sizes of every central directory
  // entry (offsets 20 and 24 after "PK\1\2") to 1 GiB.
  size_t patched = 0;
  for (size_t at = bytes.find("PK\x01\x02"); at != std::string::npos;
       at = bytes.find("PK\x01\x02", at + 4), ++patched)
    for (size_t off : {20, 24}) {
      const char gib[4] = {0, 0, 0, 0x40};
      std::memcpy(&bytes[at + off], gib, 4);
    }
  ASSERT_EQ(patched, 3u);
  std::string msg = errorOf([&] { parseNpz(bytes, "huge.npz"); });
  EXPECT_EQ(msg.rfind("huge.npz: ", 0), 0u) << msg;
}

TEST(NpzHostile, CorruptMemberNamesTheArray) {
  // One flipped data byte of x.npy in a stored archive: the zip structure
  // is intact, the member's CRC-32 no longer matches.
  std::string bytes = slurp(fixture("stored.npz"));
  NDArray ok = parseNpz(bytes, "ok.npz")["x"];
  ASSERT_EQ(ok.numel(), 12);
  size_t npy = bytes.find("\x93NUMPY");
  ASSERT_NE(npy, std::string::npos);
  bytes[npy + 128 + 47] ^= 0x40; // last byte of x's data (header is 128)
  std::string msg = errorOf([&] { parseNpz(bytes, "crc.npz"); });
  EXPECT_NE(msg.find("crc.npz: array 'x' (x.npy): the member is truncated "
                     "or corrupt"),
            std::string::npos)
      << msg;
}

} // namespace
