// Training checkpoints: model and optimizer state plus metadata in one safetensors file, written
// atomically so an interrupted save keeps the previous checkpoint.
#pragma once

#include <string>

#include "ember/io/safetensors.h"
#include "ember/optim/optimizer.h"

namespace ember::io {

void save_checkpoint(const std::string& path, const nn::Module& model,
                     const optim::Optimizer& optimizer, const Metadata& metadata = {});
/// Restores model and optimizer; returns the checkpoint's metadata.
Metadata load_checkpoint(const std::string& path, nn::Module& model, optim::Optimizer& optimizer);

}  // namespace ember::io
