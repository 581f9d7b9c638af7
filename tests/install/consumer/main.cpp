// A program that knows ember only through find_package(ember CONFIG). Its backward needs the
// gradient accumulator that autograd registers (kept in by the exported link options).
#include <iostream>

#include "ember/ember.h"

int main() {
  ember::Tensor x = ember::arange(5, ember::kFloat32);
  std::cout << "sum=" << x.sum().item<double>() << "\n";
  x.requires_grad_(true);
  (x * x).sum().backward();
  std::cout << "grad_sum=" << x.grad().sum().item<double>() << "\n";
  return 0;
}
