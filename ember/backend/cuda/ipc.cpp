// CUDA IPC (Note [CUDA IPC], ipc.h): the producer's side (export, the sent-storage registry, the
// reference-count files) and the consumer's (the open-segment cache, imported storages).
#include "ember/backend/cuda/ipc.h"

#include <cuda_runtime.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "ember/backend/cuda/runtime.h"
#include "ember/core/caching_allocator.h"
#include "ember/core/device_backend.h"
#include "ember/core/error.h"
#include "ember/core/fork.h"

namespace ember::cuda::ipc {
namespace {

constexpr uint32_t kSlots = 1024;  // sends per reference-count file

// The reference-count file: this header, then kSlots counters.
struct RefHeader {
  std::atomic<int32_t> producer_alive;
  int32_t producer_pid;
};

// One mapping of a reference-count file, in the producer or a consumer.
struct RefFile {
  int fd = -1;
  void* base = nullptr;
  static constexpr size_t kBytes = sizeof(RefHeader) + kSlots * sizeof(std::atomic<int64_t>);

  RefFile(int f, const char* op) : fd(f) {
    base = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
      int err = errno;
      close(fd);
      EMBER_FAIL("[", op, "] cannot map a CUDA IPC reference-count file: ", std::strerror(err));
    }
  }
  RefFile(const RefFile&) = delete;
  RefFile& operator=(const RefFile&) = delete;
  ~RefFile() {
    munmap(base, kBytes);
    close(fd);
  }
  RefHeader& header() const { return *static_cast<RefHeader*>(base); }
  std::atomic<int64_t>& slot(uint32_t i) const {
    return reinterpret_cast<std::atomic<int64_t>*>(static_cast<char*>(base) + sizeof(RefHeader))[i];
  }
  bool producer_gone() const {
    if (header().producer_alive.load(std::memory_order_acquire) == 0) return true;
    return kill(header().producer_pid, 0) != 0 && errno == ESRCH;
  }
};

// The handle's bytes, as they travel.
struct Wire {
  cudaIpcMemHandle_t memory;
  cudaIpcEventHandle_t event;
  int32_t device;
  uint32_t slot;
  uint64_t segment_bytes;
  uint64_t offset;  // of the storage in its segment
  uint64_t nbytes;  // of the storage
};

// --- producer ----------------------------------------------------------------------------------

struct Sent {
  Storage storage;  // keeps the block allocated: out of the caching allocator's free lists
  std::shared_ptr<RefFile> file;
  uint32_t slot;
  cudaEvent_t event;
};

struct Producer {
  std::mutex mutex;
  std::shared_ptr<RefFile> current;
  uint32_t next_slot = kSlots;
  std::vector<Sent> sent;

  // Requires mutex held.
  size_t collect_locked() {
    size_t kept = 0;
    for (Sent& s : sent) {
      if (s.file->slot(s.slot).load(std::memory_order_acquire) > 0) {
        sent[kept++] = std::move(s);
        continue;
      }
      cudaEventDestroy(s.event);  // a destroyed event that is still pending completes anyway
    }
    sent.resize(kept);
    return kept;
  }

  // Requires mutex held. A fresh slot, set to one consumer.
  std::pair<std::shared_ptr<RefFile>, uint32_t> take_slot() {
    if (next_slot == kSlots) {
      int fd = memfd_create("ember-cuda-ipc-refcounts", MFD_CLOEXEC);
      EMBER_CHECK(fd >= 0, "[Queue::put] cannot create a CUDA IPC reference-count file: ",
                  std::strerror(errno));
      if (ftruncate(fd, static_cast<off_t>(RefFile::kBytes)) != 0) {
        int err = errno;
        close(fd);
        EMBER_FAIL("[Queue::put] cannot size a CUDA IPC reference-count file: ",
                   std::strerror(err));
      }
      current = std::make_shared<RefFile>(fd, "Queue::put");
      current->header().producer_pid = static_cast<int32_t>(getpid());
      current->header().producer_alive.store(1, std::memory_order_release);
      next_slot = 0;
    }
    uint32_t slot = next_slot++;
    current->slot(slot).store(1, std::memory_order_release);
    return {current, slot};
  }

  // At exit: waits for consumers a while, then tells them the memory is going away.
  void exit() {
    auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(kExitWaitSeconds);
    std::unique_lock<std::mutex> lock(mutex);
    while (collect_locked() > 0 && std::chrono::steady_clock::now() < deadline) {
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      lock.lock();
    }
    if (!sent.empty())
      std::fprintf(
          stderr,
          "ember: this process exits while %zu CUDA tensors it sent are still used by other processes; "
          "they will fail with an error (keep the producer alive until consumers release what they received)\n",
          sent.size());
    for (const Sent& s : sent) s.file->header().producer_alive.store(0, std::memory_order_release);
    if (current) current->header().producer_alive.store(0, std::memory_order_release);
  }
};

Producer& producer() {
  static ForkSafeLazy<Producer> p;
  return p.get([] {
    std::atexit([] { producer().exit(); });
    return new Producer();
  });
}

// --- consumer ----------------------------------------------------------------------------------

struct OpenSegment {
  void* base = nullptr;
  int device = 0;
  int storages = 0;
};

struct Consumer {
  std::mutex mutex;
  std::map<std::string, OpenSegment> segments;  // by memory-handle bytes
};

Consumer& consumer() {
  static ForkSafeLazy<Consumer> c;
  return c.get([] { return new Consumer(); });
}

// What an imported storage's DataPtr owns.
struct Imported {
  std::string key;  // the segment's handle bytes
  std::shared_ptr<RefFile> file;
  uint32_t slot;
  int device;

