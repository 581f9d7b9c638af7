// `ember train --nproc N --resume`: where a DDP run starts (the checkpoint in --out, if any), how
// it keeps that checkpoint current, and the --events log of its steps, checkpoints and restarts.
#pragma once

#include <cstdio>
#include <memory>
#include <string>

#include "ember/distributed/distributed_sampler.h"
#include "ember/distributed/training_checkpoint.h"
#include "tools/ember/training.h"

namespace ember::cli {

/// TORCHELASTIC_RESTART_COUNT: the restarts of an elastic job so far (0 outside one).
int restart_count();

/// Wall-clock seconds since 1970 (what --events logs; other processes can compare them).
double wall_time();

/// One JSON line per event, with the wall-clock time, appended and flushed at once (a rank killed
/// the next moment leaves every line it wrote). Does nothing without a path.
class EventLog {
 public:
  explicit EventLog(const std::string& path);
  ~EventLog();
  EventLog(const EventLog&) = delete;
  EventLog& operator=(const EventLog&) = delete;
  /// `fields`: the JSON object's members after "time" and "event", e.g. "\"epoch\":1".
  void write(const std::string& event, const std::string& fields = "");

 private:
  FILE* file_ = nullptr;
};

class ResumableRun {
 public:
  /// Every rank: with cfg.resume, loads --out/checkpoint.safetensors if it is there. Rank 0
  /// logs to cfg.events, with `started` (wall-clock seconds: when the rank began) in the start
  /// event, so that a restart's time can be split into launch, start-up and the checkpoint's load.
  ResumableRun(const TrainConfig& cfg, nn::Module& model, optim::Optimizer& optimizer,
               double started);
  int64_t first_epoch() const { return position_.epoch; }
  /// Sets the sampler to `epoch`, resuming part-way in the checkpoint's epoch.
  void begin_epoch(distributed::DistributedSampler& sampler, int64_t epoch);
  /// After each optimizer step; `batches` is the count in this epoch since begin_epoch. Saves
  /// every cfg.checkpoint_every steps (every rank calls it: saving is collective).
  void after_step(const distributed::DistributedSampler& sampler, size_t batches);
  /// Saves the start of the next epoch.
  void end_epoch(int64_t epoch);
  void finish(double test_accuracy);

 private:
  void save(const distributed::TrainingPosition& position);
  const TrainConfig& cfg_;
  int rank_;
  std::unique_ptr<distributed::TrainingCheckpoint> checkpoint_;  // with --resume
  distributed::TrainingPosition position_;  // where this run started, then where it is
  int64_t epoch_step0_ = 0;                 // position_.step when the epoch (re)started
  int64_t steps_ = 0;                       // steps of this run
  EventLog events_;
};

}  // namespace ember::cli
