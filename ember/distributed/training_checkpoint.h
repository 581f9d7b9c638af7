// Checkpoints that let a distributed job resume where it stopped, with as many ranks as are left
// (the elastic agent restarts the group; the program resumes from here): model, optimizer,
// scheduler, the position in the epoch and every rank's random generator, written atomically by
// rank 0 and read by every rank on start. The file must be where every rank can read it (shared
// storage on several machines).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ember/distributed/process_group.h"
#include "ember/nn/module.h"
#include "ember/optim/lr_scheduler.h"
#include "ember/optim/optimizer.h"

namespace ember::distributed {

/// Where a training run is.
struct TrainingPosition {
  int64_t epoch = 0;   // the epoch in progress, from 0
  int64_t step = 0;    // optimizer steps done in it (by this run and the ones it resumed)
  int64_t sample = 0;  // samples of the epoch's order trained on: DistributedSampler::set_start's
  bool operator==(const TrainingPosition&) const = default;
};

class TrainingCheckpoint {
 public:
  /// `model` is the plain module (DDP's module()); scheduler may be null.
  TrainingCheckpoint(std::string path, nn::Module& model, optim::Optimizer& optimizer,
                     optim::LRScheduler* scheduler = nullptr);

  /// Every rank of `group` (the default one when null): when the file exists, restores model,
  /// optimizer, scheduler and this rank's random generator (a rank the saving job did not have
  /// keeps its own), then checks that every rank read the same position (an ember::Error naming
  /// a rank that read another: the file is not shared, or changed meanwhile). Returns where to
  /// resume, or nothing when there is no checkpoint.
  std::optional<TrainingPosition> load(ProcessGroup* group = nullptr);

  /// Every rank of `group` (it gathers the generators' states): rank 0 writes the checkpoint
  /// atomically (a rank killed meanwhile leaves the previous one).
  void save(const TrainingPosition& position, ProcessGroup* group = nullptr);

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  nn::Module& model_;
  optim::Optimizer& optimizer_;
  optim::LRScheduler* scheduler_;
};

}  // namespace ember::distributed
