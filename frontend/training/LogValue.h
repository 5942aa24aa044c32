//===- LogValue.h - One value of Keras's logs -------------------*- C++ -*-===//
//
// A log value is a number, or the list of numbers a metric with several
// thresholds or classes gives (Precision(thresholds=[0.3, 0.7]),
// F1Score(average=None), R2Score(class_aggregation=None)), which Keras
// keeps as a numpy array in its logs and History. A number converts to
// double implicitly, so scalar users read logs as before:
//
//   double acc = trainer.evaluate(test).at("accuracy");
//   const kcc::LogValue &p = logs.at("precision");
//   if (p.isList()) for (double v : p.values()) ...
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_TRAINING_LOGVALUE_H
#define KCC_FRONTEND_TRAINING_LOGVALUE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <iosfwd>
#include <string>

namespace kcc {

class LogValue {
public:
  /// A number.
  LogValue(double number = 0) : values_{number} {}
  /// A list (one element stays a list, as Keras's array of shape [1] does).
  static LogValue list(llvm::ArrayRef<double> values);

  bool isList() const { return list_; }
  /// The number; throws kcc::Error for a list, naming its length.
  double number() const;
  operator double() const { return number(); }
  /// The list's elements, or the number alone.
  llvm::ArrayRef<double> values() const { return values_; }
  /// The elements' mean: what Keras's progress bar shows for a list.
  double mean() const;
  /// Python's str of the value as Keras's CSVLogger writes it: repr of a
  /// number ("0.8771"), a list as "[0.42857143, 0.5]" (each element
  /// rounded to float32 and printed as numpy's str of a float32).
  std::string str() const;

private:
  llvm::SmallVector<double, 1> values_;
  bool list_ = false;
};

/// str() (for test failure messages).
std::ostream &operator<<(std::ostream &os, const LogValue &value);

} // namespace kcc

#endif // KCC_FRONTEND_TRAINING_LOGVALUE_H
