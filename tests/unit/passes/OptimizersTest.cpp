//===- OptimizersTest.cpp - Optimizer updates against C++ references ------===//
//
// A linear softmax classifier z = x W + b + frozen (f64) trained by
// @train_step through the interpreter, against the same model trained by
// the Keras 3 update formulas written out below, with gradients from the
// closed form dL/dz = (softmax(z) - onehot(y)) / B. The reference shares no
// code with the compiler, so a wrong update or gradient shows up here.
//
//===----------------------------------------------------------------------===//

#include "TrainStepHarness.h"

#include "passes/Optimizers.h"

#include <cmath>
#include <functional>

using namespace kcc;
using namespace kcc::testing;

namespace {

constexpr int64_t B = 4, D = 3, C = 3;

const char *kLinearModel = R"mlir(
func.func @forward(%w: tensor<3x3xf64> {kc.name = "dense/kernel", kc.trainable = true},
                   %b: tensor<3xf64> {kc.name = "dense/bias", kc.trainable = true},
                   %f: tensor<3xf64> {kc.name = "frozen/bias", kc.trainable = false},
                   %x: tensor<4x3xf64> {kc.input = 0 : i64}) -> tensor<4x3xf64> {
  %0 = kc.matmul %x, %w : tensor<4x3xf64>, tensor<3x3xf64> -> tensor<4x3xf64>
  %1 = kc.broadcast_to %b : tensor<3xf64> -> tensor<4x3xf64>
  %2 = kc.broadcast_to %f : tensor<3xf64> -> tensor<4x3xf64>
  %3 = kc.add %0, %1 : tensor<4x3xf64>
  %4 = kc.add %3, %2 : tensor<4x3xf64>
  return %4 : tensor<4x3xf64>
}
)mlir";

const std::vector<double> kX = {0.5,  -1.2, 0.3, 1.0, 0.4,  -0.6,
                                -0.8, 0.9,  1.5, 0.2, -0.3, -1.1};
const std::vector<int32_t> kY = {2, 0, 1, 0};
const std::vector<double> kW0 = {0.1,  -0.2, 0.3, 0.05, 0.4,
                                 -0.1, -0.3, 0.2, 0.15};
const std::vector<double> kB0 = {0.01, -0.02, 0.03};
const std::vector<double> kFrozen = {0.5, -0.5, 0.25};

/// Parameters of the reference, flattened: W (9) then b (3).
using Params = std::vector<std::vector<double>>;

/// dL/dW and dL/db of mean sparse crossentropy of softmax(x W + b + f).
Params gradients(const Params &p) {
  const std::vector<double> &w = p[0], &b = p[1];
  std::vector<double> dz(B * C);
  for (int64_t i = 0; i < B; ++i) {
    double z[C], m = -1e300, s = 0;
    for (int64_t j = 0; j < C; ++j) {
      z[j] = b[j] + kFrozen[j];
      for (int64_t k = 0; k < D; ++k)
        z[j] += kX[i * D + k] * w[k * C + j];
      m = std::max(m, z[j]);
    }
    for (int64_t j = 0; j < C; ++j)
      s += z[j] = std::exp(z[j] - m);
    for (int64_t j = 0; j < C; ++j)
      dz[i * C + j] = (z[j] / s - (kY[i] == j ? 1.0 : 0.0)) / B;
  }
  Params g = {std::vector<double>(D * C, 0.0), std::vector<double>(C, 0.0)};
  for (int64_t i = 0; i < B; ++i)
    for (int64_t j = 0; j < C; ++j) {
      for (int64_t k = 0; k < D; ++k)
        g[0][k * C + j] += kX[i * D + k] * dz[i * C + j];
      g[1][j] += dz[i * C + j];
    }
  return g;
}

/// Keras 3 update of one scalar weight given its gradient, its slots and the
/// step t (1-based).
using Update =
    std::function<void(double &w, double g, std::vector<double> &s, int64_t t)>;

