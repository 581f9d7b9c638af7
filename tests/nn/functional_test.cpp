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
  EXPECT_THROW_WITH(F::interpolate(img, {4, 4}, "bicubic"),
                    "expected mode 'bilinear' or 'nearest'");
  EXPECT_THROW_WITH(F::interpolate(img, {4, 4}, "nearest", true), "align_corners option");
  EXPECT_THROW_WITH(F::interpolate(img[0], {4, 4}, "bilinear"), "expected a 4-D (N, C, H, W)");
  EXPECT_THROW_WITH(F::interpolate(img, {0, 4}, "bilinear"), "expected a positive output size");
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
