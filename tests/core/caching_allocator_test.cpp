// The caching allocator's logic on a fake device: fixed capacity, fake addresses, and events the
// test completes by hand. Every rule of PyTorch's design that core/caching_allocator.h follows is
// checked here, on any machine.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <random>
#include <set>

#include "ember/core/caching_allocator.h"
#include "ember/core/memory_summary.h"
#include "tests/util/test_util.h"

namespace ember {
namespace {

constexpr size_t kMiB = 1 << 20;

class FakeDevice final : public DeviceMemory {
 public:
  explicit FakeDevice(size_t capacity) : capacity_(capacity) {}
  Device device() const override { return Device(kCUDA, 0); }
  void* raw_alloc(size_t bytes) override {
    if (used_ + bytes > capacity_) return nullptr;
    uintptr_t p = next_;
    next_ += (bytes + 4095) / 4096 * 4096 + 4096;
    used_ += bytes;
    sizes_[p] = bytes;
    ++allocs_;
    return reinterpret_cast<void*>(p);
  }
  void raw_free(void* ptr, size_t bytes) noexcept override {
    auto it = sizes_.find(reinterpret_cast<uintptr_t>(ptr));
    // The fake remembers sizes only to check the allocator passes back the one it asked for.
    if (it->second != bytes)
      ADD_FAILURE() << "raw_free of " << ptr << " with " << bytes << " bytes, allocated "
                    << it->second;
    used_ -= it->second;
    sizes_.erase(it);
  }
  size_t total_memory() override { return capacity_; }
  size_t free_memory() override { return capacity_ - used_; }
  StreamId current_stream() override { return stream; }
  void* record_event(StreamId s) override {
    auto id = new int(static_cast<int>(s));
    pending_.insert(id);
    live_.insert(id);
    return id;
  }
  bool query_event(void* e) override {
    if (failing_query > 0 && --failing_query == 0) EMBER_FAIL("fake device: the context is broken");
    return pending_.count(static_cast<int*>(e)) == 0;
  }
  void destroy_event(void* e) noexcept override {
    if (!live_.erase(static_cast<int*>(e))) {
      ++double_destroys;  // never deleted twice, so the test can report it
      return;
    }
    pending_.erase(static_cast<int*>(e));
    delete static_cast<int*>(e);
  }
  void synchronize_event(void* e) override {
    if (pending_.erase(static_cast<int*>(e))) done_.insert(static_cast<int*>(e));
  }
  void complete_events() {
    for (int* e : pending_) done_.insert(e);
    pending_.clear();
  }
  size_t used() const { return used_; }
  int allocs() const { return allocs_; }
  size_t pending_events() const { return pending_.size(); }

  StreamId stream = 0;
  int failing_query = 0;  // when set to n, the n-th query_event call from now throws
  int double_destroys = 0;

