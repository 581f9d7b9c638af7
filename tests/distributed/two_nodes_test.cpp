// Two real nodes on one machine: two network namespaces joined by a veth pair (tests/util/netns.h),
// one `ember launch` agent in each, training LeNet with DDP across them over Gloo (`ember train
// --resume`, one rank per node). The elastic scenarios: a rank SIGKILLed mid-epoch, a whole node
// killed, a node that joins late, an unreachable rendezvous host; and failure detection across
// nodes: a peer whose link goes down is named by the survivors, and no rank hangs. Skipped with
// the reason where namespaces cannot be made (not root, no iproute2).
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <regex>
#include <string>

#include "tests/util/netns.h"
#include "tests/util/processes.h"

namespace ember::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

const std::string kEmber = EMBER_BINARY_DIR "/tools/ember";
const std::string kProgram = EMBER_BINARY_DIR "/tests/distributed_rank_program";

#define SKIP_WITHOUT_NAMESPACES() \
  if (std::string why = TwoNodes::unavailable(); !why.empty()) GTEST_SKIP() << why

std::string fresh_dir(const std::string& name) {
  static int n = 0;
  std::string dir = ::testing::TempDir() + "/two_nodes_" + name + "_" + std::to_string(::getpid()) +
                    "_" + std::to_string(n++);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// One node's agent of an elastic job training LeNet for one epoch, one rank per node, with a
// checkpoint every 100 steps in `dir` (the namespaces share the file system, as nodes share
// storage).
std::string agent(const TwoNodes& nodes, int node, int port, const std::string& nnodes,
                  const std::string& dir) {
  return "exec " + nodes.on(node) + kEmber + " launch --nnodes " + nnodes +
         " --nproc-per-node 1 --max-restarts 2 --rdzv-endpoint " + nodes.address(0) + ":" +
         std::to_string(port) + " --rdzv-id job --rdzv-conf join_timeout=30,last_call_timeout=3 " +
         kEmber +
         " train --nproc 2 --threads 1 --batch-size 32 --epochs 1 --resume --checkpoint-every 100 "
         "--out " +
         dir + " --events " + dir + "/events.jsonl";
}

// The last checkpoint's step in the events log (-1 before the first).
int last_checkpoint_step(const std::string& dir) {
  int step = -1;
  std::regex checkpoint(R"("event":"checkpoint","epoch":0,"step":(\d+))");
  for (const std::string& line : read_lines(dir + "/events.jsonl"))
    if (std::smatch m; std::regex_search(line, m, checkpoint)) step = std::stoi(m[1]);
  return step;
}

// The number after "key": in the JSON line that ends a run.
double result_field(const std::string& output, const std::string& key) {
  std::smatch m;
  if (!std::regex_search(output, m, std::regex("\"" + key + "\":([0-9.eE+-]+)"))) return -1;
  return std::stod(m[1]);
}

// Node 0's agent has its id (the first: its node is node 0, with rank 0).
void wait_for_first_agent(BackgroundCommand& a) {
  ASSERT_TRUE(
      wait_until([&] { return a.output().find("agent 1 of job") != std::string::npos; }, 30s))
      << a.output();
}

// One node's part of a fixed job (one rank per node, rank 0 on node 0): `kProgram ARGS`.
std::string fixed_job(const TwoNodes& nodes, int node, int port, const std::string& args) {
  return "exec " + nodes.on(node) + kEmber + " launch --nnodes 2 --node-rank " +
         std::to_string(node) + " --master-addr " + nodes.address(0) + " --master-port " +
         std::to_string(port) + " " + kProgram + " " + args;
}

// The two nodes' outputs of a fixed job that must end well on both.
std::vector<std::string> run_fixed_job(const TwoNodes& nodes, const std::string& args) {
  int port = next_port();
  BackgroundCommand a(fixed_job(nodes, 0, port, args)), b(fixed_job(nodes, 1, port, args));
  std::optional<int> code_a = a.wait(90s), code_b = b.wait(90s);
  EXPECT_EQ(code_a, std::optional<int>(0)) << a.output();
  EXPECT_EQ(code_b, std::optional<int>(0)) << b.output();
  return {a.output(), b.output()};
}

// An elastic job's two agents, node 1's started once node 0's has the first id (so node 0 is
// group rank 0, with rank 0).
struct TwoAgents {
  TwoAgents(const TwoNodes& nodes, const std::string& nnodes, const std::string& name)
      : dir(fresh_dir(name)), port(next_port()), a(agent(nodes, 0, port, nnodes, dir)) {
    wait_for_first_agent(a);
    b = std::make_unique<BackgroundCommand>(agent(nodes, 1, port, nnodes, dir));
  }
  std::string dir;
  int port;
  BackgroundCommand a;
  std::unique_ptr<BackgroundCommand> b;
};

// Both agents, to their end; expects both to succeed.
void expect_both_end_well(BackgroundCommand& a, BackgroundCommand& b) {
  std::optional<int> code_a = a.wait(90s), code_b = b.wait(30s);
  EXPECT_EQ(code_a, std::optional<int>(0)) << "node 0:\n"
                                           << a.output() << "node 1:\n"
                                           << b.output();
  EXPECT_EQ(code_b, std::optional<int>(0)) << "node 0:\n"
                                           << a.output() << "node 1:\n"
                                           << b.output();
}

// Waits for the checkpoint of step 200 or later: the job is mid-epoch.
void wait_mid_epoch(const std::string& dir, BackgroundCommand& a) {
  ASSERT_TRUE(wait_until([&] { return last_checkpoint_step(dir) >= 200; }, 60s)) << a.output();
}

// Node 1's rank is SIGKILLed mid-epoch: both agents restart the group, the run resumes from the
// checkpoint, and it ends within a point of the same job undisturbed.
TEST(TwoNodes, ARankKilledMidEpochRestartsAndEndsWithinAPointOfAnUndisturbedRun) {
  SKIP_WITHOUT_NAMESPACES();
  TwoNodes nodes;
  double undisturbed = 0;
  {
    TwoAgents job(nodes, "2", "undisturbed");
    ASSERT_TRUE(job.b);
    expect_both_end_well(job.a, *job.b);
    undisturbed = result_field(job.a.output(), "test_accuracy");
    EXPECT_GT(undisturbed, 0.7) << job.a.output();
    EXPECT_EQ(result_field(job.a.output(), "nproc"), 2) << "one rank on each node";
  }
  TwoAgents job(nodes, "2", "killed");
  ASSERT_TRUE(job.b);
  BackgroundCommand &a = job.a, &b = *job.b;
  wait_mid_epoch(job.dir, a);
  std::vector<pid_t> rank = children_of(b.pid());
  ASSERT_EQ(rank.size(), 1u) << b.output();
  ::kill(rank[0], SIGKILL);
  expect_both_end_well(a, b);
  EXPECT_NE(
      b.output().find("restart 0: rank 1 (local rank 0) on node 1 (" + nodes.address(1) + ", pid " +
                      std::to_string(rank[0]) + ") was killed by signal 9 (Killed)"),
      std::string::npos)
      << b.output();
  EXPECT_EQ(result_field(a.output(), "restart_count"), 1) << a.output();
  double accuracy = result_field(a.output(), "test_accuracy");
  EXPECT_NEAR(accuracy, undisturbed, 0.01) << a.output();
  std::cout << "test accuracy: undisturbed " << undisturbed << ", with the kill " << accuracy
            << "\n";
}

// Node 1 dies whole (its agent and its rank, SIGKILL): node 0 goes on alone (--nnodes 1:2).
TEST(TwoNodes, AWholeNodeKilledLeavesTheOtherToFinishAlone) {
  SKIP_WITHOUT_NAMESPACES();
  TwoNodes nodes;
  TwoAgents job(nodes, "1:2", "node_killed");
  ASSERT_TRUE(job.b);
  BackgroundCommand& a = job.a;
  wait_mid_epoch(job.dir, a);
  nodes.kill_node(1);
  ASSERT_EQ(a.wait(90s), std::optional<int>(0)) << a.output();
  EXPECT_NE(a.output().find("round 1: node 0 of 1 (" + nodes.address(0) + "), ranks 0-0 of 1"),
            std::string::npos)
      << a.output();
  EXPECT_EQ(result_field(a.output(), "nproc"), 1) << a.output();
  EXPECT_NE(a.output().find("resumed from"), std::string::npos) << a.output();
  EXPECT_GT(result_field(a.output(), "test_accuracy"), 0.7) << a.output();
}

// Node 1 comes while node 0 trains alone: the group restarts to admit it, and the rest of the
// epoch is split between the two (no restart is used up).
TEST(TwoNodes, ANodeThatJoinsLateIsAdmittedAtTheNextRestart) {
  SKIP_WITHOUT_NAMESPACES();
  TwoNodes nodes;
  std::string dir = fresh_dir("late");
  int port = next_port();
  BackgroundCommand a(agent(nodes, 0, port, "1:2", dir));
  ASSERT_TRUE(wait_until([&] { return last_checkpoint_step(dir) >= 100; }, 60s)) << a.output();
  BackgroundCommand b(agent(nodes, 1, port, "1:2", dir));
  expect_both_end_well(a, b);
  EXPECT_NE(b.output().find("round 1: node 1 of 2 (" + nodes.address(1) + "), ranks 1-1 of 2"),
            std::string::npos)
      << b.output();
  EXPECT_EQ(result_field(a.output(), "nproc"), 2) << a.output();
  EXPECT_EQ(result_field(a.output(), "restart_count"), 0) << a.output();
}

// The rendezvous host cannot be reached (the link is down): a clear error within the join
// timeout, not a hang.
TEST(TwoNodes, AnUnreachableRendezvousHostIsAClearErrorWithinTheJoinTimeout) {
  SKIP_WITHOUT_NAMESPACES();
  TwoNodes nodes;
  nodes.take_link_down();
  int port = next_port();
  auto t0 = std::chrono::steady_clock::now();
  CommandResult r = run_command(nodes.on(1) + kEmber + " launch --nnodes 1:2 --rdzv-endpoint " +
                                    nodes.address(0) + ":" + std::to_string(port) +
                                    " --rdzv-conf join_timeout=3 " + kProgram,
                                30);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("[rendezvous] cannot reach the rendezvous store at " + nodes.address(0) +
                          ":" + std::to_string(port) + " within the join timeout of 3000 ms"),
            std::string::npos)
      << r.output;
  EXPECT_LT(seconds, 3 + 2.0) << r.output;
}

