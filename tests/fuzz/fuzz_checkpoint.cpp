// Fuzz target: the checkpoint loader (model and optimizer state in one safetensors file) on
// arbitrary bytes. The first byte picks the optimizer (SGD with momentum, or Adam; trainee.h); a
// rejected file must leave the model and the optimizer exactly as they were.
#include <cstring>

#include "ember/ember.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/trainee.h"

using namespace ember;

namespace {

bool same(const nn::NamedTensors& a, const nn::NamedTensors& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const Tensor &x = a[i].second, &y = b[i].second;
    if (a[i].first != b[i].first || x.dtype() != y.dtype() || x.sizes() != y.sizes()) return false;
    Tensor cx = x.contiguous(), cy = y.contiguous();
    if (cx.nbytes() && std::memcmp(cx.data_ptr(), cy.data_ptr(), cx.nbytes()) != 0) return false;
  }
  return true;
}

nn::NamedTensors copy_of(const nn::NamedTensors& state) {
  nn::NamedTensors out;
  for (auto& [name, t] : state) out.emplace_back(name, t.clone());
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::MemoryFile file;
  static fuzz::Trainee trainees[2] = {fuzz::make_trainee(false), fuzz::make_trainee(true)};
  if (size == 0) return 0;
  fuzz::Trainee& t = trainees[data[0] & 1];
  std::string path = file.write(data + 1, size - 1);
  nn::NamedTensors model_before = copy_of(t.model->state_dict());
  nn::NamedTensors optimizer_before = copy_of(t.optimizer->state_dict());
  try {
    io::load_checkpoint(path, *t.model, *t.optimizer);
  } catch (const Error&) {
    if (!same(model_before, t.model->state_dict()))
      fuzz::fail("a rejected checkpoint changed the model");
    if (!same(optimizer_before, t.optimizer->state_dict()))
      fuzz::fail("a rejected checkpoint changed the optimizer");
  }
  return 0;
}
