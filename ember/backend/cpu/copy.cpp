// CPU copies between any layouts and dtypes (the conversion every `to(dtype)` runs).
#include <cstring>

#include "ember/backend/cpu/loops.h"
#include "ember/backend/functors/expand.h"
#include "ember/backend/kernels.h"

namespace ember {

void copy_cpu(const TensorIter& it) {
  if (it.dtypes[0] == it.dtypes[1] && it.is_contiguous()) {
    size_t item = itemsize(it.dtypes[0]);
    parallel_for(0, it.numel, kGrainSize * 4, [&](int64_t b, int64_t e) {
      std::memcpy(it.data[0] + b * static_cast<int64_t>(item),
                  it.data[1] + b * static_cast<int64_t>(item), static_cast<size_t>(e - b) * item);
    });
    return;
  }
  expand_copy<cpu::Launcher>(it);
}

}  // namespace ember
