// Shared by the CUDA tests: the skip when no GPU is usable, and CUDA-against-CPU comparisons.
#pragma once

#include <gtest/gtest.h>

#include "ember/backend/cudnn.h"
#include "tests/util/test_util.h"

#define EMBER_REQUIRE_CUDA()                                                                 \
  do {                                                                                       \
    if (!::ember::cuda::is_available())                                                      \
      GTEST_SKIP() << "needs a CUDA device (" << ::ember::cuda::unavailable_reason() << ")"; \
  } while (0)

namespace ember::testing {

inline Device gpu() { return Device(kCUDA, 0); }

/// f(inputs on the CPU) and f(inputs on cuda:0) agree within `tol` (relative and absolute).
inline ::testing::AssertionResult same_on_cuda(
    const std::function<Tensor(const std::vector<Tensor>&)>& f,
    const std::vector<Tensor>& cpu_inputs, double tol) {
  std::vector<Tensor> gpu_inputs;
  for (const Tensor& t : cpu_inputs) gpu_inputs.push_back(t.defined() ? t.to(gpu()) : t);
  Tensor expected = f(cpu_inputs);
  Tensor got = f(gpu_inputs);
  if (!got.is_cuda()) return ::testing::AssertionFailure() << "the result is on " << got.device();
  if (got.dtype() != expected.dtype())
    return ::testing::AssertionFailure() << "dtype " << got.dtype() << " vs " << expected.dtype();
  return all_close(got.cpu(), expected, tol, tol);
}

// f's output and the gradients of its floating inputs agree on the CPU and on cuda:0 within tol
// (relative and absolute). The output's gradient is fixed and uneven, so every element counts.
inline ::testing::AssertionResult same_with_gradients(
    const std::function<Tensor(const std::vector<Tensor>&)>& f, const std::vector<Tensor>& inputs,
    double tol) {
  auto run = [&](Device device, std::vector<Tensor>& grads) {
    std::vector<Tensor> in;
    for (const Tensor& t : inputs) {
      Tensor v = t.defined() ? t.to(device).detach() : t;
      if (v.defined() && v.is_floating_point()) v.requires_grad_();
      in.push_back(v);
    }
    Tensor out = f(in);
    Tensor g = cos(arange(out.numel(), TensorOptions(out.dtype())) * 0.37).reshape(out.sizes());
    (out * g.to(device)).sum().backward();
    for (const Tensor& v : in)
      grads.push_back(v.defined() && v.grad().defined() ? v.grad().cpu() : Tensor());
    return out.cpu();
  };
  std::vector<Tensor> cpu_grads, gpu_grads;
  Tensor expected = run(Device(kCPU, 0), cpu_grads);
  Tensor got = run(gpu(), gpu_grads);
  auto result = all_close(got, expected, tol, tol);
  if (!result) return result << " (output)";
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (cpu_grads[i].defined() != gpu_grads[i].defined())
      return ::testing::AssertionFailure() << "input " << i << " has a gradient on one device only";
    if (!cpu_grads[i].defined()) continue;
    auto r = all_close(gpu_grads[i], cpu_grads[i], tol, tol);
    if (!r) return r << " (gradient of input " << i << ")";
  }
  return ::testing::AssertionSuccess();
}

// Sets one of the torch.backends.cudnn switches for a scope (cudnn::set_enabled, say) and
// restores it after.
struct CudnnSwitch {
  CudnnSwitch(void (*set)(bool), bool (*get)(), bool on) : set_(set), previous_(get()) { set(on); }
  ~CudnnSwitch() { set_(previous_); }
  CudnnSwitch(const CudnnSwitch&) = delete;
  CudnnSwitch& operator=(const CudnnSwitch&) = delete;

 private:
  void (*set_)(bool);
  bool previous_;
};

}  // namespace ember::testing
