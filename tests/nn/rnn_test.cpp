// nn::RNN/LSTM/GRU and ember::recurrent: PyTorch's parameter names (projections too) and the
// errors bad arguments raise. Their numerics against libtorch are in tests/oracle/modules_test.cpp
// and against PyTorch in tests/python/test_sequence.py.
#include <gtest/gtest.h>

#include <map>

#include "tests/util/test_util.h"

namespace ember {
namespace {

TEST(Recurrent, ProjectionsAddWeightHrAfterTheBiases) {
  nn::LSTM lstm(nn::RNNOptions(4, 6).with_num_layers(2).with_bidirectional(true).with_proj_size(2));
  std::vector<std::string> keys;
  std::map<std::string, Shape> sizes;
  for (auto& [name, t] : lstm.state_dict()) {
    keys.push_back(name);
    sizes[name] = t.sizes();
  }
  ASSERT_EQ(keys.size(), 20u);
  EXPECT_EQ(std::vector<std::string>(keys.begin(), keys.begin() + 5),
            (std::vector<std::string>{"weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0",
                                      "weight_hr_l0"}));
  EXPECT_EQ(keys[15], "weight_ih_l1_reverse");
  EXPECT_EQ(sizes["weight_hh_l0"], (Shape{24, 2}));
  EXPECT_EQ(sizes["weight_hr_l0"], (Shape{2, 6}));
  EXPECT_EQ(sizes["weight_ih_l1"], (Shape{24, 4}));  // 2 directions x proj_size 2
  auto [out, h, c] = lstm.forward_with_state(randn({5, 3, 4}));
  EXPECT_EQ(out.sizes(), (Shape{5, 3, 4}));
  EXPECT_EQ(h.sizes(), (Shape{4, 3, 2}));
  EXPECT_EQ(c.sizes(), (Shape{4, 3, 6}));
}

TEST(Recurrent, BadArgumentsAreClearErrors) {
  EXPECT_THROW_WITH(nn::GRU(nn::RNNOptions(4, 6).with_proj_size(2)),
                    "proj_size argument is only supported for LSTM");
  EXPECT_THROW_WITH(nn::LSTM(nn::RNNOptions(4, 6).with_proj_size(6)),
                    "proj_size has to be smaller than hidden_size");
  nn::LSTM lstm(nn::RNNOptions(4, 6));
  RecurrentOptions o;
  EXPECT_THROW_WITH(recurrent(randn({5, 3, 4}), Tensor(), Tensor(), lstm.flat_weights(), o,
                              tensor({5, 2}, kInt64)),
                    "expected one sequence length per batch entry (3), got shape [2]");
  EXPECT_THROW_WITH(lstm.forward_with_state(randn({5, 3, 4}), zeros({1, 3, 5})),
                    "Expected hidden size (1, 3, 6) for hx, got [1, 3, 5]");
  o.proj_size = 2;
  EXPECT_THROW_WITH(recurrent(randn({5, 3, 4}), Tensor(), Tensor(), lstm.flat_weights(), o),
                    "expected 5 weights (w_ih, w_hh, b_ih, b_hh, w_hr");
}

}  // namespace
}  // namespace ember
