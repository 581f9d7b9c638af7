// A program that knows ember only through find_package(ember CONFIG).
#include <iostream>

#include "ember/ember.h"

int main() {
  ember::Tensor x = ember::arange(5, ember::kFloat32);
  std::cout << "sum=" << x.sum().item<double>() << "\n";
  return 0;
}
