//===- SpecReader.cpp - Located access to Keras JSON specs ----------------===//

#include "frontend/keras/SpecReader.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/Regex.h"

#include <cmath>
#include <deque>

using namespace kcc;
using namespace kcc::keras;
namespace json = llvm::json;

JsonPath JsonPath::field(llvm::StringRef name) const {
  JsonPath p = *this;
  p.segments_.push_back({name.str(), 0});
  return p;
}

JsonPath JsonPath::index(size_t i) const {
  JsonPath p = *this;
  p.segments_.push_back({"", i});
  return p;
}

std::string SpecReader::where(const JsonPath &path) {
  // json::Path segments point at their parents, so the chain lives in a
  // deque (stable addresses) while the root renders it.
  std::deque<json::Path> chain;
  chain.emplace_back(root_);
  for (const JsonPath::Segment &s : path.segments())
    chain.push_back(s.field.empty() ? chain.back().index(s.index)
                                    : chain.back().field(s.field));
  chain.back().report("@");
  std::string rendered = llvm::toString(root_.getError()); // "@ at $.a[1]"
  size_t at = rendered.find(" at ");
  return at == std::string::npos ? "$" : rendered.substr(at + 4);
}

std::string SpecReader::message(const JsonPath &path,
                                const std::string &context,
                                const llvm::Twine &msg) {
  std::string text = source_ + ": " + where(path) + ": ";
  if (!context.empty())
    text += context + ": ";
  return text + msg.str();
}

void SpecReader::fail(const JsonPath &path, const std::string &context,
                      const llvm::Twine &msg) {
  throw Error(message(path, context, msg));
}

namespace {
/// Throws "<source>:<line>:<col>: ..." at the first '[' or '{' nested deeper
/// than kMaxJsonDepth. An iterative scan that skips string literals, run
/// before llvm::json, whose parser and destructor recurse once per level.
void checkJsonDepth(llvm::StringRef text, llvm::StringRef source) {
  unsigned depth = 0, line = 1;
  size_t lineStart = 0;
  bool inString = false;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i; // An escaped character, '"' included.
      else if (c == '"')
        inString = false;
      continue;
    }
    switch (c) {
    case '"':
      inString = true;
      break;
    case '\n':
      ++line;
      lineStart = i + 1;
      break;
    case '[':
    case '{':
      if (++depth > kMaxJsonDepth)
        throw Error(source.str() + ":" + std::to_string(line) + ":" +
                    std::to_string(i - lineStart + 1) +
                    ": JSON nested deeper than " +
                    std::to_string(kMaxJsonDepth) + " levels");
      break;
    case ']':
    case '}':
      if (depth > 0) // Unbalanced text is json::parse's to report.
        --depth;
      break;
    default:
      break;
    }
  }
}
} // namespace

json::Value keras::parseJson(llvm::StringRef text, llvm::StringRef source) {
  checkJsonDepth(text, source);
  llvm::Expected<json::Value> value = json::parse(text);
  if (value)
    return std::move(*value);
  // llvm::json reports "[line:col, byte=N]: message"; say it compiler-style.
  std::string msg = llvm::toString(value.takeError());
  llvm::SmallVector<llvm::StringRef, 4> m;
  if (llvm::Regex("^\\[([0-9]+):([0-9]+), byte=[0-9]+\\]: (.*)$")
          .match(msg, &m))
    throw Error(source.str() + ":" + m[1].str() + ":" + m[2].str() +
                ": invalid JSON: " + m[3].str());
  throw Error(source.str() + ": invalid JSON: " + msg);
}

//===----------------------------------------------------------------------===//
// ObjectView
//===----------------------------------------------------------------------===//

namespace {
const char *kindName(const json::Value &v) {
  switch (v.kind()) {
  case json::Value::Null:
    return "null";
  case json::Value::Boolean:
    return "a boolean";
  case json::Value::Number:
    return "a number";
  case json::Value::String:
    return "a string";
  case json::Value::Array:
    return "an array";
  case json::Value::Object:
    return "an object";
  }
  return "a value";
}

/// An integer, also from a float with an integral value (1.0).
std::optional<int64_t> asInt(const json::Value &v) {
  if (std::optional<int64_t> i = v.getAsInteger())
    return i;
  if (std::optional<double> d = v.getAsNumber())
    if (std::isfinite(*d) && std::trunc(*d) == *d && std::fabs(*d) < 9e15)
      return static_cast<int64_t>(*d);
  return std::nullopt;
}
} // namespace

