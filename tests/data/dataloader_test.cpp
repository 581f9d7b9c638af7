#include <gtest/gtest.h>

#include <set>

#include "tests/util/test_util.h"

namespace ember {
namespace {

std::shared_ptr<data::TensorDataset> numbers(int64_t n) {
  return std::make_shared<data::TensorDataset>(arange(n, kFloat32).view({n, 1}), arange(n));
}

std::vector<double> targets(data::DataLoader& loader, std::vector<int64_t>* sizes = nullptr) {
  std::vector<double> all;
  for (const data::Example& b : loader) {
    if (sizes) sizes->push_back(b.target.size(0));
    for (double v : testing::values(b.target)) all.push_back(v);
  }
  return all;
}

TEST(DataLoader, BatchesInOrder) {
  data::DataLoader loader(numbers(10), data::DataLoaderOptions().with_batch_size(4));
  EXPECT_EQ(loader.size(), 3u);
  std::vector<int64_t> sizes;
  std::vector<double> t = targets(loader, &sizes);
  EXPECT_EQ(sizes, (std::vector<int64_t>{4, 4, 2}));
  EXPECT_EQ(t, (std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  data::DataLoader dropping(numbers(10),
                            data::DataLoaderOptions().with_batch_size(4).with_drop_last());
  EXPECT_EQ(dropping.size(), 2u);
  EXPECT_EQ(targets(dropping).size(), 8u);
}

TEST(DataLoader, ShuffleIsASeededPermutationPerEpoch) {
  auto opts = data::DataLoaderOptions().with_batch_size(7).with_shuffle().with_seed(42);
  data::DataLoader a(numbers(50), opts), b(numbers(50), opts);
  std::vector<double> e1 = targets(a), e2 = targets(a);
  EXPECT_EQ(e1, targets(b)) << "same seed, same order";
  EXPECT_NE(e1, e2) << "each epoch reshuffles";
  EXPECT_EQ(std::set<double>(e1.begin(), e1.end()).size(), 50u) << "a permutation";
  std::vector<double> sorted = e1;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_NE(e1, sorted);
}

TEST(DataLoader, WorkersGiveTheSameBatchesInTheSameOrder) {
  auto opts = data::DataLoaderOptions().with_batch_size(3).with_shuffle().with_seed(7);
  data::DataLoader serial(numbers(100), opts);
  data::DataLoader parallel(numbers(100), data::DataLoaderOptions(opts).with_workers(3));
  EXPECT_EQ(targets(serial), targets(parallel));
  // Leaving an epoch early and starting another is fine.
  for (const data::Example& b : parallel) {
    (void)b;
    break;
  }
  EXPECT_EQ(targets(parallel).size(), 100u);
}

class Failing : public data::Dataset {
 public:
  size_t size() const override { return 10; }
  data::Example get(size_t i) const override {
    EMBER_CHECK(i != 6, "[Failing] sample ", i, " is broken");
    return {scalar_tensor(static_cast<double>(i)), scalar_tensor(static_cast<int64_t>(i), kInt64)};
  }
};

TEST(DataLoader, AWorkerErrorReachesTheLoop) {
  data::DataLoader loader(std::make_shared<Failing>(),
                          data::DataLoaderOptions().with_batch_size(2).with_workers(2));
  int batches = 0;
  EXPECT_THROW_WITH(
      {
        for (const data::Example& b : loader) {
          (void)b;
          ++batches;
        }
      },
      "sample 6 is broken");
  EXPECT_EQ(batches, 3);
}

// Records the settings it was called under.
class Recording : public data::Dataset {
 public:
  size_t size() const override { return 4; }
  data::Example get(size_t i) const override {
    bool ok = amp::is_autocast_enabled(kCPU) && !GradMode::is_enabled();
    return {scalar_tensor(ok ? 1.0 : 0.0), scalar_tensor(static_cast<int64_t>(i), kInt64)};
  }
};

TEST(DataLoader, WorkersRunWithTheSettingsOfTheThreadThatBeganTheEpoch) {
  data::DataLoader loader(std::make_shared<Recording>(),
                          data::DataLoaderOptions().with_batch_size(1).with_workers(2));
  NoGradGuard no_grad;
  amp::autocast guard(kCPU);
  for (const data::Example& b : loader) EXPECT_EQ(b.data.item<double>(), 1);
}

}  // namespace
}  // namespace ember
