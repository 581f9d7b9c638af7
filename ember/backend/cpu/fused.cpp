// The CPU's block interpreter for fused elementwise programs (backend/fused.h): each chunk of the
// elements runs every step over a block of kBlock elements before going to the next block, so
// that the registers stay in the cache and memory is read and written once. The steps are the
// tables' own functors (functors/expand.h), the same the CPU and CUDA kernels run.
#include "ember/backend/fused.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>

#include "ember/backend/cpu/loops.h"
#include "ember/backend/functors/expand.h"

namespace ember {
namespace {

// Elements per block: a float32 register is 16 KiB, and a chain keeps a few live, within L2.
// Smaller blocks pay the tables' dispatch more often (512: 0.83 of eager on the bench's cheap
// chain; 4096: 0.56; 16384: no better).
constexpr int64_t kBlock = 4096;

// Runs one table entry over a block laid out in a TensorIter: a plain loop, no pool (the chunks
// are already spread over it), no streaming stores (registers are meant to stay in the cache).
struct BlockLauncher {
  static constexpr bool kComplex = false;
  template <typename Out, typename... In, typename F>
  static void run(const TensorIter& it, const F& f) {
    char* ptrs[TensorIter::kMaxOperands];
    int64_t strides[TensorIter::kMaxOperands];
    for (int i = 0; i < it.ntensors; ++i) {
      ptrs[i] = it.data[i];
      strides[i] = it.strides[i][0];
    }
    cpu::detail::run_typed<Out, In...>(ptrs, strides, it.numel, f, false,
                                       std::index_sequence_for<In...>{});
  }
};

// Copies a block of a register to an output; where the outputs are too large to stay in the
// cache, with streaming stores (loops.h's stream_threshold_bytes says why).
void store(char* dst, const char* src, size_t bytes, bool stream) {
  if (!stream) {
    std::memcpy(dst, src, bytes);
    return;
  }
  size_t i = 0;
  for (; i < bytes && reinterpret_cast<uintptr_t>(dst + i) % 64 != 0; ++i) dst[i] = src[i];
  for (; i + 64 <= bytes; i += 64) cpu::detail::stream64(dst + i, src + i);
  std::memcpy(dst + i, src + i, bytes - i);
}

}  // namespace

void fused_cpu(const FusedProgram& p, const std::vector<const void*>& inputs,
               const std::vector<bool>& input_broadcast, const std::vector<void*>& outputs,
               int64_t numel) {
  const auto es = static_cast<int64_t>(itemsize(p.dtype));
  const bool stream = numel * es * static_cast<int64_t>(p.outputs.size()) >
                      cpu::stream_threshold_bytes();
  auto chunk = [&](int64_t begin, int64_t end) {
    auto regs = std::make_unique<char[]>(static_cast<size_t>(p.num_registers * kBlock * es));
    auto reg = [&](int r) { return regs.get() + r * kBlock * es; };
    for (int64_t off = begin; off < end; off += kBlock) {
      const int64_t n = std::min(kBlock, end - off);
      auto operand = [&](int ref, char*& ptr, int64_t& stride) {
        if (ref >= 0) {
          ptr = reg(ref);
          stride = es;
          return;
        }
        const int i = -1 - ref;
        const bool one = input_broadcast[static_cast<size_t>(i)];
        ptr = const_cast<char*>(static_cast<const char*>(inputs[static_cast<size_t>(i)])) +
              (one ? 0 : off * es);
        stride = one ? 0 : es;
      };
      for (const FusedStep& s : p.steps) {
        TensorIter it;
        it.ndim = 1;
        it.numel = n;
        it.sizes[0] = n;
        it.ntensors = s.kind == FusedStep::Kind::Binary ? 3 : 2;
        it.data[0] = reg(s.dst);
        it.strides[0][0] = es;
        operand(s.a, it.data[1], it.strides[1][0]);
        if (s.kind == FusedStep::Kind::Binary) operand(s.b, it.data[2], it.strides[2][0]);
        for (int i = 0; i < it.ntensors; ++i) it.dtypes[i] = p.dtype;
        switch (s.kind) {
          case FusedStep::Kind::Unary:
            expand_unary<BlockLauncher>(static_cast<UnaryOp>(s.code), it, s.unary_params);
            break;
          case FusedStep::Kind::Binary:
            expand_binary<BlockLauncher>(static_cast<BinaryOp>(s.code), it, s.binary_params);
            break;
          case FusedStep::Kind::BinaryScalar:
            expand_binary_scalar<BlockLauncher>(static_cast<BinaryOp>(s.code), it, s.scalar,
                                                s.binary_params);
            break;
        }
      }
      for (size_t k = 0; k < p.outputs.size(); ++k)
        store(static_cast<char*>(outputs[k]) + off * es, reg(p.outputs[k]),
              static_cast<size_t>(n * es), stream);
    }
#if defined(__SSE2__)
    if (stream) _mm_sfence();  // publish the streaming stores before the pool's handshake
#endif
  };
  parallel_for(0, numel, kGrainSize, chunk);
}

}  // namespace ember
