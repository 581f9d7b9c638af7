// Shared by the CUDA tests: the skip when no GPU is usable, and CUDA-against-CPU comparisons.
#pragma once

#include <gtest/gtest.h>

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

}  // namespace ember::testing
