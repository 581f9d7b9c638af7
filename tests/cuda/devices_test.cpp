#include <cstdlib>

#include "tests/cuda/cuda_test_util.h"

namespace ember {
namespace {

TEST(CudaDevices, DiscoveryIsRobust) {
  // Without a driver or device this is 0 with a reason, never an exception.
  int n = cuda::device_count();
  EXPECT_EQ(cuda::is_available(), n > 0);
  if (n == 0)
    EXPECT_FALSE(cuda::unavailable_reason().empty());
  else
    EXPECT_EQ(cuda::unavailable_reason(), "");
  EXPECT_EQ(cuda::try_all_gpus().size(), static_cast<size_t>(std::max(n, 1)));
}

TEST(CudaDevices, PropertiesAndGuards) {
  EMBER_REQUIRE_CUDA();
  cuda::DeviceProperties p = cuda::get_device_properties(0);
  EXPECT_FALSE(p.name.empty());
  EXPECT_GE(p.major, 7);
  EXPECT_GT(p.total_memory, size_t{1} << 30);
  EXPECT_GT(p.multi_processor_count, 0);
  EXPECT_EQ(p.uuid.rfind("GPU-", 0), 0u);
  auto [free_bytes, total] = cuda::mem_get_info(0);
  EXPECT_LE(free_bytes, total);
  EXPECT_EQ(total, p.total_memory);
  EXPECT_EQ(cuda::get_device_name(0), p.name);
  EXPECT_GT(cuda::runtime_version(), 0);
  int before = cuda::current_device();
  {
    cuda::DeviceGuard guard(cuda::device_count() - 1);
    EXPECT_EQ(cuda::current_device(), cuda::device_count() - 1);
    EXPECT_EQ(ones({1}, TensorOptions().with_device("cuda")).device().index(),
              cuda::device_count() - 1);
  }
  EXPECT_EQ(cuda::current_device(), before);
  EXPECT_EQ(cuda::try_gpu(0), Device("cuda:0"));
  EXPECT_EQ(cuda::try_gpu(cuda::device_count()), Device("cpu"));
}

TEST(CudaDevices, AMissingDeviceListsTheOnesThatExist) {
  EMBER_REQUIRE_CUDA();
  int n = cuda::device_count();
  EXPECT_THROW_WITH(
      ones({1}, TensorOptions().with_device(Device(kCUDA, n + 3))),
      "cuda:" + std::to_string(n + 3) + " does not exist; the cuda devices are cuda:0");
}

TEST(CudaDevices, ChangingVisibleDevicesLateIsReported) {
  EMBER_REQUIRE_CUDA();
  std::string before = cuda::visible_devices();
  setenv("CUDA_VISIBLE_DEVICES", (before + ",99").c_str(), 1);
  EXPECT_THROW_WITH(cuda::check_visible_devices_unchanged(), "cannot take effect in this process");
  if (before.empty())
    unsetenv("CUDA_VISIBLE_DEVICES");
  else
    setenv("CUDA_VISIBLE_DEVICES", before.c_str(), 1);
  EXPECT_NO_THROW(cuda::check_visible_devices_unchanged());
}

}  // namespace
}  // namespace ember
