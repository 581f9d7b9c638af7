#include "ember/backend/cpu/cpu_device.h"
#include "ember/core/fork.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <vector>

#include "ember/core/error.h"

namespace ember::cpu {
namespace {

int read_device_count() {
  const char* env = std::getenv("EMBER_CPU_DEVICES");
  if (!env || !*env) return 1;
  char* end = nullptr;
  long n = std::strtol(env, &end, 10);
  EMBER_CHECK(*end == '\0' && n >= 1 && n <= 1024,
              "[EMBER_CPU_DEVICES] expected a number of virtual CPU devices in 1..1024, got '", env,
              "'");
  return static_cast<int>(n);
}

size_t physical_memory() {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page) : 0;
}

size_t available_memory() {
  long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page) : 0;
}

// Host memory for one virtual device. Segments of 2 MiB and more are 2 MiB aligned and marked for
// transparent huge pages: large elementwise ops then run with few TLB misses.
class CpuMemory final : public DeviceMemory {
 public:
  CpuMemory(int index, std::optional<size_t> capacity) : index_(index), capacity_(capacity) {}
  Device device() const override { return Device(DeviceType::CPU, index_); }
  void* raw_alloc(size_t bytes) override {
    if (capacity_ && used_.load() + bytes > *capacity_) return nullptr;
    constexpr size_t kHuge = 2 << 20;
    size_t align = bytes >= kHuge ? kHuge : 64;
    void* p = std::aligned_alloc(align, (bytes + align - 1) / align * align);
    if (!p) return nullptr;
    if (align == kHuge) madvise(p, bytes, MADV_HUGEPAGE);
    used_.fetch_add(bytes);
    return p;
  }
  void raw_free(void* ptr, size_t bytes) noexcept override {
    used_.fetch_sub(bytes);
    std::free(ptr);
  }
  size_t total_memory() override { return capacity_ ? *capacity_ : physical_memory(); }
  size_t free_memory() override {
    return capacity_ ? *capacity_ - used_.load() : available_memory();
  }

 private:
  int index_;
  std::optional<size_t> capacity_;
  std::atomic<size_t> used_{0};  // bytes
};

class CpuBackend final : public DeviceBackend {
 public:
  CpuBackend() : count_(read_device_count()), allocators_(static_cast<size_t>(count_)) {}
  int device_count() override { return count_; }
  int current_device() override { return 0; }
  void set_device(int index) override {
    EMBER_CHECK(index >= 0 && index < count_, "[set_device] cpu:", index, " does not exist");
  }
  CachingAllocator& allocator(int index) override {
    EMBER_ASSERT(index >= 0 && index < count_, "no allocator for cpu:", index);
    std::call_once(allocators_[static_cast<size_t>(index)].once, [&] {
      // Never destroyed: tensors may outlive static destruction.
      allocators_[static_cast<size_t>(index)].ptr =
          new CachingAllocator(std::make_unique<CpuMemory>(index, memory_limit()));
    });
    return *allocators_[static_cast<size_t>(index)].ptr;
  }
  std::string unavailable_reason() override { return ""; }
  void synchronize(int) override {}

 private:
  struct Slot {
    std::once_flag once;
    CachingAllocator* ptr = nullptr;
  };
  int count_;
  std::vector<Slot> allocators_;
};

}  // namespace

int device_count() { return backend().device_count(); }

size_t parse_bytes(const std::string& text, const char* what) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  std::string unit(end);
  double scale = 0;
  if (unit.empty() || unit == "B")
    scale = 1;
  else if (unit == "KiB" || unit == "K" || unit == "k")
    scale = 1024.0;
  else if (unit == "MiB" || unit == "M")
    scale = 1024.0 * 1024;
  else if (unit == "GiB" || unit == "G")
    scale = 1024.0 * 1024 * 1024;
  else if (unit == "KB" || unit == "kB")
    scale = 1e3;
  else if (unit == "MB")
    scale = 1e6;
  else if (unit == "GB")
    scale = 1e9;
  EMBER_CHECK(end != text.c_str() && scale > 0 && v >= 0 && std::isfinite(v), "[", what,
              "] expected a size such as 4096, 256MiB or 1.5GB, got '", text, "'");
  return static_cast<size_t>(v * scale);
}

std::optional<size_t> memory_limit() {
  static ForkSafeLazy<const std::optional<size_t>> limit;
  return limit.get([] {
    const char* env = std::getenv("EMBER_CPU_MEMORY_LIMIT");
    return new const std::optional<size_t>(
        env && *env ? std::optional<size_t>(parse_bytes(env, "EMBER_CPU_MEMORY_LIMIT"))
                    : std::nullopt);
  });
}

const char* compiled_simd() {
#if defined(__AVX512F__)
  return "AVX-512";
#elif defined(__AVX2__)
  return "AVX2";
#elif defined(__AVX__)
  return "AVX";
#else
  return "baseline x86-64";
#endif
}

DeviceBackend& backend() {
  static ForkSafeLazy<CpuBackend> b;
  return b.get([] { return new CpuBackend(); });
}

}  // namespace ember::cpu
