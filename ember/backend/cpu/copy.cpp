// CPU copies between any layouts and dtypes (the conversion every `to(dtype)` runs).
#include <algorithm>
#include <cstring>

#include "ember/backend/cpu/loops.h"
#include "ember/backend/functors/expand.h"
#include "ember/backend/kernels.h"

namespace ember {
namespace {

// A matrix transpose, or a batch of them: the output contiguous (rows, cols) per batch, the
// input contiguous along the output's rows. Copied in 8 x 8 tiles, each read along the input's
// contiguous runs, so that both sides stay in a few cache lines (also for power-of-two strides,
// where larger tiles collide in the cache); the element loop strides through the input a whole
// column at a time, 2-3x slower on the matrices LAPACK's wrappers and `mT.contiguous()` copy.
bool is_transpose(const TensorIter& it) {
  if (it.dtypes[0] != it.dtypes[1] || it.ndim < 2 || it.ndim > 3) return false;
  const auto item = static_cast<int64_t>(itemsize(it.dtypes[0]));
  const int64_t cols = it.sizes[0], rows = it.sizes[1];
  bool out_dense = it.strides[0][0] == item && it.strides[0][1] == item * cols &&
                   (it.ndim == 2 || it.strides[0][2] == item * cols * rows);
  return out_dense && it.strides[1][1] == item && it.strides[1][0] % item == 0 &&
         rows >= 8 && cols >= 8;
}

template <typename T>
void copy_transposed(const TensorIter& it) {
  constexpr int64_t kTile = 8;
  const int64_t cols = it.sizes[0], rows = it.sizes[1];
  const int64_t batches = it.ndim == 3 ? it.sizes[2] : 1;
  const int64_t in_col = it.strides[1][0] / static_cast<int64_t>(sizeof(T));
  const int64_t in_batch = it.ndim == 3 ? it.strides[1][2] : 0;  // bytes
  const int64_t row_tiles = (rows + kTile - 1) / kTile;
  parallel_for(0, batches * row_tiles, 1, [&](int64_t b, int64_t e) {
    for (int64_t job = b; job < e; ++job) {
      const int64_t batch = job / row_tiles, r0 = (job % row_tiles) * kTile;
      T* out = reinterpret_cast<T*>(it.data[0]) + batch * rows * cols;
      const T* in = reinterpret_cast<const T*>(it.data[1] + batch * in_batch);
      const int64_t r1 = std::min(rows, r0 + kTile);
      for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
        const int64_t c1 = std::min(cols, c0 + kTile);
        for (int64_t c = c0; c < c1; ++c)
          for (int64_t r = r0; r < r1; ++r) out[r * cols + c] = in[c * in_col + r];
      }
    }
  });
}

// The element types by size alone: a copy moves bytes.
template <int N>
struct Bytes {
  unsigned char b[N];
};

}  // namespace

void copy_cpu(const TensorIter& it) {
  if (it.dtypes[0] == it.dtypes[1] && it.is_contiguous()) {
    size_t item = itemsize(it.dtypes[0]);
    parallel_for(0, it.numel, kGrainSize * 4, [&](int64_t b, int64_t e) {
      std::memcpy(it.data[0] + b * static_cast<int64_t>(item),
                  it.data[1] + b * static_cast<int64_t>(item), static_cast<size_t>(e - b) * item);
    });
    return;
  }
  if (is_transpose(it)) {
    switch (itemsize(it.dtypes[0])) {
      case 1: return copy_transposed<uint8_t>(it);
      case 2: return copy_transposed<uint16_t>(it);
      case 4: return copy_transposed<uint32_t>(it);
      case 8: return copy_transposed<uint64_t>(it);
      case 16: return copy_transposed<Bytes<16>>(it);
      default: break;
    }
  }
  expand_copy<cpu::Launcher>(it);
}

}  // namespace ember
