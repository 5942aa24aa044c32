//===- ConvLSTMTest.cpp - ConvLSTM1D/2D/3D against a direct reference -----===//
//
// ConvLSTM2D's outputs, eager, against Keras's cell written out here in
// double (four gate convolutions of the input, four `same` convolutions of
// h, i f c o), for same and strided valid padding, going backwards, with
// the sequence and the states; ConvLSTM1D and ConvLSTM3D against
// ConvLSTM2D on the same weights (a unit height; a unit depth).
//
//===----------------------------------------------------------------------===//

#include "kcc/kcc.h"
#include "tests/unit/ErrorOf.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace kcc;
using kcc::testing::errorOf;

namespace {

/// Uniform [-1, 1) values from a fixed LCG.
NDArray uniform(Shape shape, uint64_t seed) {
  NDArray a = NDArray::empty(shape, DType::F32);
  uint64_t s = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (int64_t i = 0; i < a.numel(); ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    a.set(i, 2 * static_cast<double>(s >> 11) * 0x1.0p-53 - 1);
  }
  return a;
}

/// [B, H, W, C] images.
struct Image {
  int64_t b, h, w, c;
  std::vector<double> v;
  double &at(int64_t n, int64_t y, int64_t x, int64_t k) {
    return v[((n * h + y) * w + x) * c + k];
  }
};

/// Output size and leading pad of one axis (TensorFlow's `same`).
std::pair<int64_t, int64_t> outAndPad(int64_t in, int64_t k, int64_t s,
                                      bool same) {
  if (!same)
    return {(in - k) / s + 1, 0};
  int64_t out = (in + s - 1) / s;
  int64_t total = std::max<int64_t>((out - 1) * s + k - in, 0);
  return {out, total / 2};
}

/// x conv kernel[:, :, :, from:from+n] (HWIO, [kh, kw, C, G]).
Image conv(Image &x, const std::vector<double> &kernel, int64_t kh, int64_t kw,
           int64_t g, int64_t from, int64_t n, int64_t sh, int64_t sw,
           bool same) {
  auto [oh, ph] = outAndPad(x.h, kh, sh, same);
  auto [ow, pw] = outAndPad(x.w, kw, sw, same);
  Image y{x.b, oh, ow, n, std::vector<double>(x.b * oh * ow * n, 0.0)};
  for (int64_t b = 0; b < x.b; ++b)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j)
        for (int64_t f = 0; f < n; ++f) {
          double sum = 0;
          for (int64_t di = 0; di < kh; ++di)
            for (int64_t dj = 0; dj < kw; ++dj) {
              int64_t yy = i * sh + di - ph, xx = j * sw + dj - pw;
              if (yy < 0 || yy >= x.h || xx < 0 || xx >= x.w)
                continue;
              for (int64_t k = 0; k < x.c; ++k)
                sum += x.at(b, yy, xx, k) *
                       kernel[((di * kw + dj) * x.c + k) * g + from + f];
            }
          y.at(b, i, j, f) = sum;
        }
  return y;
}

double sigmoid(double v) { return 1 / (1 + std::exp(-v)); }

struct Reference {
  std::vector<Image> sequence;
  Image h, c;
};

