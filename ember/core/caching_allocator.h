// The caching allocator of every ember device: PyTorch's CUDA design
// (c10/cuda/CUDACachingAllocator), written once over an injected DeviceMemory so that the GPU, the
// virtual CPU devices, pinned host memory and the tests' fake device all share (and test) the same
// logic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ember/core/allocator.h"

namespace ember {

/// A stream handle (a cudaStream_t's value); 0 is the default stream, the only one on a CPU.
using StreamId = uintptr_t;

/// Raw memory and stream events of one device. Events let a block freed while other streams may
/// still use it wait until they are done (Note [Stream-ordered block reuse]).
class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  virtual Device device() const = 0;
  /// nullptr when the device has no room (never throws for lack of memory).
  virtual void* raw_alloc(size_t bytes) = 0;
  /// Gives back what raw_alloc(bytes) returned; the allocator passes the size back, so a device
  /// need not remember it.
  virtual void raw_free(void* ptr, size_t bytes) noexcept = 0;
  virtual size_t total_memory() = 0;
  virtual size_t free_memory() = 0;
  virtual StreamId current_stream() { return 0; }
  /// An event recorded on `stream` now; nullptr means "nothing to wait for".
  virtual void* record_event(StreamId /*stream*/) { return nullptr; }
  virtual bool query_event(void* /*event*/) { return true; }
  virtual void destroy_event(void* /*event*/) noexcept {}
  /// Waits on the host until `event` has happened.
  virtual void synchronize_event(void* /*event*/) {}
};

struct Stat {
  int64_t current = 0, peak = 0, allocated = 0, freed = 0;
  void increase(int64_t n) {
    current += n;
    allocated += n;
    if (current > peak) peak = current;
  }
  void decrease(int64_t n) {
    current -= n;
    freed += n;
  }
};

enum StatPool : int { kAllPools = 0, kSmallPool = 1, kLargePool = 2 };
using StatArray = Stat[3];

/// torch.cuda.memory_stats, per device. Bytes are rounded to the allocator's 512-byte unit,
/// except requested_bytes which is what callers asked for.
struct MemoryStats {
  StatArray allocation;      // live allocations (count)
  StatArray segment;         // segments obtained from the device (count)
  StatArray active;          // blocks allocated or waiting for other streams (count)
  StatArray inactive_split;  // free blocks inside split segments (count)
  StatArray allocated_bytes;
  StatArray requested_bytes;
  StatArray reserved_bytes;  // all segments held
  StatArray active_bytes;
  StatArray inactive_split_bytes;  // fragmentation: cached but only reusable by smaller requests
  int64_t num_alloc_retries = 0;   // times the cache was released to satisfy an allocation
  int64_t num_ooms = 0;
  int64_t num_device_alloc = 0;
  int64_t num_device_free = 0;

  /// Flat keys as PyTorch names them: "allocated_bytes.all.current", "num_ooms", ...
  std::map<std::string, int64_t> to_map() const;
};

struct BlockInfo {
  uintptr_t address = 0;
  size_t size = 0;
  size_t requested_size = 0;
  bool allocated = false;
  bool active = false;  // allocated, or freed but waiting for events
};

struct SegmentInfo {
  uintptr_t address = 0;
  size_t total_size = 0;
  size_t allocated_size = 0;
  size_t active_size = 0;
  StreamId stream = 0;
  bool is_large = false;
  std::vector<BlockInfo> blocks;
};

/// One event of the allocator's history (record_history), PyTorch's trace entries.
struct TraceEntry {
  enum class Action : uint8_t {
    Alloc,          // a block handed out
    FreeRequested,  // freed while streams still use it: reusable once their work is done
    FreeCompleted,  // back in the cache
    SegmentAlloc,   // memory taken from the device
    SegmentFree,    // memory given back to the device
    Oom,            // a request the device could not meet (size: what was asked)
  };
  Action action = Action::Alloc;
  uintptr_t addr = 0;
  size_t size = 0;
  StreamId stream = 0;
  int64_t time_us = 0;  // of the system clock
  /// With record_history's stacks: the caller's frames (profiler::current_stack()), shared by the
  /// copies history() hands out.
  std::shared_ptr<const std::vector<std::string>> frames;
};
/// "alloc", "free_requested", "free_completed", "segment_alloc", "segment_free", "oom".
const char* action_name(TraceEntry::Action action);

struct CachingAllocatorOptions {
  bool caching = true;               // false: every free returns memory to the device
  size_t max_split_size = SIZE_MAX;  // cached blocks this large are never split
  double memory_fraction = 1.0;      // of total_memory() this process may reserve
};

class CachingAllocator final : public Allocator {
 public:
  explicit CachingAllocator(std::unique_ptr<DeviceMemory> memory,
                            CachingAllocatorOptions options = {});
  ~CachingAllocator() override;
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  /// Allocates on the device's current stream.
  DataPtr allocate(size_t nbytes) override;
  DataPtr allocate(size_t nbytes, StreamId stream);
  /// Marks memory as used on `stream`: at free, it waits for that stream's work before reuse.
  void record_stream(const DataPtr& ptr, StreamId stream);
  /// Whether `ptr` came from a CachingAllocator (record_stream applies to it).
  static bool owns(const DataPtr& ptr);
  /// The segment that holds `ptr`'s block: its base address and size (CUDA IPC shares whole
  /// segments, as cudaIpcGetMemHandle wants the base of a cudaMalloc).
  std::pair<void*, size_t> segment_of(const DataPtr& ptr) const;

  /// Returns every wholly free segment to the device (waits for the device first).
  void empty_cache();
  MemoryStats stats() const;
  void reset_peak_stats();
  void reset_accumulated_stats();
  std::vector<SegmentInfo> snapshot() const;
  /// Keeps the last `max_entries` allocator events (0: none, and forgets those kept), with the
  /// caller's frames when `stacks`, as torch.cuda.memory._record_memory_history does.
  void record_history(size_t max_entries, bool stacks = false);
  std::vector<TraceEntry> history() const;
  /// Caps what this process may reserve to `fraction` of the device's total memory.
  void set_memory_fraction(double fraction);
  double memory_fraction() const;
  /// Size of the largest cached free block (0 when none).
  size_t largest_free_block() const;

  Device device() const;
  DeviceMemory& memory();

  // Convenience views of stats() for the aggregate pool.
  size_t memory_allocated() const;
  size_t memory_reserved() const;

  static constexpr size_t kMinBlockSize = 512;        // every request is rounded up to this
  static constexpr size_t kSmallSize = 1 << 20;       // requests up to 1 MiB use the small pool
  static constexpr size_t kSmallBuffer = 2 << 20;     // small pool segments: 2 MiB
  static constexpr size_t kLargeBuffer = 20 << 20;    // segments for 1-10 MiB requests: 20 MiB
  static constexpr size_t kMinLargeAlloc = 10 << 20;  // larger requests are rounded to 2 MiB
  static constexpr size_t kRoundLarge = 2 << 20;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ember
