// One rank of the multi-process tests, started by `ember launch` or mpirun: joins the group by
// env:// and does what argv[1] says (some ranks misbehave on purpose).
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>

#include "ember/distributed/distributed.h"
#include "ember/ember.h"

namespace dist = ember::distributed;

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "allreduce";
  int bad = argc > 2 ? std::atoi(argv[2]) : -1;
  int rank = -1;
  try {
    auto timeout = mode == "hang" ? std::chrono::seconds(2) : std::chrono::seconds(60);
    dist::init_process_group("gloo", "env://", -1, -1, timeout);
    rank = dist::get_rank();
    int world = dist::get_world_size();
    if (rank == bad && mode == "fail") return 3;
    if (rank == bad && mode == "kill") ::raise(SIGKILL);
    if (rank == bad && mode == "hang") std::this_thread::sleep_for(std::chrono::seconds(60));
    if (mode == "mismatch" && rank == bad) {
      dist::broadcast(ember::zeros({3}), 0);
    } else {
      ember::Tensor t = ember::full({1000}, static_cast<double>(rank + 1), ember::kFloat64);
      dist::all_reduce(t);
      double expected = world * (world + 1) / 2.0;
      if (t.min().item<double>() != expected || t.max().item<double>() != expected) {
        std::cerr << "rank " << rank << ": wrong sum " << t.max().item<double>() << "\n";
        return 4;
      }
    }
    dist::barrier();
    std::cout << "rank " << rank << " of " << world << " ok" << std::endl;
    dist::destroy_process_group();
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "rank " << rank << ": " << e.what() << std::endl;
    return 1;
  }
}
