#include <gtest/gtest.h>

#include <sstream>

#include "ember/models/gpt.h"
#include "tests/util/test_util.h"

namespace ember {
namespace {

using testing::all_close;
using testing::values;

TEST(Module, ParametersBuffersAndNames) {
  auto net = nn::make<nn::Sequential>(std::initializer_list<std::shared_ptr<nn::Module>>{
      nn::make<nn::Linear>(4, 3), nn::make<nn::ReLU>(), nn::make<nn::BatchNorm1d>(3)});
  std::vector<std::string> names;
  for (auto& [n, t] : net->named_parameters()) names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"}));
  EXPECT_EQ(net->buffers().size(), 3u);
  std::vector<std::string> keys;
  for (auto& [n, t] : net->state_dict()) keys.push_back(n);
  EXPECT_EQ(keys,
            (std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias", "2.running_mean",
                                      "2.running_var", "2.num_batches_tracked"}));
  EXPECT_EQ(net->named_modules().size(), 4u);
  for (const Tensor& p : net->parameters()) EXPECT_TRUE(p.requires_grad());
  std::ostringstream repr;
  repr << *net;
  EXPECT_EQ(
      repr.str(),
      "Sequential(\n  (0): Linear(in_features=4, out_features=3, bias=True)\n  (1): ReLU()\n"
      "  (2): BatchNorm1d(3, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)\n)");
}

TEST(Module, ASharedModuleIsListedOnce) {
  // As PyTorch: parameters() and named_modules() list a module used twice once (an optimizer
  // steps it once); the state dict names it at every place.
  auto l = nn::make<nn::Linear>(2, 2);
  auto net = nn::make<nn::Sequential>(std::initializer_list<std::shared_ptr<nn::Module>>{l, l});
  std::vector<std::string> names;
  for (auto& [n, t] : net->named_parameters()) names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"0.weight", "0.bias"}));
  EXPECT_EQ(net->named_modules().size(), 2u);
  EXPECT_EQ(net->state_dict().size(), 4u);
  optim::SGD opt(net->parameters(), optim::SGDOptions(0.1));  // no "appears in more than one group"
  net->forward(ones({1, 2})).sum().backward();
  opt.step();
}

TEST(Module, NamesAreUniqueAcrossParametersAndBuffers) {
  nn::Linear fc(2, 2);
  EXPECT_THROW_WITH(fc.register_buffer("weight", zeros({1})),
                    "[register_buffer] Linear already has a parameter 'weight'");
  fc.register_buffer("count", zeros({1}));
  EXPECT_THROW_WITH(fc.register_buffer("count", zeros({1})), "already has a buffer 'count'");
  EXPECT_THROW_WITH(fc.register_parameter("count", zeros({1})), "already has a buffer 'count'");
}

TEST(Module, ZeroElementLayersInitialiseAsNoOps) {
  nn::Linear empty_in(0, 5), empty_out(5, 0);
  EXPECT_EQ(values(empty_in.bias), (std::vector<double>{0, 0, 0, 0, 0}));
  EXPECT_EQ(empty_out.weight.numel(), 0);
}

TEST(Module, PyTorchDefaultInitialisationBounds) {
  manual_seed(0);
  nn::Linear fc(100, 50);
  double bound = 1.0 / std::sqrt(100.0);
  EXPECT_LE(fc.weight.abs().max().item<double>(), bound);
  EXPECT_GT(fc.weight.abs().max().item<double>(), bound * 0.9);
  EXPECT_LE(fc.bias.abs().max().item<double>(), bound);
  nn::Conv2d conv(nn::Conv2dOptions(3, 8, 5));
  double cbound = 1.0 / std::sqrt(3.0 * 25);
  EXPECT_LE(conv.weight.abs().max().item<double>(), cbound);
  nn::BatchNorm2d bn(4);
  EXPECT_EQ(values(bn.weight), (std::vector<double>{1, 1, 1, 1}));
  EXPECT_EQ(values(bn.running_var), (std::vector<double>{1, 1, 1, 1}));
  nn::Embedding emb(1000, 8);
  EXPECT_NEAR(emb.weight.std().item<double>(), 1.0, 0.05);
}

TEST(Module, ToMovesParametersInPlace) {
  auto fc = nn::make<nn::Linear>(3, 2);
  Tensor& w = fc->weight;
  Tensor alias = fc->weight;
  fc->to(kFloat64);
  EXPECT_EQ(w.dtype(), kFloat64);
  EXPECT_EQ(alias.dtype(), kFloat64) << "every handle sees the conversion";
  EXPECT_TRUE(w.requires_grad());
  Tensor y = fc->forward(ones({1, 3}, kFloat64));
  y.sum().backward();
  EXPECT_EQ(w.grad().dtype(), kFloat64);
  EXPECT_TRUE(w.grad().is_contiguous()) << "the gradient of w.t() is made column-major";
  fc->to(kFloat32);
  EXPECT_EQ(w.grad().dtype(), kFloat32) << "gradients follow their parameters";
  auto bn = nn::make<nn::BatchNorm2d>(2);
  bn->to(kFloat64);
  EXPECT_EQ(bn->running_mean.dtype(), kFloat64);
  EXPECT_EQ(bn->num_batches_tracked.dtype(), kInt64) << "integer buffers keep their dtype";
}