// Failure detection across nodes: the link between the nodes goes down while their ranks
// all-reduce (a fixed job, group timeout 8 s). Nothing tells either side; each names the other
// within the group's timeout (rank 0 from the store's dead connection, rank 1 because the store on
// node 0 cannot be reached), and neither hangs.
TEST(TwoNodes, APeerWhoseHostVanishesIsNamedWithinTheGroupTimeout) {
  SKIP_WITHOUT_NAMESPACES();
  TwoNodes nodes;
  int port = next_port();
  BackgroundCommand a(fixed_job(nodes, 0, port, "loop 60 8000")),
      b(fixed_job(nodes, 1, port, "loop 60 8000"));
  ASSERT_TRUE(wait_until(
      [&] {
        return a.output().find("rank 0 looping") != std::string::npos &&
               b.output().find("rank 1 looping") != std::string::npos;
      },
      30s))
      << a.output() << b.output();
  auto t0 = std::chrono::steady_clock::now();
  nodes.take_link_down();
  std::optional<int> code_a = a.wait(30s), code_b = b.wait(30s);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(code_a && code_b) << "a rank hangs\n" << a.output() << b.output();
  EXPECT_NE(*code_a, 0);
  EXPECT_NE(*code_b, 0);
  EXPECT_NE(a.output().find("(gloo) timed out after 8000 ms (a rank stopped calling "
                            "collectives?): rank 1 exited or died without leaving the group"),
            std::string::npos)
      << a.output();
  EXPECT_NE(b.output().find("(gloo) timed out after 8000 ms (a rank stopped calling "
                            "collectives?): rank 0, which serves the rendezvous store, died or "
                            "cannot be reached"),
            std::string::npos)
      << b.output();
  EXPECT_LT(seconds, 8 + 6.0);
  std::cout << "both ranks ended " << seconds << " s after the link went down\n";
}

