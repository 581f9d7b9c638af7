// Choosing among several GPUs: explicit devices, the current device, and a guard that restores it.
#include <iostream>

#include "ember/ember.h"

using namespace ember;

int main() {
  int n = cuda::device_count();
  if (n == 0) {
    std::cout << "no GPU (" << cuda::unavailable_reason() << "): everything stays on "
              << cuda::try_gpu() << "\n";
    Tensor t = ones({2}).to(cuda::try_gpu());
    std::cout << t << "\n";
    return 0;
  }
  std::cout << "current device: cuda:" << cuda::current_device() << "\n";
  for (int i = 0; i < n; ++i) {
    cuda::DeviceGuard guard(i);  // "cuda" now means cuda:i
    Tensor t = ones({2}, TensorOptions().with_device("cuda"));
    std::cout << "inside the guard for " << i << ": a tensor on " << t.device() << "\n";
  }
  std::cout << "after the guards: cuda:" << cuda::current_device() << "\n";
  Device last(kCUDA, n - 1);
  std::cout << "the last GPU: " << cuda::get_device_name(n - 1) << " -> "
            << ones({1}).to(last).device() << "\n";
  try {
    ones({1}).to(Device(kCUDA, n));
  } catch (const Error& e) {
    std::cout << "a device that does not exist: " << e.what() << "\n";
  }
  return 0;
}
