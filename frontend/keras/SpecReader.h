//===- SpecReader.h - Located access to Keras JSON specs --------*- C++ -*-===//
//
// Typed getters over llvm::json objects that fail with a kcc::Error naming
// the source, the JSON path (rendered by llvm::json::Path::Root) and the
// layer. Keras's defaults are passed at each call site, so a missing
// optional key and an explicit null behave alike, as in Keras.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_KERAS_SPECREADER_H
#define KCC_FRONTEND_KERAS_SPECREADER_H

#include "frontend/Layers.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/JSON.h"

#include <optional>
#include <string>
#include <vector>

namespace kcc {
namespace keras {

/// A location in a spec: field names and array indices from the root.
/// Owning (llvm::json::Path links to parent objects on the stack, too
/// short-lived to keep in views); turned into a json::Path to render.
class JsonPath {
public:
  JsonPath field(llvm::StringRef name) const;
  JsonPath index(size_t i) const;
  struct Segment {
    std::string field; ///< Empty for an index.
    size_t index = 0;
  };
  const std::vector<Segment> &segments() const { return segments_; }

private:
  std::vector<Segment> segments_;
};

/// Owns the path root of one spec; renders locations and throws.
class SpecReader {
public:
  explicit SpecReader(std::string source) : source_(std::move(source)) {}

  const std::string &source() const { return source_; }
  /// The Keras major version that wrote the spec (2 or 3), where a layer's
  /// meaning differs between them (hard_sigmoid).
  int kerasMajorVersion() const { return kerasMajorVersion_; }
  void setKerasMajorVersion(int major) { kerasMajorVersion_ = major; }

  /// "$.config.layers[2].units", rendered by llvm::json::Path::Root.
  std::string where(const JsonPath &path);
  /// "<source>: <path>: <context>: <message>" (empty parts left out).
  std::string message(const JsonPath &path, const std::string &context,
                      const llvm::Twine &msg);
  /// Throws message(path, context, msg).
  [[noreturn]] void fail(const JsonPath &path, const std::string &context,
                         const llvm::Twine &msg);

private:
  std::string source_;
  int kerasMajorVersion_ = 3;
  llvm::json::Path::Root root_{"$"};
};

/// How deep arrays and objects may nest in any JSON kcc reads. Keras
/// configs nest a few dozen levels (model, layers, layer, config,
/// initializer, config, ...); llvm::json parses and destroys values by
/// recursion, and 512 levels stay far inside any thread's stack where tens
/// of thousands overflow it.
constexpr unsigned kMaxJsonDepth = 512;

/// Parses `text`; malformed JSON, or JSON nested deeper than kMaxJsonDepth,
/// throws "<source>:<line>:<col>: ...".
llvm::json::Value parseJson(llvm::StringRef text, llvm::StringRef source);

/// One JSON object at a path, read on behalf of `context` (a layer, "model",
/// "compile_config").
class ObjectView {
public:
  ObjectView(SpecReader &reader, const llvm::json::Object &object,
             JsonPath path, std::string context)
      : reader_(reader), object_(object), path_(path),
        context_(std::move(context)) {}

  /// `value` at `path` as an object (else an error naming `what`).
  static ObjectView of(SpecReader &reader, const llvm::json::Value &value,
                       JsonPath path, std::string context,
                       llvm::StringRef what);

  const llvm::json::Object &object() const { return object_; }
  const JsonPath &path() const { return path_; }
  const std::string &context() const { return context_; }
  SpecReader &reader() const { return reader_; }
  void setContext(std::string context) { context_ = std::move(context); }

  /// The value of `key`, null when absent or JSON null.
  const llvm::json::Value *get(llvm::StringRef key) const;
  bool has(llvm::StringRef key) const { return get(key) != nullptr; }
  /// A nested object (required).
  ObjectView child(llvm::StringRef key) const;

  [[noreturn]] void fail(const llvm::Twine &msg) const;
  [[noreturn]] void failField(llvm::StringRef key,
                              const llvm::Twine &msg) const;

  int64_t getInt(llvm::StringRef key) const;
  int64_t getInt(llvm::StringRef key, int64_t dflt) const;
  double getNumber(llvm::StringRef key) const;
  double getNumber(llvm::StringRef key, double dflt) const;
  std::optional<double> getOptNumber(llvm::StringRef key) const;
  bool getBool(llvm::StringRef key, bool dflt) const;
  std::string getString(llvm::StringRef key) const;
  std::string getString(llvm::StringRef key, llvm::StringRef dflt) const;
  /// An int or a [h, w] list (kernel_size, strides, pool_size).
  Size2 getSize2(llvm::StringRef key, std::optional<Size2> dflt) const;
  std::optional<Size2> getOptSize2(llvm::StringRef key) const;
  /// A list of ints; null entries (Keras's None) become -1.
  Shape getShape(llvm::StringRef key) const;

private:
  SpecReader &reader_;
  const llvm::json::Object &object_;
  JsonPath path_;
  std::string context_;
};

} // namespace keras
} // namespace kcc

#endif // KCC_FRONTEND_KERAS_SPECREADER_H
