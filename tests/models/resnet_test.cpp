// ResNet-18: torchvision's state-dict names and sizes, shapes through both stems, a training step
// that reaches every parameter, replaced children (convert_sync_batchnorm's way) surviving clone(),
// and a safetensors round trip with PyTorch 1.13 (tests/oracle/resnet_interop.py).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "tests/util/npy.h"
#include "tests/util/test_util.h"

namespace ember {
namespace {

using namespace ember::testing;
namespace fs = std::filesystem;

int64_t parameter_count(const nn::Module& m) {
  int64_t n = 0;
  for (const Tensor& p : m.parameters()) n += p.numel();
  return n;
}

TEST(ResNet18, StateDictHasTorchvisionNamesAndSizes) {
  auto model = nn::make<models::ResNet18>();
  nn::NamedTensors state = model->state_dict();
  ASSERT_EQ(state.size(), 122u) << "torchvision's resnet18 has 122 state-dict entries";
  std::vector<std::pair<std::string, Shape>> expected = {
      {"conv1.weight", {64, 3, 7, 7}},
      {"bn1.weight", {64}},
      {"bn1.bias", {64}},
      {"bn1.running_mean", {64}},
      {"bn1.running_var", {64}},
      {"bn1.num_batches_tracked", {}},
      {"layer1.0.conv1.weight", {64, 64, 3, 3}},
      {"layer1.0.bn1.weight", {64}},
  };
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(state[i].first, expected[i].first);
    EXPECT_EQ(state[i].second.sizes(), expected[i].second) << expected[i].first;
  }
  std::map<std::string, Shape> by_name;
  for (auto& [name, t] : state) by_name[name] = t.sizes();
  EXPECT_EQ(by_name.at("layer2.0.downsample.0.weight"), (Shape{128, 64, 1, 1}));
  EXPECT_EQ(by_name.at("layer4.1.bn2.running_var"), (Shape{512}));
  EXPECT_EQ(by_name.at("fc.weight"), (Shape{1000, 512}));
  EXPECT_EQ(by_name.count("layer1.0.downsample.0.weight"), 0u) << "identity shortcut";
  EXPECT_EQ(state.back().first, "fc.bias");
  EXPECT_EQ(parameter_count(*model), 11689512) << "torchvision's resnet18 parameter count";
  // d2l's variant: a 3x3 stem on one channel, 10 classes.
  EXPECT_EQ(parameter_count(*models::resnet18_fashion_mnist(28)), 11172810);
  EXPECT_EQ(models::resnet18_fashion_mnist(96)->options.stem, models::ResNetStem::ImageNet);
}

TEST(ResNet18, ForwardShapesForBothStems) {
  manual_seed(0);
  NoGradGuard no_grad;
  auto small = models::resnet18_fashion_mnist(28);
  EXPECT_EQ(small->forward(randn({2, 1, 28, 28})).sizes(), (Shape{2, 10}));
  auto large = models::resnet18_fashion_mnist(96);
  EXPECT_EQ(large->forward(randn({2, 1, 96, 96})).sizes(), (Shape{2, 10}));
  auto imagenet = nn::make<models::ResNet18>(models::ResNet18Options().with_num_classes(7));
  EXPECT_EQ(imagenet->forward(randn({1, 3, 64, 64})).sizes(), (Shape{1, 7}));
  EXPECT_THROW_WITH(small->forward(randn({2, 3, 28, 28})), "to have 1 channels, but got 3");
}

TEST(ResNet18, ATrainingStepReachesEveryParameter) {
  manual_seed(1);
  auto model = models::resnet18_fashion_mnist(28);
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.1).with_momentum(0.9));
  Tensor x = randn({4, 1, 28, 28}), y = tensor({0, 3, 7, 9});
  Tensor before = model->fc->weight.detach().clone();
  Tensor loss = nn::functional::cross_entropy(model->forward(x), y);
  loss.backward();
  for (auto& [name, p] : model->named_parameters()) {
    ASSERT_TRUE(p.grad().defined()) << name << " got no gradient";
    EXPECT_GT(p.grad().abs().sum().item<double>(), 0) << name;
  }
  opt.step();
  EXPECT_FALSE(model->fc->weight.equal(before));
  for (auto& [name, b] : model->named_buffers())
    if (name.find("num_batches_tracked") != std::string::npos)
      EXPECT_EQ(b.item<int64_t>(), 1) << name;
  // Evaluation mode is deterministic and uses the running statistics.
  model->eval();
  NoGradGuard no_grad;
  EXPECT_TRUE(model->forward(x).equal(model->forward(x)));
}

