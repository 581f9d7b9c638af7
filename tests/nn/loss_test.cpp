#include <gtest/gtest.h>

#include <cmath>

#include "tests/util/test_util.h"

namespace ember {
namespace {

namespace F = nn::functional;
using testing::all_close;

TEST(Losses, CrossEntropyMatchesTheFormula) {
  Tensor logits = tensor({{1.0, 2.0, 0.5}, {0.1, 0.2, 3.0}});
  Tensor target = tensor({1, 2});
  double l0 = -std::log(std::exp(2.0) / (std::exp(1.0) + std::exp(2.0) + std::exp(0.5)));
  double l1 = -std::log(std::exp(3.0) / (std::exp(0.1) + std::exp(0.2) + std::exp(3.0)));
  EXPECT_NEAR(F::cross_entropy(logits, target).item<double>(), (l0 + l1) / 2, 1e-6);
  EXPECT_NEAR(F::cross_entropy(logits, target, Tensor(), -100, F::Reduction::Sum).item<double>(),
              l0 + l1, 1e-5);
  EXPECT_TRUE(all_close(F::cross_entropy(logits, target, Tensor(), -100, F::Reduction::None),
                        tensor({l0, l1}), 1e-5, 1e-6));
  // ignore_index removes a sample from the mean
  EXPECT_NEAR(F::cross_entropy(logits, tensor({1, -100})).item<double>(), l0, 1e-6);
  // class weights: weighted mean
  Tensor w = tensor({1.0, 2.0, 3.0});
  EXPECT_NEAR(F::cross_entropy(logits, target, w).item<double>(), (2 * l0 + 3 * l1) / 5, 1e-5);
  // probabilities as targets
  Tensor probs = tensor({{0.0, 1.0, 0.0}, {0.0, 0.0, 1.0}});
  EXPECT_NEAR(F::cross_entropy(logits, probs).item<double>(), (l0 + l1) / 2, 1e-6);
  EXPECT_THROW_WITH(F::cross_entropy(logits, tensor({1, 3})),
                    "target 3 is out of bounds for 3 classes");
  EXPECT_THROW_WITH(F::cross_entropy(logits, tensor({1.0, 2.0})), "class-probability targets");
}

TEST(Losses, LabelSmoothingAndGradients) {
  Tensor logits = tensor({{1.0, 2.0, 0.5}}).requires_grad_();
  Tensor loss = F::cross_entropy(logits, tensor({1}), Tensor(), -100, F::Reduction::Mean, 0.1);
  Tensor logp = log_softmax(logits.detach(), 1);
  double expected = 0.9 * -logp[0][1].item<double>() + 0.1 * -logp.sum().item<double>() / 3;
  EXPECT_NEAR(loss.item<double>(), expected, 1e-6);
  loss.backward();
  // d/dlogits = softmax - smoothed one-hot
  Tensor sm = softmax(logits.detach(), 1);
  Tensor target = tensor({{0.1 / 3, 0.9 + 0.1 / 3, 0.1 / 3}});
  EXPECT_TRUE(all_close(logits.grad(), sm - target, 1e-5, 1e-6));
}

TEST(Losses, LabelSmoothingWithClassWeightsMatchesPyTorch) {
  // Values from torch 1.13: F.cross_entropy(x, t, weight=w, label_smoothing=0.2); the mean divides
  // by the weight of the counted targets, not their number.
  Tensor x =
      tensor({{1.0, 2.0, 0.5}, {0.1, 0.2, 3.0}, {-1.0, 0.5, 0.3}, {2.0, -0.5, 1.0}}, kFloat64);
  Tensor t = tensor({0, 2, 1, -100});
  Tensor w = tensor({1.0, 2.0, 3.0}, kFloat64);
  EXPECT_NEAR(F::cross_entropy(x, t, w, -100, F::Reduction::Mean, 0.2).item<double>(),
              0.6941971972902172, 1e-9);
  EXPECT_NEAR(F::cross_entropy(x, t, w, -100, F::Reduction::Sum, 0.2).item<double>(),
              4.165183183741304, 1e-9);
  EXPECT_THROW_WITH(F::cross_entropy(x, t, tensor({1.0, 2.0})),
                    "[nll_loss] the class weight must have one entry per class (3), got shape [2]");
  EXPECT_THROW_WITH(F::cross_entropy(x, softmax(x, 1), tensor({1.0, 2.0})),
                    "[cross_entropy] the class weight must have one entry per class (3)");
}

TEST(Losses, NllAndMse) {
  Tensor logp = log_softmax(tensor({{1.0, 2.0}, {3.0, 1.0}}), 1);
  EXPECT_NEAR(F::nll_loss(logp, tensor({0, 0})).item<double>(),
              -(logp[0][0].item<double>() + logp[1][0].item<double>()) / 2, 1e-6);
  EXPECT_NEAR(F::mse_loss(tensor({1.0, 2.0}), tensor({2.0, 4.0})).item<double>(), 2.5, 1e-6);
  EXPECT_NEAR(F::mse_loss(tensor({1.0, 2.0}), tensor({2.0, 4.0}), F::Reduction::Sum).item<double>(),
              5, 1e-6);
  std::string report = autograd::gradcheck(
      [](const std::vector<Tensor>& v) {
        return F::cross_entropy(v[0], tensor({2, 0, 1}));
      },
      {testing::uniform({3, 4}, kFloat64).requires_grad_()});
  EXPECT_EQ(report, "");
}

}  // namespace
}  // namespace ember
