// Distributed benchmarks, one rank per process; run under the launcher:
//   ember launch --nproc-per-node 2 distributed_bench allreduce   (float32 4 KiB .. 64 MiB)
//   ember launch --nproc-per-node 2 distributed_bench overlap     (DDP, 5 buckets)
// Compare `allreduce` with bench/pytorch_allreduce.py in the same session.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "ember/distributed/ddp.h"
#include "ember/distributed/distributed.h"
#include "ember/ember.h"

using namespace ember;
namespace dist = ember::distributed;

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Bus bandwidth as nccl-tests define it: bytes * 2 (n - 1) / n per second.
void allreduce_sweep() {
  int rank = dist::get_rank(), world = dist::get_world_size();
  if (rank == 0) std::printf("{\"bench\":\"allreduce\",\"framework\":\"ember\",\"results\":[");
  bool first = true;
  for (int64_t bytes = 4096; bytes <= (int64_t{64} << 20); bytes *= 4) {
    Tensor t = ones({bytes / 4}, kFloat32);
    int iters = std::max<int>(3, static_cast<int>((int64_t{256} << 20) / bytes / 8));
    iters = std::min(iters, 200);
    dist::all_reduce(t);  // warm-up
    dist::barrier();
    double start = now();
    for (int i = 0; i < iters; ++i) dist::all_reduce(t);
    double seconds = (now() - start) / iters;
    double busbw = static_cast<double>(bytes) * 2 * (world - 1) / world / seconds / 1e9;
    if (rank == 0)
      std::printf("%s{\"bytes\":%lld,\"us\":%.1f,\"busbw_GBps\":%.3f}", first ? "" : ",",
                  static_cast<long long>(bytes), seconds * 1e6, busbw);
    first = false;
  }
  if (rank == 0) std::printf("]}\n");
}

// Note: with 5 buckets the all-reduces of the first four run while backward computes the
// earlier layers; what is left after backward is (about) the last bucket's.
void overlap() {
  int rank = dist::get_rank();
  manual_seed(0);
  auto model = std::make_shared<nn::Sequential>(std::initializer_list<std::shared_ptr<nn::Module>>{
      std::make_shared<nn::Linear>(1024, 1024), std::make_shared<nn::ReLU>(),
      std::make_shared<nn::Linear>(1024, 1024), std::make_shared<nn::ReLU>(),
      std::make_shared<nn::Linear>(1024, 1024), std::make_shared<nn::ReLU>(),
      std::make_shared<nn::Linear>(1024, 1024), std::make_shared<nn::ReLU>(),
      std::make_shared<nn::Linear>(1024, 1024)});
  dist::DDPOptions options;
  options.bucket_cap_mb = 4;
  options.first_bucket_mb = 4;
  dist::DDP ddp(model, options);
  Tensor x = randn({256, 1024}), y = randn({256, 1024});
  double tail = 0, backward = 0, reduce_total = 0;
  const int steps = 10;
  for (int s = 0; s < steps + 1; ++s) {
    ddp.zero_grad();
    Tensor loss = nn::functional::mse_loss(ddp.forward(x), y);
    double b0 = now();
    loss.backward();
    double b1 = now();
    const auto& t = ddp.last_timing();
    // The same buckets all-reduced one after another, with nothing to overlap.
    double r0 = now();
    for (const Tensor& p : ddp.module()->parameters()) dist::all_reduce(p.grad().clone());
    double r1 = now();
    if (s == 0) continue;  // warm-up
    tail += t.last_reduce_end - t.backward_end;
    backward += b1 - b0;
    reduce_total += r1 - r0;
  }
  if (rank == 0)
    std::printf(
        "{\"bench\":\"ddp_overlap\",\"buckets\":%zu,\"backward_ms\":%.2f,"
        "\"after_backward_ms\":%.2f,\"allreduce_total_ms\":%.2f,\"ratio\":%.3f}\n",
        ddp.bucket_indices().size(), backward / steps * 1e3, tail / steps * 1e3,
        reduce_total / steps * 1e3, tail / reduce_total);
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "allreduce";
  set_num_threads(1);
  dist::init_process_group("gloo", "env://");
  if (mode == "overlap")
    overlap();
  else
    allreduce_sweep();
  dist::destroy_process_group();
  return 0;
}
