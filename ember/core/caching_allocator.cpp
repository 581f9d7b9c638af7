#include "ember/core/caching_allocator.h"

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <mutex>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "ember/core/error.h"
#include "ember/core/memory_summary.h"
#include "ember/core/profiler_events.h"

namespace ember {

// Note [Stream-ordered block reuse]
// A block remembers the stream it was allocated on, and once freed it is handed out again only to
// requests on that stream: work on one stream runs in order, so the next user's kernels cannot
// start before the previous user's finished, and no synchronisation is needed. A block that was
// also used on other streams (record_stream) does not go back to the pool when freed: an event is
// recorded on each of those streams and the block returns to the pool once all of them have
// completed.
//
// Note [Allocation ladder]
// A request first reclaims blocks whose events have completed, then looks for the best-fitting free
// block of its pool and stream (splitting it when the remainder is worth keeping), then asks the
// device for a new segment. When the device says no, it releases cached whole segments big enough
// (no synchronisation), retries, then waits for the device, releases every cached segment and
// retries, and only then throws an OutOfMemoryError that explains the state of the device.

namespace {
// Every StatArray of MemoryStats, with PyTorch's name for it (memory_stats keys).
struct NamedStatArray {
  const char* name;
  StatArray MemoryStats::*member;
};
constexpr NamedStatArray kStatArrays[] = {
    {"allocation", &MemoryStats::allocation},
    {"segment", &MemoryStats::segment},
    {"active", &MemoryStats::active},
    {"inactive_split", &MemoryStats::inactive_split},
    {"allocated_bytes", &MemoryStats::allocated_bytes},
    {"requested_bytes", &MemoryStats::requested_bytes},
    {"reserved_bytes", &MemoryStats::reserved_bytes},
    {"active_bytes", &MemoryStats::active_bytes},
    {"inactive_split_bytes", &MemoryStats::inactive_split_bytes},
};

// A free list of fixed-size objects: blocks and the pools' tree nodes are created and destroyed
// on every split and merge, and going to malloc for each was half the cost of a cached allocation.
// Requires the allocator's mutex held.
class FreeList {
 public:
  explicit FreeList(size_t size) : size_(std::max(size, sizeof(void*))) {}
  ~FreeList() {
    for (void* chunk : chunks_) ::operator delete(chunk);
  }
  void* get() {
    if (!head_) refill();
    void* p = head_;
    head_ = *static_cast<void**>(p);
    return p;
  }
  void put(void* p) {
    *static_cast<void**>(p) = head_;
    head_ = p;
  }

 private:
  void refill() {
    constexpr size_t kPerChunk = 256;
    char* chunk = static_cast<char*>(::operator new(size_* kPerChunk));
    chunks_.push_back(chunk);
    for (size_t i = 0; i < kPerChunk; ++i) put(chunk + i * size_);
  }
  size_t size_;
  void* head_ = nullptr;
  std::vector<void*> chunks_;
};

// std::allocator for the pools' sets, drawing nodes from a FreeList.
template <typename T>
struct NodeAllocator {
  using value_type = T;
  FreeList* list;
  explicit NodeAllocator(FreeList* l) : list(l) {}
  template <typename U>
  NodeAllocator(const NodeAllocator<U>& o) : list(o.list) {}  // NOLINT
  static constexpr bool kPooled = sizeof(T) <= 64;            // the node size the list hands out
  T* allocate(size_t n) {
    if (kPooled && n == 1) return static_cast<T*>(list->get());
    return static_cast<T*>(::operator new(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) {
    if (kPooled && n == 1)
      list->put(p);
    else
      ::operator delete(p);
  }
  template <typename U>
  bool operator==(const NodeAllocator<U>& o) const {
    return list == o.list;
  }
  template <typename U>
  bool operator!=(const NodeAllocator<U>& o) const {
    return list != o.list;
  }
};
}  // namespace

struct CachingAllocator::Impl {
  struct Block;
  struct BySize {
    bool operator()(const Block* a, const Block* b) const {
      if (a->stream != b->stream) return a->stream < b->stream;
      if (a->size != b->size) return a->size < b->size;
      return a->ptr < b->ptr;
    }
  };
  // Tree nodes of every set below are the same size: one list serves them all. Declared first so
  // that it outlives the sets.
  FreeList nodes{64};
  FreeList block_memory{sizeof(Block)};
  struct Pool {
    Pool(bool small, FreeList* nodes)
        : blocks(BySize(), NodeAllocator<Block*>(nodes)), is_small(small) {}
    std::set<Block*, BySize, NodeAllocator<Block*>> blocks;
    bool is_small;
  };
  struct Block {
    size_t size = 0;
    size_t requested_size = 0;
    StreamId stream = 0;
    Pool* pool = nullptr;
    char* ptr = nullptr;
    bool allocated = false;
    Block* prev = nullptr;  // neighbours inside the same segment
    Block* next = nullptr;
    int event_count = 0;  // events still pending before the block can be reused
    std::vector<StreamId> stream_uses;
    Impl* owner = nullptr;
    bool is_split() const { return prev != nullptr || next != nullptr; }
  };

