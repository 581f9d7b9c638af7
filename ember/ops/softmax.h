// softmax and log_softmax over one dimension.
#pragma once

#include <optional>

#include "ember/core/tensor.h"

namespace ember {

Tensor softmax(const Tensor& x, int64_t dim, std::optional<DType> dtype = std::nullopt);
Tensor log_softmax(const Tensor& x, int64_t dim, std::optional<DType> dtype = std::nullopt);

}  // namespace ember
