// Fuzz target: the safetensors reader on arbitrary bytes. Whatever it accepts must survive a write
// and a second read unchanged (names, dtypes, shapes, bytes and metadata).
#include <cstring>
#include <map>

#include "ember/io/safetensors.h"
#include "tests/fuzz/fuzz_input.h"

using namespace ember;

namespace {
std::map<std::string, Tensor> by_name(const nn::NamedTensors& tensors) {
  std::map<std::string, Tensor> m;
  for (auto& [name, t] : tensors) m.emplace(name, t);
  return m;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    io::SafetensorsFile f =
        io::from_safetensors(std::string(reinterpret_cast<const char*>(data), size));
    io::SafetensorsFile g = io::from_safetensors(io::to_safetensors(f.tensors, f.metadata));
    if (g.metadata != f.metadata) fuzz::fail("metadata changed in a round trip");
    auto a = by_name(f.tensors), b = by_name(g.tensors);
    if (a.size() != f.tensors.size() || a.size() != b.size()) fuzz::fail("tensor count changed");
    for (auto& [name, t] : a) {
      auto it = b.find(name);
      if (it == b.end()) fuzz::fail("a tensor vanished in a round trip");
      const Tensor& u = it->second;
      if (u.dtype() != t.dtype() || u.sizes() != t.sizes()) fuzz::fail("dtype or shape changed");
      if (t.nbytes() && std::memcmp(t.data_ptr(), u.data_ptr(), t.nbytes()) != 0)
        fuzz::fail("bytes changed in a round trip");
    }
  } catch (const Error&) {
    // A clear rejection is the expected outcome for almost every input.
  }
  return 0;
}
