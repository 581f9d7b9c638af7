// StartupWatch, which bounds NCCL's communicator start-up: ranks that never came are named after
// the timeout, a rank the store saw die within about a second, and the start-up is abandoned
// first. Ranks here are threads or store objects of this process: the watch needs no GPU.
#include "ember/distributed/startup_watch.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "tests/util/test_util.h"

namespace ember::distributed {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr const char* kWhat = "the NCCL communicator";

Bytes bytes(const std::string& s) { return Bytes(s.begin(), s.end()); }
double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// A fresh FileStore directory, removed at the end.
struct TempDir {
  std::string path = ::testing::TempDir() + "/startup_watch_" + std::to_string(::getpid()) + "_" +
                     ::testing::UnitTest::GetInstance()->current_test_info()->name();
  TempDir() { std::filesystem::remove_all(path); }
  ~TempDir() { std::filesystem::remove_all(path); }
};

TEST(StartupWatch, DescribeRanks) {
  EXPECT_EQ(describe_ranks({1}), "rank 1");
  EXPECT_EQ(describe_ranks({1, 3}), "ranks 1 and 3");
  EXPECT_EQ(describe_ranks({0, 2, 5}), "ranks 0, 2 and 5");
  EXPECT_EQ(describe_ranks({1}, {4, 7}), "rank 1 (global rank 7)");
  EXPECT_EQ(describe_ranks({0, 1}, {4, 7}), "ranks 0 (global rank 4) and 1 (global rank 7)");
  std::vector<int> many(20);
  for (int i = 0; i < 20; ++i) many[static_cast<size_t>(i)] = i;
  EXPECT_EQ(describe_ranks(many),
            "ranks 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 and 4 more");
}

TEST(StartupWatch, EveryRankSharesRankZerosValueAndFinishes) {
  auto store = std::make_shared<HashStore>(std::chrono::seconds(30));
  constexpr int kSize = 3;
  std::atomic<int> ready{0};
  std::vector<std::string> got(kSize), errors(kSize);
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < kSize; ++rank) {
    ranks.emplace_back([&, rank] {
      try {
        if (rank == 0) std::this_thread::sleep_for(milliseconds(100));  // the others wait
        StartupWatch watch(store, kWhat, rank, kSize, std::chrono::seconds(20));
        Bytes b = watch.share_from_rank0([] { return bytes("unique id"); });
        got[static_cast<size_t>(rank)] = std::string(b.begin(), b.end());
        ++ready;
        bool abandoned = false;
        watch.wait_until([&] { return ready.load() == kSize; }, [&] { abandoned = true; },
                         milliseconds(1));
        EXPECT_FALSE(abandoned);
        EXPECT_TRUE(watch.missing().empty());
      } catch (const std::exception& e) {
        errors[static_cast<size_t>(rank)] = e.what();
      }
    });
  }
  for (auto& t : ranks) t.join();
  for (int rank = 0; rank < kSize; ++rank) {
    EXPECT_EQ(errors[static_cast<size_t>(rank)], "") << rank;
    EXPECT_EQ(got[static_cast<size_t>(rank)], "unique id") << rank;
  }
}

// Over TCPStore (env:// and tcp://), rank 1 waits on the server in one-second slices, asking about
// dead ranks between them, until rank 0 publishes: here after two slices.
TEST(StartupWatch, RankZerosValueArrivesOverTCPStoreAfterSeveralWaits) {
  auto timeout = std::chrono::seconds(30);
  auto server = std::make_shared<TCPStore>("127.0.0.1", 0, /*is_server=*/true, timeout);
  server->register_rank(0);
  auto client = std::make_shared<TCPStore>("127.0.0.1", server->port(), false, timeout);
  client->register_rank(1);
  std::thread rank0([&] {
    std::this_thread::sleep_for(milliseconds(2500));
    StartupWatch watch(server, kWhat, 0, 2, timeout);
    watch.share_from_rank0([] { return bytes("id"); });
  });
  StartupWatch watch(client, kWhat, 1, 2, timeout);
  Bytes b = watch.share_from_rank0([] { return Bytes(); });
  rank0.join();
  EXPECT_EQ(std::string(b.begin(), b.end()), "id");
}

// TCPStore's server sees a registered client's connection close without leave(): that rank died.
TEST(StartupWatch, ARankWhoseTCPStoreConnectionClosedIsNamed) {
  auto timeout = std::chrono::seconds(60);
  auto server = std::make_shared<TCPStore>("127.0.0.1", 0, true, timeout);
  server->register_rank(0);
  {
    auto gone = std::make_shared<TCPStore>("127.0.0.1", server->port(), false, timeout);
    gone->register_rank(1);
    StartupWatch arrived(gone, kWhat, 1, 2, timeout);
  }
  StartupWatch watch(server, kWhat, 0, 2, timeout);
  auto start = Clock::now();
  EXPECT_THROW_WITH(watch.wait_until([] { return false; }, [] {}, milliseconds(10)),
                    "rank 1 exited or died without leaving the group");
  EXPECT_LT(seconds_since(start), 10.0);
}

