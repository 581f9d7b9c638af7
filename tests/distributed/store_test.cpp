// The rendezvous stores: TCPStore over loopback (server and clients), FileStore in a fresh
// directory, and what they say on a timeout.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "ember/distributed/store.h"
#include "tests/util/test_util.h"

namespace ember::distributed {
namespace {

Bytes bytes(const std::string& s) { return Bytes(s.begin(), s.end()); }
std::string text(const Bytes& b) { return std::string(b.begin(), b.end()); }

void exercise(Store& a, Store& b) {
  std::thread setter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    b.set("late", bytes("value"));
  });
  EXPECT_EQ(text(a.get("late")), "value");  // waits for the other client's set
  setter.join();
  EXPECT_EQ(a.add("counter", 2), 2);
  EXPECT_EQ(b.add("counter", 5), 7);
  a.set("empty", {});
  EXPECT_EQ(b.get("empty").size(), 0u);
  EXPECT_THROW_WITH(a.wait({"late", "never"}, std::chrono::milliseconds(100)),
                    "timed out after 100 ms waiting for keys late, never");
}

TEST(Store, TCPStoreOverLoopback) {
  auto timeout = std::chrono::seconds(10);
  TCPStore server("127.0.0.1", 0, /*is_server=*/true, timeout);  // the system picks the port
  TCPStore client("127.0.0.1", server.port(), false, timeout);
  exercise(server, client);
}

TEST(Store, TCPStoreNamesAClientThatLeftWithoutSayingGoodbye) {
  auto timeout = std::chrono::seconds(10);
  TCPStore server("127.0.0.1", 0, true, timeout);
  server.register_rank(0);
  {
    TCPStore polite("127.0.0.1", server.port(), false, timeout);
    polite.register_rank(1);
    polite.leave();
    TCPStore gone("127.0.0.1", server.port(), false, timeout);
    gone.register_rank(2);
  }
  std::vector<int> dead;
  for (int i = 0; i < 200 && dead.empty(); ++i) {
    dead = server.dead_ranks();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(dead, std::vector<int>{2});
  // How the backends name it in their errors.
  EXPECT_EQ(describe_dead_ranks(server, std::chrono::seconds(2)),
            "rank 2 exited or died without leaving the group (as the rendezvous store saw); ");
  HashStore in_memory;
  EXPECT_EQ(describe_dead_ranks(in_memory, std::chrono::seconds(2)), "");
}

// A FileStore rank holds an flock on its file: released by the kernel when its holder goes,
// however it goes (here: destroyed without leave()). Locks belong to open files, so two stores
// of one process see each other's.
TEST(Store, FileStoreNamesARankThatLeftWithoutSayingGoodbye) {
  std::string dir = ::testing::TempDir() + "/file_store_ranks_" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  auto timeout = std::chrono::seconds(10);
  FileStore me(dir, timeout);
  me.register_rank(0);
  EXPECT_TRUE(me.tracks_ranks());
  {
    FileStore polite(dir, timeout), gone(dir, timeout), again(dir, timeout);
    polite.register_rank(1);
    gone.register_rank(2);
    EXPECT_THROW_WITH(again.register_rank(2), "rank 2 is already running with the store in");
    EXPECT_TRUE(me.dead_ranks().empty());
    polite.leave();
  }
  EXPECT_EQ(me.dead_ranks(), std::vector<int>{2});
  EXPECT_EQ(describe_dead_ranks(me, std::chrono::seconds(2)),
            "rank 2 exited or died without leaving the group (as the rendezvous store saw); ");
  // In a group of new_group's ranks {3, 2, 0}, global rank 2 is its rank 1; a group without it
  // did not lose it.
  EXPECT_EQ(describe_dead_ranks(me, std::chrono::seconds(2), {3, 2, 0}),
            "rank 1 (global rank 2) exited or died without leaving the group (as the rendezvous "
            "store saw); ");
  EXPECT_EQ(describe_dead_ranks(me, std::chrono::milliseconds(0), {0, 1}), "");
  std::filesystem::remove_all(dir);
}

// Ranks seen dead are listed in the order some rank first saw them: a survivor that saw rank 3
// die, then died itself (rank 1), comes after it for a rank that looks later and sees both.
TEST(Store, FileStoreListsTheDeadInTheOrderTheyWereFirstSeen) {
  std::string dir = ::testing::TempDir() + "/file_store_order_" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  auto timeout = std::chrono::seconds(10);
  FileStore late(dir, timeout);
  late.register_rank(0);
  {
    auto survivor = std::make_unique<FileStore>(dir, timeout);
    survivor->register_rank(1);
    {
      FileStore first(dir, timeout);
      first.register_rank(3);
    }
    EXPECT_EQ(survivor->dead_ranks(), std::vector<int>{3});  // rank 1 sees rank 3 die first
  }                                                          // then rank 1 goes too
  EXPECT_EQ(late.dead_ranks(), (std::vector<int>{3, 1}));
  EXPECT_EQ(describe_dead_ranks(late, std::chrono::seconds(2)),
            "rank 3 exited or died without leaving the group (as the rendezvous store saw; also "
            "rank 1); ");
  std::filesystem::remove_all(dir);
}

TEST(Store, TCPStoreClientWithoutServerIsAClearError) {
  // A port nothing listens on: take one from the system, then close it.
  int port;
  {
    TCPStore probe("127.0.0.1", 0, true, std::chrono::seconds(5));
    port = probe.port();
  }
  EXPECT_THROW_WITH(TCPStore("127.0.0.1", port, false, std::chrono::milliseconds(200)),
                    "could not connect to the store at 127.0.0.1:");
}

TEST(Store, FileStoreInAFreshDirectory) {
  std::string dir = ::testing::TempDir() + "/file_store_" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  FileStore a(dir, std::chrono::seconds(10)), b(dir, std::chrono::seconds(10));
  exercise(a, b);
  std::filesystem::remove_all(dir);
}

TEST(Store, PrefixStoresDoNotSeeEachOther) {
  auto base = std::make_shared<HashStore>(std::chrono::seconds(10));
  PrefixStore one("one", base), two("two", base);
  one.set("k", bytes("1"));
  two.set("k", bytes("2"));
  EXPECT_EQ(text(one.get("k")), "1");
  EXPECT_EQ(text(base->get("two/k")), "2");
}

}  // namespace
}  // namespace ember::distributed