/// What Keras's apply() does between the gradients and the update steps
/// (clipping the gradients, decaying the params), at step t (1-based).
using Before = std::function<void(Params &p, Params &g, int64_t t)>;

/// Trains the reference `steps` times; each weight owns `numSlots` slots
/// starting at `slotInit`.
Params trainReference(int steps, int numSlots, const Update &update,
                      double slotInit = 0, const Before &before = {}) {
  Params p = {kW0, kB0};
  std::vector<std::vector<std::vector<double>>> slots;
  for (const auto &v : p)
    slots.emplace_back(v.size(), std::vector<double>(numSlots, slotInit));
  for (int t = 1; t <= steps; ++t) {
    Params g = gradients(p);
    if (before)
      before(p, g, t);
    for (size_t k = 0; k < p.size(); ++k)
      for (size_t e = 0; e < p[k].size(); ++e)
        update(p[k][e], g[k][e], slots[k][e], t);
  }
  return p;
}

/// The linear model under `o`'s optimizer; the model outputs logits.
std::unique_ptr<TrainStepRunner> makeRunner(TrainingConfig o) {
  o.loss.fromLogits = true;
  auto r = std::make_unique<TrainStepRunner>(kLinearModel, o);
  r->params = {NDArray::fromVector({D, C}, kW0, DType::F64),
               NDArray::fromVector({C}, kB0, DType::F64),
               NDArray::fromVector({C}, kFrozen, DType::F64)};
  return r;
}

NDArray inputs() { return NDArray::fromVector({B, D}, kX, DType::F64); }
NDArray labels() {
  NDArray y = NDArray::zeros({B}, DType::I32);
  for (int64_t i = 0; i < B; ++i)
    y.set(i, kY[i]);
  return y;
}

/// The learning rate as the step sees it: an f32 operand (as Keras's
/// learning-rate variable), widened to the f64 weights.
double asF32(double lr) { return static_cast<double>(static_cast<float>(lr)); }

/// Extra reference behaviour: slot starting values, the global state count,
/// the hook before the updates.
struct RefOptions {
  double slotInit = 0;
  unsigned globalState = 0;
  Before before;
};

void trainAndCompare(const TrainingConfig &o, double lr, int steps,
                     int numSlots, const Update &update, double tol,
                     const RefOptions &ref0 = {}) {
  std::unique_ptr<TrainStepRunner> r = makeRunner(o);
  ASSERT_TRUE(r->ok());
  ASSERT_EQ(r->layout.numOptimizerState, 2u * numSlots + ref0.globalState);
  for (int s = 0; s < steps; ++s)
    r->run(lr, inputs(), labels());
  EXPECT_EQ(r->iterations, steps);
  Params ref =
      trainReference(steps, numSlots, update, ref0.slotInit, ref0.before);
  for (size_t k = 0; k < ref.size(); ++k) {
    std::vector<double> got = r->params[k].toVector();
    for (size_t e = 0; e < got.size(); ++e)
      EXPECT_NEAR(got[e], ref[k][e], tol)
          << optimizerName(o.optimizer.kind).str() << " param " << k
          << " element " << e;
  }
  // The frozen param is passed through untouched.
  EXPECT_EQ(r->params[2].toVector(), kFrozen);
}

TEST(Optimizers, OneSgdStepIsWeightMinusLrTimesGradient) {
  TrainingConfig o = sgdConfig();
  std::unique_ptr<TrainStepRunner> r = makeRunner(o);
  ASSERT_TRUE(r->ok());
  EXPECT_EQ(r->layout.numOptimizerState, 0u);
  r->run(0.01, inputs(), labels());
  Params g = gradients({kW0, kB0});
  const double lr = asF32(0.01);
  std::vector<double> w = r->params[0].toVector(), b = r->params[1].toVector();
  for (int64_t e = 0; e < D * C; ++e)
    EXPECT_NEAR(w[e], kW0[e] - lr * g[0][e], 1e-15) << "kernel " << e;
  for (int64_t e = 0; e < C; ++e)
    EXPECT_NEAR(b[e], kB0[e] - lr * g[1][e], 1e-15) << "bias " << e;
  EXPECT_EQ(r->params[2].toVector(), kFrozen);
  EXPECT_EQ(r->iterations, 1);
}

