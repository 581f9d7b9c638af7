#include "ember/distributed/training_checkpoint.h"

#include <filesystem>

#include "ember/core/generator.h"
#include "ember/distributed/distributed.h"
#include "ember/io/checkpoint.h"
#include "ember/ops/factory.h"

namespace ember::distributed {
namespace {

constexpr const char* kFormat = "ember-training-checkpoint-1";

int64_t metadata_int(const io::Metadata& m, const std::string& key, const std::string& path) {
  auto it = m.find(key);
  EMBER_CHECK(it != m.end(), "[TrainingCheckpoint] ", path, " has no '", key, "' in its metadata");
  char* end = nullptr;
  long long v = std::strtoll(it->second.c_str(), &end, 10);
  EMBER_CHECK(!it->second.empty() && end && *end == '\0' && v >= 0, "[TrainingCheckpoint] ", path,
              ": '", key, "' must be a non-negative integer, got '", it->second, "'");
  return v;
}

// The default generator's (seed, offset) as an int64 tensor of 2.
Tensor generator_state() {
  auto [seed, offset] = default_generator().get_state();
  Tensor t = empty({2}, kInt64);
  t.data_ptr<int64_t>()[0] = static_cast<int64_t>(seed);
  t.data_ptr<int64_t>()[1] = static_cast<int64_t>(offset);
  return t;
}

// A rank's [loaded, epoch, step, sample], for the error when two ranks read different files.
std::string describe(const Tensor& t) {
  std::vector<int64_t> v = t.tolist<int64_t>();
  if (v[0] == 0) return "no checkpoint";
  return detail::str_cat("epoch ", v[1], " step ", v[2], " sample ", v[3]);
}

}  // namespace

TrainingCheckpoint::TrainingCheckpoint(std::string path, nn::Module& model,
                                       optim::Optimizer& optimizer, optim::LRScheduler* scheduler)
    : path_(std::move(path)), model_(model), optimizer_(optimizer), scheduler_(scheduler) {}

std::optional<TrainingPosition> TrainingCheckpoint::load(ProcessGroup* group) {
  ProcessGroup& g = group ? *group : default_group();
  // [loaded, epoch, step, sample] of every rank, compared with rank 0's below.
  Tensor mine = zeros({4}, kInt64);
  std::optional<TrainingPosition> position;
  if (std::filesystem::exists(path_)) {
    io::LoadedCheckpoint c = io::load_checkpoint(path_, model_, optimizer_, scheduler_);
    auto format = c.metadata.find("format");
    EMBER_CHECK(format != c.metadata.end() && format->second == kFormat, "[TrainingCheckpoint] ",
                path_, " is not a training checkpoint (its metadata has no format ", kFormat, ")");
    position = TrainingPosition{metadata_int(c.metadata, "epoch", path_),
                                metadata_int(c.metadata, "step", path_),
                                metadata_int(c.metadata, "sample", path_)};
    std::string mine_key = "generator." + std::to_string(g.rank());
    for (auto& [name, t] : c.extra)
      if (name == mine_key && t.numel() == 2 && t.dtype() == kInt64)
        default_generator().set_state({static_cast<uint64_t>(t.data_ptr<int64_t>()[0]),
                                       static_cast<uint64_t>(t.data_ptr<int64_t>()[1])});
    int64_t* p = mine.data_ptr<int64_t>();
    p[0] = 1;
    p[1] = position->epoch;
    p[2] = position->step;
    p[3] = position->sample;
  }
  std::vector<Tensor> all;
  for (int r = 0; r < g.size(); ++r) all.push_back(zeros({4}, kInt64));
  all_gather(all, mine, &g);
  for (int r = 1; r < g.size(); ++r)
    EMBER_CHECK(all[static_cast<size_t>(r)].equal(all[0]), "[TrainingCheckpoint] rank ", r,
                " read another checkpoint than rank 0 from ", path_, " (",
                describe(all[static_cast<size_t>(r)]), " against ", describe(all[0]),
                "): every rank must see the same file (shared storage on several machines)");
  return position;
}

void TrainingCheckpoint::save(const TrainingPosition& position, ProcessGroup* group) {
  ProcessGroup& g = group ? *group : default_group();
  std::vector<Tensor> generators;
  for (int r = 0; r < g.size(); ++r) generators.push_back(zeros({2}, kInt64));
  all_gather(generators, generator_state(), &g);
  if (g.rank() != 0) return;
  io::CheckpointExtras extras{scheduler_, {}};
  for (int r = 0; r < g.size(); ++r)
    extras.tensors.emplace_back("generator." + std::to_string(r),
                                generators[static_cast<size_t>(r)]);
  io::save_checkpoint(path_, model_, optimizer_,
                      {{"format", kFormat},
                       {"epoch", std::to_string(position.epoch)},
                       {"step", std::to_string(position.step)},
                       {"sample", std::to_string(position.sample)},
                       {"world_size", std::to_string(g.size())}},
                      extras);
}

}  // namespace ember::distributed
