//===- LossesTest.cpp - Loss and metric values and gradients --------------===//
//
// Each loss of kc-build-train-step against a hand-computed Keras 3 reference,
// for both from_logits settings. The model is `pred = w + x` with x = 0, so
// the step's loss is the loss of `w`, and one SGD step with lr = 1 exposes
// the gradient (g = w - w') to compare with the derivative worked out by
// hand below. f64 throughout, so the tolerances are tight.
//
//===----------------------------------------------------------------------===//

#include "TrainStepHarness.h"

#include <cmath>

using namespace kcc;
using namespace kcc::testing;

namespace {

constexpr int64_t B = 4, C = 3;
constexpr double kEps = 1e-7;

const char *kIdentityModel = R"mlir(
func.func @forward(%w: tensor<4x3xf64> {kc.name = "w", kc.trainable = true},
                   %x: tensor<4x3xf64> {kc.input = 0 : i64}) -> tensor<4x3xf64> {
  %y = kc.add %w, %x : tensor<4x3xf64>
  return %y : tensor<4x3xf64>
}
)mlir";

using Matrix = std::vector<double>; // B x C, row-major

double clip(double p) { return std::min(std::max(p, kEps), 1.0 - kEps); }

std::vector<double> softmaxRow(const double *z) {
  double m = *std::max_element(z, z + C), s = 0;
  std::vector<double> p(C);
  for (int64_t j = 0; j < C; ++j)
    s += p[j] = std::exp(z[j] - m);
  for (double &v : p)
    v /= s;
  return p;
}

struct Reference {
  double loss = 0;
  Matrix grad = Matrix(B * C, 0.0);
};

/// Categorical crossentropy of soft targets `t` (rows sum to 1), Keras 3:
/// from logits -sum t log_softmax(z); from probabilities p is first divided
/// by its row sum, then clipped. Gradient w.r.t. the prediction.
Reference categorical(const Matrix &pred, const Matrix &t, bool fromLogits) {
  Reference r;
  for (int64_t i = 0; i < B; ++i) {
    const double *z = &pred[i * C];
    if (fromLogits) {
      std::vector<double> p = softmaxRow(z);
      for (int64_t j = 0; j < C; ++j) {
        r.loss -= t[i * C + j] * std::log(p[j]) / B;
        r.grad[i * C + j] = (p[j] - t[i * C + j]) / B;
      }
      continue;
    }
    double s = 0;
    for (int64_t j = 0; j < C; ++j)
      s += z[j];
    // d/dp_k of -sum_j t_j log(p_j / s) = -(t_k / p_k - sum_j t_j / s),
    // where the clip is inactive (its gradient is zero where active).
    double sumActive = 0;
    for (int64_t j = 0; j < C; ++j) {
      double q = z[j] / s;
      r.loss -= t[i * C + j] * std::log(clip(q)) / B;
      if (clip(q) == q)
        sumActive += t[i * C + j];
    }
    for (int64_t k = 0; k < C; ++k) {
      double q = z[k] / s;
      double own = clip(q) == q ? t[i * C + k] / z[k] : 0.0;
      r.grad[i * C + k] = -(own - sumActive / s) / B;
    }
  }
  return r;
}

Matrix oneHot(const std::vector<int32_t> &labels) {
  Matrix t(B * C, 0.0);
  for (int64_t i = 0; i < B; ++i)
    t[i * C + labels[i]] = 1.0;
  return t;
}

Reference binary(const Matrix &pred, const Matrix &z, bool fromLogits) {
  Reference r;
  const double n = B * C;
  for (int64_t k = 0; k < B * C; ++k) {
    double x = pred[k];
    if (fromLogits) {
      double sig = 1.0 / (1.0 + std::exp(-x));
      r.loss += -(z[k] * std::log(sig) + (1 - z[k]) * std::log(1 - sig)) / n;
      r.grad[k] = (sig - z[k]) / n;
    } else {
      double p = clip(x);
      r.loss += -(z[k] * std::log(p) + (1 - z[k]) * std::log(1 - p)) / n;
      r.grad[k] = p == x ? -(z[k] / p - (1 - z[k]) / (1 - p)) / n : 0.0;
    }
  }
  return r;
}

Reference meanSquared(const Matrix &pred, const Matrix &y) {
  Reference r;
  const double n = B * C;
  for (int64_t k = 0; k < B * C; ++k) {
    r.loss += (y[k] - pred[k]) * (y[k] - pred[k]) / n;
    r.grad[k] = 2 * (pred[k] - y[k]) / n;
  }
  return r;
}