  std::unique_ptr<DeviceMemory> memory;
  CachingAllocatorOptions options;
  mutable std::mutex mutex;
  Pool small_pool{true, &nodes};
  Pool large_pool{false, &nodes};
  Device device{DeviceType::CPU,
                0};  // memory->device(), kept to avoid a virtual call per allocation
  std::vector<std::pair<void*, Block*>> pending_events;  // (event, block)
  // record_history: the newest events last, at most max_history of them.
  size_t max_history = 0;
  bool history_stacks = false;
  std::deque<TraceEntry> history;

  // Requires mutex held. Never throws: it runs inside free.
  void trace(TraceEntry::Action action, const void* addr, size_t size, StreamId stream) noexcept {
    if (max_history == 0) return;
    try {
      if (history.size() >= max_history) history.pop_front();
      auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
      history.push_back({action, reinterpret_cast<uintptr_t>(addr), size, stream, us, nullptr});
      if (history_stacks && action != TraceEntry::Action::FreeCompleted)
        history.back().frames =
            std::make_shared<const std::vector<std::string>>(profiler::current_stack());
    } catch (...) {
      // A lost history entry must not fail an allocation or a release.
    }
  }
  std::set<Block*, std::less<Block*>, NodeAllocator<Block*>> segments{
      std::less<Block*>(), NodeAllocator<Block*>(&nodes)};  // first block of every live segment

  Block* new_block() { return new (block_memory.get()) Block(); }
  void delete_block(Block* b) {
    b->~Block();
    block_memory.put(b);
  }
  MemoryStats stats;

  static void deleter(void* ctx) {
    auto* block = static_cast<Block*>(ctx);
    block->owner->free(block);
  }

  static size_t round_size(size_t n) {
    return n < kMinBlockSize ? kMinBlockSize
                             : (n + kMinBlockSize - 1) / kMinBlockSize * kMinBlockSize;
  }
  static size_t allocation_size(size_t size) {
    if (size <= kSmallSize) return kSmallBuffer;
    if (size < kMinLargeAlloc) return kLargeBuffer;
    return (size + kRoundLarge - 1) / kRoundLarge * kRoundLarge;
  }
  static int pool_index(const Pool* pool) { return pool->is_small ? kSmallPool : kLargePool; }
  void update(StatArray& s, const Pool* pool, int64_t delta) {
    for (int i : {static_cast<int>(kAllPools), pool_index(pool)}) {
      if (delta >= 0)
        s[i].increase(delta);
      else
        s[i].decrease(-delta);
    }
  }

