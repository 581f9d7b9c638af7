// Google Benchmark micro-benchmarks of ember alone (ember-vs-libtorch compares with libtorch).
#include <benchmark/benchmark.h>

#include "ember/core/device_backend.h"
#include "ember/ember.h"

static void BM_AddTiny(benchmark::State& state) {
  ember::Tensor x = ember::randn({state.range(0)}), y = ember::randn({state.range(0)});
  for (auto _ : state) benchmark::DoNotOptimize(x + y);
}
BENCHMARK(BM_AddTiny)->Arg(1)->Arg(64)->Arg(4096);

static void BM_AddInplace(benchmark::State& state) {
  ember::Tensor x = ember::randn({state.range(0)}), y = ember::randn({state.range(0)});
  for (auto _ : state) x.add_(y);
  state.SetBytesProcessed(state.iterations() * state.range(0) * 12);
}
BENCHMARK(BM_AddInplace)->Arg(1 << 20)->Arg(16 << 20);

static void BM_EmptyCached(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(ember::empty({state.range(0)}));
}
BENCHMARK(BM_EmptyCached)->Arg(1)->Arg(1 << 20);

static void BM_Softmax(benchmark::State& state) {
  ember::Tensor x = ember::randn({4096, 1024});
  for (auto _ : state) benchmark::DoNotOptimize(ember::softmax(x, -1));
}
BENCHMARK(BM_Softmax);

static void BM_CpuAllocatorAllocFree(benchmark::State& state) {
  ember::CachingAllocator& a = ember::device_backend(ember::kCPU).allocator(0);
  for (auto _ : state) benchmark::DoNotOptimize(a.allocate(static_cast<size_t>(state.range(0))));
}
BENCHMARK(BM_CpuAllocatorAllocFree)->Arg(4)->Arg(1 << 20)->Arg(64 << 20);