// The same loss in an elastic job: node 0's agent sees node 1's agent lost (keepalive) within
// seconds, without waiting for its rank's 5-minute collective timeout, and goes on alone; node
// 1's agent loses the rendezvous store and ends its rank.
TEST(TwoNodes, AnElasticJobGoesOnAloneWhenANodeVanishes) {
  SKIP_WITHOUT_NAMESPACES();
  TwoNodes nodes;
  TwoAgents job(nodes, "1:2", "vanished");
  ASSERT_TRUE(job.b);
  BackgroundCommand &a = job.a, &b = *job.b;
  wait_mid_epoch(job.dir, a);
  nodes.take_link_down();
  std::optional<int> code_b = b.wait(30s);
  EXPECT_TRUE(code_b.has_value() && *code_b != 0) << b.output();
  ASSERT_EQ(a.wait(90s), std::optional<int>(0)) << a.output();
  EXPECT_NE(a.output().find("node 1 (" + nodes.address(1) +
                            ") lost: its agent died or lost contact with the rendezvous store"),
            std::string::npos)
      << a.output();
  EXPECT_EQ(result_field(a.output(), "nproc"), 1) << a.output();
}

// The TCP payload that crosses the link (each socket's bytes sent once, from `ss`) when two
// ranks on two nodes shard a 16 MiB input over Gloo: the ring reduce-scatter sends (N-1)/N = half
// of it per rank, an all-reduce of it all of it (Gloo's ring all-reduce: 2(N-1)/N), and
// PyTorch's Gloo reduce-scatter is such an all-reduce.
TEST(TwoNodes, GlooReduceScatterSendsHalfTheBytesOfAnAllReduce) {
  SKIP_WITHOUT_NAMESPACES();
  TwoNodes nodes;
  std::vector<std::string> outputs = run_fixed_job(nodes, "wire");
  std::regex line(R"(rank (\d) wire bytes (\d+) reduce_scatter_tensor (\d+) all_reduce (\d+) )"
                  R"(all_gather_into_tensor (\d+)\n)");
  int ranks = 0;
  for (const std::string& out : outputs) {
    std::smatch m;
    ASSERT_TRUE(std::regex_search(out, m, line)) << out;
    double bytes = std::stod(m[2]), rs = std::stod(m[3]), ar = std::stod(m[4]),
           ag = std::stod(m[5]);
    std::cout << "rank " << m[1] << ": reduce_scatter_tensor " << rs / bytes << ", all_reduce "
              << ar / bytes << ", all_gather_into_tensor " << ag / bytes
              << " of the input's bytes sent\n";
    EXPECT_NEAR(rs / bytes, 0.5, 0.005) << out;
    EXPECT_NEAR(ar / bytes, 1.0, 0.01) << out;
    EXPECT_NEAR(ag / bytes, 0.5, 0.005) << out;
    ++ranks;
  }
  EXPECT_EQ(ranks, 2);
}

