// "Is CUDA available? What devices are there?": the first lines of every GPU guide.
#include <iostream>

#include "ember/ember.h"

using namespace ember;

int main() {
  std::cout << "CUDA available: " << (cuda::is_available() ? "yes" : "no") << "\n";
  if (!cuda::is_available()) std::cout << "  why not: " << cuda::unavailable_reason() << "\n";
  std::cout << "GPUs: " << cuda::device_count() << "\n";
  for (int i = 0; i < cuda::device_count(); ++i) {
    cuda::DeviceProperties p = cuda::get_device_properties(i);
    auto [free_bytes, total] = cuda::mem_get_info(i);
    std::cout << "  cuda:" << i << " " << p.name << ", compute capability " << p.major << "."
              << p.minor << ", " << format_bytes(free_bytes) << " free of " << format_bytes(total)
              << "\n";
  }
  // d2l.ai's helpers: a GPU if there is one, else the CPU.
  std::cout << "try_gpu(): " << cuda::try_gpu() << ", try_gpu(7): " << cuda::try_gpu(7) << "\n";
  std::cout << "try_all_gpus():";
  for (const Device& d : cuda::try_all_gpus()) std::cout << " " << d;
  std::cout << "\nCPU threads: " << get_num_threads()
            << ", virtual CPU devices: " << cpu::device_count() << "\n";
  return 0;
}
