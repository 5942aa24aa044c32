//===- KerasFixtureUtil.h - Keras fixtures and their 5 steps ----*- C++ -*-===//
//
// What the parity tests against Keras's own runs (KerasParityTest,
// LayerParityTest, OptimizerParityTest) share: the fixtures under
// tests/fixtures/keras and their JSON records, the batch Keras trained on,
// the Adam configuration a record names, and the check of kcc's per-step
// losses against Keras's.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_TESTS_E2E_KERASFIXTUREUTIL_H
#define KCC_TESTS_E2E_KERASFIXTUREUTIL_H

#include "tests/e2e/E2ETestUtil.h"

#include "frontend/training/Jit.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace kcc {
namespace e2e {

/// tests/fixtures/keras/`name` (`name` may name a subfolder).
inline std::string kerasFixture(const std::string &name) {
  return std::string(KCC_KERAS_FIXTURES) + "/" + name;
}

/// The JSON document kerasFixture(`name`); throws naming the file when it
/// cannot be read or parsed.
inline llvm::json::Value readFixtureJson(const std::string &name) {
  std::string path = kerasFixture(name);
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf)
    throw Error("cannot read " + llvm::sys::path::filename(path).str());
  llvm::Expected<llvm::json::Value> v = llvm::json::parse((*buf)->getBuffer());
  if (!v)
    throw Error(llvm::toString(v.takeError()));
  return std::move(*v);
}

/// The numbers of a JSON array.
inline std::vector<double> numbers(const llvm::json::Array &array) {
  std::vector<double> out;
  for (const llvm::json::Value &v : array)
    out.push_back(*v.getAsNumber());
  return out;
}

/// The batch Keras trained on: the first 32 Fashion-MNIST training images
/// and their labels, in order.
inline void kerasBatch(NDArray &x, NDArray &y) {
  BatchIterator batches(fashionMnist().train, 32, /*shuffle=*/false,
                        /*seed=*/0);
  batches.startEpoch(0);
  batches.batch(0, x, y);
}

/// Batch 32, Adam with the record's "optimizer" hyperparameters, and the
/// record's "loss" and "from_logits", run in `mode`.
inline TrainingConfig kerasAdamConfig(const llvm::json::Object &record,
                                      ExecMode mode) {
  const llvm::json::Object &opt = *record.getObject("optimizer");
  TrainingConfig o;
  o.batch = 32;
  o.optimizer.kind = OptimizerKind::Adam;
  o.optimizer.learningRate = *opt.getNumber("learning_rate");
  o.optimizer.beta1 = *opt.getNumber("beta_1");
  o.optimizer.beta2 = *opt.getNumber("beta_2");
  o.optimizer.epsilon = *opt.getNumber("epsilon");
  o.loss.kind = llvm::cantFail(parseLoss(*record.getString("loss")));
  o.loss.fromLogits = *record.getBoolean("from_logits");
  o.mode = mode;
  return o;
}

/// jit() without its log.
inline Executable jitQuietly(Model &model, const TrainingConfig &config) {
  JitOptions quiet;
  quiet.log = nullptr;
  return jit(model, config, quiet);
}

/// The worst errors of kcc's losses against Keras's.
struct LossErrors {
  double relative = 0;
  double absolute = 0;
};

/// One exe.step(x, y) per loss Keras recorded; expects each loss within
/// 1e-4 relative of Keras's (failures name `name` and the step).
inline LossErrors expectKerasLosses(Executable &exe, const NDArray &x,
                                    const NDArray &y,
                                    const std::vector<double> &expected,
                                    const std::string &name) {
  LossErrors worst;
  for (size_t s = 0; s < expected.size(); ++s) {
    StepResult r = exe.step(x, y);
    double abs = std::abs(r.loss - expected[s]);
    double rel = abs / std::abs(expected[s]);
    worst.relative = std::max(worst.relative, rel);
    worst.absolute = std::max(worst.absolute, abs);
    EXPECT_LE(rel, 1e-4) << name << " step " << s << ": Keras " << expected[s]
                         << ", kcc " << r.loss;
  }
  return worst;
}

/// Worst |kcc - keras| over Keras's rows of predictions; expects each
/// element within 1e-5 (failures name `what`, the row and the column).
inline void flattenNumbers(const llvm::json::Value &v,
                           std::vector<double> &out) {
  if (const llvm::json::Array *a = v.getAsArray()) {
    for (const llvm::json::Value &item : *a)
      flattenNumbers(item, out);
    return;
  }
  out.push_back(*v.getAsNumber());
}

/// Keras's predict on the first rows (nested lists, any rank) against
/// kcc's, element by element, within 1e-5; returns the worst difference.
inline double comparePredict(const NDArray &kcc, const llvm::json::Array &keras,
                             const std::string &what) {
  double worst = 0;
  int64_t perRow = kcc.rank() > 0 ? kcc.numel() / kcc.shape()[0] : 1;
  for (size_t r = 0; r < keras.size(); ++r) {
    std::vector<double> row;
    flattenNumbers(keras[r], row);
    EXPECT_EQ(static_cast<int64_t>(row.size()), perRow);
    for (size_t c = 0; c < row.size(); ++c) {
      double want = row[c];
      double got = kcc.at(static_cast<int64_t>(r) * perRow + c);
      double err = std::abs(got - want);
      worst = std::max(worst, err);
      EXPECT_LE(err, 1e-5) << what << " row " << r << " element " << c
                           << ": Keras " << want << ", kcc " << got;
    }
  }
  return worst;
}

} // namespace e2e
} // namespace kcc

#endif // KCC_TESTS_E2E_KERASFIXTUREUTIL_H