/// Runs one SGD step (lr = 1) of `pred = w` and checks the loss and the
/// gradient against `ref`.
void expectLossAndGradient(const TrainingConfig &options, const Matrix &pred,
                           const NDArray &target, const Reference &ref) {
  TrainStepRunner runner(kIdentityModel, options);
  ASSERT_TRUE(runner.ok());
  runner.params = {NDArray::fromVector({B, C}, pred, DType::F64)};
  NDArray x = NDArray::zeros({B, C}, DType::F64);
  std::vector<double> logs = runner.run(1.0, x, target);
  EXPECT_NEAR(logs[0], ref.loss, 1e-12 * std::max(1.0, std::abs(ref.loss)))
      << lossName(options.loss.kind).str()
      << " from_logits=" << options.loss.fromLogits;
  std::vector<double> w = runner.params[0].toVector();
  for (int64_t k = 0; k < B * C; ++k)
    EXPECT_NEAR(pred[k] - w[k], ref.grad[k], 1e-10)
        << lossName(options.loss.kind).str()
        << " from_logits=" << options.loss.fromLogits << " element " << k;
}

// Logits of mixed sign, none at a kink (0) of relu/abs; "probabilities" that do
// not sum to one (Keras renormalizes them) with one true-class entry far below
// the clip floor.
const Matrix kLogits = {2.0, -1.0, 0.5,  -0.3, 0.8,  0.1,
                        1.5, 1.4,  -2.0, 0.2,  -0.7, 3.0};
const Matrix kProbs = {0.5, 0.2,  0.2, 0.1,  0.6,  0.2,
                       0.7, 1e-9, 0.3, 0.25, 0.35, 0.5};
// Row 2 is misclassified by kLogits (1.4 < 1.5), the others are right.
const std::vector<int32_t> kLabels = {0, 1, 1, 2};

NDArray labelArray() {
  NDArray y = NDArray::zeros({B}, DType::I32);
  for (int64_t i = 0; i < B; ++i)
    y.set(i, kLabels[i]);
  return y;
}

TEST(Losses, SparseCategoricalCrossentropyFromLogits) {
  TrainingConfig o = sgdConfig();
  o.loss.fromLogits = true;
  expectLossAndGradient(o, kLogits, labelArray(),
                        categorical(kLogits, oneHot(kLabels), true));
}

TEST(Losses, SparseCategoricalCrossentropyFromProbabilities) {
  TrainingConfig o = sgdConfig();
  // Row 2's true class is clipped: its term is -log(1e-7), no gradient.
  expectLossAndGradient(o, kProbs, labelArray(),
                        categorical(kProbs, oneHot(kLabels), false));
}

TEST(Losses, CategoricalCrossentropySoftTargets) {
  const Matrix soft = {0.7, 0.2, 0.1, 0.0, 1.0, 0.0,
                       0.3, 0.3, 0.4, 0.1, 0.1, 0.8};
  for (bool fromLogits : {true, false}) {
    TrainingConfig o = sgdConfig();
    o.loss.kind = LossKind::CategoricalCrossentropy;
    o.loss.fromLogits = fromLogits;
    const Matrix &pred = fromLogits ? kLogits : kProbs;
    expectLossAndGradient(o, pred,
                          NDArray::fromVector({B, C}, soft, DType::F64),
                          categorical(pred, soft, fromLogits));
  }
}

TEST(Losses, BinaryCrossentropy) {
  const Matrix z = {1, 0, 1, 0, 0, 1, 1, 1, 0, 0, 1, 0};
  // Probabilities in (0, 1) plus one above the clip ceiling.
  Matrix probs = {0.9, 0.1,  0.6,  0.4,  0.3, 0.8,
                  1.0, 0.55, 0.05, 0.45, 0.7, 0.2};
  for (bool fromLogits : {true, false}) {
    TrainingConfig o = sgdConfig();
    o.loss.kind = LossKind::BinaryCrossentropy;
    o.loss.fromLogits = fromLogits;
    const Matrix &pred = fromLogits ? kLogits : probs;
    expectLossAndGradient(o, pred, NDArray::fromVector({B, C}, z, DType::F64),
                          binary(pred, z, fromLogits));
  }
}

TEST(Losses, MeanSquaredError) {
  const Matrix y = {1.0,  -2.0, 0.5, 0.0, 0.3,  0.3,
                    -1.0, 2.0,  0.0, 4.0, -0.5, 1.0};
  TrainingConfig o = sgdConfig();
  o.loss.kind = LossKind::MeanSquaredError;
  expectLossAndGradient(o, kLogits, NDArray::fromVector({B, C}, y, DType::F64),
                        meanSquared(kLogits, y));
}

TEST(Metrics, SparseCategoricalAccuracy) {
  TrainingConfig o = sgdConfig();
  o.loss.fromLogits = true;
  o.metrics = {"accuracy"};
  TrainStepRunner runner(kIdentityModel, o);
  ASSERT_TRUE(runner.ok());
  ASSERT_EQ(runner.layout.metrics.size(), 1u);
  // Argmax per row of kLogits vs the labels, counted here.
  double correct = 0;
  for (int64_t i = 0; i < B; ++i) {
    const double *z = &kLogits[i * C];
    correct += (std::max_element(z, z + C) - z) == kLabels[i];
  }
  runner.params = {NDArray::fromVector({B, C}, kLogits, DType::F64)};
  std::vector<double> logs =
      runner.run(0.0, NDArray::zeros({B, C}, DType::F64), labelArray());
  EXPECT_DOUBLE_EQ(logs[1], correct / B);
  EXPECT_GT(correct, 0);
  EXPECT_LT(correct, B);
}

