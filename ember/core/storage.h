// The memory behind one or more tensors (views share it), with the version counter that lets
// autograd notice a saved tensor modified in place.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "ember/core/allocator.h"

namespace ember {

struct StorageImpl {
  StorageImpl(DataPtr data_, size_t nbytes_) : data(std::move(data_)), nbytes(nbytes_) {}
  DataPtr data;
  size_t nbytes;
  std::atomic<uint32_t> version{0};  // bumped by every in-place op on any view of this storage
};

using Storage = std::shared_ptr<StorageImpl>;

}  // namespace ember
