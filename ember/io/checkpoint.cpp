#include "ember/io/checkpoint.h"

namespace ember::io {
namespace {

// The checkpoint's tensors, by the prefix of their names.
struct Parts {
  nn::NamedTensors model, optimizer, scheduler, extra;
};

Parts split(const std::string& path, const nn::NamedTensors& tensors) {
  Parts parts;
  const std::pair<const char*, nn::NamedTensors Parts::*> prefixes[] = {
      {"model.", &Parts::model},
      {"optimizer.", &Parts::optimizer},
      {"scheduler.", &Parts::scheduler},
      {"extra.", &Parts::extra}};
  for (auto& [name, t] : tensors) {
    bool found = false;
    for (auto& [prefix, member] : prefixes) {
      std::string p = prefix;
      if (name.rfind(p, 0) != 0) continue;
      (parts.*member).emplace_back(name.substr(p.size()), t);
      found = true;
      break;
    }
    EMBER_CHECK(found, "[load_checkpoint] ", path, ": unexpected tensor '", name,
                "' (expected names starting with model., optimizer., scheduler. or extra.)");
  }
  return parts;
}

}  // namespace

void save_checkpoint(const std::string& path, const nn::Module& model,
                     const optim::Optimizer& optimizer, const Metadata& metadata,
                     const CheckpointExtras& extras) {
  nn::NamedTensors all;
  for (auto& [name, t] : model.state_dict()) all.emplace_back("model." + name, t);
  for (auto& [name, t] : optimizer.state_dict()) all.emplace_back("optimizer." + name, t);
  if (extras.scheduler)
    for (auto& [name, t] : extras.scheduler->state_dict()) all.emplace_back("scheduler." + name, t);
  for (auto& [name, t] : extras.tensors) all.emplace_back("extra." + name, t);
  save_safetensors(path, all, metadata);
}

LoadedCheckpoint load_checkpoint(const std::string& path, nn::Module& model,
                                 optim::Optimizer& optimizer, optim::LRScheduler* scheduler) {
  SafetensorsFile f = load_safetensors(path);
  Parts parts = split(path, f.tensors);
  EMBER_CHECK(scheduler || parts.scheduler.empty(), "[load_checkpoint] ", path,
              " holds a learning-rate scheduler's state: pass the scheduler to restore it");
  EMBER_CHECK(!scheduler || !parts.scheduler.empty(), "[load_checkpoint] ", path,
              " holds no learning-rate scheduler's state, but a scheduler was given");
  // Each load validates before it changes anything; the optimizer and the scheduler go first
  // because their old state can be put back cheaply (loading replaces their values rather than
  // writing into tensors). The scheduler sets the optimizer's rates: the optimizer's state put
  // back after it restores them.
  nn::NamedTensors previous_optimizer = optimizer.state_dict();
  nn::NamedTensors previous_scheduler = scheduler ? scheduler->state_dict() : nn::NamedTensors{};
  optimizer.load_state_dict(parts.optimizer);
  try {
    if (scheduler) scheduler->load_state_dict(parts.scheduler);
    model.load_state_dict(parts.model);
  } catch (...) {
    if (scheduler) scheduler->load_state_dict(previous_scheduler);
    optimizer.load_state_dict(previous_optimizer);
    throw;
  }
  return {f.metadata, parts.extra};
}

Metadata load_checkpoint(const std::string& path, nn::Module& model, optim::Optimizer& optimizer) {
  return load_checkpoint(path, model, optimizer, nullptr).metadata;
}

}  // namespace ember::io
