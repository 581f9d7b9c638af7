// Training checkpoints: model and optimizer state plus metadata in one safetensors file, written
// atomically so an interrupted save keeps the previous checkpoint. Optionally also a learning-rate
// scheduler's state and extra tensors (generators' states, ...), for a run that resumes exactly.
#pragma once

#include <string>

#include "ember/io/safetensors.h"
#include "ember/optim/lr_scheduler.h"
#include "ember/optim/optimizer.h"

namespace ember::io {

/// What a checkpoint may hold beside the model and the optimizer.
struct CheckpointExtras {
  optim::LRScheduler* scheduler = nullptr;  // saved under "scheduler."
  nn::NamedTensors tensors;                 // saved under "extra."
};

/// Tensors: "model.*", "optimizer.*", and with extras "scheduler.*" and "extra.*".
void save_checkpoint(const std::string& path, const nn::Module& model,
                     const optim::Optimizer& optimizer, const Metadata& metadata = {},
                     const CheckpointExtras& extras = {});

struct LoadedCheckpoint {
  Metadata metadata;
  nn::NamedTensors extra;  // the "extra." tensors, without the prefix
};

/// Restores model, optimizer and, when given, the scheduler (the file must hold a scheduler's
/// state exactly when one is given); returns the metadata and the extra tensors. A checkpoint
/// that does not fit changes nothing.
LoadedCheckpoint load_checkpoint(const std::string& path, nn::Module& model,
                                 optim::Optimizer& optimizer, optim::LRScheduler* scheduler);
/// Restores model and optimizer; returns the checkpoint's metadata.
Metadata load_checkpoint(const std::string& path, nn::Module& model, optim::Optimizer& optimizer);

}  // namespace ember::io
