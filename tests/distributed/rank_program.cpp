// One rank of the multi-process tests, started by `ember launch` or mpirun: joins the group by
// env:// and does what argv[1] says (some ranks misbehave on purpose).
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <string>
#include <thread>

#include "ember/distributed/distributed.h"
#include "ember/distributed/error_file.h"
#include "ember/distributed/ddp.h"
#include "ember/distributed/fsdp.h"
#include "ember/ember.h"

namespace dist = ember::distributed;

// One write per line: the ranks share the test's pipe, and a line written in pieces (as
// std::cerr does) interleaves with another rank's.
void say(int fd, const std::string& text) {
  std::string line = text + "\n";
  ssize_t ignored = ::write(fd, line.data(), line.size());
  (void)ignored;
}

// TCP payload bytes this network namespace's sockets have sent once (`ss`'s bytes_sent less
// bytes_retrans: the kernel's tcpi_bytes_sent and tcpi_bytes_retrans): what the collectives put
// on the wire, without the headers, the acknowledgements of what came in, and the retransmissions
// a loaded machine's late acknowledgements set off (TCP's tail loss probes resend up to 64 KB).
uint64_t tcp_payload_sent() {
  FILE* pipe = ::popen("ss -tinH 2>/dev/null", "r");
  if (!pipe) return 0;
  uint64_t total = 0;
  char buffer[4096];
  std::string text;
  while (size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) text.append(buffer, n);
  ::pclose(pipe);
  for (const char* key : {"bytes_sent:", "bytes_retrans:"}) {
    size_t length = std::strlen(key);
    for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + 1)) {
      uint64_t n = std::strtoull(text.c_str() + at + length, nullptr, 10);
      total += key[6] == 's' ? n : -n;  // unsigned: sent minus resent
    }
  }
  return total;
}

// Open MPI's plugins (dlopen'ed, unloaded at exit) keep their start-up allocations; LeakSanitizer
// reports them in modules it can no longer name, so no suppression can match. Not ember's leaks.
extern "C" int __lsan_is_turned_off() {
  const char* backend = std::getenv("EMBER_TEST_BACKEND");
  return backend && std::string(backend) == "mpi";
}

