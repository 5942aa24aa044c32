//===- PythonJson.cpp - JSON as Python's json module writes it ------------===//

#include "frontend/keras/PythonJson.h"

#include "llvm/ADT/STLExtras.h"

#include <charconv>
#include <cmath>

using namespace kcc;
namespace json = llvm::json;

std::string keras::pythonFloatText(double value) {
  if (std::isnan(value))
    return "NaN";
  if (std::isinf(value))
    return value > 0 ? "Infinity" : "-Infinity";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), value);
  std::string text(buf, r.ptr);
  if (text.find_first_of(".e") == std::string::npos)
    text += ".0";
  return text;
}

namespace {
void write(json::OStream &j, const json::Value &v) {
  switch (v.kind()) {
  case json::Value::Object: {
    const json::Object &o = *v.getAsObject();
    std::vector<llvm::StringRef> keys;
    for (const auto &kv : o)
      keys.push_back(kv.first);
    llvm::sort(keys);
    j.object([&] {
      for (llvm::StringRef k : keys)
        j.attributeBegin(k), write(j, *o.get(k)), j.attributeEnd();
    });
    return;
  }
  case json::Value::Array:
    j.array([&] {
      for (const json::Value &e : *v.getAsArray())
        write(j, e);
    });
    return;
  case json::Value::Number:
    // getAsUINT64 answers for integers alone, never for a double.
    if (v.getAsUINT64() || (v.getAsInteger() && *v.getAsInteger() < 0))
      j.value(v);
    else
      j.rawValue(keras::pythonFloatText(*v.getAsNumber()));
    return;
  default:
    j.value(v);
  }
}
} // namespace

void keras::writePythonJson(llvm::raw_ostream &os, const json::Value &value,
                            unsigned indent) {
  json::OStream j(os, indent);
  write(j, value);
}

std::string keras::pythonJson(const json::Value &value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  writePythonJson(os, value);
  return text;
}
