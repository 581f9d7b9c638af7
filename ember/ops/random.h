// Random draws beyond the factories of factory.h: Bernoulli with per-element probabilities,
// the in-place fills (bernoulli_, exponential_, random_), normal with tensor parameters, and
// multinomial sampling. Each draws from `gen` (the default generator when null).
#pragma once

#include <optional>

#include "ember/core/generator.h"
#include "ember/core/tensor.h"

namespace ember {

/// 1 where a uniform draw falls below p (elementwise), else 0; p's shape and dtype.
Tensor bernoulli(const Tensor& p, Generator* gen = nullptr);
Tensor& bernoulli_(Tensor& t, double p, Generator* gen = nullptr);
Tensor& bernoulli_(Tensor& t, const Tensor& p, Generator* gen = nullptr);
/// Exponential with rate lambd.
Tensor& exponential_(Tensor& t, double lambd = 1, Generator* gen = nullptr);
/// Integers uniform in [from, to); without `to`, up to the largest integer the dtype holds
/// exactly (2^mantissa for floats).
Tensor& random_(Tensor& t, int64_t from, std::optional<int64_t> to, Generator* gen = nullptr);
/// mean + std * standard normal, elementwise (broadcast).
Tensor normal(const Tensor& mean, const Tensor& std, Generator* gen = nullptr);
/// num_samples category indices per row of `probs` (1-D or 2-D, non-negative weights that need
/// not sum to 1), with or without replacement.
Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement = false,
                   Generator* gen = nullptr);

}  // namespace ember
