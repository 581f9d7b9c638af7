// Anonymous shared memory for CPU tensors (Tensor::share_memory_, multiprocessing queues). Note
// [Anonymous shared memory]: every segment is a memfd, which has no name in /dev/shm; it lives as
// long as some process holds its descriptor or a mapping of it, so nothing can outlive the
// processes that use it, even when they are killed. A segment travels to another process by its
// descriptor (inherited across fork, or sent over a UNIX socket with SCM_RIGHTS).
#pragma once

#include <cstddef>

#include "ember/core/allocator.h"

namespace ember {

/// Allocates each request as its own memfd segment, mapped shared.
class SharedMemoryAllocator final : public Allocator {
 public:
  /// Memory on cpu:0.
  DataPtr allocate(size_t nbytes) override;
  /// Memory recorded as belonging to `device` (a virtual CPU device).
  DataPtr allocate(size_t nbytes, Device device);
};

SharedMemoryAllocator& shared_memory_allocator();

/// Whether `ptr` is a shared-memory segment made by ember (here or in another process).
bool is_shared_memory(const DataPtr& ptr);
/// The descriptor of a shared-memory segment; `ptr` keeps owning it.
int shared_memory_fd(const DataPtr& ptr);
/// Size in bytes of the segment behind `ptr`, as its owner created it.
size_t shared_memory_size(const DataPtr& ptr);
/// Maps the segment `fd` (which it takes over, closing it on error too); `nbytes` must not exceed
/// the segment's size.
DataPtr map_shared_memory(int fd, size_t nbytes, Device device);

}  // namespace ember
