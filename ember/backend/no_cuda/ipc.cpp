// CUDA IPC in a build without CUDA (Note [CUDA IPC], backend/cuda/ipc.h): no storage can be CUDA,
// so exporting or importing one is an error that says why.
#include <unistd.h>

#include "ember/backend/cuda/ipc.h"
#include "ember/core/error.h"

namespace ember::cuda::ipc {

ExportedStorage export_storage(const Storage&) {
  EMBER_FAIL("[Queue::put] cannot send a CUDA tensor: ember was built without CUDA support");
}

Storage import_storage(const std::string&, int ref_fd) {
  if (ref_fd >= 0) close(ref_fd);
  EMBER_FAIL("[Queue::get] received a CUDA tensor, but ember was built without CUDA support");
}

size_t collect() { return 0; }
void check_producer(const Storage&) {}
bool is_imported(const Storage&) { return false; }

}  // namespace ember::cuda::ipc