TEST(Optimizers, FirstAdamStepMovesEachWeightByLearningRate) {
  TrainingConfig o = sgdConfig();
  o.optimizer.kind = OptimizerKind::Adam;
  std::unique_ptr<TrainStepRunner> r = makeRunner(o);
  ASSERT_TRUE(r->ok());
  r->run(1e-3, inputs(), labels());
  Params g = gradients({kW0, kB0});
  std::vector<double> w = r->params[0].toVector();
  for (int64_t e = 0; e < D * C; ++e) {
    // |step| = lr / (1 + eps / (sqrt(1 - b2) |g|)): lr to within 1e-3 for
    // the gradients of this model (all above 1e-2).
    ASSERT_GT(std::abs(g[0][e]), 1e-2);
    EXPECT_NEAR(w[e] - kW0[e], -1e-3 * (g[0][e] > 0 ? 1 : -1), 1e-6)
        << "kernel " << e;
  }
}

TEST(Optimizers, AdamTenStepsMatchReference) {
  TrainingConfig o = sgdConfig();
  o.optimizer.kind = OptimizerKind::Adam;
  const double lr = 1e-2, b1 = 0.9, b2 = 0.999, eps = 1e-7;
  trainAndCompare(
      o, lr, 10, 2,
      [&](double &w, double g, std::vector<double> &s, int64_t t) {
        s[0] = b1 * s[0] + (1 - b1) * g;
        s[1] = b2 * s[1] + (1 - b2) * g * g;
        // Keras folds the bias corrections into the step size,
        // so eps is added to sqrt(v), not to sqrt(v_hat).
        double alpha =
            asF32(lr) * std::sqrt(1 - std::pow(b2, t)) / (1 - std::pow(b1, t));
        w -= alpha * s[0] / (std::sqrt(s[1]) + eps);
      },
      1e-9);
}

TEST(Optimizers, SgdMomentumTenStepsMatchReference) {
  for (bool nesterov : {false, true}) {
    TrainingConfig o = sgdConfig();
    o.optimizer.momentum = 0.9;
    o.optimizer.nesterov = nesterov;
    const double lr = asF32(0.05);
    trainAndCompare(
        o, 0.05, 10, 1,
        [&](double &w, double g, std::vector<double> &s, int64_t) {
          s[0] = 0.9 * s[0] - lr * g;
          w += nesterov ? 0.9 * s[0] - lr * g : s[0];
        },
        1e-12);
  }
}

TEST(Optimizers, RmspropTenStepsMatchReference) {
  for (double momentum : {0.0, 0.5}) {
    TrainingConfig o = sgdConfig();
    o.optimizer.kind = OptimizerKind::RMSprop;
    o.optimizer.momentum = momentum;
    const double lr = asF32(1e-2), rho = 0.9, eps = 1e-7;
    trainAndCompare(
        o, 1e-2, 10, momentum > 0 ? 2 : 1,
        [&](double &w, double g, std::vector<double> &s, int64_t) {
          s[0] = rho * s[0] + (1 - rho) * g * g;
          double inc = lr * g / std::sqrt(s[0] + eps);
          if (momentum > 0) {
            s[1] = momentum * s[1] + inc;
            inc = s[1];
          }
          w -= inc;
        },
        1e-12);
  }
}

/// A TrainingConfig for `kind` with the given learning rate.
TrainingConfig configFor(OptimizerKind kind) {
  TrainingConfig o = sgdConfig();
  o.optimizer.kind = kind;
  return o;
}

