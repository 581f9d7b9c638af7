// `ember train --hogwild N`: Hogwild training of one shared model by N processes.
#pragma once

#include <string>

#include "tools/ember/training.h"

namespace ember::cli {

/// Trains cfg's model on the CPU with `nprocs` forked processes, each on its shard of the
/// training set with its own optimizer and get_num_threads() / nprocs threads, all updating the
/// same parameters in shared memory without locks; prints results like `ember train`.
int train_hogwild(const TrainConfig& cfg, int nprocs, const std::string& out);

}  // namespace ember::cli
