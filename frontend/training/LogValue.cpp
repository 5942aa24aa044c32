//===- LogValue.cpp - One value of Keras's logs ---------------------------===//

#include "frontend/training/LogValue.h"
#include "frontend/training/Callbacks.h"
#include "runtime/Error.h"

#include <ostream>

using namespace kcc;

LogValue LogValue::list(llvm::ArrayRef<double> values) {
  LogValue v;
  v.values_.assign(values.begin(), values.end());
  v.list_ = true;
  return v;
}

double LogValue::number() const {
  if (list_)
    throw Error("a log value is a list of " + std::to_string(values_.size()) +
                " numbers (a metric with several thresholds or classes), "
                "not a number");
  return values_.front();
}

double LogValue::mean() const {
  if (values_.empty())
    return 0;
  double sum = 0;
  for (double v : values_)
    sum += v;
  return sum / values_.size();
}

std::string LogValue::str() const {
  if (!list_)
    return pythonFloatRepr(values_.front());
  // Keras's CSVLogger: f'"[{", ".join(map(str, k))}]"' of a float32 array.
  std::string out = "[";
  for (size_t i = 0; i < values_.size(); ++i)
    out += (i ? ", " : "") + numpyFloat32Str(static_cast<float>(values_[i]));
  return out + "]";
}

std::ostream &kcc::operator<<(std::ostream &os, const LogValue &value) {
  return os << value.str();
}
