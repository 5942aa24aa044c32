//===- PythonJson.h - JSON as Python's json module writes it ----*- C++ -*-===//
//
// Keras reads config.json with Python's json module and checks types:
// SGD(momentum=0) fails `isinstance(momentum, float)`. llvm::json prints a
// double that holds an integer as one ("0") and others with 17 digits
// ("71.134876000000006"); this writer prints every double as a Python
// float in its shortest round-trip form ("0.0", "71.134876", "1e-07").
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_KERAS_PYTHONJSON_H
#define KCC_FRONTEND_KERAS_PYTHONJSON_H

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace kcc {
namespace keras {

/// `value` as a JSON number Python reads back as a float: the shortest
/// text that round-trips, with ".0" added to integers; NaN and Infinity as
/// Python's json writes them.
std::string pythonFloatText(double value);

/// `value` compact (or indented by `indent`), object keys sorted (as
/// llvm::json prints them), its doubles by pythonFloatText. An integer
/// stored as a double prints as a float unless it is negative (llvm::json
/// does not tell those apart).
void writePythonJson(llvm::raw_ostream &os, const llvm::json::Value &value,
                     unsigned indent = 0);
std::string pythonJson(const llvm::json::Value &value);

} // namespace keras
} // namespace kcc

#endif // KCC_FRONTEND_KERAS_PYTHONJSON_H
