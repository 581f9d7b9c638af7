// GPT: nanoGPT's state-dict names, the tied token embedding and output layer (one parameter, two
// keys, kept tied by clone()), causal attention (a position's logits do not depend on later
// tokens), generation, the errors, the modules it is built from (LayerNorm, GELU, gradient
// clipping), CharText, and a safetensors round trip with nanoGPT's model.py under PyTorch 1.13
// (tests/oracle/gpt_interop.py).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "tests/util/npy.h"
#include "tests/util/test_util.h"

namespace ember {
namespace {

using namespace ember::testing;
namespace fs = std::filesystem;

models::GPTConfig small_config(bool bias = true) {
  models::GPTConfig c;
  c.block_size = 16;
  c.vocab_size = 11;
  c.n_layer = 2;
  c.n_head = 2;
  c.n_embd = 8;
  c.bias = bias;
  return c;
}

TEST(GPT, StateDictHasNanoGPTNamesAndTiedWeights) {
  auto model = nn::make<models::GPT>(small_config());
  nn::NamedTensors state = model->state_dict();
  std::vector<std::string> names;
  for (auto& [n, t] : state) names.push_back(n);
  std::vector<std::string> first = {
      "transformer.wte.weight",          "transformer.wpe.weight",
      "transformer.h.0.ln_1.weight",     "transformer.h.0.ln_1.bias",
      "transformer.h.0.attn.c_attn.weight", "transformer.h.0.attn.c_attn.bias",
      "transformer.h.0.attn.c_proj.weight", "transformer.h.0.attn.c_proj.bias",
      "transformer.h.0.ln_2.weight",     "transformer.h.0.ln_2.bias",
      "transformer.h.0.mlp.c_fc.weight", "transformer.h.0.mlp.c_fc.bias",
      "transformer.h.0.mlp.c_proj.weight", "transformer.h.0.mlp.c_proj.bias"};
  ASSERT_GE(names.size(), first.size());
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.begin() + 14), first);
  EXPECT_EQ(names.back(), "lm_head.weight");
  EXPECT_EQ(names[names.size() - 3], "transformer.ln_f.weight");
  // Tied: one tensor, listed once among the parameters, under both names in the state dict.
  EXPECT_TRUE(model->lm_head->weight.is_same(model->transformer->wte->weight));
  EXPECT_EQ(model->parameters().size(), state.size() - 1);
  EXPECT_EQ(model->num_parameters(false), model->num_parameters() + 16 * 8);
  auto copy = std::dynamic_pointer_cast<models::GPT>(model->clone());
  ASSERT_TRUE(copy);
  EXPECT_TRUE(copy->lm_head->weight.is_same(copy->transformer->wte->weight));
  EXPECT_FALSE(copy->lm_head->weight.is_same(model->lm_head->weight));
  EXPECT_TRUE(copy->lm_head->weight.equal(model->lm_head->weight));
  // bias=false: no biases anywhere (nanoGPT's LayerNorm(bias=False) too).
  auto plain = nn::make<models::GPT>(small_config(false));
  for (auto& [n, t] : plain->state_dict()) EXPECT_EQ(n.find(".bias"), std::string::npos) << n;
}

TEST(GPT, AttentionIsCausalAndTheLossIsCrossEntropy) {
  manual_seed(1);
  auto model = nn::make<models::GPT>(small_config());
  model->eval();
  Tensor idx = randint(0, 11, {2, 10});
  Tensor logits = model->forward(idx);
  EXPECT_EQ(logits.sizes(), (Shape{2, 10, 11}));
  Tensor changed = idx.clone();
  changed.narrow(1, 6, 4).fill_(3);  // tokens after position 5
  Tensor again = model->forward(changed);
  EXPECT_TRUE(all_close(again.narrow(1, 0, 6), logits.narrow(1, 0, 6), 1e-6, 1e-6));
  EXPECT_FALSE(all_close(again.narrow(1, 6, 4), logits.narrow(1, 6, 4), 1e-6, 1e-6));
  Tensor targets = randint(0, 11, {2, 10});
  targets.narrow(1, 0, 1).fill_(-1);  // ignored
  auto [l2, loss] = model->forward(idx, targets);
  Tensor expected = nn::functional::cross_entropy(
      logits.narrow(1, 1, 9).reshape({-1, 11}), targets.narrow(1, 1, 9).reshape({-1}));
  EXPECT_NEAR(loss.item<double>(), expected.item<double>(), 1e-5);
}

