// CPU random fill: the same Philox stream the CUDA kernel draws from.
#include "ember/backend/cpu/thread_pool.h"
#include "ember/backend/kernels.h"

namespace ember {

void random_cpu(const Tensor& out, const RandomParams& p) {
  EMBER_ASSERT(out.is_contiguous(), "random_cpu expects a contiguous tensor");
  dispatch_all(out.dtype(), "random", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    T* data = static_cast<T*>(out.data_ptr());
    parallel_for(0, out.numel(), 4096, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i)
        data[i] =
            static_cast<T>(static_cast<opmath_t<T>>(random_value(p, static_cast<uint64_t>(i))));
    });
  });
}

}  // namespace ember
