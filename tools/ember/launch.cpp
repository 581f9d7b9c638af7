// `ember launch`: starts this node's ranks of a distributed job, like torchrun.
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "ember/core/error.h"
#include "ember/distributed/launch.h"
#include "tools/ember/commands.h"

namespace ember::cli {
namespace {

const char* kLaunchUsage = R"(usage: ember launch [options] PROGRAM [ARGS...]

Starts --nproc-per-node ranks of PROGRAM on this machine with RANK, LOCAL_RANK, WORLD_SIZE,
MASTER_ADDR and MASTER_PORT set (init_process_group's env://). When a rank fails, the others are
ended and its rank, exit code or signal are reported.

options:
  --nproc-per-node N   ranks on this machine (default 1)
  --nnodes M           machines in the job (default 1)
  --node-rank R        this machine's index, 0 .. M-1 (default 0)
  --master-addr A      the address of node 0, where rank 0 serves rendezvous (default 127.0.0.1)
  --master-port P      its port (default 29500)
  --prefix-output      prefix every output line with "[rank R] "
)";

int to_int(const std::string& name, const char* value) {
  char* end = nullptr;
  long v = std::strtol(value, &end, 10);
  EMBER_CHECK(end && *end == '\0', "[launch] ", name, " expects an integer, got '", value, "'");
  return static_cast<int>(v);
}

}  // namespace

int launch(int argc, char** argv) {
  distributed::LaunchOptions o;
  int i = 0;
  for (; i < argc && std::strncmp(argv[i], "--", 2) == 0; ++i) {
    std::string name = argv[i];
    if (name == "--help") {
      std::cout << kLaunchUsage;
      return 0;
    }
    if (name == "--prefix-output") {
      o.prefix_output = true;
      continue;
    }
    EMBER_CHECK(i + 1 < argc, "[launch] ", name, " expects a value");
    const char* value = argv[++i];
    if (name == "--nproc-per-node")
      o.nproc_per_node = to_int(name, value);
    else if (name == "--nnodes")
      o.nnodes = to_int(name, value);
    else if (name == "--node-rank")
      o.node_rank = to_int(name, value);
    else if (name == "--master-addr")
      o.master_addr = value;
    else if (name == "--master-port")
      o.master_port = to_int(name, value);
    else
      EMBER_FAIL("[launch] unknown option ", name, "\n", kLaunchUsage);
  }
  if (i >= argc) {
    std::cerr << kLaunchUsage;
    return 2;
  }
  return distributed::launch(o, std::vector<std::string>(argv + i, argv + argc));
}

}  // namespace ember::cli