TEST(Optimizers, AdagradTenStepsMatchReference) {
  TrainingConfig o = configFor(OptimizerKind::Adagrad);
  const double lr = asF32(0.1), eps = 1e-7;
  RefOptions ref;
  ref.slotInit = 0.1; // initial_accumulator_value
  trainAndCompare(
      o, 0.1, 10, 1,
      [&](double &w, double g, std::vector<double> &s, int64_t) {
        s[0] += g * g;
        w -= lr * g / std::sqrt(s[0] + eps);
      },
      1e-12, ref);
}

TEST(Optimizers, NadamTenStepsMatchReference) {
  TrainingConfig o = configFor(OptimizerKind::Nadam);
  const double lr = asF32(1e-2), b1 = 0.9, b2 = 0.999, eps = 1e-7;
  auto u = [&](int64_t t) { return b1 * (1 - 0.5 * std::pow(0.96, t)); };
  auto uProduct = [&](int64_t t) {
    double p = 1;
    for (int64_t i = 1; i <= t; ++i)
      p *= u(i);
    return p;
  };
  RefOptions ref;
  ref.globalState = 1; // u_product
  trainAndCompare(
      o, 1e-2, 10, 2,
      [&](double &w, double g, std::vector<double> &s, int64_t t) {
        s[0] += (g - s[0]) * (1 - b1);
        s[1] += (g * g - s[1]) * (1 - b2);
        double mHat = u(t + 1) * s[0] / (1 - uProduct(t + 1)) +
                      (1 - u(t)) * g / (1 - uProduct(t));
        double vHat = s[1] / (1 - std::pow(b2, t));
        w -= mHat * lr / (std::sqrt(vHat) + eps);
      },
      1e-12, ref);
}

TEST(Optimizers, AdamaxTenStepsMatchReference) {
  TrainingConfig o = configFor(OptimizerKind::Adamax);
  const double lr = asF32(1e-2), b1 = 0.9, b2 = 0.999, eps = 1e-7;
  trainAndCompare(
      o, 1e-2, 10, 2,
      [&](double &w, double g, std::vector<double> &s, int64_t t) {
        s[0] += (g - s[0]) * (1 - b1);
        s[1] = std::max(b2 * s[1], std::abs(g));
        w -= lr * s[0] / ((1 - std::pow(b1, t)) * (s[1] + eps));
      },
      1e-12);
}

TEST(Optimizers, LionTenStepsMatchReference) {
  TrainingConfig o = configFor(OptimizerKind::Lion);
  const double lr = asF32(1e-3), b1 = 0.9, b2 = 0.99; // b2: Lion's default
  trainAndCompare(
      o, 1e-3, 10, 1,
      [&](double &w, double g, std::vector<double> &s, int64_t) {
        double d = s[0] * b1 + g * (1 - b1);
        w -= lr * (d > 0 ? 1 : d < 0 ? -1 : 0);
        s[0] = s[0] * b2 + g * (1 - b2);
      },
      1e-12);
}

/// `w -= w * wd * lr` on every param, before the update.
Before weightDecay(double wd, std::function<double(int64_t)> lr) {
  return [=](Params &p, Params &, int64_t t) {
    for (auto &v : p)
      for (double &w : v)
        w -= w * wd * lr(t);
  };
}

TEST(Optimizers, AdamWDecaysBeforeTheAdamUpdate) {
  TrainingConfig o = configFor(OptimizerKind::AdamW);
  EXPECT_DOUBLE_EQ(o.optimizer.resolvedWeightDecay(), 0.004);
  o.optimizer.weightDecay = 0.5; // large, so a misplaced decay shows
  const double lr = asF32(1e-2), b1 = 0.9, b2 = 0.999, eps = 1e-7;
  RefOptions ref;
  ref.before = weightDecay(0.5, [&](int64_t) { return lr; });
  trainAndCompare(
      o, 1e-2, 10, 2,
      [&](double &w, double g, std::vector<double> &s, int64_t t) {
        s[0] += (g - s[0]) * (1 - b1);
        s[1] += (g * g - s[1]) * (1 - b2);
        double alpha =
            lr * std::sqrt(1 - std::pow(b2, t)) / (1 - std::pow(b1, t));
        w -= s[0] * alpha / (std::sqrt(s[1]) + eps);
      },
      1e-12, ref);
}

