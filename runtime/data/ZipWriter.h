//===- ZipWriter.h - Zip archives written from memory -----------*- C++ -*-===//
//
// The zip files kcc writes (.npz archives, .keras archives): members added
// from memory, stored uncompressed as numpy.savez and Keras's
// saving_lib write them, through libzip. Combine with writeFileAtomically
// (AtomicFile.h) so the archive appears whole or not at all.
//
//   writeFileAtomically(path, [&](const std::string &tmp) {
//     ZipWriter zip(tmp, path);
//     zip.add("config.json", configText);
//     zip.close();
//   });
//
//===----------------------------------------------------------------------===//

#ifndef KCC_RUNTIME_DATA_ZIPWRITER_H
#define KCC_RUNTIME_DATA_ZIPWRITER_H

#include <memory>
#include <string>
#include <vector>

struct zip; // libzip's zip_t

namespace kcc {

class ZipWriter {
public:
  /// Creates (truncates) the archive at `file`; `source` names it in
  /// errors (the destination the user asked for). Throws kcc::Error.
  ZipWriter(const std::string &file, std::string source);
  /// Discards an archive not closed (nothing is written).
  ~ZipWriter();
  ZipWriter(const ZipWriter &) = delete;
  ZipWriter &operator=(const ZipWriter &) = delete;

  /// Adds member `name` holding `bytes` (kept until close()).
  void add(const std::string &name, std::string bytes);
  /// Writes the archive. Throws kcc::Error naming the source.
  void close();

private:
  ::zip *zip_ = nullptr;
  std::string source_;
  /// The members' bytes: libzip reads them only in close().
  std::vector<std::unique_ptr<std::string>> buffers_;
};

} // namespace kcc

#endif // KCC_RUNTIME_DATA_ZIPWRITER_H