TEST(GPT, TrainingReducesTheLossAndReachesEveryParameter) {
  manual_seed(2);
  auto model = nn::make<models::GPT>(small_config());
  Tensor idx = randint(0, 11, {4, 16});
  Tensor targets = roll(idx, {-1}, {1});
  optim::AdamW opt(model->parameters(), optim::AdamOptions(2e-2));
  double first = 0, last = 0;
  for (int step = 0; step < 100; ++step) {
    Tensor loss = model->forward(idx, targets).second;
    opt.zero_grad();
    loss.backward();
    for (auto& [n, p] : model->named_parameters()) ASSERT_TRUE(p.grad().defined()) << n;
    nn::utils::clip_grad_norm_(model->parameters(), 1.0);
    opt.step();
    (step == 0 ? first : last) = loss.item<double>();
  }
  EXPECT_LT(last, 0.5 * first);
}

TEST(GPT, GenerateAppendsTokensReproduciblyAndKeepsTheMode) {
  auto model = nn::make<models::GPT>(small_config());
  Tensor start = zeros({2, 3}, kInt64);
  Generator a(7), b(7);
  Tensor x = model->generate(start, 20, 0.9, 4, &a);  // longer than block_size: the context slides
  Tensor y = model->generate(start, 20, 0.9, 4, &b);
  EXPECT_EQ(x.sizes(), (Shape{2, 23}));
  EXPECT_TRUE(x.equal(y));
  EXPECT_TRUE(x.narrow(1, 0, 3).equal(start));
  EXPECT_TRUE(model->is_training());
  EXPECT_GE(x.min().item<int64_t>(), 0);
  EXPECT_LT(x.max().item<int64_t>(), 11);
  // top_k = 1 is greedy: every sample the same.
  Tensor g1 = model->generate(start, 5, 1.0, 1, &a), g2 = model->generate(start, 5, 1.0, 1, &b);
  EXPECT_TRUE(g1.equal(g2));
}

TEST(GPT, BadInputIsAClearError) {
  auto c = small_config();
  c.n_head = 3;
  EXPECT_THROW_WITH(models::GPT{c}, "n_embd (8) must be a multiple of n_head (3)");
  auto model = nn::make<models::GPT>(small_config());
  EXPECT_THROW_WITH(model->forward(zeros({1, 17}, kInt64)),
                    "cannot forward a sequence of length 17: the block size is only 16");
  EXPECT_THROW_WITH(model->forward(zeros({17}, kInt64)), "expected token ids of shape (B, T)");
  EXPECT_THROW_WITH(model->generate(zeros({1, 2}, kInt64), 3, 0.0), "temperature > 0");
  EXPECT_THROW_WITH(model->forward(zeros({1, 4}, kInt64), zeros({1, 3}, kInt64)),
                    "expected targets of shape");
}

TEST(GPTParts, LayerNormGeluAndGradientClipping) {
  nn::LayerNorm ln(Shape{4}, 1e-5, true, false);
  EXPECT_TRUE(ln.weight.defined());
  EXPECT_FALSE(ln.bias.defined());
  Tensor x = tensor({1.0f, 2.0f, 3.0f, 4.0f}).view({1, 4});
  Tensor y = ln.forward(x);
  EXPECT_NEAR(y.mean().item<double>(), 0.0, 1e-6);
  EXPECT_EQ(ln.repr(), "LayerNorm((4,), eps=1e-05, elementwise_affine=True)");
  nn::GELU tanh_gelu("tanh");
  EXPECT_NEAR(tanh_gelu.forward(tensor({1.0f})).item<double>(), 0.841192, 1e-5);
  EXPECT_THROW_WITH(nn::GELU("fast"), "approximate must be 'none' or 'tanh'");
  Tensor p = tensor({3.0f, 4.0f}).requires_grad_(true);
  (p * tensor({3.0f, 4.0f})).sum().backward();  // grad (3, 4): norm 5
  Tensor norm = nn::utils::clip_grad_norm_({p}, 1.0);
  EXPECT_NEAR(norm.item<double>(), 5.0, 1e-6);
  EXPECT_NEAR(p.grad().norm().item<double>(), 1.0, 1e-5);
  nn::utils::clip_grad_value_({p}, 0.5);
  EXPECT_LE(p.grad().abs().max().item<double>(), 0.5);
}