// The TCP payload one training step sends per rank across the link (each socket's bytes_sent),
// against the parameters' bytes P at 2 ranks: DDP and SHARD_GRAD_OP 2P(N-1)/N = P (an all-reduce;
// a gather and a reduce-scatter), FULL_SHARD 3P(N-1)/N = 1.5P (the gather again for backward).
TEST(TwoNodes, FsdpStrategiesSendTheirShareOfTheParameters) {
  SKIP_WITHOUT_NAMESPACES();
  TwoNodes nodes;
  std::vector<std::string> outputs = run_fixed_job(nodes, "fsdp_wire");
  std::regex line(R"(rank (\d) fsdp_wire bytes (\d+) ddp (\d+) SHARD_GRAD_OP (\d+) )"
                  R"(FULL_SHARD (\d+)\n)");
  for (const std::string& out : outputs) {
    std::smatch m;
    ASSERT_TRUE(std::regex_search(out, m, line)) << out;
    double p = std::stod(m[2]), ddp = std::stod(m[3]), grad_op = std::stod(m[4]),
           full = std::stod(m[5]);
    std::cout << "rank " << m[1] << ": per step, of the parameters' bytes: DDP " << ddp / p
              << ", SHARD_GRAD_OP " << grad_op / p << ", FULL_SHARD " << full / p << "\n";
    EXPECT_NEAR(ddp / p, 1.0, 0.01) << out;
    EXPECT_NEAR(grad_op / p, 1.0, 0.01) << out;
    EXPECT_NEAR(full / p, 1.5, 0.015) << out;
  }
}

}  // namespace
}  // namespace ember::testing