// Rank 1 of 3 never starts: rank 0 (and rank 2, which arrived) time out naming it, having
// abandoned the start-up (NCCL: aborted the communicator).
TEST(StartupWatch, ARankThatNeverArrivesIsNamedAfterTheTimeout) {
  auto store = std::make_shared<HashStore>(std::chrono::seconds(30));
  StartupWatch other(store, kWhat, 2, 3, std::chrono::seconds(30));
  StartupWatch watch(store, kWhat, 0, 3, milliseconds(300));
  EXPECT_EQ(watch.missing(), std::vector<int>{1});
  bool abandoned = false;
  auto start = Clock::now();
  EXPECT_THROW_WITH(
      watch.wait_until([] { return false; }, [&] { abandoned = true; }, milliseconds(10)),
      "[init_process_group] rank 0 of 3 could not start the NCCL communicator: rank 1 did not "
      "arrive within 300 ms (the rendezvous store has no word from it");
  EXPECT_TRUE(abandoned);
  EXPECT_GE(seconds_since(start), 0.29);
  EXPECT_LT(seconds_since(start), 5.0);
}

// Rank 0, which makes the shared value, never starts: the others say so rather than wait for
// ever on the store.
TEST(StartupWatch, RankZeroNeverArrivingIsNamedByTheOthers) {
  auto store = std::make_shared<HashStore>(std::chrono::seconds(30));
  StartupWatch watch(store, kWhat, 1, 3, milliseconds(300));
  StartupWatch other(store, kWhat, 2, 3, std::chrono::seconds(30));
  EXPECT_THROW_WITH(watch.share_from_rank0([] { return Bytes(); }),
                    "rank 1 of 3 could not start the NCCL communicator: rank 0 did not arrive "
                    "within 300 ms");
}

TEST(StartupWatch, EveryRankArrivedButTheStartUpHungSaysSo) {
  auto store = std::make_shared<HashStore>(std::chrono::seconds(30));
  StartupWatch other(store, kWhat, 1, 2, std::chrono::seconds(30));
  StartupWatch watch(store, kWhat, 0, 2, milliseconds(100));
  EXPECT_THROW_WITH(watch.wait_until([] { return false; }, [] {}, milliseconds(5)),
                    "every rank arrived, but the start-up did not finish within 100 ms");
}

// In a group of new_group's, ranks are named in its numbering and the default group's.
TEST(StartupWatch, ASubgroupNamesGlobalRanksToo) {
  auto store = std::make_shared<HashStore>(std::chrono::seconds(30));
  StartupWatch watch(store, kWhat, 0, 2, milliseconds(100), {5, 2});
  EXPECT_THROW_WITH(watch.wait_until([] { return false; }, [] {}, milliseconds(5)),
                    "[new_group] rank 0 of 2 could not start the NCCL communicator: rank 1 "
                    "(global rank 2) did not arrive within 100 ms");
}

// NCCL reporting an error during start-up: abandoned, and the error passed on with the context.
TEST(StartupWatch, AnErrorDuringTheStartUpIsPassedOn) {
  auto store = std::make_shared<HashStore>(std::chrono::seconds(30));
  StartupWatch watch(store, kWhat, 0, 1, std::chrono::seconds(30));
  bool abandoned = false;
  EXPECT_THROW_WITH(
      watch.wait_until([]() -> bool { EMBER_FAIL("[nccl] ncclCommInitRankConfig failed: boom"); },
                       [&] { abandoned = true; }, milliseconds(5)),
      "rank 0 of 1 could not start the NCCL communicator: [nccl] ncclCommInitRankConfig failed: "
      "boom");
  EXPECT_TRUE(abandoned);
}

// A FileStore of rank `me` in which rank `dead` registered and signed in, then went without
// leave(): its flock released, as when its process dies.
std::shared_ptr<FileStore> store_that_saw_a_rank_die(const std::string& dir, int me, int dead) {
  auto timeout = std::chrono::seconds(60);
  auto store = std::make_shared<FileStore>(dir, timeout);
  store->register_rank(me);
  auto gone = std::make_shared<FileStore>(dir, timeout);
  gone->register_rank(dead);
  StartupWatch arrived(gone, kWhat, dead, 2, timeout);
  return store;
}

// A rank that died after signing in is named within about a second, long before the timeout.
TEST(StartupWatch, ARankTheStoreSawDieIsNamedWithinSeconds) {
  TempDir dir;
  StartupWatch watch(store_that_saw_a_rank_die(dir.path, 0, 1), kWhat, 0, 2,
                     std::chrono::seconds(60));
  EXPECT_TRUE(watch.missing().empty());
  bool abandoned = false;
  auto start = Clock::now();
  EXPECT_THROW_WITH(
      watch.wait_until([] { return false; }, [&] { abandoned = true; }, milliseconds(10)),
      "rank 0 of 2 could not start the NCCL communicator: rank 1 exited or died without leaving "
      "the group (as the rendezvous store saw); the start-up was abandoned");
  EXPECT_TRUE(abandoned);
  EXPECT_LT(seconds_since(start), 10.0);
}

// The same while waiting for rank 0's value: rank 0 died before publishing it.
TEST(StartupWatch, ADeadRankZeroIsNamedWhileTheOthersWaitForItsValue) {
  TempDir dir;
  StartupWatch watch(store_that_saw_a_rank_die(dir.path, 1, 0), kWhat, 1, 2,
                     std::chrono::seconds(60));
  auto start = Clock::now();
  EXPECT_THROW_WITH(watch.share_from_rank0([] { return Bytes(); }),
                    "rank 1 of 2 could not start the NCCL communicator: rank 0 exited or died");
  EXPECT_LT(seconds_since(start), 10.0);
}

}  // namespace
}  // namespace ember::distributed
