// CUDA IPC: a CUDA storage put on a multiprocessing queue travels as a handle, not a copy (issue
// 10, deliverable 4; PyTorch's torch/multiprocessing/reductions.py and CudaIPCTypes.cpp). Note
// [CUDA IPC]
// - The producer shares the whole caching-allocator segment that holds the storage
//   (cudaIpcGetMemHandle wants a cudaMalloc base) plus the storage's offset in it, and an
//   interprocess event recorded on its current stream after the last write: the consumer's stream
//   waits for it before using the memory.
// - The consumer opens each segment once (cudaIpcOpenMemHandle, cached per handle and closed when
//   its last storage goes) and synchronises its stream before releasing a storage.
// - The producer keeps every sent storage alive, so its block stays out of the allocator's free
//   lists, until the consumer released it: each send takes a slot in a reference-count file (a
//   memfd, mapped on both sides, sent along with the handle); the consumer's release decrements
//   the slot, and the producer lets go of storages whose slot reached 0 at its next send, and at
//   collect().
// - The file's header says whether the producer is alive. A producer exiting normally waits (up to
//   kExitWaitSeconds) for its consumers, then clears the flag; one that is killed cannot, so the
//   consumer also checks that the producer's pid exists. Importing from a producer that has gone,
//   and check_producer() on a storage from one, are clear errors instead of reads of freed memory.
// CUDA cannot be used in a process forked after CUDA started: children that receive CUDA tensors
// are started with the spawn start method.
// The interface is free of CUDA types so that ember/multiprocessing uses it in every build; the
// no-CUDA build's version (backend/no_cuda/ipc.cpp) says CUDA is not built.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>

#include "ember/core/storage.h"

namespace ember::cuda::ipc {

/// What a consumer needs to open a producer's storage: opaque bytes (handles, device, offset,
/// sizes, the producer's pid, the reference slot) and the reference-count file's descriptor,
/// which stays the producer's (the queue sends a duplicate).
struct ExportedStorage {
  std::string handle;
  int ref_fd = -1;
};

/// Producer: shares `storage` (memory from a CUDA caching allocator) and keeps it alive until the
/// consumer released it. Each call is for one consumer.
ExportedStorage export_storage(const Storage& storage);

/// Consumer: the producer's storage, on the same device index. Takes ownership of `ref_fd` (also
/// when it throws). Throws if the producer has exited.
Storage import_storage(const std::string& handle, int ref_fd);

/// Producer: lets go of the sent storages that every consumer has released; returns how many
/// are still held for consumers.
size_t collect();

/// Consumer: throws a clear error if `storage` came from a producer that has exited since (its
/// memory is gone); does nothing for any other storage.
void check_producer(const Storage& storage);

/// Whether `storage` was received from another process through CUDA IPC.
bool is_imported(const Storage& storage);

/// How long a producer exiting with storages still held by consumers waits for them.
inline constexpr double kExitWaitSeconds = 10.0;

}  // namespace ember::cuda::ipc
