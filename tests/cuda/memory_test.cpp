// The CUDA caching allocator on a real GPU: statistics, reuse, empty_cache, the out-of-memory
// error and the memory fraction (the same logic is tested exhaustively on the CPU in core/).
#include "tests/cuda/cuda_test_util.h"

namespace ember {
namespace {

TEST(CudaMemory, StatisticsAndCaching) {
  EMBER_REQUIRE_CUDA();
  cuda::empty_cache();
  size_t base = cuda::memory_allocated(0);
  cuda::reset_peak_memory_stats(0);
  void* first;
  {
    Tensor t = empty({64 << 20}, TensorOptions(kUInt8).with_device("cuda:0"));
    first = t.data_ptr();
    EXPECT_EQ(cuda::memory_allocated(0), base + (64 << 20));
    EXPECT_GE(cuda::memory_reserved(0), cuda::memory_allocated(0));
  }
  EXPECT_EQ(cuda::memory_allocated(0), base);
  EXPECT_GE(cuda::memory_cached(0), size_t{64} << 20) << "freed memory stays cached";
  Tensor again = empty({64 << 20}, TensorOptions(kUInt8).with_device("cuda:0"));
  EXPECT_EQ(again.data_ptr(), first) << "and is reused";
  EXPECT_GE(cuda::max_memory_allocated(0), base + (64 << 20));
  EXPECT_GE(cuda::memory_stats(0).at("allocation.all.current"), 1);
  std::string summary = cuda::memory_summary(0);
  EXPECT_NE(summary.find("cuda:0"), std::string::npos);
  EXPECT_FALSE(cuda::memory_snapshot(0).empty());
  again = Tensor();
  cuda::empty_cache();
  EXPECT_EQ(cuda::memory_allocated(0), base);
  if (base == 0) EXPECT_EQ(cuda::memory_reserved(0), 0u) << "an empty cache holds nothing";
}

// What the allocator reports must be what the driver sees: memory it reserves leaves cudaMemGetInfo's
// free count, and empty_cache gives it back. The driver maps memory in 2 MiB pages and may keep a
// little for itself, hence the slack. Other processes on the GPU would disturb this: gpu-check runs
// the cuda label one test at a time.
TEST(CudaMemory, ReservedMemoryIsWhatTheDriverSees) {
  EMBER_REQUIRE_CUDA();
  constexpr double kSlack = 8 << 20;
  cuda::empty_cache();
  size_t free0 = cuda::mem_get_info(0).first, reserved0 = cuda::memory_reserved(0);
  {
    Tensor t = empty({256 << 20}, TensorOptions(kUInt8).with_device("cuda:0"));
    size_t free1 = cuda::mem_get_info(0).first, reserved1 = cuda::memory_reserved(0);
    EXPECT_GE(reserved1 - reserved0, size_t{256} << 20);
    EXPECT_NEAR(static_cast<double>(free0 - free1), static_cast<double>(reserved1 - reserved0), kSlack)
        << "the driver's free memory fell by what the allocator reserved";
    EXPECT_GE(cuda::max_memory_reserved(0), reserved1);
  }
  EXPECT_GE(cuda::memory_reserved(0), size_t{256} << 20) << "a freed tensor's memory stays cached";
  cuda::empty_cache();
  EXPECT_EQ(cuda::memory_reserved(0), reserved0);
  EXPECT_NEAR(static_cast<double>(cuda::mem_get_info(0).first), static_cast<double>(free0), kSlack)
      << "empty_cache returned the memory to the driver";
}

// An allocation that fits only once the cache is released: the allocator frees its cached segments
// and retries instead of failing (PyTorch's behaviour), and counts the retry.
TEST(CudaMemory, AnAllocationThatNeedsTheCacheReleasedSucceeds) {
  EMBER_REQUIRE_CUDA();
  cuda::empty_cache();
  int64_t third = static_cast<int64_t>(cuda::mem_get_info(0).first * 3 / 10);
  {
    std::vector<Tensor> cached;
    for (int i = 0; i < 3; ++i)
      cached.push_back(empty({third}, TensorOptions(kUInt8).with_device("cuda:0")));
  }
  ASSERT_GE(cuda::memory_reserved(0), static_cast<size_t>(3 * third)) << "the three blocks stay cached";
  int64_t retries = cuda::memory_stats(0).at("num_alloc_retries");
  Tensor big = empty({2 * third}, TensorOptions(kUInt8).with_device("cuda:0"));
  EXPECT_EQ(big.numel(), 2 * third);
  EXPECT_GT(cuda::memory_stats(0).at("num_alloc_retries"), retries);
  big = Tensor();
  cuda::empty_cache();
}

TEST(CudaMemory, OutOfMemoryExplainsItselfAndLosesNothing) {
  EMBER_REQUIRE_CUDA();
  Tensor keep = ones({1000}, TensorOptions().with_device("cuda:0"));
  size_t total = cuda::mem_get_info(0).second;
  try {
    Tensor huge =
        empty({static_cast<int64_t>(total)}, TensorOptions(kFloat32).with_device("cuda:0"));
    FAIL() << "expected OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    std::string m = e.what();
    for (const char* part : {"cuda:0 is out of memory", "tried to allocate", "in total", "free",
                             "reserved", "largest free cached block"})
      EXPECT_NE(m.find(part), std::string::npos) << part << " missing: " << m;
  }
  EXPECT_EQ(keep.sum().item<double>(), 1000) << "the device still works";
  EXPECT_GE(cuda::memory_stats(0).at("num_ooms"), 1);
}

TEST(CudaMemory, FractionCapsTheProcess) {
  EMBER_REQUIRE_CUDA();
  cuda::empty_cache();
  size_t total = cuda::mem_get_info(0).second;
  cuda::set_per_process_memory_fraction(0.1, 0);
  EXPECT_THROW(
      empty({static_cast<int64_t>(total / 5)}, TensorOptions(kUInt8).with_device("cuda:0")),
      OutOfMemoryError);
  cuda::set_per_process_memory_fraction(1.0, 0);
  EXPECT_NO_THROW(
      empty({static_cast<int64_t>(total / 5)}, TensorOptions(kUInt8).with_device("cuda:0")));
}

TEST(CudaMemory, PinnedHostMemory) {
  EMBER_REQUIRE_CUDA();
  Tensor t = arange(1000, kFloat32);
  EXPECT_FALSE(t.is_pinned());
  Tensor p = t.pin_memory();
  EXPECT_TRUE(p.is_pinned());
  EXPECT_TRUE(p.equal(t));
  Tensor d = p.to("cuda:0", /*non_blocking=*/true);
  cuda::synchronize();
  EXPECT_TRUE(d.cpu().equal(t));
}

}  // namespace
}  // namespace ember
