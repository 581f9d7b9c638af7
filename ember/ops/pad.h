// torch.nn.functional.pad: padding the last dims with a constant, or by reflecting, replicating or
// wrapping around the edges.
#pragma once

#include <string>

#include "ember/core/tensor.h"

namespace ember {

/// `pad` lists (before, after) pairs starting from the last dim, as PyTorch's; negative amounts
/// crop. mode "constant" (value), "reflect", "replicate" or "circular".
Tensor pad(const Tensor& x, const Shape& pad, const std::string& mode = "constant",
           double value = 0);

}  // namespace ember