  static void release(void* ctx) {
    std::unique_ptr<Imported> self(static_cast<Imported*>(ctx));
    try {
      RawDeviceGuard guard(self->device);
      // The producer may reuse the block once the slot reaches 0: this process's work on it must
      // be over first.
      cudaStreamSynchronize(raw_stream(self->device));
      Consumer& c = consumer();
      std::lock_guard<std::mutex> lock(c.mutex);
      auto it = c.segments.find(self->key);
      if (it != c.segments.end() && --it->second.storages == 0) {
        cudaIpcCloseMemHandle(it->second.base);
        c.segments.erase(it);
      }
    } catch (...) {
      // A deleter must not throw; a broken device cannot use the memory any more anyway.
    }
    self->file->slot(self->slot).fetch_sub(1, std::memory_order_acq_rel);
  }
};

[[noreturn]] void producer_gone(const char* op, int pid) {
  EMBER_FAIL("[", op, "] the process that sent this CUDA tensor (pid ", pid,
             ") has exited, and its memory with it; "
             "keep the producer alive until every consumer has released what it received");
}

}  // namespace

ExportedStorage export_storage(const Storage& storage) {
  EMBER_CHECK(storage && storage->data.device().is_cuda(),
              "[Queue::put] CUDA IPC exports CUDA storages only");
  EMBER_CHECK(
      !is_imported(storage),
      "[Queue::put] cannot send on a CUDA tensor received from another process; clone() it first");
  int device = check_index(storage->data.device().index(), "Queue::put");
  RawDeviceGuard guard(device);
  auto& allocator = device_backend(DeviceType::CUDA).allocator(device);
  auto [base, segment_bytes] = allocator.segment_of(storage->data);

  Wire w{};
  EMBER_CUDA_CHECK(cudaIpcGetMemHandle(&w.memory, base));
  cudaEvent_t event = nullptr;
  EMBER_CUDA_CHECK(
      cudaEventCreateWithFlags(&event, cudaEventDisableTiming | cudaEventInterprocess));
  cudaError_t err = cudaEventRecord(event, raw_stream(device));
  if (err == cudaSuccess) err = cudaIpcGetEventHandle(&w.event, event);
  if (err != cudaSuccess) {
    cudaEventDestroy(event);
    EMBER_CUDA_CHECK(err);
  }
  w.device = device;
  w.segment_bytes = segment_bytes;
  w.offset =
      static_cast<uint64_t>(static_cast<char*>(storage->data.get()) - static_cast<char*>(base));
  w.nbytes = storage->nbytes;

  Producer& p = producer();
  std::lock_guard<std::mutex> lock(p.mutex);
  p.collect_locked();
  auto [file, slot] = p.take_slot();
  w.slot = slot;
  p.sent.push_back(Sent{storage, file, slot, event});
  return ExportedStorage{std::string(reinterpret_cast<const char*>(&w), sizeof w), file->fd};
}

Storage import_storage(const std::string& handle, int ref_fd) {
  auto file = std::make_shared<RefFile>(ref_fd, "Queue::get");  // owns ref_fd from here
  EMBER_ASSERT(handle.size() == sizeof(Wire), "a CUDA IPC handle of ", handle.size(),
               " bytes, expected ", sizeof(Wire));
  Wire w;
  std::memcpy(&w, handle.data(), sizeof w);
  // Every failure below leaves the producer's block with its slot released.
  struct Release {
    RefFile* file;
    uint32_t slot;
    bool armed = true;
    ~Release() {
      if (armed) file->slot(slot).fetch_sub(1, std::memory_order_acq_rel);
    }
  } release{file.get(), w.slot};
  if (file->producer_gone()) producer_gone("Queue::get", file->header().producer_pid);
  int device = check_index(w.device, "Queue::get");
  RawDeviceGuard guard(device);

  std::string key(reinterpret_cast<const char*>(&w.memory), sizeof w.memory);
  Consumer& c = consumer();
  char* base = nullptr;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    auto it = c.segments.find(key);
    if (it == c.segments.end()) {
      void* opened = nullptr;
      EMBER_CUDA_CHECK(cudaIpcOpenMemHandle(&opened, w.memory, cudaIpcMemLazyEnablePeerAccess));
      it = c.segments.emplace(key, OpenSegment{opened, device, 0}).first;
    }
    ++it->second.storages;
    base = static_cast<char*>(it->second.base);
  }
  auto imported = std::make_unique<Imported>(Imported{key, file, w.slot, device});
  release.armed = false;  // from here the DataPtr's deleter releases the slot
  DataPtr data(base + w.offset, imported.release(), &Imported::release,
               Device(DeviceType::CUDA, device));

  cudaEvent_t event = nullptr;
  EMBER_CUDA_CHECK(cudaIpcOpenEventHandle(&event, w.event));
  cudaError_t err = cudaStreamWaitEvent(raw_stream(device), event, 0);
  cudaEventDestroy(event);
  EMBER_CUDA_CHECK(err);
  return std::make_shared<StorageImpl>(std::move(data), static_cast<size_t>(w.nbytes));
}

size_t collect() {
  Producer& p = producer();
  std::lock_guard<std::mutex> lock(p.mutex);
  return p.collect_locked();
}

bool is_imported(const Storage& storage) {
  return storage && storage->data.deleter() == &Imported::release;
}

void check_producer(const Storage& storage) {
  if (!is_imported(storage)) return;
  const auto* imported = static_cast<const Imported*>(storage->data.context());
  if (imported->file->producer_gone())
    producer_gone("check_producer", imported->file->header().producer_pid);
}

}  // namespace ember::cuda::ipc
