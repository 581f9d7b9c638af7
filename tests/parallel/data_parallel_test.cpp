// DataParallel over 1 to 4 virtual CPU devices gives the plain module's outputs and gradients on
// the whole batch; the primitives split, replicate, apply and gather as PyTorch's do, minus the
// empty chunks.
#include <gtest/gtest.h>

#include "tests/util/test_util.h"

namespace ember {
namespace {

using testing::all_close;

std::vector<Device> devices(int n) {
  std::vector<Device> d;
  for (int i = 0; i < n; ++i) d.emplace_back(kCPU, i);
  return d;
}

TEST(Scatter, BalancedChunksAndNeverAnEmptyOne) {
  ASSERT_EQ(cpu::device_count(), 4);
  EXPECT_EQ(parallel::chunk_sizes(9, 4), (std::vector<int64_t>{3, 2, 2, 2}));
  EXPECT_EQ(parallel::chunk_sizes(8, 4), (std::vector<int64_t>{2, 2, 2, 2}));
  EXPECT_EQ(parallel::chunk_sizes(3, 4), (std::vector<int64_t>{1, 1, 1}));
  std::vector<Tensor> parts = parallel::scatter(arange(9, kFloat32).view({9, 1}), devices(4));
  ASSERT_EQ(parts.size(), 4u);
  EXPECT_EQ(parts[0].size(0), 3);
  EXPECT_EQ(parts[3].device(), Device("cpu:3"));
  EXPECT_EQ(testing::values(parts[3]), (std::vector<double>{7, 8}));
  EXPECT_THROW_WITH(parallel::scatter(zeros({0, 2}), devices(2)), "empty batch");
}

TEST(Gather, ConcatenatesAndStacksScalars) {
  Tensor g = parallel::gather({ones({2, 3}, TensorOptions().with_device("cpu:1")),
                               zeros({1, 3}, TensorOptions().with_device("cpu:2"))},
                              Device("cpu:0"));
  EXPECT_EQ(g.sizes(), (Shape{3, 3}));
  EXPECT_EQ(g.device(), Device("cpu:0"));
  Tensor losses = parallel::gather({scalar_tensor(1.0, TensorOptions().with_device("cpu:1")),
                                    scalar_tensor(2.0, TensorOptions().with_device("cpu:2"))},
                                   Device("cpu:0"));
  EXPECT_EQ(testing::values(losses), (std::vector<double>{1, 2}));
}

// Outputs and gradients of DataParallel(model) equal those of model on the whole batch.
void expect_equivalent(const std::function<std::shared_ptr<nn::Module>()>& make, const Tensor& x,
                       bool train) {
  for (int n = 1; n <= 4; ++n) {
    manual_seed(3);
    std::shared_ptr<nn::Module> plain = make();
    manual_seed(3);
    std::shared_ptr<nn::Module> inner = make();
    inner->load_state_dict(plain->state_dict());
    plain->train(train);
    inner->train(train);
    auto dp = nn::make<nn::DataParallel>(inner, devices(n));
    Tensor target = randint(0, 10, {x.size(0)});
    Tensor y_plain = plain->forward(x);
    Tensor y_dp = dp->forward(x);
    EXPECT_EQ(y_dp.device(), Device("cpu:0"));
    EXPECT_TRUE(all_close(y_dp, y_plain, 1e-5, 1e-5)) << n << " devices: outputs";
    nn::functional::cross_entropy(y_plain, target).backward();
    nn::functional::cross_entropy(y_dp, target).backward();
    auto pp = plain->named_parameters(), dpp = inner->named_parameters();
    for (size_t i = 0; i < pp.size(); ++i) {
      ASSERT_TRUE(dpp[i].second.grad().defined())
          << n << " devices: " << dpp[i].first << " got no gradient";
      EXPECT_EQ(dpp[i].second.grad().device(), Device("cpu:0"));
      EXPECT_TRUE(all_close(dpp[i].second.grad(), pp[i].second.grad(), 1e-4, 1e-6))
          << n << " devices: gradient of " << pp[i].first;
    }
  }
}

TEST(DataParallel, LeNetOverOneToFourDevices) {
  manual_seed(1);
  Tensor x = randn({10, 1, 28, 28});  // 10 on 4 devices: 3, 3, 2, 2
  expect_equivalent([] { return nn::make<models::LeNet>(); }, x, true);
}

std::shared_ptr<nn::Module> bn_model() {
  return nn::make<nn::Sequential>(std::initializer_list<std::shared_ptr<nn::Module>>{
      nn::make<nn::Conv2d>(nn::Conv2dOptions(3, 4, 3).with_padding(1)),
      nn::make<nn::BatchNorm2d>(4), nn::make<nn::ReLU>(), nn::make<nn::Flatten>(),
      nn::make<nn::Linear>(4 * 6 * 6, 10)});
}

TEST(DataParallel, BatchNormModelOverOneToFourDevices) {
  manual_seed(2);
  Tensor x = randn({9, 3, 6, 6});
  // In evaluation mode BatchNorm uses its running statistics, so every split agrees with the whole
  // batch. (In training mode each replica normalises its own chunk, as in PyTorch.)
  expect_equivalent(bn_model, x, /*train=*/false);
}

TEST(DataParallel, RunningStatisticsOfTheFirstReplicaPersist) {
  auto model = bn_model();
  auto seq = std::dynamic_pointer_cast<nn::Sequential>(model);
  auto* bn = dynamic_cast<nn::BatchNorm2d*>((*seq)[1].get());
  Tensor x = randn({9, 3, 6, 6}) * 2 + 1;  // chunks of 3, 2, 2, 2 on four devices
  auto dp = nn::make<nn::DataParallel>(model, devices(4));
  Tensor y = dp->forward(x);
  // Replica 0 normalised the first chunk and updated the original running statistics in place;
  // the other replicas' updates went to copies (PyTorch's semantics).
  Tensor h = (*seq)[0]->forward(x.narrow(0, 0, 3)).detach();
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 1);
  EXPECT_TRUE(all_close(bn->running_mean, h.mean({0, 2, 3}) * 0.1, 1e-5, 1e-6));
  EXPECT_TRUE(
      all_close(bn->running_var, h.var({0, 2, 3}, /*unbiased=*/true) * 0.1 + 0.9, 1e-5, 1e-6));
  EXPECT_EQ(bn->running_mean.device(), Device("cpu:0"));
  // In training mode each replica normalises its own chunk with its own statistics.
  auto plain = bn_model();
  plain->load_state_dict(model->state_dict());
  Tensor last = plain->forward(x.narrow(0, 7, 2));
  EXPECT_TRUE(all_close(y.narrow(0, 7, 2), last, 1e-5, 1e-5));
}

TEST(DataParallel, AutocastAndGradModeApplyInsideTheReplicas) {
  // The replicas run on threads of their own: the caller's settings travel with them
  // (ThreadLocalState), so the outputs are bfloat16 as on one device, and no_grad records nothing.
  manual_seed(4);
  auto model = nn::make<models::LeNet>();
  auto dp = nn::make<nn::DataParallel>(model, devices(3));
  Tensor x = randn({6, 1, 28, 28});
  {
    amp::autocast guard(kCPU);
    Tensor y = dp->forward(x);
    EXPECT_EQ(y.dtype(), kBFloat16);
    Tensor y1 = model->forward(x);
    EXPECT_TRUE(all_close(y.to(kFloat32), y1.to(kFloat32), 2e-2, 2e-2));
    nn::functional::cross_entropy(y, randint(0, 10, {6})).backward();
  }
  for (auto& [name, p] : model->named_parameters()) {
    ASSERT_TRUE(p.grad().defined()) << name;
    EXPECT_EQ(p.grad().dtype(), kFloat32) << name;
  }
  NoGradGuard no_grad;
  EXPECT_FALSE(dp->forward(x).requires_grad());
}

TEST(DataParallel, ParametersMustBeOnTheFirstDevice) {
  auto model = nn::make<nn::Linear>(4, 2);
  model->to(Device("cpu:1"));
  auto dp = nn::make<nn::DataParallel>(model, devices(2));
  EXPECT_THROW_WITH(
      dp->forward(ones({4, 4})),
      "module must have its parameters and buffers on device cpu:0 (device_ids[0]) but found parameter 'weight' on device cpu:1");
}

TEST(DataParallel, ASmallBatchUsesFewerDevices) {
  auto model = nn::make<nn::Linear>(4, 2);
  auto dp = nn::make<nn::DataParallel>(model, devices(4));
  Tensor x = randn({2, 4});
  Tensor y = dp->forward(x);  // two items on four devices: two replicas, no empty chunk
  EXPECT_EQ(y.sizes(), (Shape{2, 2}));
  EXPECT_TRUE(all_close(y, model->forward(x), 1e-6, 1e-6));
}

// The guides' pattern: only one block of the model is data-parallel.
class PartlyParallel : public nn::Module {
 public:
  PartlyParallel()
      : features(register_module(
            "features",
            nn::make<nn::DataParallel>(
                nn::make<nn::Sequential>(std::initializer_list<std::shared_ptr<nn::Module>>{
                    nn::make<nn::Linear>(8, 16), nn::make<nn::ReLU>()}),
                std::vector<Device>{Device("cpu:0"), Device("cpu:1"), Device("cpu:2")}))),
        head(register_module("head", nn::make<nn::Linear>(16, 3))) {}
  Tensor forward(const Tensor& x) override { return head->forward(features->forward(x)); }
  std::string name() const override { return "PartlyParallel"; }
  std::shared_ptr<nn::DataParallel> features;
  std::shared_ptr<nn::Linear> head;