TEST(CharText, VocabularySplitsAndBatches) {
  auto text = data::datasets::CharText::from_string("hello world, hello ember", 0.75);
  EXPECT_EQ(text.vocab(), " ,bdehlmorw");
  EXPECT_EQ(text.decode(text.encode("hello")), "hello");
  EXPECT_EQ(text.train().size(0) + text.val().size(0), 24);
  EXPECT_EQ(text.train().size(0), 18);
  auto [x, y] = text.batch(true, 5, 6);
  EXPECT_EQ(x.sizes(), (Shape{5, 6}));
  // y is x one token later: their overlap agrees.
  EXPECT_TRUE(x.narrow(1, 1, 5).equal(y.narrow(1, 0, 5)));
  EXPECT_THROW_WITH(text.encode("hallo"), "the byte 97 ('a') at position 1 is not in the "
                                          "vocabulary of 11 characters");
  EXPECT_THROW_WITH(text.batch(false, 2, 6), "the validation split has 6 tokens, fewer than a "
                                             "block of 6 + 1");
  EXPECT_THROW_WITH(data::datasets::CharText("/nonexistent/input.txt"),
                    "cannot read '/nonexistent/input.txt'");
  EXPECT_THROW_WITH(data::datasets::CharText::from_vocabulary("ba"), "increasing order");
  std::string shakespeare = data::datasets::tiny_shakespeare_path();
  ASSERT_FALSE(shakespeare.empty()) << "data/tinyshakespeare/input.txt is in the repository";
  data::datasets::CharText tiny(shakespeare);
  EXPECT_EQ(tiny.vocab_size(), 65) << "nanoGPT's shakespeare_char has 65 characters";
  EXPECT_EQ(tiny.train().size(0), 1003854) << "and 1,003,854 training tokens";
}

// ember -> nanoGPT (PyTorch 1.13) -> ember through safetensors, logits compared both ways.
TEST(GPT, SafetensorsRoundTripWithNanoGPT) {
  std::string py = torch_python();
  if (py.empty()) GTEST_SKIP() << "needs /usr/bin/python3 with torch (python3-torch)";
  fs::path dir = fs::temp_directory_path() / ("ember_gpt_interop_" + std::to_string(getpid()));
  fs::create_directories(dir);
  manual_seed(3);
  models::GPTConfig c = small_config();
  auto model = nn::make<models::GPT>(c);
  Tensor idx = randint(0, c.vocab_size, {3, 12});
  Tensor targets = randint(0, c.vocab_size, {3, 12});
  {  // one step, so that the weights are not the initial ones
    optim::AdamW opt(model->parameters(), optim::AdamOptions(1e-2));
    model->forward(idx, targets).second.backward();
    opt.step();
  }
  NoGradGuard no_grad;
  io::save(*model, (dir / "ember_gpt.safetensors").string());
  write_npy((dir / "idx.npy").string(), idx.to(kFloat32));
  write_npy((dir / "targets.npy").string(), targets.to(kFloat32));
  write_npy((dir / "ember_logits.npy").string(), model->forward(idx));
  std::string script = std::string(EMBER_SOURCE_DIR) + "/tests/oracle/gpt_interop.py";
  ASSERT_EQ(std::system((py + " " + script + " " + dir.string()).c_str()), 0)
      << "nanoGPT under PyTorch disagreed with ember's GPT";
  io::SafetensorsFile back = io::load_safetensors((dir / "torch_gpt.safetensors").string());
  model->load_nanogpt_state_dict(back.tensors);  // drops PyTorch 1.13's h.N.attn.bias masks
  Tensor torch_logits = read_npy((dir / "torch_logits.npy").string());
  EXPECT_TRUE(all_close(model->forward(idx), torch_logits, 1e-4, 1e-4))
      << "nanoGPT's trained GPT predicts the same in ember";
  EXPECT_TRUE(model->lm_head->weight.is_same(model->transformer->wte->weight)) << "still tied";
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ember
