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