  // Requires mutex held.
  Block* find_free_block(Pool& pool, StreamId stream, size_t size) {
    Block key;
    key.stream = stream;
    key.size = size;
    key.ptr = nullptr;
    auto it = pool.blocks.lower_bound(&key);
    if (it == pool.blocks.end() || (*it)->stream != stream) return nullptr;
    Block* b = *it;
    // Oversize blocks are kept whole: splitting them is how caches fragment (PyTorch's reason for
    // max_split_size_mb).
    if (size < options.max_split_size && b->size >= options.max_split_size) return nullptr;
    if (size >= options.max_split_size && b->size >= size + kLargeBuffer) return nullptr;
    pool.blocks.erase(it);
    return b;
  }

  // Requires mutex held. A fresh segment, or nullptr when the device (or the fraction cap) says no.
  Block* alloc_segment(size_t size, Pool& pool, StreamId stream) {
    size_t reserved = static_cast<size_t>(stats.reserved_bytes[kAllPools].current);
    if (options.memory_fraction < 1.0) {
      double allowed = options.memory_fraction * static_cast<double>(memory->total_memory());
      if (static_cast<double>(reserved + size) > allowed) return nullptr;
    }
    void* ptr = memory->raw_alloc(size);
    if (!ptr) return nullptr;
    Block* b = new_block();
    b->size = size;
    b->stream = stream;
    b->pool = &pool;
    b->ptr = static_cast<char*>(ptr);
    b->owner = this;
    segments.insert(b);
    trace(TraceEntry::Action::SegmentAlloc, b->ptr, size, stream);
    ++stats.num_device_alloc;
    update(stats.segment, &pool, 1);
    update(stats.reserved_bytes, &pool, static_cast<int64_t>(size));
    return b;
  }

  // Requires mutex held. Gives a wholly free segment back to the device.
  void release_segment(Block* b) {
    EMBER_ASSERT(!b->is_split() && !b->allocated, "releasing a segment that is in use");
    b->pool->blocks.erase(b);
    segments.erase(b);
    trace(TraceEntry::Action::SegmentFree, b->ptr, b->size, b->stream);
    memory->raw_free(b->ptr, b->size);
    ++stats.num_device_free;
    update(stats.segment, b->pool, -1);
    update(stats.reserved_bytes, b->pool, -static_cast<int64_t>(b->size));
    delete_block(b);
  }

  // Requires mutex held. The cached blocks that are a whole segment (the device can have them
  // back), small pool first.
  std::vector<Block*> whole_free_segments() const {
    std::vector<Block*> whole;
    for (const Pool* pool : {&small_pool, &large_pool})
      for (Block* b : pool->blocks)
        if (!b->is_split()) whole.push_back(b);
    return whole;
  }

  // Requires mutex held. Frees cached whole segments, the smallest big enough first, else the
  // largest ones until `size` bytes are back; no synchronisation (pooled blocks are idle).
  bool release_available(size_t size) {
    std::vector<Block*> whole = whole_free_segments();
    if (whole.empty()) return false;
    std::sort(whole.begin(), whole.end(), [](Block* a, Block* b) { return a->size < b->size; });
    auto fit = std::find_if(whole.begin(), whole.end(), [&](Block* b) { return b->size >= size; });
    if (fit != whole.end()) {
      release_segment(*fit);
      return true;
    }
    size_t freed = 0;
    while (!whole.empty() && freed < size) {
      freed += whole.back()->size;
      release_segment(whole.back());
      whole.pop_back();
    }
    return true;
  }

  // Requires mutex held. Waits for every pending block's events (they may be on other devices'
  // streams, so one device sync would not do), reclaims the blocks, frees every whole free segment.
  void release_all() {
    process_events(/*wait=*/true);
    for (Block* b : whole_free_segments()) release_segment(b);
  }

  // Requires mutex held. Returns blocks whose events have all completed to their pools.
  void process_events(bool wait) {
    if (pending_events.empty()) return;
    size_t kept = 0, i = 0;  // entries [0, kept) wait on; [kept, i) are handled
    try {
      for (; i < pending_events.size(); ++i) {
        auto [event, block] = pending_events[i];
        if (wait) {
          memory->synchronize_event(event);
        } else if (!memory->query_event(event)) {
          pending_events[kept++] = pending_events[i];
          continue;
        }
        memory->destroy_event(event);
        if (--block->event_count == 0) free_block(block);
      }
    } catch (...) {
      // A broken device part-way: keep the unhandled entries (the failing one included) so that
      // no event is destroyed twice and no block freed twice.
      pending_events.erase(pending_events.begin() + static_cast<ptrdiff_t>(kept),
                           pending_events.begin() + static_cast<ptrdiff_t>(i));
      throw;
    }
    pending_events.resize(kept);
  }

