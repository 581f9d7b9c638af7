// safetensors, the format the ecosystem shares (https://github.com/huggingface/safetensors): an
// 8-byte little-endian header length, a JSON header, then the raw data. Reading validates every
// rule of the reference reader before trusting a byte (header length <= 100,000,000 and within the
// file; offsets contiguous, without overlap or holes, ending at the end of the file; end - begin ==
// numel * element size, with checked arithmetic; no duplicate keys; known dtypes); writing is
// atomic. Never pickle.
#pragma once

#include <map>
#include <string>

#include "ember/nn/module.h"

namespace ember::io {

using Metadata = std::map<std::string, std::string>;

struct SafetensorsFile {
  nn::NamedTensors tensors;  // in the file's data order
  Metadata metadata;
};

/// The bytes of a safetensors file holding `tensors` (any device; contiguous copies are written).
std::string to_safetensors(const nn::NamedTensors& tensors, const Metadata& metadata = {});
/// Parses and validates a whole file's bytes; tensors are created on `device`. `source` names the
/// file in errors.
SafetensorsFile from_safetensors(const std::string& bytes, Device device = Device(kCPU, 0),
                                 const std::string& source = "<bytes>");

/// Saves atomically: a crash mid-save leaves the previous file intact.
void save_safetensors(const std::string& path, const nn::NamedTensors& tensors,
                      const Metadata& metadata = {});
SafetensorsFile load_safetensors(const std::string& path, Device device = Device(kCPU, 0));

/// A model's state dict, or a checkpoint: the model's tensors under "model.", the optimizer's under
/// "optimizer.", and metadata (epoch, ...).
void save(const nn::Module& module, const std::string& path, const Metadata& metadata = {});
void load(nn::Module& module, const std::string& path, bool strict = true);

}  // namespace ember::io