TEST(Module, TrainEvalAndZeroGrad) {
  auto net = nn::make<nn::Sequential>(std::initializer_list<std::shared_ptr<nn::Module>>{
      nn::make<nn::Linear>(2, 2), nn::make<nn::Dropout>(0.5)});
  net->eval();
  EXPECT_FALSE((*net)[1]->is_training());
  Tensor x = ones({4, 2});
  EXPECT_TRUE(net->forward(x).equal(net->forward(x))) << "dropout is the identity in eval mode";
  net->train();
  net->forward(x).sum().backward();
  EXPECT_TRUE(net->parameters()[0].grad().defined());
  net->zero_grad(/*set_to_none=*/false);
  EXPECT_EQ(net->parameters()[0].grad().abs().sum().item<double>(), 0);
  net->zero_grad();
  EXPECT_FALSE(net->parameters()[0].grad().defined());
}

TEST(Module, StateDictRoundTripAndClearErrors) {
  auto a = nn::make<models::LeNet>(), b = nn::make<models::LeNet>();
  b->load_state_dict(a->state_dict());
  Tensor x = randn({2, 1, 28, 28});
  EXPECT_TRUE(all_close(a->forward(x), b->forward(x), 0, 0));
  nn::NamedTensors state = a->state_dict();
  state.erase(state.begin());                     // conv1.weight missing
  state.emplace_back("extra.weight", ones({1}));  // unexpected
  state[1].second = zeros({7});                   // conv2.weight, mis-shaped
  try {
    b->load_state_dict(state);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("Missing key(s) in state_dict: \"conv1.weight\""), std::string::npos) << m;
    EXPECT_NE(m.find("Unexpected key(s) in state_dict: \"extra.weight\""), std::string::npos) << m;
    EXPECT_NE(m.find("size mismatch for"), std::string::npos) << m;
  }
  EXPECT_TRUE(all_close(a->forward(x), b->forward(x), 0, 0)) << "a failed load changes nothing";
  state = a->state_dict();
  state[0].second = Tensor();
  EXPECT_THROW_WITH(b->load_state_dict(state), "conv1.weight: the value is an undefined tensor");
}

TEST(Module, NonPersistentBuffersStayOutOfTheStateDict) {
  auto m = nn::make<nn::Linear>(2, 2);
  m->register_buffer("cache", ones({3}), /*persistent=*/false);
  m->register_buffer("count", zeros({1}));
  nn::NamedTensors state = m->state_dict();
  ASSERT_EQ(state.size(), 3U);
  EXPECT_EQ(state.back().first, "count");
  EXPECT_EQ(m->named_buffers().size(), 2U) << "named_buffers lists every buffer, as in PyTorch";
  m->load_state_dict(state);  // strict: the cache is not missing
  EXPECT_FALSE(m->is_persistent("cache"));
  std::shared_ptr<nn::Module> copy = m->clone();
  EXPECT_FALSE(copy->is_persistent("cache")) << "a clone keeps the buffer's kind";
  EXPECT_TRUE(all_close(*copy->buffer_slot("cache"), ones({3}), 0, 0));
  m->set_persistent("cache", true);
  EXPECT_EQ(m->state_dict().size(), 4U);
  EXPECT_THROW_WITH(m->is_persistent("nothing"), "has no buffer 'nothing'");
}

TEST(Module, ReplacedModulesAreThoseItsConstructorDidNotMake) {
  auto net = models::resnet18_fashion_mnist();
  EXPECT_TRUE(net->replaced_modules().empty());
  net->replace_module("fc", nn::make<nn::Linear>(512, 3));  // fine-tuning's new head
  net->named_child("layer2")->named_child("0")->replace_module("bn1",
                                                               nn::make<nn::BatchNorm2d>(128));
  auto block = net->named_child("layer1")->named_child("0");
  block->replace_module("bn2", nn::make<nn::BatchNorm2d>(64, 1e-3));
  block->register_module("extra", nn::make<nn::ReLU>());
  EXPECT_EQ(net->replaced_modules(),
            (std::vector<std::string>{"layer1.0.bn2", "layer1.0.extra", "fc"}))
      << "the same type and configuration (layer2.0.bn1) is no replacement";
  std::shared_ptr<nn::Module> copy = net->clone();
  EXPECT_TRUE(copy->replaced_modules() == net->replaced_modules()) << "a clone keeps them";
  EXPECT_EQ(copy->named_child("fc")->repr(), "Linear(in_features=512, out_features=3, bias=True)");
  Tensor x = randn({2, 1, 28, 28});
  net->eval();
  copy->eval();
  EXPECT_TRUE(all_close(net->forward(x), copy->forward(x), 0, 0));
}

