//===- MasksTest.cpp - Keras masks through the layers, eagerly -----------===//
//
// A masked step must count for nothing: a recurrent layer, attention or
// GlobalAveragePooling1D on a padded, masked batch gives, on each real
// example, what it gives on the example cut to its real steps. Masks come
// from Embedding(mask_zero=True) and Masking, pass through Dense, drop at
// Flatten, and a layer that would use a mask kcc does not model refuses it
// by name. (Keras's own numbers: tests/e2e, the masks fixtures.)
//
//===----------------------------------------------------------------------===//

#include "kcc/kcc.h"
#include "tests/unit/ErrorOf.h"

#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace kcc;
using kcc::testing::errorOf;

namespace {

/// Ids [4, 6]: rows 0 and 2 padded at the end, 1 and 3 at the start.
NDArray paddedIds() {
  return NDArray::fromVector({4, 6}, std::vector<double>{3, 7, 1, 0, 0, 0,  //
                                                         0, 0, 5, 2, 9, 4,  //
                                                         8, 8, 2, 6, 1, 0,  //
                                                         0, 0, 0, 0, 0, 6}, //
                             DType::I32);
}
/// Each row's real steps [first, last).
const std::pair<int64_t, int64_t> kReal[4] = {{0, 3}, {2, 6}, {0, 5}, {5, 6}};

/// Row `r` of `ids` cut to its real steps, as a [1, n] batch.
NDArray realIds(const NDArray &ids, int r) {
  auto [a, b] = kReal[r];
  std::vector<double> v;
  for (int64_t t = a; t < b; ++t)
    v.push_back(ids.at(r * ids.shape()[1] + t));
  return NDArray::fromVector({1, b - a}, v, DType::I32);
}

/// Elements [r * n, (r + 1) * n) of `x`.
std::vector<double> row(const Tensor &x, int64_t r, int64_t n) {
  std::vector<double> all = x.toVector();
  return {all.begin() + r * n, all.begin() + (r + 1) * n};
}

void expectNear(const std::vector<double> &a, const std::vector<double> &b,
                const std::string &what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_NEAR(a[i], b[i], 1e-6) << what << " element " << i;
}

TEST(Masks, EmbeddingMaskZeroMasksPaddingIds) {
  Embedding masked(10, 3, "uniform", /*maskZero=*/true);
  Tensor out = masked(Tensor(paddedIds()));
  ASSERT_NE(out.mask(), nullptr);
  EXPECT_EQ(out.mask()->shape(), (Shape{4, 6}));
  std::vector<double> m = out.mask()->toVector();
  std::vector<double> ids = paddedIds().toVector();
  for (size_t i = 0; i < ids.size(); ++i)
    EXPECT_EQ(m[i], ids[i] != 0 ? 1.0 : 0.0) << i;
  EXPECT_EQ(Embedding(10, 3)(Tensor(paddedIds())).mask(), nullptr);
  // Dense passes it on, Flatten drops it.
  Tensor dense = Dense(2)(out);
  ASSERT_NE(dense.mask(), nullptr);
  EXPECT_EQ(dense.mask()->toVector(), m);
  EXPECT_EQ(Flatten()(out).mask(), nullptr);
}

TEST(Masks, MaskingZeroesAndMasksStepsOfTheMaskValue) {
  NDArray x = NDArray::fromVector(
      {1, 3, 2}, std::vector<double>{1.5, 2.0, 0.5, 0.5, 0.5, 3.0});
  Tensor out = Masking(0.5)(Tensor(x));
  EXPECT_EQ(out.toVector(), (std::vector<double>{1.5, 2.0, 0, 0, 0.5, 3.0}));
  ASSERT_NE(out.mask(), nullptr);
  EXPECT_EQ(out.mask()->toVector(), (std::vector<double>{1, 0, 1}));
}

/// A masked recurrent layer on the padded batch against the same layer on
/// each row cut to its real steps: the last output and, with sequences,
/// every real step's (masked steps repeat the previous output).
void checkRecurrent(const Layer &rnn, bool sequences, bool backwards,
                    const std::string &what) {
  Embedding embed(10, 4, "uniform", true);
  NDArray ids = paddedIds();
  Tensor out = rnn(embed(Tensor(ids)));
  int64_t H = out.dim(-1), T = 6;
  if (sequences) {
    ASSERT_NE(out.mask(), nullptr) << what;
  } else {
    EXPECT_EQ(out.mask(), nullptr) << what;
  }
  for (int r = 0; r < 4; ++r) {
    Tensor alone = rnn(embed(Tensor(realIds(ids, r))));
    auto [a, b] = kReal[r];
    if (!sequences) {
      expectNear(row(out, r, H), alone.toVector(),
                 what + " row " + std::to_string(r));
      continue;
    }
    std::vector<double> full = row(out, r, T * H), cut = alone.toVector();
    // Output s is the state after s + 1 steps in processing order.
    for (int64_t s = 0; s < T; ++s) {
      int64_t t = backwards ? T - 1 - s : s;
      // Real steps processed so far.
      int64_t seen = backwards ? std::max<int64_t>(0, b - std::max(t, a))
                               : std::max<int64_t>(0, std::min(t + 1, b) - a);
      std::vector<double> got(full.begin() + s * H, full.begin() + (s + 1) * H);
      std::vector<double> want(H, 0.0);
      if (seen > 0)
        want.assign(cut.begin() + (seen - 1) * H, cut.begin() + seen * H);
      expectNear(got, want,
                 what + " row " + std::to_string(r) + " step " +
                     std::to_string(s));
    }
  }
}

TEST(Masks, RecurrentLayersCarryTheStateOverMaskedSteps) {
  RecurrentOptions last, seq, back;
  seq.returnSequences = true;
  back.returnSequences = true;
  back.goBackwards = true;
  checkRecurrent(LSTM(5, "tanh", "sigmoid", true, "glorot_uniform",
                      "orthogonal", "zeros", true, last),
                 false, false, "LSTM");
  checkRecurrent(GRU(4, "tanh", "sigmoid", true, "glorot_uniform", "orthogonal",
                     "zeros", seq),
                 true, false, "GRU sequences");
  checkRecurrent(
      SimpleRNN(3, "tanh", true, "glorot_uniform", "orthogonal", "zeros", back),
      true, true, "SimpleRNN backwards");
}

TEST(Masks, BidirectionalZeroesMaskedStepsOfItsSequences) {
  RecurrentOptions seq;
  seq.returnSequences = true;
  Embedding embed(10, 4, "uniform", true);
  Layer bi = Bidirectional(GRU(3, "tanh", "sigmoid", true, "glorot_uniform",
                               "orthogonal", "zeros", seq),
                           "concat");
  NDArray ids = paddedIds();
  Tensor out = bi(embed(Tensor(ids)));
  ASSERT_NE(out.mask(), nullptr);
  std::vector<double> v = out.toVector();
  std::vector<double> ids1 = ids.toVector();
  for (size_t i = 0; i < ids1.size(); ++i)
    for (int64_t c = 0; c < 6; ++c)
      if (ids1[i] == 0)
        EXPECT_EQ(v[i * 6 + c], 0.0) << "masked step " << i;
  // A real row's forward half at its real steps is the GRU on the row alone.
  Tensor alone = bi(embed(Tensor(realIds(ids, 1))));
  std::vector<double> a = alone.toVector();
  for (int64_t t = 2; t < 6; ++t)
    expectNear({v.begin() + (6 + t) * 6, v.begin() + (6 + t + 1) * 6},
               {a.begin() + (t - 2) * 6, a.begin() + (t - 1) * 6},
               "row 1 step " + std::to_string(t));
}

TEST(Masks, GlobalAveragePoolingAveragesTheRealSteps) {
  Embedding embed(10, 3, "uniform", true);
  NDArray ids = paddedIds();
  Tensor pooled = GlobalAveragePooling1D()(embed(Tensor(ids)));
  EXPECT_EQ(pooled.mask(), nullptr);
  for (int r = 0; r < 4; ++r) {
    Tensor alone = GlobalAveragePooling1D()(embed(Tensor(realIds(ids, r))));
    expectNear(row(pooled, r, 3), alone.toVector(), "row " + std::to_string(r));
  }
}

TEST(Masks, AttentionIgnoresMaskedKeys) {
  Embedding embed(10, 4, "uniform", true);
  MultiHeadAttention mha(2, 3);
  NDArray ids = paddedIds();
  Tensor x = embed(Tensor(ids));
  Tensor out = mha({x, x});
  ASSERT_NE(out.mask(), nullptr);
  EXPECT_EQ(out.mask()->toVector(), x.mask()->toVector());
  for (int r = 0; r < 4; ++r) {
    Tensor xr = embed(Tensor(realIds(ids, r)));
    std::vector<double> alone = mha({xr, xr}).toVector();
    auto [a, b] = kReal[r];
    std::vector<double> full = row(out, r, 6 * 4);
    expectNear({full.begin() + a * 4, full.begin() + b * 4}, alone,
               "row " + std::to_string(r));
  }
}

TEST(Masks, ScoreAttentionIgnoresPaddedValuesAndZeroesPaddedQueries) {
  Embedding embed(10, 4, "uniform", true);
  NDArray ids = paddedIds();
  Tensor x = embed(Tensor(ids));
  for (bool additive : {false, true}) {
    Layer attention = additive ? Layer(AdditiveAttention(/*useScale=*/true))
                               : Layer(Attention(/*useScale=*/true));
    Tensor out = attention({x, x});
    ASSERT_NE(out.mask(), nullptr) << attention.className();
    EXPECT_EQ(out.mask()->toVector(), x.mask()->toVector());
    for (int r = 0; r < 4; ++r) {
      std::string what = attention.className() + " row " + std::to_string(r);
      Tensor xr = embed(Tensor(realIds(ids, r)));
      std::vector<double> alone = attention({xr, xr}).toVector();
      auto [a, b] = kReal[r];
      std::vector<double> full = row(out, r, 6 * 4);
      expectNear({full.begin() + a * 4, full.begin() + b * 4}, alone, what);
      for (int64_t t = 0; t < 6; ++t)
        if (t < a || t >= b)
          expectNear({full.begin() + t * 4, full.begin() + (t + 1) * 4},
                     std::vector<double>(4, 0.0), what + " padded step");
    }
  }
}

TEST(Masks, LayersThatWouldUseTheMaskRefuseIt) {
  Tensor ids = Input({6}, DType::I32);
  Tensor x = Embedding(10, 4, "uniform", true)(ids);
  // Keras's Softmax takes the [batch, 6] step mask as its mask argument,
  // which must broadcast to the [batch, 6, 4] input from the last axis.
  Softmax sm;
  std::string msg = errorOf([&] { sm.named("sm")(x); });
  EXPECT_NE(msg.find("layer 'sm' (Softmax): the mask [None, 6] is not "
                     "broadcastable to the input [None, 6, 4]"),
            std::string::npos)
      << msg;
  // Merging masked steps: the OR of the masks (Keras's Add).
  Tensor sum = Add()({x, x});
  ASSERT_NE(sum.mask(), nullptr);
  // BatchNormalization's moments skip the masked steps, and the mask goes on.
  ASSERT_NE(BatchNormalization()(x).mask(), nullptr);
}

/// Keras's Softmax()(x, mask=m): the entries where m is over 0.5 share
/// the softmax, the others are 0 (a row with none kept is all zeros), and
/// m passes on with the output whatever its shape.
TEST(Masks, SoftmaxMaskArgumentKeepsTheEntriesOverOneHalf) {
  NDArray x = NDArray::fromVector(
      {2, 2, 3}, std::vector<double>{1, 2, 3, -1, 0, 4, 5, 1, 2, 0, 0, 0});
  NDArray m = NDArray::fromVector(
      {2, 1, 3}, std::vector<double>{0.9, 0.1, 0.7, 0.2, 0.3, 0.5});
  Tensor out = Softmax()({Tensor(x), Tensor(m)});
  std::vector<double> want(12, 0.0);
  for (int r = 0; r < 2; ++r) {
    // Example 0 keeps entries 0 and 2 of each row.
    double a = std::exp(x.at(r * 3)), c = std::exp(x.at(r * 3 + 2));
    want[r * 3] = a / (a + c);
    want[r * 3 + 2] = c / (a + c);
  }
  expectNear(out.toVector(), want, "masked softmax");
  ASSERT_NE(out.mask(), nullptr);
  EXPECT_EQ(out.mask()->shape(), (Shape{2, 1, 3}));
  EXPECT_EQ(out.mask()->toVector(), m.toVector());
  // Unmasked, the same layer is the plain softmax.
  Tensor plain = Softmax()(Tensor(x));
  EXPECT_EQ(plain.mask(), nullptr);
  EXPECT_NEAR(plain.toVector()[1],
              std::exp(2.0) / (std::exp(1.0) + std::exp(2.0) + std::exp(3.0)),
              1e-6);
}

/// Keras hands a Softmax's mask on through the layers that pass masks
/// (Dense, activations), drops it at those without masking (Dot), and a
/// layer that reads masks as [batch, steps] refuses another shape by name;
/// so does the loss, which cannot weigh the predictions by it.
TEST(Masks, SoftmaxMaskIsHandedOnAsKerasDoes) {
  Tensor scores = Input({4, 5});
  Tensor keys = Input({1, 5});
  Tensor w = Softmax().named("weights")({scores, keys});
  Tensor passed = Dense(3)(Activation("linear")(w));
  ASSERT_NE(passed.mask(), nullptr);
  EXPECT_EQ(passed.mask()->shape(), keys.shape());
  EXPECT_EQ(Dot(int64_t(2), int64_t(1))({w, Input({5, 2})}).mask(), nullptr);
  GlobalAveragePooling1D gap;
  std::string msg = errorOf([&] { gap.named("gap")(passed); });
  EXPECT_NE(msg.find("layer 'gap' (GlobalAveragePooling1D): receives a mask "
                     "of shape [None, 1, 5] for its input [None, 4, 3]"),
            std::string::npos)
      << msg;
  // The mask reaches the output: Keras's loss cannot use a [batch, 1, 5]
  // mask on [batch, 4, 5] predictions.
  Model model({scores, keys}, {w}, "attend");
  mlir::MLIRContext ctx;
  TraceOptions opts;
  opts.batch = 2;
  opts.training = true;
  msg = errorOf([&] { traceForward(ctx, model, opts); });
  EXPECT_NE(msg.find("output 0 ('weights') carries a Keras mask of shape "
                     "[2, 1, 5]"),
            std::string::npos)
      << msg;
  // A [batch, 1] mask on [batch, classes] predictions weighs each example,
  // as Keras squeezes it.
  Tensor logits = Input({4});
  Tensor weight = Input({1});
  Model weighted({logits, weight}, {Softmax()({logits, weight})}, "weighted");
  EXPECT_NO_THROW(traceForward(ctx, weighted, opts));
}

} // namespace