  bool should_split(const Block* b, size_t size) const {
    size_t remaining = b->size - size;
    if (b->pool->is_small) return remaining >= kMinBlockSize;
    return size < options.max_split_size && remaining > kSmallSize;
  }

  DataPtr malloc(size_t nbytes, StreamId stream) {
    const Device& dev = device;
    if (nbytes == 0) return DataPtr(nullptr, nullptr, nullptr, dev);
    EMBER_CHECK(nbytes < (size_t{1} << 62), "[allocate] ", dev, ": request of ", nbytes,
                " bytes is too large");
    size_t size = round_size(nbytes);
    Pool& pool = size <= kSmallSize ? small_pool : large_pool;
    std::unique_lock<std::mutex> lock(mutex);
    process_events(/*wait=*/false);
    Block* b = options.caching ? find_free_block(pool, stream, size) : nullptr;
    if (!b) {
      size_t segment_size = options.caching ? allocation_size(size) : size;
      b = alloc_segment(segment_size, pool, stream);
      if (!b && release_available(segment_size)) b = alloc_segment(segment_size, pool, stream);
      if (!b) {
        ++stats.num_alloc_retries;
        release_all();
        b = alloc_segment(segment_size, pool, stream);
      }
      if (!b) {
        ++stats.num_ooms;
        trace(TraceEntry::Action::Oom, nullptr, nbytes, stream);
        throw OutOfMemoryError(oom_message(nbytes), nbytes);
      }
    } else if (b->is_split()) {
      update(stats.inactive_split, &pool, -1);
      update(stats.inactive_split_bytes, &pool, -static_cast<int64_t>(b->size));
    }
    if (options.caching && should_split(b, size)) {
      Block* rest = new_block();
      rest->size = b->size - size;
      rest->stream = stream;
      rest->pool = &pool;
      rest->ptr = b->ptr + size;
      rest->owner = this;
      rest->prev = b;
      rest->next = b->next;
      if (b->next) b->next->prev = rest;
      b->next = rest;
      b->size = size;
      pool.blocks.insert(rest);
      update(stats.inactive_split, &pool, 1);
      update(stats.inactive_split_bytes, &pool, static_cast<int64_t>(rest->size));
    }
    b->allocated = true;
    b->requested_size = nbytes;
    update(stats.allocation, &pool, 1);
    update(stats.allocated_bytes, &pool, static_cast<int64_t>(b->size));
    update(stats.requested_bytes, &pool, static_cast<int64_t>(nbytes));
    update(stats.active, &pool, 1);
    update(stats.active_bytes, &pool, static_cast<int64_t>(b->size));
    profiler::record_memory(device, static_cast<int64_t>(b->size),
                            stats.allocated_bytes[kAllPools].current);
    trace(TraceEntry::Action::Alloc, b->ptr, b->size, b->stream);
    return DataPtr(b->ptr, b, &deleter, dev);
  }

  void free(Block* b) noexcept {
    std::lock_guard<std::mutex> lock(mutex);
    b->allocated = false;
    update(stats.allocation, b->pool, -1);
    update(stats.allocated_bytes, b->pool, -static_cast<int64_t>(b->size));
    update(stats.requested_bytes, b->pool, -static_cast<int64_t>(b->requested_size));
    try {
      profiler::record_memory(device, -static_cast<int64_t>(b->size),
                              stats.allocated_bytes[kAllPools].current);
    } catch (...) {
      // A lost memory event must not fail a release.
    }
    if (!b->stream_uses.empty()) {
      trace(TraceEntry::Action::FreeRequested, b->ptr, b->size, b->stream);
      for (StreamId s : b->stream_uses) {
        void* event = nullptr;
        try {
          event = memory->record_event(s);
        } catch (...) {
          // A device that cannot record an event is broken; holding the block forever is the
          // only safe choice, and destructors must not throw.
          b->stream_uses.clear();
          return;
        }
        if (event) {
          ++b->event_count;
          pending_events.emplace_back(event, b);
        }
      }
      b->stream_uses.clear();
      if (b->event_count > 0) return;
    }
    free_block(b);
  }

