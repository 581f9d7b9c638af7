// Virtual CPU devices: main.cpp sets EMBER_CPU_DEVICES=4 and EMBER_CPU_MEMORY_LIMIT=64MiB.
#include <gtest/gtest.h>

#include "tests/util/test_util.h"

namespace ember {
namespace {

TEST(VirtualCpuDevices, FourDevicesWithTheirOwnAccounting) {
  ASSERT_EQ(cpu::device_count(), 4) << "main.cpp sets EMBER_CPU_DEVICES=4";
  Tensor a = ones({1024, 1024}, TensorOptions(kFloat32).with_device("cpu:1"));
  EXPECT_EQ(a.device(), Device("cpu:1"));
  EXPECT_EQ(a.get_device(), 1);
  CachingAllocator& d1 = device_backend(kCPU).allocator(1);
  CachingAllocator& d2 = device_backend(kCPU).allocator(2);
  EXPECT_GE(d1.memory_allocated(), 4u << 20);
  EXPECT_EQ(d2.memory_allocated(), 0u);
  Tensor b = a.to("cpu:2");
  EXPECT_EQ(b.device(), Device("cpu:2"));
  EXPECT_GE(d2.memory_allocated(), 4u << 20);
  EXPECT_EQ(b.sum().item<double>(), 1024.0 * 1024);
}

TEST(VirtualCpuDevices, MixingDevicesIsTheSameErrorAsForGpus) {
  Tensor a = ones({2}, TensorOptions().with_device("cpu:0"));
  Tensor b = ones({2}, TensorOptions().with_device("cpu:1"));
  EXPECT_THROW_WITH(
      a + b,
      "expected all tensors to be on the same device, but found at least two devices, cpu:0 and cpu:1");
  EXPECT_THROW_WITH(mm(a.view({1, 2}), b.view({2, 1})), "cpu:0 and cpu:1");
  EXPECT_THROW_WITH(
      cat({a, b}),
      "[cat] expected all tensors to be on the same device, but found at least two devices, cpu:0 and cpu:1");
  EXPECT_THROW_WITH(ones({1}, TensorOptions().with_device("cpu:4")),
                    "cpu:4 does not exist; the cpu devices are cpu:0, cpu:1, cpu:2, cpu:3");
  EXPECT_NO_THROW(a.copy_(b)) << "an explicit copy between devices is allowed";
  // The attention mask too: the fused kernel read a mask on another device as its own (a GPU
  // mask under CPU inputs crashed the first GPU run).
  Tensor q = ones({1, 2, 4}, TensorOptions().with_device("cpu:0"));
  Tensor mask = ones({2, 2}, TensorOptions(kBool).with_device("cpu:1"));
  EXPECT_THROW_WITH(scaled_dot_product_attention(q, q, q, mask), "cpu:0 and cpu:1");
}

TEST(VirtualCpuDevices, CapacityGivesATypedOutOfMemoryError) {
  Tensor keep = empty({40 << 20}, TensorOptions(kUInt8).with_device("cpu:3"));
  try {
    Tensor more = empty({40 << 20}, TensorOptions(kUInt8).with_device("cpu:3"));
    FAIL() << "expected OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    EXPECT_NE(std::string(e.what()).find("cpu:3 is out of memory: tried to allocate 40.00 MiB; "
                                         "the device has 64.00 MiB in total"),
              std::string::npos)
        << e.what();
  }
  Tensor fits = empty({10 << 20}, TensorOptions(kUInt8).with_device("cpu:3"));  // nothing was lost
  EXPECT_EQ(fits.numel(), 10 << 20);
}

TEST(VirtualCpuDevices, CachedLargeAllocationsAreReused) {
  CachingAllocator& d0 = device_backend(kCPU).allocator(0);
  { Tensor t = empty({8 << 20}, kUInt8); }
  int64_t before = d0.stats().num_device_alloc;
  for (int i = 0; i < 5; ++i) Tensor t = empty({8 << 20}, kUInt8);
  EXPECT_EQ(d0.stats().num_device_alloc, before);
  d0.empty_cache();
  EXPECT_EQ(d0.memory_reserved(), d0.stats().reserved_bytes[kAllPools].current);
}

}  // namespace
}  // namespace ember
