// The elastic agent on one machine (loopback): the rendezvous's rounds in one process, then
// `ember launch` restarting a group after a killed or failing rank, two agents restarting together,
// a late agent admitted at a restart, too few nodes, and a program that resumes from its
// checkpoint. Two real nodes (network namespaces) are in two_nodes_test.cpp.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <string>

#include "ember/distributed/elastic_agent.h"
#include "ember/distributed/rendezvous.h"
#include "tests/util/processes.h"
#include "tests/util/test_util.h"

namespace ember::distributed {
namespace {

using namespace std::chrono_literals;
using ember::testing::BackgroundCommand;
using ember::testing::next_port;
using ember::testing::run_command;

const std::string kEmber = EMBER_BINARY_DIR "/tools/ember";
const std::string kProgram = EMBER_BINARY_DIR "/tests/distributed_rank_program";
const std::string kExample = EMBER_BINARY_DIR "/tools/examples/example_elastic_train";

RendezvousOptions options(int port, int min_nodes, int max_nodes) {
  RendezvousOptions o;
  o.port = port;
  o.run_id = "test";
  o.min_nodes = min_nodes;
  o.max_nodes = max_nodes;
  o.join_timeout = 20s;
  o.last_call_timeout = 20s;
  return o;
}

TEST(Rendezvous, ARoundClosesAtMaxNodesWithNodesInTheOrderTheyStarted) {
  int port = next_port();
  Rendezvous first(options(port, 1, 2));  // serves the store: 127.0.0.1 is this machine
  Rendezvous second(options(port, 1, 2));
  EXPECT_TRUE(first.serves_store());
  EXPECT_FALSE(second.serves_store());
  auto other = std::async(std::launch::async, [&] { return second.next_rendezvous(); });
  RendezvousInfo a = first.next_rendezvous(), b = other.get();
  EXPECT_EQ(a.round, 0);
  EXPECT_EQ(a.nodes.size(), 2u);
  EXPECT_EQ(a.group_rank, 0);
  EXPECT_EQ(b.group_rank, 1);
  EXPECT_EQ(a.world_size(), 2);
  EXPECT_EQ(b.rank_offset(), 1);
  EXPECT_EQ(a.nodes[0].address, "127.0.0.1");
  EXPECT_EQ(a.nodes[0].master_port, b.nodes[0].master_port);
  EXPECT_GT(a.nodes[0].master_port, 0);
  EXPECT_EQ(a.restart_count, 0);
}

// At a restart, two agents left of at most three: the round closes once both joined, not after
// the 20 s last call (at the job's start it waits for more; here the first round is full).
TEST(Rendezvous, ARestartClosesWhenEveryLiveAgentJoined) {
  int port = next_port();
  Rendezvous first(options(port, 1, 3)), second(options(port, 1, 3));
  auto third = std::make_unique<Rendezvous>(options(port, 1, 3));
  auto other = std::async(std::launch::async, [&] { return second.next_rendezvous(); });
  auto another = std::async(std::launch::async, [&] { return third->next_rendezvous(); });
  EXPECT_EQ(first.next_rendezvous().nodes.size(), 3u);
  other.get();
  another.get();
  third.reset();  // its agent leaves
  first.request_restart();
  auto t0 = std::chrono::steady_clock::now();
  other = std::async(std::launch::async, [&] { return second.next_rendezvous(); });
  RendezvousInfo a = first.next_rendezvous();
  EXPECT_EQ(other.get().nodes.size(), 2u);
  EXPECT_EQ(a.nodes.size(), 2u);
  EXPECT_EQ(a.round, 1);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
}

// An agent that comes when the round has closed waits; the running round sees it, restarts, and
// the next round has both. A failure recorded in a round makes the next one a restart.
TEST(Rendezvous, ALateAgentWaitsForTheNextRound) {
  int port = next_port();
  RendezvousOptions o = options(port, 1, 2);
  o.last_call_timeout = 500ms;  // the first round, alone
  Rendezvous first(o);
  RendezvousInfo alone = first.next_rendezvous();
  EXPECT_EQ(alone.nodes.size(), 1u);
  EXPECT_EQ(first.check_round().kind, RoundEnd::kNone);
  Rendezvous late(options(port, 1, 2));
  auto joined = std::async(std::launch::async, [&] { return late.next_rendezvous(); });
  ASSERT_TRUE(ember::testing::wait_until(
      [&] { return first.check_round().kind == RoundEnd::kNodesWaiting; }, 10s));
  first.record_failure({0, 3, "restart 0: something failed"});
  first.request_restart();
  RendezvousInfo both = first.next_rendezvous();
  EXPECT_EQ(both.round, 1);
  EXPECT_EQ(both.nodes.size(), 2u);
  EXPECT_EQ(both.restart_count, 1);
  EXPECT_EQ(joined.get().group_rank, 1);
  ASSERT_EQ(late.failures().size(), 1u);
  EXPECT_EQ(late.failures()[0].text, "restart 0: something failed");
  EXPECT_EQ(late.failures()[0].exit_code, 3);
}

TEST(Rendezvous, TooFewNodesIsAnErrorAfterTheJoinTimeout) {
  RendezvousOptions o = options(next_port(), 2, 2);
  o.join_timeout = 1s;
  Rendezvous alone(o);
  EXPECT_THROW_WITH(alone.next_rendezvous(),
                    "only 1 of the at least 2 nodes joined round 0 of job 'test' within the join "
                    "timeout of 1000 ms");
}

TEST(Rendezvous, EndpointsParse) {
  EXPECT_EQ(parse_endpoint("10.0.0.1:29400"), (std::pair<std::string, int>{"10.0.0.1", 29400}));
  EXPECT_EQ(parse_endpoint("node7"), (std::pair<std::string, int>{"node7", 29400}));
  EXPECT_EQ(parse_endpoint("[::1]:80"), (std::pair<std::string, int>{"::1", 80}));
  EXPECT_THROW_WITH(parse_endpoint("host:0"), "expected --rdzv-endpoint host:port, got 'host:0'");
  EXPECT_THROW_WITH(parse_endpoint("host:x"), "expected --rdzv-endpoint host:port");
}

std::string elastic(int port, const std::string& id, const std::string& options) {
  return kEmber + " launch --rdzv-endpoint 127.0.0.1:" + std::to_string(port) + " --rdzv-id " + id +
         " " + options + " ";
}

TEST(ElasticLaunch, RestartsTheGroupAfterAKilledRank) {
  auto r = run_command(elastic(next_port(), "killed", "--nproc-per-node 2 --max-restarts 1") +
                       kProgram + " elastic_fail 1 1 kill");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("restart 0: rank 1 (local rank 1) on node 0 (127.0.0.1, pid "),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("was killed by signal 9 (Killed)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("round 1: node 0 of 1 (127.0.0.1), ranks 0-1 of 2, restart 1"),
            std::string::npos)
      << r.output;
  for (int rank : {0, 1})
    EXPECT_NE(r.output.find("rank " + std::to_string(rank) + " of 2 ok at restart 1"),
              std::string::npos)
        << r.output;
}

// Past --max-restarts the job fails, and the report names every failure with the message the
// rank recorded.
TEST(ElasticLaunch, FailsAfterMaxRestartsNamingEveryFailure) {
  auto r = run_command(elastic(next_port(), "doomed", "--nproc-per-node 2 --max-restarts 1") +
                       kProgram + " elastic_fail 9 1 throw");
  EXPECT_NE(r.code, 0) << r.output;
  size_t report = r.output.find(
      "job 'doomed' failed: its ranks failed 2 times, more than --max-restarts 1; its failures:");
  ASSERT_NE(report, std::string::npos) << r.output;
  for (int restart : {0, 1})
    EXPECT_NE(r.output.find(detail::str_cat("restart ", restart,
                                            ": rank 1 (local rank 1) on node 0 (127.0.0.1, pid "),
                            report),
              std::string::npos)
        << r.output;
  EXPECT_NE(r.output.find("exited with code 1: rank 1 gave up at restart 1", report),
            std::string::npos)
      << r.output;
}

// The same when the rank that threw exits last (Note [The rank that failed first]): at each
// restart its failure comes first, then its peer's, which names it.
TEST(ElasticLaunch, NamesTheRankThatFailedFirstEvenWhenItExitsLast) {
  auto r = run_command("EMBER_TEST_SLOW_EXIT=1:1500 " +
                       elastic(next_port(), "slow", "--nproc-per-node 2 --max-restarts 1") +
                       kProgram + " elastic_fail 9 1 throw");
  EXPECT_NE(r.code, 0) << r.output;
  size_t report = r.output.find("job 'slow' failed: its ranks failed 2 times");
  ASSERT_NE(report, std::string::npos) << r.output;
  for (int restart : {0, 1}) {
    std::string at = detail::str_cat("restart ", restart, ": rank ");
    size_t first = r.output.find(at, report);
    ASSERT_NE(first, std::string::npos) << r.output;
    EXPECT_EQ(r.output.compare(first + at.size(), 2, "1 "), 0) << r.output;
    EXPECT_NE(r.output.find(at + "0 ", first), std::string::npos) << r.output;
  }
}

// Two agents of one job: a rank killed on the second restarts both nodes' ranks.
TEST(ElasticLaunch, TwoAgentsRestartTogether) {
  std::string agent =
      elastic(next_port(), "pair", "--nnodes 2 --nproc-per-node 1 --max-restarts 1");
  auto r = run_command(agent + kProgram + " elastic_fail 1 1 kill & sleep 0.2; " + agent +
                       kProgram + " elastic_fail 1 1 kill; wait");
  EXPECT_NE(r.output.find("restart 0: rank 1 (local rank 0) on node 1"), std::string::npos)
      << r.output;
  for (int rank : {0, 1})
    EXPECT_NE(r.output.find("rank " + std::to_string(rank) + " of 2 ok at restart 1"),
              std::string::npos)
        << r.output;
  EXPECT_EQ(r.output.find("job 'pair' failed"), std::string::npos) << r.output;
}

// A second agent that comes while the first trains alone (--nnodes 1:2) is admitted at a
// restart the running group makes for it, without using up a restart.
TEST(ElasticLaunch, ALateAgentIsAdmittedAtARestart) {
  int port = next_port();
  std::string agent =
      elastic(port, "grow", "--nnodes 1:2 --nproc-per-node 1 --rdzv-conf last_call_timeout=1");
  BackgroundCommand first(agent + kProgram + " loop 4 20000");
  ASSERT_TRUE(ember::testing::wait_until(
      [&] { return first.output().find("rank 0 looping") != std::string::npos; }, 20s))
      << first.output();
  auto second = run_command(agent + kProgram + " loop 2 20000");
  ASSERT_TRUE(first.wait(30s).has_value()) << first.output();
  EXPECT_EQ(second.code, 0) << second.output;
  EXPECT_NE(first.output().find("1 node(s) waiting to join, restarting the group"),
            std::string::npos)
      << first.output();
  EXPECT_NE(second.output.find("round 1: node 1 of 2 (127.0.0.1), ranks 1-1 of 2, restart 0"),
            std::string::npos)
      << second.output;
  EXPECT_NE(first.output().find("rank 0 of 2 ok"), std::string::npos) << first.output();
}

TEST(ElasticLaunch, BelowMinNodesTheJobFails) {
  auto r = run_command(elastic(next_port(), "lonely",
                               "--nnodes 2:3 --rdzv-conf join_timeout=1,last_call_timeout=1") +
                       kProgram);
  EXPECT_NE(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("job 'lonely' failed: [rendezvous] only 1 of the at least 2 nodes "
                          "joined round 0 of job 'lonely' within the join timeout of 1000 ms"),
            std::string::npos)
      << r.output;
}

// SIGTERM to an elastic agent (a scheduler stopping the job) reaches its ranks; the agent ends
// with 128 + SIGTERM instead of restarting them.
TEST(ElasticLaunch, PassesSignalsToItsRanksAndEnds) {
  BackgroundCommand job("exec " +
                        elastic(next_port(), "stopped", "--nproc-per-node 2 --max-restarts 3") +
                        "sleep 60");
  std::vector<pid_t> ranks;
  ASSERT_TRUE(ember::testing::wait_until(
      [&] { return (ranks = ember::testing::children_of(job.pid())).size() == 2; }, 20s))
      << job.output();
  ::kill(job.pid(), SIGTERM);
  std::optional<int> code = job.wait(15s);
  ASSERT_TRUE(code.has_value()) << job.output();
  EXPECT_EQ(*code, 128 + SIGTERM) << job.output();
  EXPECT_NE(job.output().find("got signal 15 (Terminated), passed it to 2 local rank(s)"),
            std::string::npos)
      << job.output();
  for (pid_t rank : ranks) EXPECT_NE(::kill(rank, 0), 0) << "rank pid " << rank << " still runs";
}

TEST(ElasticLaunch, NodeRankIsForFixedJobs) {
  auto r = run_command(elastic(next_port(), "x", "--node-rank 1") + kProgram);
  EXPECT_NE(r.output.find("--node-rank is for a fixed --nnodes"), std::string::npos) << r.output;
}

// examples/elastic_train.cpp: a rank killed after the first checkpoint; the group restarts and
// the program resumes from its checkpoint.
TEST(ElasticLaunch, TheExampleResumesFromItsCheckpoint) {
  std::string dir = ::testing::TempDir() + "/elastic_example_" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  BackgroundCommand job("exec " +
                        elastic(next_port(), "example", "--nproc-per-node 2 --max-restarts 1") +
                        kExample + " " + dir);
  ASSERT_TRUE(ember::testing::wait_until(
      [&] { return std::filesystem::exists(dir + "/elastic_train.safetensors"); }, 60s))
      << job.output();
  std::vector<pid_t> ranks = ember::testing::children_of(job.pid());  // the launcher's
  ASSERT_EQ(ranks.size(), 2u) << job.output();
  ::kill(ranks[1], SIGKILL);
  std::optional<int> code = job.wait(120s);
  ASSERT_TRUE(code.has_value()) << job.output();
  EXPECT_EQ(*code, 0) << job.output();
  EXPECT_NE(job.output().find("restart 1: 2 ranks, resuming at epoch 0 step "), std::string::npos)
      << job.output();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ember::distributed
