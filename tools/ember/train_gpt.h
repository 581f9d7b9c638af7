// `ember train --model gpt`: nanoGPT's GPT trained character-level on a text file, on one device
// or with DistributedDataParallel over --nproc local processes, with --amp and --resume; and the
// checkpoint that `ember generate` samples from.
#pragma once

#include <memory>
#include <string>

#include "ember/data/text.h"
#include "ember/io/safetensors.h"
#include "ember/models/gpt.h"
#include "tools/ember/training.h"

namespace ember::cli {

int train_gpt(const TrainConfig& cfg, int argc, char** argv);

/// A GPT and its vocabulary as `ember train --model gpt` saved them (model.safetensors with the
/// configuration and the vocabulary in its metadata).
struct TrainedGPT {
  std::shared_ptr<models::GPT> model;
  data::datasets::CharText vocab;
};
TrainedGPT load_trained_gpt(const std::string& path);

/// The metadata load_trained_gpt reads back.
io::Metadata gpt_metadata(const models::GPTConfig& config, const std::string& vocab);

}  // namespace ember::cli
