//===- KerasTestUtil.h - Shared helpers of the Keras importer tests -------===//

#ifndef KCC_TESTS_UNIT_KERAS_KERASTESTUTIL_H
#define KCC_TESTS_UNIT_KERAS_KERASTESTUTIL_H

#include "frontend/keras/KerasImporter.h"
#include "kcc/kcc.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kcc {
namespace keras_test {

inline std::string fixture(const std::string &name) {
  return std::string(KCC_KERAS_FIXTURES) + "/" + name;
}

inline std::string readText(const std::string &name) {
  auto buf = llvm::MemoryBuffer::getFile(fixture(name));
  if (!buf)
    throw Error("cannot read fixture " + name);
  return (*buf)->getBuffer().str();
}

inline llvm::json::Value readJson(const std::string &name) {
  return cantFail(llvm::json::parse(readText(name)));
}

/// The traced @forward with locations (layer names) printed.
inline std::string traceText(Model &model, int64_t batch = 8) {
  mlir::MLIRContext ctx;
  TraceOptions opts;
  opts.batch = batch;
  auto module = traceForward(ctx, model, opts);
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, mlir::OpPrintingFlags().enableDebugInfo());
  return text;
}

/// `text` with the first `from` replaced (the test fails if absent).
inline std::string replaceOnce(std::string text, const std::string &from,
                               const std::string &to) {
  size_t pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << "'" << from << "' not in the fixture";
  if (pos != std::string::npos)
    text.replace(pos, from.size(), to);
  return text;
}

/// The message of the kcc::Error `fn` throws ("" if none).
template <typename Fn> std::string errorOf(Fn fn) {
  try {
    fn();
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

} // namespace keras_test
} // namespace kcc

#endif // KCC_TESTS_UNIT_KERAS_KERASTESTUTIL_H
