// nn::functional's compositions that are not losses: interpolate against PyTorch 1.13's values
// (the differential test compares it on random cases too).
#include <gtest/gtest.h>

#include "tests/util/test_util.h"

namespace ember {
namespace {

using namespace ember::testing;
namespace F = nn::functional;

TEST(Interpolate, MatchesPyTorchOnASmallImage) {
  Tensor x = tensor({0.0, 1.0, 2.0, 3.0}).view({1, 1, 2, 2});
  // F.interpolate(x, size, mode, align_corners) in PyTorch 1.13.
  EXPECT_EQ(values(F::interpolate(x, {4, 3}, "bilinear")),
            (std::vector<double>{0.0, 0.5, 1.0, 0.5, 1.0, 1.5, 1.5, 2.0, 2.5, 2.0, 2.5, 3.0}));
  EXPECT_EQ(values(F::interpolate(x, {3, 3}, "bilinear", /*align_corners=*/true)),
            (std::vector<double>{0.0, 0.5, 1.0, 1.0, 1.5, 2.0, 2.0, 2.5, 3.0}));
  EXPECT_EQ(values(F::interpolate(x, {3, 4}, "nearest")),
            (std::vector<double>{0, 0, 1, 1, 0, 0, 1, 1, 2, 2, 3, 3}));
  Tensor img = uniform({2, 3, 7, 5});
  EXPECT_TRUE(all_close(F::interpolate(img, {7, 5}, "bilinear"), img, 1e-6, 1e-6))
      << "the same size is the identity";
  EXPECT_EQ(F::interpolate(img, {96, 96}, "bilinear").sizes(), (Shape{2, 3, 96, 96}));
  EXPECT_THROW_WITH(F::interpolate(img, {4, 4}, "cubic"), "mode must be one of");
  EXPECT_THROW_WITH(F::interpolate(img, {4, 4}, "nearest", true), "align_corners option");
  EXPECT_THROW_WITH(F::interpolate(img, {4, 4}, "linear"), "linear mode needs 3D input");
  EXPECT_THROW_WITH(F::interpolate(img[0][0], {4}, "nearest"), "expected a 3-D, 4-D or 5-D input");
  EXPECT_THROW_WITH(F::interpolate(img, {0, 4}, "bilinear"), "sizes should be greater than 0");
  // Bicubic (Keys, A = -0.75), in PyTorch 1.13: F.interpolate(x, (3, 3), mode='bicubic').
  EXPECT_TRUE(all_close(F::interpolate(x, {3, 3}, "bicubic"),
                        tensor({-0.26041681, 0.32638896, 0.91319442, 0.91319472, 1.5, 2.08680582,
                                2.08680582, 2.67361093, 3.26041698})
                            .view({1, 1, 3, 3}),
                        1e-6, 1e-6));
}

TEST(Interpolate, GradientsPassFiniteDifferences) {
  Tensor x = uniform({1, 2, 3, 4}, kFloat64).requires_grad_();
  for (const char* mode : {"bilinear", "nearest"}) {
    std::string report = autograd::gradcheck(
        [&](const std::vector<Tensor>& v) {
          return F::interpolate(v[0], {5, 3}, mode);
        },
        {x});
    EXPECT_EQ(report, "") << mode;
  }
}

}  // namespace
}  // namespace ember