TEST(Module, CloneIsADeepCopy) {
  auto a = nn::make<models::LeNet>();
  a->eval();
  std::shared_ptr<nn::Module> b = a->clone();
  EXPECT_FALSE(b->is_training());
  Tensor x = randn({3, 1, 28, 28});
  EXPECT_TRUE(all_close(a->forward(x), b->forward(x), 0, 0));
  NoGradGuard no_grad;
  a->parameters()[0].add_(1.0);
  EXPECT_FALSE(all_close(a->forward(x), b->forward(x), 0, 0)) << "the clone has its own tensors";
  for (const Tensor& p : b->parameters()) EXPECT_TRUE(p.requires_grad() && p.is_leaf());
}

// A module whose structure is registered at run time, as a Python subclass's is: its copy for a
// replica comes from clone_registered_into.
class Dynamic : public nn::Module {
 public:
  std::string name() const override { return "Dynamic"; }
  Tensor forward(const Tensor& x) override {
    Tensor y = named_child("fc")->forward(x);
    return y * *parameter_slot("scale");
  }

 protected:
  std::shared_ptr<Module> clone_impl() const override {
    auto copy = std::make_shared<Dynamic>();
    clone_registered_into(*copy);
    return copy;
  }
};

TEST(Module, AccessByNameReplaceAndRemove) {
  auto m = nn::make<Dynamic>();
  m->register_module("fc", nn::make<nn::Linear>(3, 2));
  m->register_parameter("scale", ones({1}));
  m->register_buffer("count", zeros({1}));
  ASSERT_NE(m->parameter_slot("scale"), nullptr);
  EXPECT_EQ(m->parameter_slot("nothing"), nullptr);
  EXPECT_EQ(m->buffer_slot("count")->sizes(), (Shape{1}));
  EXPECT_EQ(m->named_child("fc")->name(), "Linear");
  m->replace_module("fc", nn::make<nn::Linear>(3, 4));
  EXPECT_EQ(m->forward(ones({1, 3})).sizes(), (Shape{1, 4}));
  EXPECT_THROW(m->replace_module("missing", nn::make<nn::ReLU>()), Error);
  *m->parameter_slot("scale") = Tensor();  // as `module.scale = None`
  EXPECT_EQ(m->parameters().size(), 2u);
  *m->parameter_slot("scale") = full({1}, 2.0).requires_grad_();
  EXPECT_TRUE(m->remove_module("fc"));
  EXPECT_FALSE(m->remove_module("fc"));
  EXPECT_EQ(m->named_child("fc"), nullptr);
}

TEST(Module, ClonesARunTimeStructure) {
  auto m = nn::make<Dynamic>();
  m->register_module("fc", nn::make<nn::Linear>(3, 2));
  m->register_parameter("scale", full({1}, 2.0));
  m->register_buffer("count", full({1}, 7.0));
  std::shared_ptr<nn::Module> c = m->clone();
  EXPECT_EQ(c->name(), "Dynamic");
  EXPECT_TRUE(all_close(c->forward(ones({2, 3})), m->forward(ones({2, 3}))));
  EXPECT_EQ(values(*c->buffer_slot("count")), (std::vector<double>{7}));
  EXPECT_FALSE(c->parameter_slot("scale")->is_alias_of(*m->parameter_slot("scale")));
  EXPECT_TRUE(c->parameter_slot("scale")->requires_grad());
}

TEST(Layers, ShapesAndBehaviour) {
  Tensor img = randn({2, 3, 8, 8});
  EXPECT_EQ(nn::Conv2d(nn::Conv2dOptions(3, 4, 3).with_padding(1)).forward(img).sizes(),
            (Shape{2, 4, 8, 8}));
  EXPECT_EQ(nn::MaxPool2d(2).forward(img).sizes(), (Shape{2, 3, 4, 4}));
  EXPECT_EQ(nn::AvgPool2d(2).forward(img).sizes(), (Shape{2, 3, 4, 4}));
  EXPECT_EQ(nn::Flatten().forward(img).sizes(), (Shape{2, 192}));
  EXPECT_TRUE(all_close(nn::Softmax(1).forward(img).sum({1}), ones({2, 8, 8}), 1e-5, 1e-5));
  EXPECT_TRUE(
      all_close(nn::LogSoftmax(1).forward(img).exp().sum({1}), ones({2, 8, 8}), 1e-5, 1e-5));
  EXPECT_EQ(nn::Embedding(10, 4).forward(tensor({1, 2, 3})).sizes(), (Shape{3, 4}));
  EXPECT_GE(nn::ReLU().forward(img).min().item<double>(), 0.0);
  nn::Dropout drop(0.5);
  Tensor d = drop.forward(ones({10000}));
  double kept = (d > 0).sum().item<double>();
  EXPECT_NEAR(kept / 10000, 0.5, 0.03);
  EXPECT_TRUE(all_close(d.amax(), scalar_tensor(2.0))) << "kept values are scaled by 1 / (1 - p)";
  EXPECT_THROW_WITH(nn::Linear(4, 2).forward(ones({3, 5})), "doesn't match weight of shape [2, 4]");
  EXPECT_THROW_WITH(nn::Dropout(1.5), "between 0 and 1");
}