  // Requires mutex held. Merges `b` with free neighbours and returns it to its pool.
  void free_block(Block* b) {
    trace(TraceEntry::Action::FreeCompleted, b->ptr, b->size, b->stream);
    Pool& pool = *b->pool;
    update(stats.active, &pool, -1);
    update(stats.active_bytes, &pool, -static_cast<int64_t>(b->size));
    for (Block* n : {b->prev, b->next}) {
      if (!n || n->allocated || n->event_count > 0) continue;
      pool.blocks.erase(n);
      update(stats.inactive_split, &pool, -1);
      update(stats.inactive_split_bytes, &pool, -static_cast<int64_t>(n->size));
      if (n == b->prev) {
        b->ptr = n->ptr;
        b->prev = n->prev;
        if (b->prev) b->prev->next = b;
        if (segments.erase(n)) segments.insert(b);
      } else {
        b->next = n->next;
        if (b->next) b->next->prev = b;
      }
      b->size += n->size;
      delete_block(n);
    }
    if (b->is_split()) {
      update(stats.inactive_split, &pool, 1);
      update(stats.inactive_split_bytes, &pool, static_cast<int64_t>(b->size));
    }
    pool.blocks.insert(b);
    if (!options.caching && !b->is_split()) release_segment(b);
  }

  size_t largest_free_block_locked() const {
    size_t best = 0;
    for (const Pool* pool : {&small_pool, &large_pool})
      for (const Block* b : pool->blocks) best = std::max(best, b->size);
    return best;
  }

