#include "ember/core/shared_memory.h"
#include "ember/core/fork.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "ember/core/error.h"

namespace ember {
namespace {

struct Segment {
  void* base;
  size_t mapped;  // bytes mapped (at least 1: mmap cannot map nothing)
  size_t nbytes;
  int fd;
};

void release(void* ctx) {
  auto* s = static_cast<Segment*>(ctx);
  munmap(s->base, s->mapped);
  close(s->fd);
  delete s;
}

// Takes `fd` over: closes it when mapping fails.
DataPtr map(int fd, size_t nbytes, Device device, const char* op) {
  size_t mapped = std::max<size_t>(nbytes, 1);
  void* base = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    int err = errno;
    close(fd);
    if (err == ENOMEM)
      throw OutOfMemoryError(detail::str_cat("[", op, "] cannot map ", nbytes,
                                             " bytes of shared memory: ", std::strerror(err)),
                             nbytes);
    EMBER_FAIL("[", op, "] mmap of ", nbytes,
               " bytes of shared memory failed: ", std::strerror(err));
  }
  auto* s = new Segment{base, mapped, nbytes, fd};
  return DataPtr(base, s, release, device);
}

}  // namespace

DataPtr SharedMemoryAllocator::allocate(size_t nbytes) {
  return allocate(nbytes, Device(DeviceType::CPU, 0));
}

DataPtr SharedMemoryAllocator::allocate(size_t nbytes, Device device) {
  EMBER_CHECK(device.is_cpu(), "[share_memory_] shared memory is host memory, not ", device);
  int fd = memfd_create("ember-shared", MFD_CLOEXEC);
  EMBER_CHECK(fd >= 0, "[share_memory_] memfd_create failed: ", std::strerror(errno));
  if (ftruncate(fd, static_cast<off_t>(std::max<size_t>(nbytes, 1))) != 0) {
    int err = errno;
    close(fd);
    throw OutOfMemoryError(
        detail::str_cat("[share_memory_] cannot size a shared-memory segment to ", nbytes,
                        " bytes: ", std::strerror(err)),
        nbytes);
  }
  return map(fd, nbytes, device, "share_memory_");
}

SharedMemoryAllocator& shared_memory_allocator() {
  static ForkSafeLazy<SharedMemoryAllocator> a;
  return a.get([] { return new SharedMemoryAllocator(); });
}

bool is_shared_memory(const DataPtr& ptr) { return ptr.deleter() == &release; }

int shared_memory_fd(const DataPtr& ptr) {
  EMBER_ASSERT(is_shared_memory(ptr), "not a shared-memory segment");
  return static_cast<Segment*>(ptr.context())->fd;
}

size_t shared_memory_size(const DataPtr& ptr) {
  EMBER_ASSERT(is_shared_memory(ptr), "not a shared-memory segment");
  return static_cast<Segment*>(ptr.context())->nbytes;
}

DataPtr map_shared_memory(int fd, size_t nbytes, Device device) {
  struct stat st {};
  if (fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) < std::max<size_t>(nbytes, 1)) {
    close(fd);
    EMBER_FAIL("[multiprocessing] a received shared-memory segment holds ",
               static_cast<long long>(st.st_size), " bytes, fewer than the ", nbytes,
               " its tensor needs");
  }
  return map(fd, nbytes, device, "multiprocessing");
}

}  // namespace ember
