// ember.multiprocessing's C++ part: a tensor as the handle of its memory, and back, for the
// pickler of Python's multiprocessing (ember/multiprocessing/reductions.py). A CPU tensor travels
// as the descriptor of its shared-memory segment (Tensor::share_memory_, Note [Anonymous shared
// memory]); a CUDA tensor as a CUDA IPC handle (Note [CUDA IPC]). Either way the receiver's tensor
// is the sender's memory: nothing is copied.
#include "bind.h"
#include "ember/backend/cuda/ipc.h"
#include "ember/core/shared_memory.h"

namespace ember::python {
namespace {

py::tuple geometry(const Tensor& t) {
  return py::make_tuple(std::vector<int64_t>(t.sizes().begin(), t.sizes().end()),
                        std::vector<int64_t>(t.strides().begin(), t.strides().end()),
                        t.storage_offset(), dtype_object(t.dtype()), t.device().str(),
                        t.requires_grad());
}

Tensor rebuild(Storage storage, const std::vector<int64_t>& sizes,
               const std::vector<int64_t>& strides, int64_t offset, DType dtype, Device device,
               bool requires_grad) {
  Shape sz(sizes), st(strides);
  size_t reach = storage_bytes(sz, st, offset, dtype, "rebuild");
  EMBER_CHECK(reach <= storage->nbytes, "[multiprocessing] the received tensor reaches ", reach,
              " bytes of a ", storage->nbytes, "-byte segment");
  Tensor t(std::make_shared<TensorImpl>(std::move(storage), sz, st, offset, dtype, device));
  if (requires_grad) t.requires_grad_(true);
  return t;
}

}  // namespace

void bind_multiprocessing(py::module_& m) {
  py::module_ mp = m.def_submodule("_multiprocessing", "ember.multiprocessing's C++ part");
  mp.def(
      "share_cpu",
      [](Tensor& t) {
        // In place, as PyTorch's queues do: later writes on either side are seen on the other.
        {
          ReleaseGil no_gil;
          if (!t.is_shared()) t.share_memory_();
        }
        const DataPtr& data = t.storage()->data;
        return py::make_tuple(shared_memory_fd(data), shared_memory_size(data), geometry(t));
      },
      "tensor"_a,
      "Moves t into shared memory (in place) and returns (fd, segment bytes, geometry); the fd "
      "stays t's: the caller duplicates it.");
  mp.def(
      "rebuild_cpu",
      [](int fd, size_t nbytes, const std::vector<int64_t>& sizes,
         const std::vector<int64_t>& strides, int64_t offset, py::handle dtype,
         const std::string& device, bool requires_grad) {
        Device d(device);
        DataPtr data = map_shared_memory(fd, nbytes, d);
        auto storage = std::make_shared<StorageImpl>(std::move(data), nbytes);
        return rebuild(std::move(storage), sizes, strides, offset, to_dtype(dtype), d,
                       requires_grad);
      },
      "fd"_a, "nbytes"_a, "sizes"_a, "strides"_a, "offset"_a, "dtype"_a, "device"_a,
      "requires_grad"_a, "Maps the segment fd (taking it over) as a tensor of that geometry.");
  mp.def(
      "share_cuda",
      [](const Tensor& t) {
        cuda::ipc::ExportedStorage e = cuda::ipc::export_storage(t.storage());
        return py::make_tuple(py::bytes(e.handle), e.ref_fd, geometry(t));
      },
      "tensor"_a,
      "A CUDA IPC handle of t's segment and the reference-count file's fd (the caller "
      "duplicates it); t's memory is kept for the consumer until it releases it.");
  mp.def(
      "rebuild_cuda",
      [](py::bytes handle, int ref_fd, const std::vector<int64_t>& sizes,
         const std::vector<int64_t>& strides, int64_t offset, py::handle dtype,
         const std::string& device, bool requires_grad) {
        Storage s = cuda::ipc::import_storage(std::string(handle), ref_fd);
        return rebuild(std::move(s), sizes, strides, offset, to_dtype(dtype), Device(device),
                       requires_grad);
      },
      "handle"_a, "ref_fd"_a, "sizes"_a, "strides"_a, "offset"_a, "dtype"_a, "device"_a,
      "requires_grad"_a);
  mp.def("collect_cuda", &cuda::ipc::collect,
         "Lets go of CUDA storages every consumer has released; returns how many are held.");
}

}  // namespace ember::python
