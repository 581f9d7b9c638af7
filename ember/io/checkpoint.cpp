#include "ember/io/checkpoint.h"

namespace ember::io {

void save_checkpoint(const std::string& path, const nn::Module& model,
                     const optim::Optimizer& optimizer, const Metadata& metadata) {
  nn::NamedTensors all;
  for (auto& [name, t] : model.state_dict()) all.emplace_back("model." + name, t);
  for (auto& [name, t] : optimizer.state_dict()) all.emplace_back("optimizer." + name, t);
  save_safetensors(path, all, metadata);
}

Metadata load_checkpoint(const std::string& path, nn::Module& model, optim::Optimizer& optimizer) {
  SafetensorsFile f = load_safetensors(path);
  nn::NamedTensors model_state, optimizer_state;
  for (auto& [name, t] : f.tensors) {
    if (name.rfind("model.", 0) == 0)
      model_state.emplace_back(name.substr(6), t);
    else if (name.rfind("optimizer.", 0) == 0)
      optimizer_state.emplace_back(name.substr(10), t);
    else
      EMBER_FAIL("[load_checkpoint] ", path, ": unexpected tensor '", name,
                 "' (expected names starting with model. or optimizer.)");
  }
  // Both loads validate before they change anything; the optimizer goes first because its old
  // state can be put back cheaply (loading replaces its tensors rather than writing into them).
  nn::NamedTensors previous = optimizer.state_dict();
  optimizer.load_state_dict(optimizer_state);
  try {
    model.load_state_dict(model_state);
  } catch (...) {
    optimizer.load_state_dict(previous);
    throw;
  }
  return f.metadata;
}

}  // namespace ember::io