TEST(Optimizers, SgdWeightDecay) {
  TrainingConfig o = sgdConfig();
  o.optimizer.weightDecay = 0.3;
  const double lr = asF32(0.1);
  RefOptions ref;
  ref.before = weightDecay(0.3, [&](int64_t) { return lr; });
  trainAndCompare(
      o, 0.1, 10, 0,
      [&](double &w, double g, std::vector<double> &, int64_t) { w -= g * lr; },
      1e-12, ref);
}

void sgdStep(double &w, double g, std::vector<double> &, int64_t) {
  w -= g * asF32(0.5);
}

TEST(Optimizers, ClipnormClipsEachGradientToTheNorm) {
  TrainingConfig o = sgdConfig();
  o.optimizer.clipnorm = 0.05;
  RefOptions ref;
  ref.before = [](Params &, Params &g, int64_t) {
    for (auto &v : g) {
      double n = 0;
      for (double x : v)
        n += x * x;
      n = std::sqrt(n);
      for (double &x : v)
        x = x * 0.05 / std::max(n, 0.05);
    }
  };
  trainAndCompare(o, 0.5, 5, 0, sgdStep, 1e-12, ref);
}

TEST(Optimizers, GlobalClipnormScalesAllGradientsTogether) {
  TrainingConfig o = sgdConfig();
  o.optimizer.globalClipnorm = 0.05;
  RefOptions ref;
  ref.before = [](Params &, Params &g, int64_t) {
    double n = 0;
    for (auto &v : g)
      for (double x : v)
        n += x * x;
    n = std::sqrt(n);
    double scale = 0.05 * std::min(1 / n, 1 / 0.05);
    for (auto &v : g)
      for (double &x : v)
        x *= scale;
  };
  trainAndCompare(o, 0.5, 5, 0, sgdStep, 1e-12, ref);
}

TEST(Optimizers, ClipvalueClampsEachElement) {
  TrainingConfig o = sgdConfig();
  o.optimizer.clipvalue = 0.02;
  RefOptions ref;
  ref.before = [](Params &, Params &g, int64_t) {
    for (auto &v : g)
      for (double &x : v)
        x = std::min(std::max(x, -0.02), 0.02);
  };
  trainAndCompare(o, 0.5, 5, 0, sgdStep, 1e-12, ref);
}

/// SGD under `schedule` against w -= lr(iterations) * g, where `lr` is the
/// schedule written out in double (the model is f64, so the step computes
/// the schedule in f64 too).
void checkSchedule(const LearningRateSchedule &schedule,
                   std::function<double(double step)> lr) {
  SCOPED_TRACE(schedule.str());
  TrainingConfig o = sgdConfig();
  o.optimizer.schedule = schedule;
  ASSERT_FALSE(bool(o.validate()));
  // %lr is ignored: pass nonsense.
  trainAndCompare(
      o, 123.0, 8, 0,
      [&](double &w, double g, std::vector<double> &, int64_t t) {
        w -= g * lr(static_cast<double>(t - 1));
      },
      1e-11);
}

