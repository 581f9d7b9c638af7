#include "tests/util/netns.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "ember/core/error.h"

namespace ember::testing {
namespace {

int sh(const std::string& command) { return std::system((command + " > /dev/null 2>&1").c_str()); }

std::string output_of(const std::string& command) {
  std::string out;
  if (FILE* p = ::popen(command.c_str(), "r")) {
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof(buf), p)) > 0;) out.append(buf, n);
    ::pclose(p);
  }
  return out;
}

void kill_processes_in(const std::string& name) {
  // Until none is left: a dying process's child may be reparented into the list meanwhile.
  for (int round = 0; round < 50; ++round) {
    std::istringstream pids(output_of("ip netns pids " + name + " 2>/dev/null"));
    bool any = false;
    for (pid_t pid; pids >> pid;) any = ::kill(pid, SIGKILL) == 0 || any;
    if (!any) return;
    ::usleep(20000);
  }
}

// Namespaces of earlier runs whose process is gone (a test killed before its cleanup).
void remove_stale_namespaces() {
  std::istringstream list(output_of("ip netns list 2>/dev/null"));
  for (std::string line; std::getline(list, line);) {
    std::string name = line.substr(0, line.find(' '));
    int pid = 0;
    char side = 0;
    if (std::sscanf(name.c_str(), "embert%d%c", &pid, &side) == 2 && ::kill(pid, 0) != 0) {
      kill_processes_in(name);
      sh("ip netns delete " + name);
    }
  }
}

}  // namespace

std::string TwoNodes::unavailable() {
  if (::geteuid() != 0) return "needs root to make network namespaces (ip netns)";
  if (sh("command -v ip") != 0) return "needs iproute2's ip (scripts/install-deps installs it)";
  std::string probe = "embert" + std::to_string(::getpid()) + "p";
  if (sh("ip netns add " + probe) != 0)
    return "cannot make a network namespace here (ip netns add failed: no CAP_SYS_ADMIN?)";
  sh("ip netns delete " + probe);
  // Making a namespace is not enough: in a chroot (scripts/fresh-machine-check) `ip -n` cannot
  // enter one, because it remounts / as a slave and / is no mount point there. So the probe is a
  // whole pair, made once per process.
  static const std::string why = [] {
    try {
      TwoNodes pair;
      return std::string();
    } catch (const Error& e) {
      return std::string("cannot join two network namespaces here: ") + e.what();
    }
  }();
  return why;
}

TwoNodes::TwoNodes() {
  static int made = 0;
  remove_stale_namespaces();
  std::string id = std::to_string(::getpid()) + static_cast<char>('a' + made % 26);
  name_[0] = "embert" + id + "0";
  name_[1] = "embert" + id + "1";
  // The addresses exist inside the namespaces only: other tests' pairs may use the same ones.
  subnet_ = detail::str_cat("10.", 100 + ::getpid() % 100, ".", made++ % 250, ".");
  veth_[0] = "ev" + id + "0";  // link names: at most 15 characters
  veth_[1] = "ev" + id + "1";
  const std::string &veth0 = veth_[0], &veth1 = veth_[1];
  const std::string steps[] = {"ip netns add " + name_[0],
                               "ip netns add " + name_[1],
                               "ip link add " + veth0 + " netns " + name_[0] +
                                   " type veth peer name " + veth1 + " netns " + name_[1],
                               "ip -n " + name_[0] + " addr add " + subnet_ + "1/24 dev " + veth0,
                               "ip -n " + name_[1] + " addr add " + subnet_ + "2/24 dev " + veth1,
                               "ip -n " + name_[0] + " link set " + veth0 + " up",
                               "ip -n " + name_[1] + " link set " + veth1 + " up",
                               "ip -n " + name_[0] + " link set lo up",
                               "ip -n " + name_[1] + " link set lo up"};
  for (const std::string& step : steps) {
    if (sh(step) == 0) continue;
    for (const std::string& name : name_) sh("ip netns delete " + name);
    EMBER_FAIL("[TwoNodes] '", step, "' failed");
  }
}

TwoNodes::~TwoNodes() {
  for (const std::string& name : name_) {
    kill_processes_in(name);
    sh("ip netns delete " + name);
  }
}

std::string TwoNodes::address(int node) const { return subnet_ + (node == 0 ? "1" : "2"); }

std::string TwoNodes::on(int node) const { return "ip netns exec " + name_[node] + " "; }

void TwoNodes::kill_node(int node) const { kill_processes_in(name_[node]); }

void TwoNodes::take_link_down() const {
  sh("ip -n " + name_[0] + " link set " + veth_[0] + " down");
  sh("ip -n " + name_[1] + " link set " + veth_[1] + " down");
}

}  // namespace ember::testing