 protected:
  std::shared_ptr<nn::Module> clone_impl() const override {
    return std::make_shared<PartlyParallel>();
  }
};

TEST(DataParallel, OnlyOneBlockWrapped) {
  auto model = nn::make<PartlyParallel>();
  Tensor x = randn({7, 8});
  Tensor y = model->forward(x);
  Tensor expected = model->head->forward(model->features->module()->forward(x));
  EXPECT_TRUE(all_close(y, expected, 1e-5, 1e-6));
  y.sum().backward();
  for (auto& [name, p] : model->named_parameters()) EXPECT_TRUE(p.grad().defined()) << name;
  std::vector<std::string> keys;
  for (auto& [k, t] : model->state_dict()) keys.push_back(k);
  EXPECT_EQ(keys[0], "features.module.0.weight") << "PyTorch's DataParallel key prefix";
}

TEST(ParallelApply, TheFirstErrorIsRethrownAfterAllFinish) {
  auto a = nn::make<nn::Linear>(4, 2), b = nn::make<nn::Linear>(4, 2);
  b->to(Device("cpu:1"));
  std::vector<std::shared_ptr<nn::Module>> replicas{a, b};
  EXPECT_THROW_WITH(
      parallel::parallel_apply(
          replicas, {ones({1, 4}), ones({1, 5}, TensorOptions().with_device("cpu:1"))}, devices(2)),
      "doesn't match weight of shape [2, 4]");
}

TEST(Replicate, AllocatesOnlyWhatTheReplicasKeep) {
  // A replica on the original's device shares its parameters: building it allocates no copy
  // (clone_structure's layers hold one-element stand-ins until replicate fills them).
  auto model = nn::make<models::LeNet>();
  CachingAllocator& cpu0 = device_backend(kCPU).allocator(0);
  cpu0.reset_peak_stats();
  size_t before = cpu0.memory_allocated();
  auto replicas = parallel::replicate(model, {Device(kCPU, 0)});
  size_t peak = static_cast<size_t>(cpu0.stats().allocated_bytes[kAllPools].peak);
  size_t params = 0;
  for (const Tensor& p : model->parameters()) params += p.nbytes();
  EXPECT_LT(peak - before, params / 10) << "parameters are " << params << " bytes";
  EXPECT_TRUE(replicas[0]->parameters()[0].is_same(model->parameters()[0]));
}

}  // namespace
}  // namespace ember
