//===- ImageGradientsTest.cpp - gradient check of image_transform ---------===//
//
// kc.image_transform's image gradient (the scatter-add of
// kc.image_transform_grad) against central differences, for every fill
// mode and both interpolations, through maps that read outside the image
// (a rotation with a zoom out, a shift past the edges) and a smaller
// output (a crop).
//
//===----------------------------------------------------------------------===//

#include "tests/unit/autodiff/GradCheck.h"

#include "gtest/gtest.h"

#include <string>

using namespace kcc;
using namespace kcc::test;

namespace {

/// sum(tanh(image_transform(x)) * r) for x [2, 5, 6, 3] into [2, OH, OW, 3].
std::string module(const std::string &attrs, int oh, int ow) {
  std::string out =
      "2x" + std::to_string(oh) + "x" + std::to_string(ow) + "x3xf64";
  return R"mlir(
    func.func @f(%x: tensor<2x5x6x3xf64>, %r: tensor<)mlir" +
         out + R"mlir(>) -> tensor<f64> {
      %t = kc.constant dense<[[0.9, -0.55, 2.1, 0.6, 1.2, -0.8, 0.0, 0.0],
                              [1.0, 0.0, 3.4, 0.0, 1.0, -2.3, 0.0, 0.0]]> : tensor<2x8xf64>
      %y = kc.image_transform %x, %t {)mlir" +
         attrs +
         R"mlir(} : tensor<2x5x6x3xf64>, tensor<2x8xf64> -> tensor<)mlir" +
         out + R"mlir(>
      %h = kc.tanh %y : tensor<)mlir" +
         out + R"mlir(>
      %p = kc.mul %h, %r : tensor<)mlir" +
         out + R"mlir(>
      %l = kc.reduce_sum %p {axes = array<i64: 0, 1, 2, 3>} : tensor<)mlir" +
         out + R"mlir(> -> tensor<f64>
      return %l : tensor<f64>
    })mlir";
}

TEST(ImageGradients, EveryFillModeAndInterpolation) {
  int seed = 300;
  for (std::string mode : {"reflect", "wrap", "constant", "nearest"})
    for (std::string interpolation : {"bilinear", "nearest"})
      for (auto [oh, ow] : {std::pair{5, 6}, std::pair{3, 4}}) {
        SCOPED_TRACE(mode + " " + interpolation + " " + std::to_string(oh) +
                     "x" + std::to_string(ow));
        mlir::MLIRContext ctx;
        auto m = parse(ctx, module("interpolation = \"" + interpolation +
                                       "\", fill_mode = \"" + mode +
                                       "\", fill_value = 0.3 : f64",
                                   oh, ow));
        ASSERT_TRUE(m);
        EXPECT_GRADIENTS_MATCH(
            checkGradients(*m,
                           {uniform({2, 5, 6, 3}, -1, 1, seed),
                            uniform({2, oh, ow, 3}, -1, 1, seed + 1)},
                           /*numWrt=*/1));
        seed += 2;
      }
}

} // namespace