/// Keras's ConvLSTMCell over the steps of x [B, T, H, W, C].
Reference referenceConvLSTM(const NDArray &x, const std::vector<double> &k,
                            const std::vector<double> &rk,
                            const std::vector<double> &bias, int64_t F,
                            int64_t kh, int64_t kw, int64_t sw, bool same,
                            bool backwards) {
  Shape s = x.shape();
  int64_t B = s[0], T = s[1], H = s[2], W = s[3], C = s[4];
  std::vector<double> xv = Tensor(x).toVector();
  Reference r;
  for (int64_t step = 0; step < T; ++step) {
    int64_t t = backwards ? T - 1 - step : step;
    Image in{B, H, W, C, std::vector<double>(B * H * W * C)};
    for (int64_t b = 0; b < B; ++b)
      for (int64_t i = 0; i < H * W * C; ++i)
        in.v[b * H * W * C + i] = xv[(b * T + t) * H * W * C + i];
    Image gates[4], rec[4];
    for (int g = 0; g < 4; ++g)
      gates[g] = conv(in, k, kh, kw, 4 * F, g * F, F, 1, sw, same);
    if (step == 0) {
      r.h = gates[0];
      r.c = gates[0];
      std::fill(r.h.v.begin(), r.h.v.end(), 0.0);
      std::fill(r.c.v.begin(), r.c.v.end(), 0.0);
    }
    for (int g = 0; g < 4; ++g)
      rec[g] = conv(r.h, rk, kh, kw, 4 * F, g * F, F, 1, 1, true);
    for (size_t e = 0; e < r.h.v.size(); ++e) {
      int64_t f = static_cast<int64_t>(e) % F;
      auto z = [&](int g) {
        return gates[g].v[e] + bias[g * F + f] + rec[g].v[e];
      };
      double i = sigmoid(z(0)), fg = sigmoid(z(1)), o = sigmoid(z(3));
      r.c.v[e] = fg * r.c.v[e] + i * std::tanh(z(2));
      r.h.v[e] = o * std::tanh(r.c.v[e]);
    }
    r.sequence.push_back(r.h);
  }
  return r;
}

ConvLSTMOptions options2d(bool same, int64_t sw) {
  ConvLSTMOptions o;
  o.filters = 3;
  o.kernelSize = {3, 2};
  o.strides = {1, sw};
  o.dilationRate = {1, 1};
  o.padding = same ? "same" : "valid";
  o.biasInitializer = "random_uniform";
  return o;
}

std::vector<double> values(const Layer &layer, size_t i) {
  return Tensor(layer.impl()->weights()[i].value).toVector();
}

TEST(ConvLSTM, Conv2DCellMatchesKerasWrittenOut) {
  NDArray x = uniform({2, 3, 5, 6, 2}, 1);
  for (auto [same, sw, backwards] : {std::tuple{true, int64_t(1), false},
                                     std::tuple{false, int64_t(2), true}}) {
    ConvLSTMOptions o = options2d(same, sw);
    o.options.returnSequences = true;
    o.options.returnState = true;
    o.options.goBackwards = backwards;
    ConvLSTM2D layer(o);
    std::vector<Tensor> out = layer.call({Tensor(x)}, CallContext{});
    ASSERT_EQ(out.size(), 3u);
    Reference r =
        referenceConvLSTM(x, values(layer, 0), values(layer, 1),
                          values(layer, 2), 3, 3, 2, sw, same, backwards);
    const Image &last = r.sequence.back();
    ASSERT_EQ(out[0].shape(), (Shape{2, 3, last.h, last.w, 3}));
    std::vector<double> seq = out[0].toVector(), h = out[1].toVector(),
                        c = out[2].toVector();
    int64_t per = last.h * last.w * 3;
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t t = 0; t < 3; ++t)
        for (int64_t e = 0; e < per; ++e)
          ASSERT_NEAR(seq[(b * 3 + t) * per + e], r.sequence[t].v[b * per + e],
                      2e-5)
              << "same " << same << " step " << t;
    for (size_t e = 0; e < h.size(); ++e) {
      ASSERT_NEAR(h[e], r.h.v[e], 2e-5);
      ASSERT_NEAR(c[e], r.c.v[e], 2e-5);
    }
  }
}

/// The forget gate's bias starts at 1 (unit_forget_bias), the others at 0.
TEST(ConvLSTM, WeightsAreKerasShapedWithUnitForgetBias) {
  ConvLSTMOptions o = options2d(true, 1);
  o.biasInitializer = "zeros";
  ConvLSTM2D layer(o);
  layer(Tensor(uniform({1, 2, 4, 4, 5}, 2)));
  const std::vector<Weight> &w = layer.impl()->weights();
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[0].name, "cell/kernel");
  EXPECT_EQ(w[0].shape, (Shape{3, 2, 5, 12}));
  EXPECT_EQ(w[1].name, "cell/recurrent_kernel");
  EXPECT_EQ(w[1].shape, (Shape{3, 2, 3, 12}));
  std::vector<double> bias = values(layer, 2);
  for (int64_t i = 0; i < 12; ++i)
    EXPECT_EQ(bias[i], i >= 3 && i < 6 ? 1.0 : 0.0) << i;
}