// A stand-in for SyncBatchNorm: a BatchNorm2d subclass that doubles its output.
class DoublingBatchNorm : public nn::BatchNorm2d {
 public:
  explicit DoublingBatchNorm(int64_t n) : nn::BatchNorm2d(n) {}
  Tensor forward(const Tensor& x) override { return nn::BatchNorm2d::forward(x) * 2; }
  std::string name() const override { return "DoublingBatchNorm"; }

 protected:
  std::shared_ptr<nn::Module> clone_impl() const override {
    return std::make_shared<DoublingBatchNorm>(num_features);
  }
};

TEST(ResNet18, ReplacedChildrenAreUsedAndSurviveClone) {
  manual_seed(2);
  auto model = models::resnet18_fashion_mnist(28);
  model->eval();
  Tensor x = randn({2, 1, 28, 28});
  NoGradGuard no_grad;
  Tensor before = model->forward(x);
  auto block = std::dynamic_pointer_cast<models::BasicBlock>(
      (*std::dynamic_pointer_cast<nn::Sequential>(model->layer1))[0]);
  auto old = block->replace_module("bn2", nn::make<DoublingBatchNorm>(64));
  EXPECT_EQ(old->name(), "BatchNorm2d");
  EXPECT_EQ(block->bn2->name(), "DoublingBatchNorm") << "the typed handle follows";
  block->bn2->eval();
  Tensor after = model->forward(x);
  EXPECT_FALSE(after.equal(before));
  std::shared_ptr<nn::Module> copy = model->clone();
  EXPECT_TRUE(copy->forward(x).equal(after)) << "clone() keeps the replaced child";
  EXPECT_EQ(copy->named_children().size(), model->named_children().size());
  auto old_stem = model->replace_module("bn1", nn::make<nn::BatchNorm2d>(64));
  EXPECT_NE(model->bn1, old_stem);
  EXPECT_THROW_WITH(model->replace_module("nope", nn::make<nn::ReLU>()),
                    "ResNet has no submodule 'nope'");
  EXPECT_THROW_WITH(model->replace_module("fc", nn::make<nn::ReLU>()),
                    "conv1 must be a Conv2d and fc a Linear module");
}

// ember -> PyTorch -> ember through safetensors, logits compared both ways.
void round_trip(const std::string& variant) {
  std::string py = torch_python();
  if (py.empty()) GTEST_SKIP() << "needs /usr/bin/python3 with torch (python3-torch)";
  fs::path dir = fs::temp_directory_path() /
                 ("ember_resnet_interop_" + variant + "_" + std::to_string(getpid()));
  fs::create_directories(dir);
  manual_seed(3);
  bool small = variant == "small";
  auto model = small ? models::resnet18_fashion_mnist(28)
                     : nn::make<models::ResNet18>(models::ResNet18Options().with_num_classes(10));
  Tensor x = randn({4, small ? 1 : 3, small ? 28 : 64, small ? 28 : 64});
  Tensor y = tensor({1, 2, 3, 4});
  {  // a step in training mode, so that the running statistics are not the initial ones
    optim::SGD opt(model->parameters(), optim::SGDOptions(0.1));
    nn::functional::cross_entropy(model->forward(x), y).backward();
    opt.step();
  }
  model->eval();
  NoGradGuard no_grad;
  io::save(*model, (dir / "ember_resnet.safetensors").string());
  write_npy((dir / "x.npy").string(), x);
  write_npy((dir / "y.npy").string(), y.to(kFloat32));
  write_npy((dir / "ember_logits.npy").string(), model->forward(x));
  std::string script = std::string(EMBER_SOURCE_DIR) + "/tests/oracle/resnet_interop.py";
  ASSERT_EQ(std::system((py + " " + script + " check " + dir.string() + " " + variant).c_str()), 0)
      << "PyTorch disagreed with ember's ResNet-18";
  io::load(*model, (dir / "torch_resnet.safetensors").string());
  Tensor torch_logits = read_npy((dir / "torch_logits.npy").string());
  EXPECT_TRUE(all_close(model->forward(x), torch_logits, 1e-4, 1e-4))
      << "PyTorch's trained ResNet-18 predicts the same in ember";
  fs::remove_all(dir);
}

TEST(ResNet18, SafetensorsRoundTripWithPyTorchSmallStem) { round_trip("small"); }
TEST(ResNet18, SafetensorsRoundTripWithPyTorchImageNetStem) { round_trip("imagenet"); }

}  // namespace
}  // namespace ember