TEST(Metrics, BinaryAccuracyThresholdsAtHalf) {
  TrainingConfig o = sgdConfig();
  o.loss.kind = LossKind::BinaryCrossentropy;
  o.metrics = {"accuracy"};
  TrainStepRunner runner(kIdentityModel, o);
  ASSERT_TRUE(runner.ok());
  const Matrix p = {0.9, 0.1,  0.6,  0.4,  0.3, 0.8,
                    0.2, 0.55, 0.05, 0.45, 0.7, 0.2};
  const Matrix z = {1, 0, 1, 0, 0, 1, 1, 1, 0, 0, 1, 0};
  double correct = 0;
  for (int64_t k = 0; k < B * C; ++k)
    correct += (p[k] > 0.5 ? 1.0 : 0.0) == z[k];
  runner.params = {NDArray::fromVector({B, C}, p, DType::F64)};
  std::vector<double> logs =
      runner.run(0.0, NDArray::zeros({B, C}, DType::F64),
                 NDArray::fromVector({B, C}, z, DType::F64));
  EXPECT_DOUBLE_EQ(logs[1], correct / (B * C));
}

/// Keras's pearson_correlation and concordance_correlation of one row.
double pearsonRow(const double *t, const double *p) {
  double mt = 0, mp = 0;
  for (int64_t j = 0; j < C; ++j)
    mt += t[j] / C, mp += p[j] / C;
  double vt = 0, vp = 0, cov = 0;
  for (int64_t j = 0; j < C; ++j) {
    vt += (t[j] - mt) * (t[j] - mt) / C;
    vp += (p[j] - mp) * (p[j] - mp) / C;
    cov += (t[j] - mt) * (p[j] - mp) / C;
  }
  return cov / (std::sqrt(vt) * std::sqrt(vp));
}

double concordanceRow(const double *t, const double *p) {
  double mt = 0, mp = 0;
  for (int64_t j = 0; j < C; ++j)
    mt += t[j] / C, mp += p[j] / C;
  double vt = 0, vp = 0, ratio = 0;
  for (int64_t j = 0; j < C; ++j) {
    vt += (t[j] - mt) * (t[j] - mt) / C;
    vp += (p[j] - mp) * (p[j] - mp) / C;
  }
  double norm = vt + vp + (mt - mp) * (mt - mp) + kEps;
  for (int64_t j = 0; j < C; ++j) // Keras centres t on p's mean here
    ratio += 2 * (t[j] - mp) * (p[j] - mp) / norm / C;
  return ratio;
}

TEST(Metrics, CorrelationsPerRowAveraged) {
  TrainingConfig o = sgdConfig();
  o.loss.kind = LossKind::MeanSquaredError;
  o.metrics = {"pearson_correlation", "ConcordanceCorrelation"};
  TrainStepRunner runner(kIdentityModel, o);
  ASSERT_TRUE(runner.ok());
  const Matrix p = {0.9, 0.1,  0.6,  0.4, 0.3,  0.8,
                    0.2, 0.55, 0.05, 1.5, -0.7, 0.2};
  Matrix t = {1.0, 0.2, 0.3, -0.5, 0.4, 0.9, 0.1, 0.0, 0.7, 2.0, 1.0, -1.0};
  double pearson = 0, concordance = 0;
  for (int64_t i = 0; i < B; ++i) {
    pearson += pearsonRow(&t[i * C], &p[i * C]) / B;
    concordance += concordanceRow(&t[i * C], &p[i * C]) / B;
  }
  runner.params = {NDArray::fromVector({B, C}, p, DType::F64)};
  std::vector<double> logs =
      runner.run(0.0, NDArray::zeros({B, C}, DType::F64),
                 NDArray::fromVector({B, C}, t, DType::F64));
  ASSERT_EQ(logs.size(), 3u);
  EXPECT_NEAR(logs[1], pearson, 1e-12);
  EXPECT_NEAR(logs[2], concordance, 1e-12);
  // A constant row: Pearson's 0/0 (no epsilon, as Keras) makes the batch's
  // value NaN; the concordance's epsilon keeps it finite.
  t[0] = t[1] = t[2] = 0.5;
  logs = runner.run(0.0, NDArray::zeros({B, C}, DType::F64),
                    NDArray::fromVector({B, C}, t, DType::F64));
  EXPECT_TRUE(std::isnan(logs[1]));
  EXPECT_TRUE(std::isfinite(logs[2]));
}

} // namespace
