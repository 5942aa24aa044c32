//===- KerasValues.h - Keras-written JSON fixtures for gradient tests -----===//
//
// The gradient tests compare against numbers Keras wrote into JSON files
// under KCC_KERAS_FIXTURES; each file is read once per test binary.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_TESTS_UNIT_AUTODIFF_KERASVALUES_H
#define KCC_TESTS_UNIT_AUTODIFF_KERASVALUES_H

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <string>
#include <vector>

namespace kcc {
namespace test {

/// The top-level object of the fixture at `relPath` (under
/// KCC_KERAS_FIXTURES), or an empty one when it is missing or malformed (the
/// test's own assertions then name what is absent).
inline const llvm::json::Object &kerasValues(const std::string &relPath) {
  static llvm::StringMap<llvm::json::Value> files;
  auto it = files.find(relPath);
  if (it == files.end()) {
    llvm::json::Value root(nullptr);
    auto buffer = llvm::MemoryBuffer::getFile(std::string(KCC_KERAS_FIXTURES) +
                                              "/" + relPath);
    if (buffer) {
      llvm::Expected<llvm::json::Value> v =
          llvm::json::parse((*buffer)->getBuffer());
      if (v)
        root = std::move(*v);
      else
        llvm::consumeError(v.takeError());
    }
    it = files.try_emplace(relPath, std::move(root)).first;
  }
  static const llvm::json::Object empty;
  const llvm::json::Object *o = it->second.getAsObject();
  return o ? *o : empty;
}

/// The numbers of a JSON array.
inline std::vector<double> numbers(const llvm::json::Array &a) {
  std::vector<double> out;
  for (const llvm::json::Value &v : a)
    out.push_back(*v.getAsNumber());
  return out;
}

} // namespace test
} // namespace kcc

#endif // KCC_TESTS_UNIT_AUTODIFF_KERASVALUES_H
