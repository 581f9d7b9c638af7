// Helpers shared by ember's tests: closeness checks with a useful report, non-contiguous copies,
// and error-message expectations.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ember/ember.h"

namespace ember::testing {

/// Values of t in row-major order as doubles.
std::vector<double> values(const Tensor& t);

/// Same shape and values within atol + rtol * |expected| (NaNs must match NaNs).
::testing::AssertionResult all_close(const Tensor& actual, const Tensor& expected,
                                     double rtol = 1e-5, double atol = 1e-6);

/// The values of t in a non-contiguous layout (every other element of a wider buffer).
Tensor noncontiguous(const Tensor& t);

/// Uniform values in [lo, hi) of the given dtype.
Tensor uniform(const Shape& sizes, DType dtype = kFloat32, double lo = -1, double hi = 1);

/// Default tolerance for comparing results computed in `dtype`.
double tolerance(DType dtype);

/// /usr/bin/python3 when it can import torch, else "".
std::string torch_python();

}  // namespace ember::testing

/// Expects `stmt` to throw ember::Error (or a subclass) whose message contains `substring`.
#define EXPECT_THROW_WITH(stmt, substring)                                              \
  do {                                                                                  \
    try {                                                                               \
      stmt;                                                                             \
      ADD_FAILURE() << "expected an ember::Error containing \"" << (substring) << "\""; \
    } catch (const ::ember::Error& e) {                                                 \
      EXPECT_NE(std::string(e.what()).find(substring), std::string::npos)               \
          << "message: " << e.what();                                                   \
    }                                                                                   \
  } while (0)
