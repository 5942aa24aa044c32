//===- RandomNormal.cpp - Normal draws composed of kc ops -----------------===//
//
// Box-Muller on two counter-based uniform streams: z = sqrt(-2 log(1 - u1))
// * cos(2 pi u2). kc has no cosine, so cos(2 pi u2) is an even polynomial
// after reducing the angle to [0, pi/2] (cos is even about 0 and odd about
// pi/2): its Taylor terms to x^16 are within 2e-9 there, below f32's
// rounding. Composed of elementwise kc ops, the draws are the same in eager
// mode, the interpreter and compiled code, for the same seed and step.
//
//===----------------------------------------------------------------------===//

#include "frontend/Initializers.h"
#include "frontend/Ops.h"

#include <cmath>

using namespace kcc;

Tensor ops::cosTwoPi(const Tensor &u) {
  DType dt = u.dtype();
  auto c = [&](double v) { return ops::scalar(v, dt); };
  // t = |u - 1/2| in [0, 1/2]: cos(2 pi u) = -cos(2 pi t).
  Tensor t = ops::abs(ops::sub(u, c(0.5)));
  // Past a quarter turn, cos(2 pi t) = -cos(2 pi (1/2 - t)).
  Tensor past = ops::compare(ops::CompareKind::GT, t, c(0.25));
  Tensor r = ops::select(past, ops::sub(c(0.5), t), t);
  Tensor x = ops::mul(r, c(2 * M_PI));
  Tensor x2 = ops::mul(x, x);
  // Horner over x^2: sum (-1)^k x^2k / (2k)!, k = 0..8.
  double coefficient = 1;
  std::vector<double> terms;
  for (int k = 0; k <= 8; ++k) {
    terms.push_back(coefficient);
    coefficient *= -1.0 / ((2 * k + 1) * (2 * k + 2));
  }
  Tensor p = c(terms.back());
  for (int k = 7; k >= 0; --k)
    p = ops::add(ops::mul(p, x2), c(terms[k]));
  // cos(2 pi u) = -cos(2 pi t) = -(+-p).
  return ops::select(past, p, ops::neg(p));
}

Tensor ops::randomNormal(const Shape &shape, uint64_t seed,
                         const Tensor &counter, DType dtype) {
  Tensor u1 = randomUniform(shape, seed, counter, dtype);
  Tensor u2 = randomUniform(shape, init::deriveSeed(seed, "box-muller angle"),
                            counter, dtype);
  // 1 - u1 is in (0, 1]: the log is finite.
  Tensor radius =
      sqrt(mul(log(sub(scalar(1.0, dtype), u1)), scalar(-2.0, dtype)));
  return mul(radius, cosTwoPi(u2));
}