TEST(Schedules, EachKindMatchesKerasFormula) {
  LearningRateSchedule s;
  s.initialLearningRate = 0.5;
  s.decaySteps = 3;
  s.decayRate = 0.4;
  s.kind = ScheduleKind::ExponentialDecay;
  for (bool staircase : {false, true}) {
    s.staircase = staircase;
    checkSchedule(s, [&](double k) {
      double p = k / 3;
      return 0.5 * std::pow(0.4, staircase ? std::floor(p) : p);
    });
    s.kind = ScheduleKind::InverseTimeDecay;
    checkSchedule(s, [&](double k) {
      double p = k / 3;
      return 0.5 / (1 + 0.4 * (staircase ? std::floor(p) : p));
    });
    s.kind = ScheduleKind::ExponentialDecay;
  }

  LearningRateSchedule pw;
  pw.kind = ScheduleKind::PiecewiseConstantDecay;
  pw.boundaries = {1, 4.7}; // Keras compares with int(4.7) = 4
  pw.values = {0.5, 0.2, 0.05};
  checkSchedule(pw, [](double k) {
    return k <= 1 ? 0.5 : k <= 4 ? 0.2 : 0.05;
  });

  LearningRateSchedule poly;
  poly.kind = ScheduleKind::PolynomialDecay;
  poly.initialLearningRate = 0.5;
  poly.decaySteps = 3;
  poly.endLearningRate = 0.1;
  poly.power = 2;
  for (bool cycle : {false, true}) {
    poly.cycle = cycle;
    checkSchedule(poly, [&](double k) {
      double steps = 3;
      if (cycle)
        steps *= k == 0 ? 1 : std::ceil(k / 3);
      else
        k = std::min(k, steps);
      return (0.5 - 0.1) * std::pow(1 - k / steps, 2) + 0.1;
    });
  }

  LearningRateSchedule cos;
  cos.kind = ScheduleKind::CosineDecay;
  cos.initialLearningRate = 0.5;
  cos.decaySteps = 4;
  cos.alpha = 0.1;
  auto decayed = [](double k, double steps, double from, double alpha) {
    double c = 0.5 * (1 + std::cos(M_PI * k / steps));
    return from * ((1 - alpha) * c + alpha);
  };
  checkSchedule(
      cos, [&](double k) { return decayed(std::min(k, 4.0), 4, 0.5, 0.1); });
  cos.warmupTarget = 0.8;
  cos.warmupSteps = 3;
  checkSchedule(cos, [&](double k) {
    k = std::min(k, 7.0);
    if (k < 3)
      return (0.8 - 0.5) * (k / 3) + 0.5;
    return decayed(k - 3, 4, 0.8, 0.1);
  });

  LearningRateSchedule sgdr;
  sgdr.kind = ScheduleKind::CosineDecayRestarts;
  sgdr.initialLearningRate = 0.5;
  sgdr.decaySteps = 2;
  sgdr.alpha = 0.1;
  sgdr.mMul = 0.5;
  for (double tMul : {1.0, 2.0}) {
    sgdr.tMul = tMul;
    checkSchedule(sgdr, [&](double k) {
      double f = k / 2, i;
      if (tMul == 1) {
        i = std::floor(f);
        f -= i;
      } else {
        i = std::floor(std::log(1 - f * (1 - tMul)) / std::log(tMul));
        double sum = (1 - std::pow(tMul, i)) / (1 - tMul);
        f = (f - sum) / std::pow(tMul, i);
      }
      double c = 0.5 * std::pow(0.5, i) * (1 + std::cos(M_PI * f));
      return 0.5 * ((1 - 0.1) * c + 0.1);
    });
  }
}

TEST(Optimizers, KerasStateOrder) {
  OptimizerConfig rms;
  rms.kind = OptimizerKind::RMSprop;
  rms.momentum = 0.5;
  // kcc: v0 m0 v1 m1; Keras: v0 v1 m0 m1.
  EXPECT_EQ(kerasStateOrder(rms, 2), (std::vector<unsigned>{0, 2, 1, 3}));
  OptimizerConfig nadam;
  nadam.kind = OptimizerKind::Nadam;
  EXPECT_EQ(kerasStateOrder(nadam, 2), (std::vector<unsigned>{0, 1, 2, 3, 4}));
  EXPECT_EQ(slotNames(nadam),
            (llvm::SmallVector<std::string>{"momentum", "velocity"}));
}

} // namespace