 private:
  std::set<int*> live_;
  size_t capacity_;
  size_t used_ = 0;
  uintptr_t next_ = 0x100000000;
  int allocs_ = 0;
  std::map<uintptr_t, size_t> sizes_;
  std::set<int*> pending_, done_;
};

struct Fixture {
  explicit Fixture(size_t capacity, CachingAllocatorOptions o = {}) {
    auto d = std::make_unique<FakeDevice>(capacity);
    device = d.get();
    alloc = std::make_unique<CachingAllocator>(std::move(d), o);
  }
  MemoryStats stats() const { return alloc->stats(); }
  FakeDevice* device;
  std::unique_ptr<CachingAllocator> alloc;
};

TEST(CachingAllocator, RoundsAndPicksPools) {
  Fixture f(1024 * kMiB);
  DataPtr a = f.alloc->allocate(1);
  MemoryStats s = f.stats();
  EXPECT_EQ(s.allocated_bytes[kAllPools].current, 512);
  EXPECT_EQ(s.requested_bytes[kAllPools].current, 1);
  EXPECT_EQ(s.reserved_bytes[kSmallPool].current, static_cast<int64_t>(2 * kMiB));
  DataPtr b = f.alloc->allocate(kMiB + 1);  // large pool, 1-10 MiB: a 20 MiB segment
  EXPECT_EQ(f.stats().reserved_bytes[kLargePool].current, static_cast<int64_t>(20 * kMiB));
  DataPtr c = f.alloc->allocate(11 * kMiB + 5, /*stream=*/7);  // above 10 MiB: 2 MiB rounding
  EXPECT_EQ(f.stats().reserved_bytes[kLargePool].current, static_cast<int64_t>(32 * kMiB));
  EXPECT_EQ(f.stats().segment[kAllPools].current, 3);
  DataPtr d = f.alloc->allocate(11 * kMiB);  // best fit: the rest of b's 20 MiB segment
  EXPECT_EQ(f.stats().segment[kAllPools].current, 3);
}

TEST(CachingAllocator, ReusesFreedBlocksWithoutTheDevice) {
  Fixture f(1024 * kMiB);
  void* p;
  {
    DataPtr a = f.alloc->allocate(64 * kMiB);
    p = a.get();
  }
  int before = f.device->allocs();
  DataPtr b = f.alloc->allocate(64 * kMiB);
  EXPECT_EQ(b.get(), p);
  EXPECT_EQ(f.device->allocs(), before);
  EXPECT_EQ(f.stats().reserved_bytes[kAllPools].current, static_cast<int64_t>(64 * kMiB));
}

TEST(CachingAllocator, SplitsAndMergesNeighbours) {
  Fixture f(1024 * kMiB);
  DataPtr a = f.alloc->allocate(1000);
  DataPtr b = f.alloc->allocate(1000);
  DataPtr c = f.alloc->allocate(1000);
  EXPECT_EQ(f.stats().segment[kAllPools].current, 1);  // all three carved from one 2 MiB segment
  auto blocks = [&] { return f.alloc->snapshot().at(0).blocks.size(); };
  EXPECT_EQ(blocks(), 4u);  // a, b, c and the rest
  b = DataPtr();
  EXPECT_EQ(blocks(), 4u);  // b's block is free but its neighbours are not
  EXPECT_EQ(f.stats().inactive_split_bytes[kAllPools].current,
            1024 + static_cast<int64_t>(2 * kMiB - 3 * 1024));
  a = DataPtr();
  c = DataPtr();
  EXPECT_EQ(blocks(), 1u);  // merged back into one free block
  EXPECT_EQ(f.stats().inactive_split_bytes[kAllPools].current, 0);
  f.alloc->empty_cache();
  EXPECT_EQ(f.stats().reserved_bytes[kAllPools].current, 0);
  EXPECT_EQ(f.device->used(), 0u);
}

// Note [Stream-ordered block reuse]: a freed block serves only its own stream.
TEST(CachingAllocator, ReusesOnlyOnTheStreamThatFreed) {
  Fixture f(1024 * kMiB);
  void* p;
  {
    DataPtr a = f.alloc->allocate(4 * kMiB, /*stream=*/1);
    p = a.get();
  }
  DataPtr other = f.alloc->allocate(4 * kMiB, /*stream=*/2);
  EXPECT_NE(other.get(), p);
  DataPtr same = f.alloc->allocate(4 * kMiB, /*stream=*/1);
  EXPECT_EQ(same.get(), p);
}

TEST(CachingAllocator, RecordStreamDelaysReuseUntilTheEventCompletes) {
  Fixture f(1024 * kMiB);
  void* p;
  {
    DataPtr a = f.alloc->allocate(4 * kMiB, /*stream=*/1);
    p = a.get();
    f.alloc->record_stream(a, /*stream=*/2);
  }
  EXPECT_EQ(f.device->pending_events(), 1u);
  EXPECT_EQ(f.stats().active_bytes[kAllPools].current, static_cast<int64_t>(4 * kMiB));
  DataPtr b = f.alloc->allocate(4 * kMiB, 1);
  EXPECT_NE(b.get(), p) << "reused while stream 2 may still read it";
  f.device->complete_events();
  DataPtr c = f.alloc->allocate(4 * kMiB, 1);
  EXPECT_EQ(c.get(), p);
}

TEST(CachingAllocator, ADeviceErrorWhileReclaimingLosesNothing) {
  Fixture f(1024 * kMiB);
  for (int i = 0; i < 3; ++i) {
    DataPtr a = f.alloc->allocate(4 * kMiB, 1);
    f.alloc->record_stream(a, 2);
  }
  f.device->complete_events();
  f.device->failing_query = 2;  // the first pending block is reclaimed, then the device fails
  EXPECT_THROW_WITH(f.alloc->allocate(kMiB, 1), "the context is broken");
  DataPtr b = f.alloc->allocate(kMiB, 1);  // reclaims the other two, each once
  EXPECT_EQ(f.device->double_destroys, 0);
  MemoryStats s = f.stats();
  EXPECT_EQ(s.active[kAllPools].current, 1);
  EXPECT_EQ(s.allocated_bytes[kAllPools].current, static_cast<int64_t>(kMiB));
}

TEST(CachingAllocator, ReleasesCachedSegmentsBeforeGivingUp) {
  Fixture f(100 * kMiB);
  { DataPtr a = f.alloc->allocate(60 * kMiB); }  // cached, not returned
  DataPtr b = f.alloc->allocate(80 * kMiB);      // needs the cache released
  EXPECT_TRUE(b);
  EXPECT_EQ(f.stats().reserved_bytes[kAllPools].current, static_cast<int64_t>(80 * kMiB));
  EXPECT_EQ(f.stats().num_ooms, 0);
}

TEST(CachingAllocator, WaitsForPendingBlocksWhenThatIsTheOnlyWay) {
  Fixture f(100 * kMiB);
  {
    DataPtr a = f.alloc->allocate(60 * kMiB, 1);
    f.alloc->record_stream(a, 2);
  }
  DataPtr b = f.alloc->allocate(80 * kMiB, 1);  // must synchronise to get a's memory back
  EXPECT_TRUE(b);
  EXPECT_EQ(f.stats().num_alloc_retries, 1);
  EXPECT_EQ(f.device->pending_events(), 0u);
}

TEST(CachingAllocator, OutOfMemoryExplainsItself) {
  Fixture f(100 * kMiB);
  DataPtr a = f.alloc->allocate(90 * kMiB);
  try {
    DataPtr b = f.alloc->allocate(20 * kMiB);
    FAIL() << "expected OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    std::string m = e.what();
    EXPECT_EQ(e.requested(), 20 * kMiB);
    for (const char* part :
         {"cuda:0 is out of memory", "tried to allocate 20.00 MiB", "100.00 MiB in total",
          "10.00 MiB free", "90.00 MiB allocated", "largest free cached block"})
      EXPECT_NE(m.find(part), std::string::npos) << part << " missing from: " << m;
  }
  EXPECT_EQ(f.stats().num_ooms, 1);
  // Nothing was lost: the live allocation is intact and a fitting request still works.
  EXPECT_EQ(f.stats().allocated_bytes[kAllPools].current, static_cast<int64_t>(90 * kMiB));
  DataPtr c = f.alloc->allocate(kMiB);  // a small-pool segment (2 MiB) still fits
  EXPECT_TRUE(c);
}

TEST(CachingAllocator, MemoryFractionCapsReservation) {
  Fixture f(100 * kMiB);
  f.alloc->set_memory_fraction(0.5);
  EXPECT_THROW(f.alloc->allocate(60 * kMiB), OutOfMemoryError);
  DataPtr a = f.alloc->allocate(40 * kMiB);
  EXPECT_TRUE(a);
  EXPECT_THROW_WITH(f.alloc->set_memory_fraction(1.5), "expected a fraction in (0, 1]");
}

TEST(CachingAllocator, CachingOffReturnsMemoryAtOnce) {
  CachingAllocatorOptions o;
  o.caching = false;
  Fixture f(100 * kMiB, o);
  { DataPtr a = f.alloc->allocate(1000); }
  EXPECT_EQ(f.stats().reserved_bytes[kAllPools].current, 0);
  EXPECT_EQ(f.device->used(), 0u);
}

TEST(CachingAllocator, OversizeBlocksAreNotSplit) {
  CachingAllocatorOptions o;
  o.max_split_size = 40 * kMiB;
  Fixture f(1024 * kMiB, o);
  void* p;
  {
    DataPtr big = f.alloc->allocate(100 * kMiB);
    p = big.get();
  }
  DataPtr small = f.alloc->allocate(12 * kMiB);
  EXPECT_NE(small.get(), p) << "a 12 MiB request must not carve up a cached 100 MiB block";
}

TEST(CachingAllocator, SummaryAndStatsMap) {
  Fixture f(100 * kMiB);
  DataPtr a = f.alloc->allocate(3 * kMiB);
  std::map<std::string, int64_t> m = f.stats().to_map();
  EXPECT_EQ(m.at("allocated_bytes.all.current"), static_cast<int64_t>(3 * kMiB));
  EXPECT_EQ(m.at("segment.large_pool.current"), 1);
  std::string summary = memory_summary(f.stats(), Device("cuda:0"));
  EXPECT_NE(summary.find("Allocated memory"), std::string::npos);
  EXPECT_NE(summary.find("3.00 MiB"), std::string::npos);
}

// 100,000 random steps; after each one the statistics must match the live allocations and
// allocated <= reserved == the sum of the segments.
TEST(CachingAllocator, RandomStepsKeepInvariants) {
  Fixture f(512 * kMiB);
  std::mt19937_64 rng(12345);
  std::map<uintptr_t, std::pair<size_t, DataPtr>> live;  // address -> (requested, memory)
  auto check = [&](int step) {
    MemoryStats s = f.stats();
    std::vector<SegmentInfo> snap = f.alloc->snapshot();
    int64_t reserved = 0, allocated = 0, active = 0, segments = 0, allocs = 0;
    for (const SegmentInfo& seg : snap) {
      reserved += static_cast<int64_t>(seg.total_size);
      allocated += static_cast<int64_t>(seg.allocated_size);
      active += static_cast<int64_t>(seg.active_size);
      ++segments;
      for (const BlockInfo& b : seg.blocks) allocs += b.allocated;
    }
    ASSERT_LE(s.allocated_bytes[kAllPools].current, s.reserved_bytes[kAllPools].current) << step;
    ASSERT_EQ(s.reserved_bytes[kAllPools].current, reserved) << step;
    ASSERT_EQ(s.allocated_bytes[kAllPools].current, allocated) << step;
    ASSERT_EQ(s.active_bytes[kAllPools].current, active) << step;
    ASSERT_EQ(s.segment[kAllPools].current, segments) << step;
    ASSERT_EQ(s.allocation[kAllPools].current, allocs) << step;
    ASSERT_EQ(allocs, static_cast<int64_t>(live.size())) << step;
    ASSERT_EQ(static_cast<int64_t>(f.device->used()), reserved) << step;
    ASSERT_EQ(s.reserved_bytes[kAllPools].current,
              s.reserved_bytes[kSmallPool].current + s.reserved_bytes[kLargePool].current);
  };
  std::uniform_real_distribution<double> unit(0, 1);
  for (int step = 0; step < 100000; ++step) {
    double r = unit(rng);
    if (r < 0.5 || live.empty()) {
      // Log-uniform sizes from 1 B to 16 MiB, now and then a big one.
      size_t size = static_cast<size_t>(std::exp(unit(rng) * std::log(16.0 * kMiB)));
      if (unit(rng) < 0.01) size = 40 * kMiB;
      StreamId stream = 1 + rng() % 3;
      try {
        DataPtr p = f.alloc->allocate(size, stream);
        auto addr = reinterpret_cast<uintptr_t>(p.get());
        // No overlap with any live allocation.
        auto next = live.lower_bound(addr);
        if (next != live.end()) ASSERT_LE(addr + size, next->first) << step;
        if (next != live.begin()) {
          auto prev = std::prev(next);
          ASSERT_LE(prev->first + prev->second.first, addr) << step;
        }
        if (unit(rng) < 0.1) f.alloc->record_stream(p, 1 + rng() % 3);
        live.emplace(addr, std::make_pair(size, std::move(p)));
      } catch (const OutOfMemoryError&) {
        ASSERT_GT(f.stats().num_ooms, 0);
      }
    } else if (r < 0.97) {
      auto it = live.begin();
      std::advance(it, static_cast<long>(rng() % live.size()));
      live.erase(it);
    } else if (r < 0.995) {
      f.device->complete_events();
    } else {
      f.alloc->empty_cache();
    }
    check(step);
    if (::testing::Test::HasFatalFailure()) return;
  }
  live.clear();
  f.alloc->empty_cache();
  EXPECT_EQ(f.stats().reserved_bytes[kAllPools].current, 0);
  EXPECT_EQ(f.stats().allocated_bytes[kAllPools].current, 0);
  EXPECT_EQ(f.device->used(), 0u);
}

}  // namespace
}  // namespace ember