  std::string oom_message(size_t nbytes) {
    size_t total = memory->total_memory();
    size_t free_now = memory->free_memory();
    size_t allocated = static_cast<size_t>(stats.allocated_bytes[kAllPools].current);
    size_t reserved = static_cast<size_t>(stats.reserved_bytes[kAllPools].current);
    std::ostringstream os;
    os << "[allocate] " << memory->device() << " is out of memory: tried to allocate "
       << format_bytes(nbytes) << "; the device has " << format_bytes(total) << " in total, "
       << format_bytes(free_now) << " free; ember has " << format_bytes(allocated)
       << " allocated and " << format_bytes(reserved) << " reserved ("
       << format_bytes(reserved - allocated) << " reserved but unallocated); the largest free "
       << "cached block is " << format_bytes(largest_free_block_locked()) << ".";
    if (options.memory_fraction < 1.0)
      os << " The process may reserve at most " << options.memory_fraction * 100
         << "% of the device (set_per_process_memory_fraction).";
    if (reserved - allocated > allocated / 4 && reserved > allocated)
      os << " Much memory is reserved but unallocated: fragmentation; try empty_cache().";
    return os.str();
  }
};

namespace {
// Note [Fork safety] (core/fork.h): every live allocator's mutex is held across fork(), so a child
// never inherits pools in the middle of an update made by another thread.
// Never destroyed: allocators may be destroyed during static destruction.
struct LiveAllocators {
  std::mutex mutex;
  std::vector<std::mutex*> locks;
};
LiveAllocators& live();
void lock_all() {
  live().mutex.lock();
  for (std::mutex* m : live().locks) m->lock();
}
void unlock_all() {
  for (std::mutex* m : live().locks) m->unlock();
  live().mutex.unlock();
}
LiveAllocators& live() {
  static LiveAllocators* l = [] {
    pthread_atfork(lock_all, unlock_all, unlock_all);
    return new LiveAllocators();
  }();
  return *l;
}

void add_live(std::mutex* m) {
  std::lock_guard<std::mutex> lock(live().mutex);
  live().locks.push_back(m);
}
void remove_live(std::mutex* m) {
  std::lock_guard<std::mutex> lock(live().mutex);
  auto& v = live().locks;
  v.erase(std::find(v.begin(), v.end(), m));
}

// The handlers are registered at static initialisation, before any thread exists, and not on the
// first allocator's creation: that may happen on one thread while another forks, and glibc skips
// a handler registered while a fork is under way (it drops its lock around prepare handlers such
// as OpenBLAS's), so the child inherited the allocator's mutex held by the other thread.
[[maybe_unused]] const bool g_fork_handlers_registered = (live(), true);
}  // namespace

CachingAllocator::CachingAllocator(std::unique_ptr<DeviceMemory> memory,
                                   CachingAllocatorOptions options)
    : impl_(std::make_unique<Impl>()) {
  EMBER_ASSERT(memory != nullptr, "CachingAllocator needs a DeviceMemory");
  impl_->device = memory->device();
  impl_->memory = std::move(memory);
  impl_->options = options;
  add_live(&impl_->mutex);
}

CachingAllocator::~CachingAllocator() {
  remove_live(&impl_->mutex);
  if (impl_->history_stacks) profiler::add_stack_recorder(-1);
  // Segments with live blocks are leaked: their tensors may outlive us (static destruction).
  std::lock_guard<std::mutex> lock(impl_->mutex);
  try {
    impl_->release_all();
  } catch (...) {
  }
}

DataPtr CachingAllocator::allocate(size_t nbytes) {
  return impl_->malloc(nbytes, nbytes ? impl_->memory->current_stream() : 0);
}
DataPtr CachingAllocator::allocate(size_t nbytes, StreamId stream) {
  return impl_->malloc(nbytes, stream);
}

bool CachingAllocator::owns(const DataPtr& ptr) { return ptr.deleter() == &Impl::deleter; }

std::pair<void*, size_t> CachingAllocator::segment_of(const DataPtr& ptr) const {
  EMBER_CHECK(ptr.get() && owns(ptr), "[segment_of] memory at ", ptr.get(),
              " was not made by a caching allocator");
  auto* b = static_cast<const Impl::Block*>(ptr.context());
  EMBER_CHECK(b->owner == impl_.get(), "[segment_of] memory belongs to ",
              b->owner->memory->device(), ", not ", device());
  std::lock_guard<std::mutex> lock(impl_->mutex);
  const Impl::Block* head = b;
  while (head->prev) head = head->prev;
  size_t total = 0;
  for (const Impl::Block* x = head; x; x = x->next) total += x->size;
  return {head->ptr, total};
}

void CachingAllocator::record_stream(const DataPtr& ptr, StreamId stream) {
  if (!ptr.get()) return;
  EMBER_CHECK(owns(ptr), "[record_stream] memory at ", ptr.get(),
              " was not made by a caching allocator");
  auto* b = static_cast<Impl::Block*>(ptr.context());
  EMBER_CHECK(b->owner == impl_.get(), "[record_stream] memory belongs to ",
              b->owner->memory->device(), ", not ", device());
  std::lock_guard<std::mutex> lock(impl_->mutex);
  if (stream == b->stream) return;  // its own stream needs no event
  if (std::find(b->stream_uses.begin(), b->stream_uses.end(), stream) == b->stream_uses.end())
    b->stream_uses.push_back(stream);
}

void CachingAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->release_all();
}

MemoryStats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->stats;
}

void CachingAllocator::reset_peak_stats() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  MemoryStats& s = impl_->stats;
  for (const NamedStatArray& a : kStatArrays)
    for (Stat& st : s.*a.member) st.peak = st.current;
}

void CachingAllocator::reset_accumulated_stats() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  MemoryStats& s = impl_->stats;
  for (const NamedStatArray& a : kStatArrays)
    for (Stat& st : s.*a.member) st.allocated = st.freed = 0;
  s.num_alloc_retries = s.num_ooms = s.num_device_alloc = s.num_device_free = 0;
}

