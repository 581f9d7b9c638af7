// Integer matrix products on CUDA: uint8, int32 and int64 multiply and add in their own width and
// wrap around on overflow, as the CPU's kernel and PyTorch's CPU matmul do (through float64 they
// would round above 2^53 and saturate on the way back). A plain shared-memory tiled kernel:
// integers are not matmul's hot path, but a product of a few hundred rows should not crawl.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "ember/backend/cuda/bmm_integer.h"
#include "ember/backend/cuda/runtime.h"

namespace ember::cuda {
namespace {

constexpr int kTile = 32;  // a block computes a kTile x kTile tile of out
constexpr int kRows = 8;  // block (kTile, kRows): thread (x, y) computes column x, rows y + kRows*q
constexpr int kPerThread = kTile / kRows;
constexpr int64_t kMaxGridYZ = 65535;

// The type products and sums run in: unsigned, so that overflow is defined and wraps; the low w
// bits of a product or sum depend only on the low w bits of the operands, signed or not, so this
// is the w-bit two's complement result. uint8 runs in 32 bits (C++ would promote it anyway) and
// keeps the low 8 on the way out, which is the same modulo 2^8. The CPU runs every width in 64
// bits and truncates: the same bits again.
template <typename T>
struct WrapOf {
  using type = uint32_t;
};
template <>
struct WrapOf<int64_t> {
  using type = uint64_t;
};

struct Strides3 {  // in elements: (batch, row, col)
  int64_t batch, row, col;
};
Strides3 strides3(const Tensor& t) { return {t.stride(0), t.stride(1), t.stride(2)}; }

// a (B, M, K), b (B, K, N), out (B, M, N). Blocks stride over row tiles (grid y) and batches
// (grid z) past the grid's 65535 limit; every thread of a block runs the same trips, so the
// barriers inside are reached by all.
template <typename T, typename U>
__global__ void bmm_integer_kernel(const T* a, Strides3 sa, const T* b, Strides3 sb, T* out,
                                   Strides3 so, int64_t batch, int64_t m, int64_t n, int64_t k,
                                   U alpha, U beta, bool read_out) {
  // A warp (fixed y, x = 0..31) writes both tiles along a row, reads b_tile along a row and one
  // element of a_tile (a broadcast): no bank conflicts.
  __shared__ U a_tile[kTile][kTile];  // [row][l]
  __shared__ U b_tile[kTile][kTile];  // [l][col]
  const int x = threadIdx.x, y = threadIdx.y;
  const int64_t col = static_cast<int64_t>(blockIdx.x) * kTile + x;
  for (int64_t bi = blockIdx.z; bi < batch; bi += gridDim.z) {
    const T* ab = a + bi * sa.batch;
    const T* bb = b + bi * sb.batch;
    for (int64_t row0 = static_cast<int64_t>(blockIdx.y) * kTile; row0 < m;
         row0 += static_cast<int64_t>(gridDim.y) * kTile) {
      U acc[kPerThread] = {};
      for (int64_t l0 = 0; l0 < k; l0 += kTile) {
        for (int r = y; r < kTile; r += kRows) {
          int64_t i = row0 + r, l = l0 + x;  // a's row i, column l
          a_tile[r][x] = i < m && l < k ? static_cast<U>(ab[i * sa.row + l * sa.col]) : U(0);
          int64_t lb = l0 + r;  // b's row lb, column col
          b_tile[r][x] = lb < k && col < n ? static_cast<U>(bb[lb * sb.row + col * sb.col]) : U(0);
        }
        __syncthreads();
#pragma unroll 8
        for (int l = 0; l < kTile; ++l) {
          U bv = b_tile[l][x];
#pragma unroll
          for (int q = 0; q < kPerThread; ++q) acc[q] += a_tile[y + q * kRows][l] * bv;
        }
        __syncthreads();
      }
      if (col < n) {
#pragma unroll
        for (int q = 0; q < kPerThread; ++q) {
          int64_t i = row0 + y + q * kRows;
          if (i >= m) break;
          T* o = out + bi * so.batch + i * so.row + col * so.col;
          U prev = read_out ? beta * static_cast<U>(*o) : U(0);
          *o = static_cast<T>(prev + alpha * acc[q]);
        }
      }
    }
  }
}

template <typename T>
void launch(const Tensor& a, const Tensor& b, const Tensor& out, int64_t alpha, int64_t beta,
            cudaStream_t stream) {
  using U = typename WrapOf<T>::type;
  int64_t batch = out.size(0), m = out.size(1), n = out.size(2), k = a.size(2);
  int64_t col_tiles = (n + kTile - 1) / kTile, row_tiles = (m + kTile - 1) / kTile;
  EMBER_CHECK(col_tiles <= std::numeric_limits<int>::max(), "[matmul] an integer product of ", n,
              " columns is too wide for one CUDA grid");
  dim3 grid(static_cast<unsigned>(col_tiles),
            static_cast<unsigned>(std::min(std::max<int64_t>(row_tiles, 1), kMaxGridYZ)),
            static_cast<unsigned>(std::min(std::max<int64_t>(batch, 1), kMaxGridYZ)));
  // Conversions to unsigned wrap (modulo 2^w), as the CPU's do.
  bmm_integer_kernel<T, U><<<grid, dim3(kTile, kRows), 0, stream>>>(
      static_cast<const T*>(a.data_ptr()), strides3(a), static_cast<const T*>(b.data_ptr()),
      strides3(b), static_cast<T*>(out.data_ptr()), strides3(out), batch, m, n, k,
      static_cast<U>(static_cast<uint64_t>(alpha)), static_cast<U>(static_cast<uint64_t>(beta)),
      beta != 0);
  EMBER_CUDA_LAUNCH_CHECK("bmm_integer");
}

}  // namespace

void bmm_integer(const Tensor& a, const Tensor& b, const Tensor& out, double alpha, double beta) {
  if (out.numel() == 0) return;
  EMBER_ASSERT(a.dtype() == out.dtype() && b.dtype() == out.dtype() && a.size(2) > 0,
               "bmm_integer takes three tensors of one dtype and K > 0, got ", a.dtype(), ", ",
               b.dtype(), ", ", out.dtype(), " and K = ", a.size(2));
  // As the CPU: alpha and beta truncated to int64 (the op layer passes integral values).
  auto al = static_cast<int64_t>(alpha), be = static_cast<int64_t>(beta);
  LaunchScope scope(out.device().index());
  switch (out.dtype()) {
    case kUInt8:
      return launch<uint8_t>(a, b, out, al, be, scope.stream);
    case kInt8:
      return launch<int8_t>(a, b, out, al, be, scope.stream);
    case kInt16:
      return launch<int16_t>(a, b, out, al, be, scope.stream);
    case kInt32:
      return launch<int32_t>(a, b, out, al, be, scope.stream);
    case kInt64:
      return launch<int64_t>(a, b, out, al, be, scope.stream);
    default:
      EMBER_FAIL("[matmul] no integer CUDA product for ", out.dtype());
  }
}

}  // namespace ember::cuda