ObjectView ObjectView::of(SpecReader &reader, const json::Value &value,
                          JsonPath path, std::string context,
                          llvm::StringRef what) {
  const json::Object *obj = value.getAsObject();
  if (!obj)
    reader.fail(path, context,
                "expected " + what + " (an object), got " + kindName(value));
  return ObjectView(reader, *obj, std::move(path), std::move(context));
}

const json::Value *ObjectView::get(llvm::StringRef key) const {
  const json::Value *v = object_.get(key);
  return v && v->kind() != json::Value::Null ? v : nullptr;
}

ObjectView ObjectView::child(llvm::StringRef key) const {
  const json::Value *v = get(key);
  if (!v)
    failField(key, "missing required field '" + key + "'");
  return of(reader_, *v, path_.field(key), context_, "'" + key.str() + "'");
}

void ObjectView::fail(const llvm::Twine &msg) const {
  reader_.fail(path_, context_, msg);
}

void ObjectView::failField(llvm::StringRef key, const llvm::Twine &msg) const {
  reader_.fail(path_.field(key), context_, msg);
}

int64_t ObjectView::getInt(llvm::StringRef key) const {
  const json::Value *v = get(key);
  if (!v)
    failField(key, "missing required field '" + key + "'");
  std::optional<int64_t> i = asInt(*v);
  if (!i)
    failField(key, "'" + key + "' must be an integer, got " + kindName(*v));
  return *i;
}

int64_t ObjectView::getInt(llvm::StringRef key, int64_t dflt) const {
  return has(key) ? getInt(key) : dflt;
}

double ObjectView::getNumber(llvm::StringRef key) const {
  const json::Value *v = get(key);
  if (!v)
    failField(key, "missing required field '" + key + "'");
  std::optional<double> d = v->getAsNumber();
  if (!d)
    failField(key, "'" + key + "' must be a number, got " + kindName(*v));
  return *d;
}

double ObjectView::getNumber(llvm::StringRef key, double dflt) const {
  return has(key) ? getNumber(key) : dflt;
}

std::optional<double> ObjectView::getOptNumber(llvm::StringRef key) const {
  if (!has(key))
    return std::nullopt;
  return getNumber(key);
}

bool ObjectView::getBool(llvm::StringRef key, bool dflt) const {
  const json::Value *v = get(key);
  if (!v)
    return dflt;
  std::optional<bool> b = v->getAsBoolean();
  if (!b)
    failField(key, "'" + key + "' must be true or false, got " + kindName(*v));
  return *b;
}

std::string ObjectView::getString(llvm::StringRef key) const {
  const json::Value *v = get(key);
  if (!v)
    failField(key, "missing required field '" + key + "'");
  std::optional<llvm::StringRef> s = v->getAsString();
  if (!s)
    failField(key, "'" + key + "' must be a string, got " + kindName(*v));
  return s->str();
}

std::string ObjectView::getString(llvm::StringRef key,
                                  llvm::StringRef dflt) const {
  return has(key) ? getString(key) : dflt.str();
}

std::optional<Size2> ObjectView::getOptSize2(llvm::StringRef key) const {
  const json::Value *v = get(key);
  if (!v)
    return std::nullopt;
  if (std::optional<int64_t> i = asInt(*v))
    return Size2(*i);
  const json::Array *a = v->getAsArray();
  std::optional<int64_t> h, w;
  if (a && a->size() == 2) {
    h = asInt((*a)[0]);
    w = asInt((*a)[1]);
  }
  if (!h || !w)
    failField(key, "'" + key + "' must be an integer or a list of 2 integers");
  return Size2(*h, *w);
}

Size2 ObjectView::getSize2(llvm::StringRef key,
                           std::optional<Size2> dflt) const {
  if (std::optional<Size2> s = getOptSize2(key))
    return *s;
  if (!dflt)
    failField(key, "missing required field '" + key + "'");
  return *dflt;
}

Shape ObjectView::getShape(llvm::StringRef key) const {
  const json::Value *v = get(key);
  if (!v)
    failField(key, "missing required field '" + key + "'");
  const json::Array *a = v->getAsArray();
  if (!a)
    failField(key, "'" + key + "' must be a list of dimensions, got " +
                       kindName(*v));
  Shape shape;
  for (auto [i, d] : llvm::enumerate(*a)) {
    if (d.kind() == json::Value::Null) {
      shape.push_back(-1);
      continue;
    }
    std::optional<int64_t> n = asInt(d);
    if (!n)
      reader_.fail(path_.field(key).index(i), context_,
                   "dimensions must be integers or null, got " +
                       llvm::Twine(kindName(d)));
    shape.push_back(*n);
  }
  return shape;
}