TEST(Layers, BatchNormTracksStatistics) {
  nn::BatchNorm2d bn(2);
  Tensor x = randn({8, 2, 4, 4}) * 3 + 5;
  Tensor y = bn.forward(x);
  EXPECT_TRUE(all_close(y.mean({0, 2, 3}), zeros({2}), 0, 1e-5));
  EXPECT_TRUE(all_close(y.var({0, 2, 3}, false), ones({2}), 1e-3, 1e-3));
  Tensor mean = x.mean({0, 2, 3}), var = x.var({0, 2, 3}, true);
  EXPECT_TRUE(all_close(bn.running_mean, mean * 0.1, 1e-5, 1e-5));
  EXPECT_TRUE(all_close(bn.running_var, var * 0.1 + 0.9, 1e-4, 1e-5));
  EXPECT_EQ(bn.num_batches_tracked.item<int64_t>(), 1);
  bn.eval();
  Tensor z = bn.forward(x);
  Tensor expected =
      (x - bn.running_mean.view({1, 2, 1, 1})) / (bn.running_var.view({1, 2, 1, 1}) + 1e-5).sqrt();
  EXPECT_TRUE(all_close(z, expected, 1e-4, 1e-4));
  EXPECT_THROW_WITH(bn.forward(ones({2, 2})), "expected 4D input");
}

// Note [Module calls]: hooks run wherever the module is called from, and can replace its input
// and output; removing the handle takes the hook out.
TEST(ModuleHooks, RunAroundForwardWhereverTheModuleIsCalled) {
  manual_seed(0);
  auto inner = nn::make<nn::Linear>(3, 3);
  auto model = std::make_shared<nn::Sequential>(std::initializer_list<std::shared_ptr<nn::Module>>{
      nn::make<nn::Linear>(2, 3), inner, nn::make<nn::Tanh>()});
  Tensor x = ones({4, 2});
  Tensor plain = (*model)(x);
  std::vector<std::string> seen;
  RemovableHandle pre = inner->register_forward_pre_hook([&](nn::Module& m, std::vector<Tensor>& in) {
    seen.push_back("pre " + m.name());
    in[0] = in[0] * 0;  // the input replaced
  });
  RemovableHandle post = inner->register_forward_hook(
      [&](nn::Module&, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
        seen.push_back("post");
        EXPECT_EQ(values(in[0]), std::vector<double>(12, 0.0));  // it sees the replaced input
        out[0] = out[0] + 1;
      });
  Tensor hooked = (*model)(x);  // through Sequential, which calls its children's operator()
  EXPECT_EQ(seen, (std::vector<std::string>{"pre Linear", "post"}));
  Tensor expected = tanh(inner->bias.detach().expand({4, 3}) + 1);
  EXPECT_TRUE(all_close(hooked, expected, 1e-6, 1e-6));
  pre.remove();
  post.remove();
  EXPECT_EQ(values((*model)(x)), values(plain));
  EXPECT_EQ(seen.size(), 2u);
}

TEST(ModuleHooks, SeeAForwardOverSeveralTensors) {
  manual_seed(0);
  // block_size 8, vocab 11, one layer, 2 heads, 8 wide.
  auto gpt = nn::make<models::GPT>(models::GPTConfig{8, 11, 1, 2, 8});
  size_t inputs = 0, outputs = 0;
  gpt->register_forward_pre_hook([&](nn::Module&, std::vector<Tensor>& in) { inputs = in.size(); });
  gpt->register_forward_hook([&](nn::Module&, const std::vector<Tensor>&, std::vector<Tensor>& out) {
    outputs = out.size();
  });
  Tensor idx = zeros({2, 5}, kInt64);
  auto [logits, loss] = (*gpt)(idx, idx);
  EXPECT_EQ(inputs, 2u);
  EXPECT_EQ(outputs, 2u);
  EXPECT_TRUE(all_close(loss, gpt->forward(idx, idx).second, 0, 0));
}

}  // namespace
}  // namespace ember
