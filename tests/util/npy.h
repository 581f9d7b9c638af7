// The .npy format (NumPy's), for exchanging tensors with the PyTorch oracle.
#pragma once

#include <string>

#include "ember/core/tensor.h"

namespace ember::testing {

void write_npy(const std::string& path, const Tensor& t);
Tensor read_npy(const std::string& path);

}  // namespace ember::testing