/// ConvLSTM1D is ConvLSTM2D on a unit height, ConvLSTM3D on a unit depth,
/// with the same weights.
TEST(ConvLSTM, OneAndThreeDimensionsAgreeWithTwo) {
  NDArray x = uniform({2, 4, 7, 3}, 3);
  ConvLSTMOptions o1;
  o1.filters = 2;
  o1.kernelSize = {3};
  o1.strides = {1};
  o1.dilationRate = {2};
  o1.options.returnSequences = true;
  ConvLSTM1D one(o1);
  Tensor y1 = one(Tensor(x));
  ConvLSTMOptions o2 = o1;
  o2.kernelSize = {1, 3};
  o2.strides = {1, 1};
  o2.dilationRate = {1, 2};
  ConvLSTM2D two(o2);
  two(Tensor(x.reshaped({2, 4, 1, 7, 3})));
  for (size_t i = 0; i < 3; ++i)
    two.impl()->weights()[i].value =
        one.impl()->weights()[i].value.reshaped(two.impl()->weights()[i].shape);
  std::vector<double> want =
      two(Tensor(x.reshaped({2, 4, 1, 7, 3}))).toVector();
  std::vector<double> got = y1.toVector();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-6) << i;

  ConvLSTMOptions o3 = o2;
  o3.kernelSize = {1, 1, 3};
  o3.strides = {1, 1, 1};
  o3.dilationRate = {1, 1, 2};
  o3.padding = "same";
  o2.padding = "same";
  ConvLSTM3D three(o3);
  ConvLSTM2D same2(o2);
  NDArray v = uniform({2, 3, 1, 4, 5, 2}, 4);
  Tensor y3 = three(Tensor(v));
  same2(Tensor(v.reshaped({2, 3, 4, 5, 2})));
  for (size_t i = 0; i < 3; ++i)
    same2.impl()->weights()[i].value =
        three.impl()->weights()[i].value.reshaped(
            same2.impl()->weights()[i].shape);
  std::vector<double> want3 =
      same2(Tensor(v.reshaped({2, 3, 4, 5, 2}))).toVector();
  std::vector<double> got3 = y3.toVector();
  ASSERT_EQ(got3.size(), want3.size());
  for (size_t i = 0; i < got3.size(); ++i)
    ASSERT_NEAR(got3[i], want3[i], 1e-6) << i;
}

TEST(ConvLSTM, BadArgumentsAndInputsFail) {
  ConvLSTMOptions o = options2d(true, 2);
  o.dilationRate = {2, 1};
  EXPECT_NE(
      errorOf([&] { ConvLSTM2D{o}; }).find("strides > 1 and dilation_rate > 1"),
      std::string::npos);
  ConvLSTMOptions bad = options2d(true, 1);
  bad.kernelSize = {3};
  EXPECT_NE(
      errorOf([&] { ConvLSTM2D{bad}; }).find("kernel_size needs 2 entries"),
      std::string::npos);
  EXPECT_NE(errorOf([&] {
              ConvLSTM2D(options2d(true, 1))(Tensor(uniform({2, 3, 4, 5}, 5)));
            }).find("expects one input of rank 5"),
            std::string::npos);
  // Keras keeps the state over masked steps; kcc refuses the mask by name.
  Tensor masked = Tensor(uniform({2, 3, 4, 4, 2}, 6))
                      .withMask(Tensor(NDArray::fromVector(
                          {2, 3}, std::vector<double>{1, 1, 0, 1, 1, 1})));
  ConvLSTM2D layer(options2d(true, 1));
  EXPECT_NE(errorOf([&] {
              layer.named("video")(masked);
            }).find("layer 'video' (ConvLSTM2D): receives a mask"),
            std::string::npos);
}

} // namespace