std::vector<SegmentInfo> CachingAllocator::snapshot() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  std::vector<SegmentInfo> out;
  for (const Impl::Block* head : impl_->segments) {
    SegmentInfo seg;
    seg.address = reinterpret_cast<uintptr_t>(head->ptr);
    seg.stream = head->stream;
    seg.is_large = !head->pool->is_small;
    for (const Impl::Block* b = head; b; b = b->next) {
      BlockInfo info;
      info.address = reinterpret_cast<uintptr_t>(b->ptr);
      info.size = b->size;
      info.requested_size = b->allocated ? b->requested_size : 0;
      info.allocated = b->allocated;
      info.active = b->allocated || b->event_count > 0;
      seg.total_size += b->size;
      if (info.allocated) seg.allocated_size += b->size;
      if (info.active) seg.active_size += b->size;
      seg.blocks.push_back(info);
    }
    out.push_back(std::move(seg));
  }
  std::sort(out.begin(), out.end(),
            [](const SegmentInfo& a, const SegmentInfo& b) { return a.address < b.address; });
  return out;
}

void CachingAllocator::record_history(size_t max_entries, bool stacks) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  stacks = stacks && max_entries > 0;
  if (stacks != impl_->history_stacks) profiler::add_stack_recorder(stacks ? 1 : -1);
  impl_->history_stacks = stacks;
  impl_->max_history = max_entries;
  if (max_entries == 0) impl_->history.clear();
  while (impl_->history.size() > max_entries) impl_->history.pop_front();
}

std::vector<TraceEntry> CachingAllocator::history() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return {impl_->history.begin(), impl_->history.end()};
}

const char* action_name(TraceEntry::Action action) {
  switch (action) {
    case TraceEntry::Action::Alloc:
      return "alloc";
    case TraceEntry::Action::FreeRequested:
      return "free_requested";
    case TraceEntry::Action::FreeCompleted:
      return "free_completed";
    case TraceEntry::Action::SegmentAlloc:
      return "segment_alloc";
    case TraceEntry::Action::SegmentFree:
      return "segment_free";
    case TraceEntry::Action::Oom:
      return "oom";
  }
  return "alloc";
}

void CachingAllocator::set_memory_fraction(double fraction) {
  EMBER_CHECK(fraction > 0.0 && fraction <= 1.0,
              "[set_per_process_memory_fraction] expected a fraction in (0, 1], got ", fraction);
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->options.memory_fraction = fraction;
}

double CachingAllocator::memory_fraction() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->options.memory_fraction;
}

size_t CachingAllocator::largest_free_block() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->largest_free_block_locked();
}

Device CachingAllocator::device() const { return impl_->device; }
DeviceMemory& CachingAllocator::memory() { return *impl_->memory; }

size_t CachingAllocator::memory_allocated() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return static_cast<size_t>(impl_->stats.allocated_bytes[kAllPools].current);
}
size_t CachingAllocator::memory_reserved() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return static_cast<size_t>(impl_->stats.reserved_bytes[kAllPools].current);
}

std::map<std::string, int64_t> MemoryStats::to_map() const {
  std::map<std::string, int64_t> m;
  const char* pools[] = {"all", "small_pool", "large_pool"};
  for (const NamedStatArray& a : kStatArrays) {
    for (int p = 0; p < 3; ++p) {
      const Stat& st = (this->*a.member)[p];
      std::string prefix = std::string(a.name) + "." + pools[p] + ".";
      m[prefix + "current"] = st.current;
      m[prefix + "peak"] = st.peak;
      m[prefix + "allocated"] = st.allocated;
      m[prefix + "freed"] = st.freed;
    }
  }
  m["num_alloc_retries"] = num_alloc_retries;
  m["num_ooms"] = num_ooms;
  m["num_device_alloc"] = num_device_alloc;
  m["num_device_free"] = num_device_free;
  return m;
}

}  // namespace ember