// EMBER_TEST_SLOW_EXIT=RANK:MS: that rank's exit takes MS milliseconds more after its group is
// gone, as a rank's does under AddressSanitizer, whose leak check runs at exit after the static
// destructors closed its connections: its peers fail and end first, and the launcher must still
// name it. An atexit handler registered before the group exists runs after the group's destructor.
int g_linger_ms = 0;
void linger() { std::this_thread::sleep_for(std::chrono::milliseconds(g_linger_ms)); }
void linger_at_exit_if_asked() {
  const char* spec = std::getenv("EMBER_TEST_SLOW_EXIT");
  const char* rank = std::getenv("RANK");
  if (!spec || !rank || std::atoi(spec) != std::atoi(rank)) return;
  const char* ms = std::strchr(spec, ':');
  g_linger_ms = ms ? std::atoi(ms + 1) : 2000;
  std::atexit(linger);
}

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "allreduce";
  int bad = argc > 2 ? std::atoi(argv[2]) : -1;
  int rank = -1;
  linger_at_exit_if_asked();
  try {
    // "hang BAD MS" and "loop SECONDS MS": the group's timeout is MS milliseconds (2 s by default).
    std::chrono::milliseconds timeout = std::chrono::seconds(60);
    if (mode == "hang" || mode == "loop")
      timeout = std::chrono::milliseconds(argc > 3 ? std::atoi(argv[3]) : 2000);
    const char* backend = std::getenv("EMBER_TEST_BACKEND");
    const char* init_method = std::getenv("EMBER_TEST_INIT_METHOD");
    dist::init_process_group(backend ? backend : "gloo", init_method ? init_method : "env://", -1,
                             -1, timeout);
    rank = dist::get_rank();
    int world = dist::get_world_size();
    if (rank == bad && mode == "fail") return 3;
    if (rank == bad && mode == "kill") ::raise(SIGKILL);
    if (rank == bad && mode == "hang") std::this_thread::sleep_for(std::chrono::seconds(60));
    // Under the elastic agent: "elastic_fail RESTARTS BAD kill|throw": while fewer than RESTARTS
    // restarts happened, rank BAD dies (SIGKILL) or throws (its message recorded for the agent)
    // after a first all-reduce, and the others fail in their next one.
    const char* restart_env = std::getenv("TORCHELASTIC_RESTART_COUNT");
    int restart = restart_env ? std::atoi(restart_env) : 0;
    if (mode == "elastic_fail") {
      dist::all_reduce(ember::ones({4}));
      if (rank == (argc > 3 ? std::atoi(argv[3]) : 1) && restart < bad) {
        if (argc > 4 && std::string(argv[4]) == "throw")
          throw std::runtime_error("rank " + std::to_string(rank) + " gave up at restart " +
                                   std::to_string(restart));
        ::raise(SIGKILL);
      }
      dist::all_reduce(ember::ones({4}));
      say(1, "rank " + std::to_string(rank) + " of " + std::to_string(world) + " ok at restart " +
                 std::to_string(restart));
    }
    if (mode == "loop") {
      // All-reduces for `bad` seconds (a peer may vanish meanwhile); every rank stops at the same
      // step, once one's time is up (a MIN of the ranks' "go on" flags).
      auto end = std::chrono::steady_clock::now() + std::chrono::seconds(bad);
      for (int i = 0;; ++i) {
        ember::Tensor go = ember::full({1}, std::chrono::steady_clock::now() < end ? 1.0 : 0.0);
        dist::all_reduce(go, dist::ReduceOp::MIN);
        if (i == 0) say(1, "rank " + std::to_string(rank) + " looping");
        if (go.item<double>() == 0) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    } else if (mode == "collectives") {
      // Sums and maxima of small integers are exact in every dtype; bool sums are "or".
      for (ember::DType dt : {ember::kBool, ember::kUInt8, ember::kInt32, ember::kInt64,
                              ember::kFloat16, ember::kBFloat16, ember::kFloat32}) {
        ember::Tensor t = ember::full({7}, static_cast<double>(rank % 2 == 0 ? rank : 1), dt);
        dist::all_reduce(t, dist::ReduceOp::MAX);
        ember::Tensor b = ember::full({3}, static_cast<double>(rank), dt);
        dist::broadcast(b, world - 1);
        std::vector<ember::Tensor> parts;
        for (int r = 0; r < world; ++r) parts.push_back(ember::zeros({2}, dt));
        dist::all_gather(parts, ember::full({2}, static_cast<double>(rank % 2), dt));
        // The flat forms: rank r's part is r % 2; the reduce-scatter's chunks are MAX-reduced.
        ember::Tensor flat = ember::zeros({world, 2}, dt);
        dist::all_gather_into_tensor(flat, ember::full({2}, static_cast<double>(rank % 2), dt));
        ember::Tensor part = ember::zeros({3}, dt);
        dist::reduce_scatter_tensor(part, ember::full({3 * world}, static_cast<double>(rank % 2), dt),
                                    dist::ReduceOp::MAX);
        double max_expected = dt == ember::kBool ? 1.0 : std::max(1.0, (world - 1) / 2 * 2.0);
        bool ok = t.to(ember::kFloat64).max().item<double>() == max_expected &&
                  b.to(ember::kFloat64).min().item<double>() ==
                      (dt == ember::kBool ? (world > 1 ? 1.0 : 0.0) : world - 1.0);
        for (int r = 0; r < world; ++r)
          ok = ok && parts[r].to(ember::kFloat64).max().item<double>() == r % 2 &&
               flat[r].to(ember::kFloat64).min().item<double>() == r % 2;
        ok = ok && part.to(ember::kFloat64).min().item<double>() == (world > 1 ? 1.0 : 0.0);
        if (!ok) {
          say(2, "rank " + std::to_string(rank) + ": wrong result for " + ember::dtype_name(dt));
          return 4;
        }
      }
    } else if (mode == "new_group") {
      // Two overlapping groups in a world of 3 or more: {2, 0} (rank 2 is its rank 0) and {1, 2}.
      std::shared_ptr<dist::ProcessGroup> a = dist::new_group({2, 0});
      std::shared_ptr<dist::ProcessGroup> b = dist::new_group({1, 2});
      bool ok =
          (a != nullptr) == (rank == 0 || rank == 2) && (b != nullptr) == (rank == 1 || rank == 2);
      if (a) {
        ember::Tensor t = ember::full({4}, static_cast<double>(rank + 1), ember::kFloat64);
        dist::all_reduce(t, dist::ReduceOp::SUM, a.get());
        ember::Tensor from = ember::full({2}, static_cast<double>(rank), ember::kFloat32);
        dist::broadcast(from, 0, a.get());
        ok = ok && dist::get_rank(a.get()) == (rank == 2 ? 0 : 1) &&
             dist::get_world_size(a.get()) == 2 && t.min().item<double>() == 4 &&
             from.max().item<double>() == 2;
      }
      if (b) {
        ember::Tensor t = ember::full({3}, static_cast<double>(rank), ember::kInt64);
        dist::all_reduce(t, dist::ReduceOp::MAX, b.get());
        ok = ok && dist::get_rank(b.get()) == rank - 1 && t.min().item<double>() == 2;
      }
      if (!ok) {
        say(2, "rank " + std::to_string(rank) + ": wrong new_group result");
        return 4;
      }
    } else if (mode == "kill_in_group") {
      // A group whose numbering differs from the default group's: {3, 2} in a world of 4 (rank 3
      // is its rank 0). Rank `bad` dies in it; ranks outside go on to the barrier below.
      std::shared_ptr<dist::ProcessGroup> g = dist::new_group({3, 2});
      if (rank == bad) ::raise(SIGKILL);
      if (g) dist::all_reduce(ember::ones({4}), dist::ReduceOp::SUM, g.get());
    } else if (mode == "p2p") {
      // Ranks 0 and 1 trade: two sends each way on one tag (which must arrive in order), posted
      // before either side receives, then one of another dtype and shape on another tag.
      if (rank < 2) {
        int peer = 1 - rank;
        std::vector<std::shared_ptr<dist::Work>> sends;
        for (int k = 0; k < 2; ++k)
          sends.push_back(dist::isend(ember::full({5}, rank * 10.0 + k), peer));
        ember::Tensor first = ember::zeros({5}), second = ember::zeros({5});
        ember::Tensor other = ember::zeros({2, 3}, ember::kInt64);
        dist::recv(first, peer);
        dist::recv(second, peer);
        if (rank == 0) dist::send(ember::full({2, 3}, 7.0, ember::kInt64), 1, nullptr, 3);
        if (rank == 1) dist::recv(other, 0, nullptr, 3);
        for (auto& w : sends) w->wait();
        bool ok = first.min().item<double>() == peer * 10.0 &&
                  second.max().item<double>() == peer * 10.0 + 1 &&
                  other.sum().item<int64_t>() == (rank == 1 ? 42 : 0);
        if (!ok) {
          say(2, "rank " + std::to_string(rank) + ": wrong p2p result");
          return 4;
        }
      }
    } else if (mode == "p2p_dtype" || mode == "p2p_size") {
      // Rank 0 sends float32[4]; rank 1 receives into a tensor of another dtype or size.
      if (rank == 0) dist::send(ember::ones({4}), 1, nullptr, 7);
      if (rank == 1)
        dist::recv(mode == "p2p_dtype" ? ember::zeros({4}, ember::kInt32) : ember::zeros({6}), 0,
                   nullptr, 7);
    } else if (mode == "wire") {
      // Bytes each collective puts on the wire, run between two network namespaces: a 16 MiB
      // float32 input reduce-scattered, all-reduced, and its shards all-gathered back.
      const int64_t n = int64_t{4} << 20;
      ember::Tensor input = ember::full({n}, rank + 1.0);
      ember::Tensor part = ember::zeros({n / world});
      auto sent_by = [&](const std::function<void()>& collective) {
        dist::barrier();
        uint64_t before = tcp_payload_sent();
        collective();
        dist::barrier();
        return tcp_payload_sent() - before;
      };
      uint64_t rs = sent_by([&] { dist::reduce_scatter_tensor(part, input); });
      uint64_t ar = sent_by([&] { dist::all_reduce(input.clone()); });
      uint64_t ag = sent_by([&] { dist::all_gather_into_tensor(input, part); });
      bool ok = part.min().item<double>() == world * (world + 1) / 2.0 &&
                input.max().item<double>() == world * (world + 1) / 2.0;
      say(1, "rank " + std::to_string(rank) + " wire bytes " + std::to_string(n * 4) +
                 " reduce_scatter_tensor " + std::to_string(rs) + " all_reduce " +
                 std::to_string(ar) + " all_gather_into_tensor " + std::to_string(ag) +
                 (ok ? "" : " WRONG RESULT"));
    } else if (mode == "fsdp_wire") {
      // Bytes one training step (forward and backward) puts on the wire under DDP and FSDP's
      // strategies: 4 Linear(512, 512) in float32 (4.2 MB of parameters), one unit.
      auto make = [] {
        ember::manual_seed(3);
        auto linear = [] { return std::make_shared<ember::nn::Linear>(512, 512); };
        return std::make_shared<ember::nn::Sequential>(
            std::initializer_list<std::shared_ptr<ember::nn::Module>>{linear(), linear(), linear(),
                                                                      linear()});
      };
      ember::Tensor x = ember::ones({8, 512});
      auto step_bytes = [&](ember::nn::Module& model) {
        dist::barrier();
        uint64_t before = tcp_payload_sent();
        model.forward(x).sum().backward();
        dist::barrier();
        return tcp_payload_sent() - before;
      };
      int64_t params = 0;
      for (const auto& p : make()->parameters()) params += p.numel() * 4;
      dist::DDP ddp(make());
      uint64_t ddp_bytes = step_bytes(ddp);
      std::string line = "rank " + std::to_string(rank) + " fsdp_wire bytes " +
                         std::to_string(params) + " ddp " + std::to_string(ddp_bytes);
      for (auto strategy : {dist::ShardingStrategy::SHARD_GRAD_OP, dist::ShardingStrategy::FULL_SHARD}) {
        dist::FsdpOptions options;
        options.sharding_strategy = strategy;
        dist::FSDP fsdp(make(), options);
        line += std::string(" ") + dist::sharding_strategy_name(strategy) + " " +
                std::to_string(step_bytes(fsdp));
      }
      say(1, line);
    } else if (mode == "mismatch" && rank == bad) {
      dist::broadcast(ember::zeros({3}), 0);
    } else {
      ember::Tensor t = ember::full({1000}, static_cast<double>(rank + 1), ember::kFloat64);
      dist::all_reduce(t);
      double expected = world * (world + 1) / 2.0;
      if (t.min().item<double>() != expected || t.max().item<double>() != expected) {
        say(2, "rank " + std::to_string(rank) + ": wrong sum " +
                   std::to_string(t.max().item<double>()));
        return 4;
      }
    }
    dist::barrier();
    say(1, "rank " + std::to_string(rank) + " of " + std::to_string(world) + " ok");
    // "uneven_exit BAD MS": rank BAD is still at work for MS milliseconds after its peers leave.
    if (mode == "uneven_exit" && rank == bad)
      std::this_thread::sleep_for(std::chrono::milliseconds(argc > 3 ? std::atoi(argv[3]) : 3000));
    dist::destroy_process_group();
    return 0;
  } catch (const std::exception& e) {
    dist::record_error(e.what());  // for the launcher's report
    say(2, "rank " + std::to_string(rank) + ": " + e.what());
    return 1;
  }
}
