// TrainingCheckpoint with ranks as threads: rank 0 writes, every rank reads the same state back;
// ranks that read different files are told; a rank's generator comes back.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <mutex>

#include "ember/distributed/distributed.h"
#include "ember/distributed/training_checkpoint.h"
#include "ember/ember.h"
#include "tests/util/test_util.h"

namespace ember::distributed {
namespace {

namespace fs = std::filesystem;

// The default generator is shared by the rank threads: seeding and drawing happen under a lock.
std::mutex random_mutex;

struct Trainee {
  std::shared_ptr<nn::Module> model;
  std::unique_ptr<optim::SGD> optimizer;
  std::unique_ptr<optim::StepLR> scheduler;
};

Trainee make_trainee(uint64_t seed) {
  std::lock_guard<std::mutex> lock(random_mutex);
  manual_seed(seed);
  Trainee t;
  t.model = nn::make<models::MLP>(std::vector<int64_t>{4, 8, 2});
  t.optimizer = std::make_unique<optim::SGD>(t.model->parameters(),
                                             optim::SGDOptions(0.1).with_momentum(0.9));
  t.scheduler = std::make_unique<optim::StepLR>(*t.optimizer, 1, 0.5);
  return t;
}

void train_step(Trainee& t) {
  Tensor x, y;
  {
    std::lock_guard<std::mutex> lock(random_mutex);
    manual_seed(11);
    x = randn({6, 4});
    y = randint(0, 2, {6});
  }
  t.optimizer->zero_grad();
  nn::functional::cross_entropy(t.model->forward(x), y).backward();
  t.optimizer->step();
  t.scheduler->step();
}

std::string fresh_dir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

TEST(TrainingCheckpoint, RankZeroWritesAndEveryRankResumesFromIt) {
  std::string dir = fresh_dir("ember_training_ckpt");
  std::string path = dir + "/checkpoint.safetensors";
  std::vector<Tensor> saved;
  run_threads(2, [&](int rank) {
    Trainee t = make_trainee(3);
    TrainingCheckpoint none(path, *t.model, *t.optimizer, t.scheduler.get());
    EXPECT_FALSE(none.load().has_value()) << "no file: nothing to resume";
    train_step(t);
    none.save({2, 40, 2560});
    if (rank == 0) saved = t.model->parameters();
  });
  ASSERT_TRUE(fs::exists(path));
  io::SafetensorsFile file = io::load_safetensors(path);
  EXPECT_EQ(file.metadata.at("world_size"), "2");
  int generators = 0;
  for (auto& [name, t] : file.tensors) generators += name.rfind("extra.generator.", 0) == 0;
  EXPECT_EQ(generators, 2) << "one generator state per rank";

  // A group of another size (3) resumes: every rank gets rank 0's model, optimizer, scheduler.
  run_threads(3, [&](int rank) {
    Trainee t = make_trainee(100 + static_cast<uint64_t>(rank));
    TrainingCheckpoint checkpoint(path, *t.model, *t.optimizer, t.scheduler.get());
    std::optional<TrainingPosition> at = checkpoint.load();
    ASSERT_TRUE(at.has_value());
    EXPECT_EQ(*at, (TrainingPosition{2, 40, 2560}));
    EXPECT_EQ(t.scheduler->last_epoch(), 1);
    EXPECT_DOUBLE_EQ(t.optimizer->lr(), 0.05);
    std::vector<Tensor> params = t.model->parameters();
    ASSERT_EQ(params.size(), saved.size());
    for (size_t i = 0; i < params.size(); ++i) EXPECT_TRUE(params[i].equal(saved[i])) << i;
  });
  fs::remove_all(dir);
}

// Rank 1 does not see rank 0's file (no shared storage): an error on every rank, not two ranks
// that train from different states.
TEST(TrainingCheckpoint, RanksThatReadDifferentFilesAreAnError) {
  std::string dir = fresh_dir("ember_training_ckpt_split");
  run_threads(1, [&](int) {
    Trainee t = make_trainee(3);
    TrainingCheckpoint(dir + "/0.safetensors", *t.model, *t.optimizer, t.scheduler.get())
        .save({1, 7, 448});
  });
  EXPECT_THROW_WITH(run_threads(2,
                                [&](int rank) {
                                  Trainee t = make_trainee(3);
                                  TrainingCheckpoint checkpoint(
                                      dir + "/" + std::to_string(rank) + ".safetensors", *t.model,
                                      *t.optimizer, t.scheduler.get());
                                  checkpoint.load();
                                }),
                    "rank 1 read another checkpoint than rank 0 from " + dir +
                        "/1.safetensors (no checkpoint against epoch 1 step 7 sample 448)");
  fs::remove_all(dir);
}

// The generator draws after a resume what it would have drawn after the save.
TEST(TrainingCheckpoint, TheGeneratorComesBack) {
  std::string dir = fresh_dir("ember_training_ckpt_rng");
  run_threads(1, [&](int) {
    Trainee t = make_trainee(3);
    TrainingCheckpoint checkpoint(dir + "/c.safetensors", *t.model, *t.optimizer,
                                  t.scheduler.get());
    std::lock_guard<std::mutex> lock(random_mutex);
    manual_seed(5);
    randn({3});
    checkpoint.save({0, 1, 1});
    Tensor next = randn({4});
    manual_seed(77);
    ASSERT_TRUE(checkpoint.load().has_value());
    EXPECT_TRUE(next.equal(randn({4})));
  });
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ember::distributed
