//===- PythonFormat.cpp - str.format and repr(float), for file names ------===//
//
// ModelCheckpoint's filepath is a Python format string
// ("weights.{epoch:02d}-{val_loss:.2f}.keras"): the standard format spec
// [[fill]align][sign][0][width][.precision][type] with the types d, f, F,
// e, E, g, G, % and none, as format() applies them to an int or a float.
//
//===----------------------------------------------------------------------===//

#include "frontend/training/Callbacks.h"
#include "runtime/Error.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

using namespace kcc;

namespace {
/// Python's repr layout of the shortest digits that read back as `value`
/// in its own type (double for Python's float, float for numpy's float32).
/// Python writes an exponent when the digits' exponent is below -4 or from
/// 16; numpy's float32 (`byValue`) when the value itself is below 1e-4 or
/// from 1e6 (float32(0.0001) is "1e-04", float32(1e6) "1e+06").
template <typename T> std::string shortestRepr(T value, bool byValue) {
  if (std::isnan(value))
    return "nan";
  if (std::isinf(value))
    return value > 0 ? "inf" : "-inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), value,
                         std::chars_format::scientific);
  std::string sci(buf, r.ptr);
  bool negative = sci[0] == '-';
  if (negative)
    sci.erase(0, 1);
  size_t e = sci.find('e');
  std::string mantissa = sci.substr(0, e);
  int exponent = std::stoi(sci.substr(e + 1));
  std::string digits = mantissa;
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  std::string out;
  double magnitude = std::fabs(static_cast<double>(value));
  bool scientific = byValue
                        ? value != 0 && (magnitude < 1e-4 || magnitude >= 1e6)
                        : exponent < -4 || exponent >= 16;
  if (scientific) {
    char ex[8];
    std::snprintf(ex, sizeof(ex), "e%c%02d", exponent < 0 ? '-' : '+',
                  std::abs(exponent));
    out = mantissa + ex;
  } else if (exponent >= 0) {
    if (digits.size() < size_t(exponent) + 1)
      digits.append(exponent + 1 - digits.size(), '0');
    std::string frac = digits.substr(exponent + 1);
    out = digits.substr(0, exponent + 1) + "." + (frac.empty() ? "0" : frac);
  } else {
    out = "0." + std::string(-exponent - 1, '0') + digits;
  }
  return (negative ? "-" : "") + out;
}
} // namespace

std::string kcc::pythonFloatRepr(double value) {
  return shortestRepr(value, /*byValue=*/false);
}

std::string kcc::numpyFloat32Str(float value) {
  return shortestRepr(value, /*byValue=*/true);
}

namespace {

struct Spec {
  char fill = ' ', align = 0, sign = '-', type = 0;
  bool zero = false;
  int width = 0, precision = -1;
};

Spec parseSpec(const std::string &s, const std::string &field) {
  Spec spec;
  size_t i = 0;
  auto isAlign = [](char c) {
    return c == '<' || c == '>' || c == '^' || c == '=';
  };
  if (s.size() >= 2 && isAlign(s[1])) {
    spec.fill = s[0];
    spec.align = s[1];
    i = 2;
  } else if (!s.empty() && isAlign(s[0])) {
    spec.align = s[0];
    i = 1;
  }
  if (i < s.size() && (s[i] == '+' || s[i] == '-' || s[i] == ' '))
    spec.sign = s[i++];
  if (i < s.size() && s[i] == '0') {
    spec.zero = true;
    ++i;
  }
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])))
    spec.width = spec.width * 10 + (s[i++] - '0');
  if (i < s.size() && s[i] == '.') {
    ++i;
    spec.precision = 0;
    if (i >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i])))
      throw Error("format field '" + field +
                  "': format specifier missing "
                  "precision");
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])))
      spec.precision = spec.precision * 10 + (s[i++] - '0');
  }
  if (i < s.size())
    spec.type = s[i++];
  if (i != s.size() || (spec.type && std::string("dfFeEgG%").find(spec.type) ==
                                         std::string::npos))
    throw Error("format field '" + field + "': invalid format specifier '" + s +
                "'");
  return spec;
}

std::string formatValue(double v, bool isInt, const Spec &spec,
                        const std::string &field) {
  std::string body;
  double magnitude = std::fabs(v);
  bool negative = std::signbit(v) && !std::isnan(v);
  char type = spec.type;
  if (isInt && (type == 0 || type == 'd')) {
    body = std::to_string(static_cast<long long>(std::llround(magnitude)));
    if (spec.precision >= 0)
      throw Error("format field '" + field +
                  "': precision not allowed in integer format specifier");
  } else if (type == 'd') {
    throw Error("format field '" + field +
                "': unknown format code 'd' for a float value");
  } else if (type == 0 && spec.precision < 0) {
    body = pythonFloatRepr(magnitude);
  } else {
    char t = type == 0 ? 'g' : type;
    int precision = spec.precision < 0 ? 6 : spec.precision;
    double x = magnitude;
    const char *suffix = "";
    if (t == '%') {
      x *= 100;
      t = 'f';
      suffix = "%";
    }
    char fmt[16], buf[512];
    std::snprintf(fmt, sizeof(fmt), "%%.%d%c", precision, t);
    std::snprintf(buf, sizeof(buf), fmt, x);
    body = std::string(buf) + suffix;
  }
  std::string sign = negative           ? "-"
                     : spec.sign == '+' ? "+"
                     : spec.sign == ' ' ? " "
                                        : "";
  int pad = spec.width - static_cast<int>(sign.size() + body.size());
  if (pad <= 0)
    return sign + body;
  char align = spec.align ? spec.align : (spec.zero ? '=' : '>');
  char fill = spec.zero && !spec.align ? '0' : spec.fill;
  switch (align) {
  case '<':
    return sign + body + std::string(pad, fill);
  case '^':
    return std::string(pad / 2, fill) + sign + body +
           std::string(pad - pad / 2, fill);
  case '=':
    return sign + std::string(pad, fill) + body;
  default:
    return std::string(pad, fill) + sign + body;
  }
}

} // namespace

std::string
kcc::formatPythonPattern(const std::string &pattern,
                         const std::map<std::string, double> &values,
                         const std::vector<std::string> &intKeys) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c == '}') {
      if (i + 1 < pattern.size() && pattern[i + 1] == '}') {
        out += '}';
        ++i;
        continue;
      }
      throw Error("'" + pattern +
                  "': single '}' encountered in the format "
                  "string");
    }
    if (c != '{') {
      out += c;
      continue;
    }
    if (i + 1 < pattern.size() && pattern[i + 1] == '{') {
      out += '{';
      ++i;
      continue;
    }
    size_t close = pattern.find('}', i);
    if (close == std::string::npos)
      throw Error("'" + pattern + "': unmatched '{' in the format string");
    std::string field = pattern.substr(i + 1, close - i - 1);
    std::string name = field, spec;
    if (size_t colon = field.find(':'); colon != std::string::npos) {
      name = field.substr(0, colon);
      spec = field.substr(colon + 1);
    }
    auto it = values.find(name);
    if (it == values.end()) {
      std::string known;
      for (const auto &[k, v] : values)
        known += (known.empty() ? "" : ", ") + k;
      throw Error("'" + pattern + "': no value '" + name +
                  "' to format (the logs hold: " + known + ")");
    }
    bool isInt =
        std::find(intKeys.begin(), intKeys.end(), name) != intKeys.end();
    out += formatValue(it->second, isInt, parseSpec(spec, name), name);
    i = close;
  }
  return out;
}
