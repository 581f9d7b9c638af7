// Every differentiable op against central finite differences in float64.
#include <gtest/gtest.h>

#include "tests/util/test_util.h"

namespace ember {
namespace {

using autograd::gradcheck;
using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

Tensor input(const Shape& s, double lo = -1, double hi = 1) {
  return testing::uniform(s, kFloat64, lo, hi).requires_grad_();
}

struct Case {
  const char* name;
  Fn fn;
  std::vector<Tensor> inputs;
};

TEST(Gradcheck, EveryOp) {
  manual_seed(3);
  std::vector<Case> cases = {
      {"add", [](auto& v) { return add(v[0], v[1], 1.5); }, {input({2, 3}), input({3})}},
      {"sub", [](auto& v) { return v[0] - v[1]; }, {input({2, 1}), input({1, 3})}},
      {"mul", [](auto& v) { return v[0] * v[1]; }, {input({2, 3}), input({2, 3})}},
      {"div", [](auto& v) { return v[0] / v[1]; }, {input({2, 3}), input({3}, 0.5, 2)}},
      {"pow", [](auto& v) { return pow(v[0], v[1]); }, {input({4}, 0.5, 2), input({4})}},
      {"pow_scalar", [](auto& v) { return pow(v[0], 3.5); }, {input({4}, 0.5, 2)}},
      {"scalar_ops", [](auto& v) { return (v[0] * 2 + 1) / 3 - 0.5; }, {input({3})}},
      {"rsub_rdiv", [](auto& v) { return (1.0 - v[0]) + 2.0 / v[0]; }, {input({3}, 0.5, 2)}},
      {"maximum", [](auto& v) { return maximum(v[0], v[1]); }, {input({5}), input({5})}},
      {"minimum", [](auto& v) { return minimum(v[0], v[1]); }, {input({5}), input({1})}},
      {"neg_abs", [](auto& v) { return abs(-v[0]); }, {input({4}, 0.1, 1)}},
      {"exp", [](auto& v) { return exp(v[0]); }, {input({3, 2})}},
      {"log", [](auto& v) { return log(v[0]); }, {input({3}, 0.5, 2)}},
      {"sqrt_rsqrt", [](auto& v) { return sqrt(v[0]) + rsqrt(v[0]); }, {input({3}, 0.5, 2)}},
      {"tanh_sigmoid", [](auto& v) { return tanh(v[0]) * sigmoid(v[0]); }, {input({6})}},
      {"relu", [](auto& v) { return relu(v[0]); }, {input({6})}},
      {"sin_cos", [](auto& v) { return sin(v[0]) + cos(v[0]); }, {input({4})}},
      {"square_reciprocal",
       [](auto& v) { return square(v[0]) + reciprocal(v[0]); },
       {input({3}, 0.5, 2)}},
      {"log1p_expm1", [](auto& v) { return log1p(v[0]) + expm1(v[0]); }, {input({3}, -0.5, 1)}},
      {"clamp", [](auto& v) { return clamp(v[0], -0.5, 0.5); }, {input({6})}},
      {"where", [](auto& v) { return where(v[0] > 0, v[0], v[1]); }, {input({5}), input({5})}},
      {"addcmul",
       [](auto& v) { return addcmul(v[0], v[1], v[2], 0.7); },
       {input({3}), input({3}), input({3})}},
      {"addcdiv",
       [](auto& v) { return addcdiv(v[0], v[1], v[2], 0.7); },
       {input({3}), input({3}), input({3}, 0.5, 2)}},
      {"lerp", [](auto& v) { return lerp(v[0], v[1], 0.3); }, {input({3}), input({3})}},
      {"masked_fill",
       [](auto& v) {
         return masked_fill(v[0], tensor({true, false, true}), 2.0);
       },
       {input({3})}},
      {"sum", [](auto& v) { return v[0].sum({1}); }, {input({3, 4})}},
      {"sum_keepdim",
       [](auto& v) {
         return v[0].sum({0, 2}, true);
       },
       {input({2, 3, 2})}},
      {"mean", [](auto& v) { return v[0].mean({0}); }, {input({3, 4})}},
      {"prod", [](auto& v) { return v[0].prod(1); }, {input({2, 3}, 0.5, 1.5)}},
      {"amax", [](auto& v) { return v[0].amax({1}); }, {input({3, 4})}},
      {"max_dim", [](auto& v) { return std::get<0>(v[0].max(0)); }, {input({3, 4})}},
      {"min_dim_keepdim", [](auto& v) { return std::get<0>(v[0].min(1, true)); }, {input({3, 4})}},
      {"max_all", [](auto& v) { return v[0].max(); }, {input({3, 4})}},
      {"var_std",
       [](auto& v) { return v[0].var({1}).sum() + v[0].std({0}).sum(); },
       {input({3, 4})}},
      {"norm", [](auto& v) { return v[0].norm(); }, {input({5})}},
      {"logsumexp", [](auto& v) { return v[0].logsumexp({1}); }, {input({2, 5})}},
      {"mm", [](auto& v) { return mm(v[0], v[1]); }, {input({3, 4}), input({4, 2})}},
      {"bmm", [](auto& v) { return bmm(v[0], v[1]); }, {input({2, 3, 4}), input({2, 4, 2})}},
      {"matmul_batched",
       [](auto& v) { return matmul(v[0], v[1]); },
       {input({2, 1, 3, 4}), input({3, 4, 2})}},
      {"matmul_vec", [](auto& v) { return matmul(v[0], v[1]); }, {input({3, 4}), input({4})}},
      {"addmm",
       [](auto& v) { return addmm(v[0], v[1], v[2], 0.5, 2.0); },
       {input({2}), input({3, 4}), input({4, 2})}},
      {"linear",
       [](auto& v) { return linear(v[0], v[1], v[2]); },
       {input({2, 3, 4}), input({5, 4}), input({5})}},
      {"softmax", [](auto& v) { return softmax(v[0], 1); }, {input({3, 5})}},
      {"softmax_dim0", [](auto& v) { return softmax(v[0], 0); }, {input({3, 4, 2})}},
      {"log_softmax", [](auto& v) { return log_softmax(v[0], -1); }, {input({3, 5})}},
      {"conv2d",
       [](auto& v) {
         return conv2d(v[0], v[1], v[2], {2, 1}, {1, 0}, {1, 2});
       },
       {input({2, 2, 6, 7}), input({3, 2, 3, 2}), input({3})}},
      {"conv2d_groups",
       [](auto& v) {
         return conv2d(v[0], v[1], Tensor(), {1, 1}, {1, 1}, {1, 1}, 2);
       },
       {input({1, 4, 5, 5}), input({2, 2, 3, 3})}},
      {"max_pool2d",
       [](auto& v) {
         return max_pool2d(v[0], {2, 2}, Pair{1, 2}, {1, 0});
       },
       {input({1, 2, 5, 6})}},
      {"avg_pool2d",
       [](auto& v) {
         return avg_pool2d(v[0], {3, 2}, Pair{2, 1}, {1, 1}, true, false);
       },
       {input({2, 1, 5, 6})}},
      {"adaptive_avg_pool2d",  // overlapping windows: 5 -> 3 and 7 -> 4
       [](auto& v) {
         return adaptive_avg_pool2d(v[0], {3, 4});
       },
       {input({2, 2, 5, 7})}},
      {"batch_norm_train",
       [](auto& v) { return batch_norm(v[0], Tensor(), Tensor(), v[1], v[2], /*training=*/true); },
       {input({3, 2, 2, 3}), input({2}), input({2})}},
      {"batch_norm_eval",
       [](auto& v) {
         return batch_norm(v[0], tensor({0.1, -0.2}, kFloat64), tensor({0.5, 2.0}, kFloat64), v[1],
                           v[2], /*training=*/false);
       },
       {input({4, 2, 3}), input({2}), input({2})}},
      {"gather",
       [](auto& v) {
         return gather(v[0], 1, tensor({{2, 0, 2}, {1, 1, 0}}));
       },
       {input({2, 3})}},
      {"scatter_add",
       [](auto& v) {
         return scatter_add(v[0], 1, tensor({{2, 0}, {1, 1}}), v[1]);
       },
       {input({2, 3}), input({2, 2})}},
      {"index_select",
       [](auto& v) {
         return index_select(v[0], 0, tensor({2, 0, 2}));
       },
       {input({3, 2})}},
      {"embedding",
       [](auto& v) {
         return embedding(v[0], tensor({{1, 3}, {1, 0}}));
       },
       {input({4, 3})}},
      {"views",
       [](auto& v) {
         return v[0].t().reshape({-1}).unsqueeze(0).expand({2, 6}).narrow(1, 1, 4);
       },
       {input({2, 3})}},
      {"permute_select_slice",
       [](auto& v) {
         return v[0].permute({2, 0, 1}).select(1, 1).slice(1, 0, 3, 2);
       },
       {input({2, 3, 4})}},
      {"squeeze_flatten",
       [](auto& v) { return v[0].unsqueeze(1).squeeze(1).flatten(); },
       {input({2, 3})}},
      {"split_cat",
       [](auto& v) {
         auto p = v[0].split(2, 1);
         return cat({p[1] * 2, p[0]}, 1);
       },
       {input({2, 4})}},
      {"stack_unbind",
       [](auto& v) {
         auto p = v[0].unbind(0);
         return stack({p[1], p[0]}, 1);
       },
       {input({2, 3})}},
      {"chunk", [](auto& v) { return v[0].chunk(3, 0)[1]; }, {input({5, 2})}},
      {"to_copy",
       [](auto& v) { return v[0].to(kFloat64, false, /*copy=*/true) * v[0]; },
       {input({3})}},
      {"clone_contiguous", [](auto& v) { return v[0].t().contiguous().clone(); }, {input({2, 3})}},
      {"inplace_on_clone",
       [](auto& v) {
         Tensor t = v[0] * 1.0;
         t.mul_(v[1]).add_(1.0).exp_();
         return t;
       },
       {input({3}), input({3})}},
  };
  for (Case& c : cases) {
    try {
      std::string report = gradcheck(c.fn, c.inputs);
      EXPECT_EQ(report, "") << c.name;
    } catch (const Error& e) {
      ADD_FAILURE() << c.name << ": " << e.what();
    }
  }
}

TEST(Gradcheck, ANaNGradientFails) {
  // sqrt(x - x): the value never moves (numerical 0) but autograd gives inf * 0 = NaN.
  Tensor x = tensor({1.0, 2.0}, kFloat64).requires_grad_();
  std::string report = gradcheck([](auto& v) { return sqrt(v[0] - v[0]); }, {x});
  EXPECT_NE(report.find("vs analytical"), std::string::npos) << report;
  EXPECT_NE(report.find("nan"), std::string::npos) << report;
}

}  // namespace
}  // namespace ember
