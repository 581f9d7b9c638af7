// `ember train --nproc N`: DistributedDataParallel over N local processes.
#pragma once

#include "tools/ember/training.h"

namespace ember::cli {

/// Without RANK in the environment, starts N copies of this program with `argv` (as `ember launch`
/// would) and returns the launch's exit code. In each copy, trains cfg's model with DDP over Gloo
/// on the rank's DistributedSampler shard (cfg.batch_size per rank, get_num_threads() / N threads
/// unless --threads); rank 0 evaluates, prints results like `ember train` and saves the model.
int train_ddp(const TrainConfig& cfg, int argc, char** argv);

/// Whether this process is a rank that a launch started (RANK and WORLD_SIZE are set).
bool is_rank();
/// Starts cfg.nproc copies of `ember train` with `argv` on this machine (--master-port, or a
/// random port) and returns the launch's exit code.
int launch_ranks(const TrainConfig& cfg, int argc, char** argv);

}  // namespace ember::cli
