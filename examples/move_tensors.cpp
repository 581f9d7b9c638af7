// Moving tensors and models between devices, and the error when they do not agree.
#include <iostream>

#include "ember/ember.h"

using namespace ember;

int main() {
  Device device = cuda::try_gpu();
  Tensor x = ones({2, 3});  // made on the CPU
  Tensor y = x.to(device);  // copied to the GPU (or the same tensor on the CPU)
  Tensor z = randn({2, 3}, TensorOptions().with_device(device));  // made where it is used
  std::cout << "x on " << x.device() << ", y on " << y.device() << ", z on " << z.device() << "\n";
  std::cout << "y + z on " << (y + z).device() << "\n";
  std::cout << "back to the CPU: " << (y + z).cpu() << "\n";

  auto model = nn::make<nn::Linear>(3, 2);
  model->to(device);  // parameters move in place
  std::cout << "model weight on " << model->weight.device() << ", output "
            << model->forward(z).sizes() << "\n";

  // Tensors on two devices are never combined implicitly: on a GPU machine y lives on the GPU; on
  // a CPU-only one, EMBER_CPU_DEVICES=2 gives a second (virtual) device to show the same error.
  Device other = device.is_cuda() ? device : Device(kCPU, cpu::device_count() > 1 ? 1 : 0);
  try {
    Tensor sum = ones({2, 3}) + ones({2, 3}).to(other);
    std::cout << "both on " << sum.device() << ": no error (set EMBER_CPU_DEVICES=2 to see one)\n";
  } catch (const Error& e) {
    std::cout << "as expected: " << e.what() << "\n";
  }
  return 0;
}
