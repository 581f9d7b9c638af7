// ember.distributed: process groups (Gloo, NCCL, MPI) and their collectives, and
// DistributedDataParallel, with torch.distributed's names and arguments.
#include <pybind11/chrono.h>

#include "bind.h"
#include "ember/distributed/ddp.h"
#include "ember/distributed/distributed.h"
#include "ember/distributed/distributed_sampler.h"
#include "ember/distributed/slurm.h"
#include "ember/distributed/sync_batch_norm.h"

namespace ember::python {
namespace {

namespace dist = distributed;

dist::ProcessGroup* group_of(py::handle h) {
  return h.is_none() ? nullptr : h.cast<dist::ProcessGroup*>();
}

// A collective: with async_op a Work to wait on, else None once it is done.
template <typename F>
py::object collective(bool async_op, F&& run) {
  std::shared_ptr<dist::Work> w;
  {
    ReleaseGil no_gil;
    w = run();
  }
  if (async_op) return py::cast(w);
  return py::none();
}

std::vector<Tensor> tensor_list(py::handle h) {
  std::vector<Tensor> out;
  if (h.is_none()) return out;
  for (py::handle t : h) out.push_back(as_tensor(t));
  return out;
}

std::chrono::milliseconds to_timeout(py::handle h) {
  if (h.is_none()) return dist::kDefaultTimeout;
  if (PyFloat_Check(h.ptr()) || PyLong_Check(h.ptr()))
    return std::chrono::milliseconds(static_cast<int64_t>(h.cast<double>() * 1000));
  return std::chrono::duration_cast<std::chrono::milliseconds>(
      h.cast<std::chrono::duration<double>>());
}

}  // namespace

void collect_tensors(py::handle h, std::vector<Tensor>& out) {
  if (is_tensor(h)) {
    out.push_back(as_tensor(h));
  } else if (py::isinstance<py::tuple>(h) || py::isinstance<py::list>(h)) {
    for (py::handle x : h) collect_tensors(x, out);
  } else if (py::isinstance<py::dict>(h)) {
    for (auto item : py::reinterpret_borrow<py::dict>(h)) collect_tensors(item.second, out);
  }
}

void bind_distributed(py::module_& m) {
  py::module_ d = m.def_submodule("_distributed", "ember.distributed's C++ part");
  py::enum_<dist::ReduceOp>(d, "ReduceOp")
      .value("SUM", dist::ReduceOp::SUM)
      .value("AVG", dist::ReduceOp::AVG)
      .value("PRODUCT", dist::ReduceOp::PRODUCT)
      .value("MIN", dist::ReduceOp::MIN)
      .value("MAX", dist::ReduceOp::MAX);
  py::class_<dist::Work, std::shared_ptr<dist::Work>>(d, "Work")
      .def(
          "wait",
          [](dist::Work& w, py::handle timeout) {
            std::chrono::milliseconds t =
                timeout.is_none() ? std::chrono::milliseconds::max() : to_timeout(timeout);
            ReleaseGil no_gil;
            w.wait(t);
            return true;
          },
          "timeout"_a = py::none())
      .def("is_completed", &dist::Work::is_completed)
      .def("is_success", &dist::Work::is_success);
  py::class_<dist::ProcessGroup, std::shared_ptr<dist::ProcessGroup>>(d, "ProcessGroup")
      .def("rank", &dist::ProcessGroup::rank)
      .def("size", &dist::ProcessGroup::size);

  // ember.utils.data.DistributedSampler's core; the Python class takes the dataset and the
  // defaults from the process group.
  py::class_<dist::DistributedSampler>(d, "_DistributedSampler")
      .def(py::init<size_t, int, int, bool, uint64_t, bool>(), "dataset_size"_a, "num_replicas"_a,
           "rank"_a, "shuffle"_a, "seed"_a, "drop_last"_a)
      .def("set_epoch", &dist::DistributedSampler::set_epoch, "epoch"_a)
      .def("set_start", &dist::DistributedSampler::set_start, "start"_a)
      .def("indices", &dist::DistributedSampler::indices)
      .def("__len__", &dist::DistributedSampler::size);

  d.def("available_backends", &dist::available_backends);
  d.def(
      "init_process_group",
      // PyTorch's parameters in PyTorch's order. backend=None is the device's default ("auto":
      // NCCL where each local rank has a GPU, else Gloo); device_id, group_name and pg_options
      // are accepted (the backend already binds each rank to its device).
      [](py::handle backend, py::handle init_method, py::handle timeout, int world_size, int rank,
         py::handle store, py::handle group_name, py::handle pg_options, py::handle device_id) {
        if (!store.is_none())
          throw py::value_error(
              "ember's init_process_group takes init_method (env://, tcp://, file://), not a "
              "store object");
        std::string name = backend.is_none() ? "auto" : backend.cast<std::string>();
        std::string method = init_method.is_none() ? "env://" : init_method.cast<std::string>();
        std::chrono::milliseconds t = to_timeout(timeout);
        ReleaseGil no_gil;
        dist::init_process_group(name, method, world_size, rank, t);
      },
      "backend"_a = py::none(), "init_method"_a = py::none(), "timeout"_a = py::none(),
      "world_size"_a = -1, "rank"_a = -1, "store"_a = py::none(), "group_name"_a = "",
      "pg_options"_a = py::none(), "device_id"_a = py::none());
  d.def("is_initialized", &dist::is_initialized);
  d.def(
      "destroy_process_group",
      [](py::handle) {
        ReleaseGil no_gil;
        dist::destroy_process_group();
      },
      "group"_a = py::none());
  d.def("_slurm_environment", &dist::slurm_environment);
  d.def(
      "get_rank", [](py::handle g) { return dist::get_rank(group_of(g)); }, "group"_a = py::none());
  d.def(
      "get_backend",
      [](py::handle g) {
        dist::ProcessGroup* group = group_of(g);
        return (group ? *group : dist::default_group()).backend();
      },
      "group"_a = py::none());
  d.def(
      "get_world_size", [](py::handle g) { return dist::get_world_size(group_of(g)); },
      "group"_a = py::none());
  d.def(
      "new_group",
      [](std::vector<int> ranks) {
        ReleaseGil no_gil;
        return dist::new_group(ranks);
      },
      "ranks"_a);
  d.def(
      "all_reduce",
      [](const Tensor& t, dist::ReduceOp op, py::handle group, bool async_op) {
        return collective(async_op,
                          [&] { return dist::all_reduce(t, op, group_of(group), async_op); });
      },
      "tensor"_a, "op"_a = dist::ReduceOp::SUM, "group"_a = py::none(), "async_op"_a = false);
  d.def(
      "broadcast",
      [](const Tensor& t, int src, py::handle group, bool async_op) {
        return collective(async_op,
                          [&] { return dist::broadcast(t, src, group_of(group), async_op); });
      },
      "tensor"_a, "src"_a, "group"_a = py::none(), "async_op"_a = false);
  d.def(
      "reduce",
      [](const Tensor& t, int dst, dist::ReduceOp op, py::handle group, bool async_op) {
        return collective(async_op,
                          [&] { return dist::reduce(t, dst, op, group_of(group), async_op); });
      },
      "tensor"_a, "dst"_a, "op"_a = dist::ReduceOp::SUM, "group"_a = py::none(),
      "async_op"_a = false);
  d.def(
      "all_gather",
      [](py::handle tensor_list_, const Tensor& t, py::handle group, bool async_op) {
        std::vector<Tensor> outs = tensor_list(tensor_list_);
        return collective(async_op,
                          [&] { return dist::all_gather(outs, t, group_of(group), async_op); });
      },
      "tensor_list"_a, "tensor"_a, "group"_a = py::none(), "async_op"_a = false);
  d.def(
      "gather",
      [](const Tensor& t, py::handle gather_list, int dst, py::handle group, bool async_op) {
        std::vector<Tensor> outs = tensor_list(gather_list);
        return collective(async_op,
                          [&] { return dist::gather(t, outs, dst, group_of(group), async_op); });
      },
      "tensor"_a, "gather_list"_a = py::none(), "dst"_a = 0, "group"_a = py::none(),
      "async_op"_a = false);
  d.def(
      "scatter",
      [](const Tensor& t, py::handle scatter_list, int src, py::handle group, bool async_op) {
        std::vector<Tensor> ins = tensor_list(scatter_list);
        return collective(async_op,
                          [&] { return dist::scatter(t, ins, src, group_of(group), async_op); });
      },
      "tensor"_a, "scatter_list"_a = py::none(), "src"_a = 0, "group"_a = py::none(),
      "async_op"_a = false);
  d.def(
      "reduce_scatter",
      [](const Tensor& out, py::handle input_list, dist::ReduceOp op, py::handle group,
         bool async_op) {
        std::vector<Tensor> ins = tensor_list(input_list);
        return collective(async_op, [&] {
          return dist::reduce_scatter(out, ins, op, group_of(group), async_op);
        });
      },
      "output"_a, "input_list"_a, "op"_a = dist::ReduceOp::SUM, "group"_a = py::none(),
      "async_op"_a = false);
  d.def(
      "all_gather_into_tensor",
      [](const Tensor& out, const Tensor& in, py::handle group, bool async_op) {
        return collective(async_op, [&] {
          return dist::all_gather_into_tensor(out, in, group_of(group), async_op);
        });
      },
      "output_tensor"_a, "input_tensor"_a, "group"_a = py::none(), "async_op"_a = false);
  d.def(
      "reduce_scatter_tensor",
      [](const Tensor& out, const Tensor& in, dist::ReduceOp op, py::handle group,
         bool async_op) {
        return collective(async_op, [&] {
          return dist::reduce_scatter_tensor(out, in, op, group_of(group), async_op);
        });
      },
      "output"_a, "input"_a, "op"_a = dist::ReduceOp::SUM, "group"_a = py::none(),
      "async_op"_a = false);
  d.def(
      "all_to_all_single",
      [](const Tensor& out, const Tensor& in, py::handle group, bool async_op) {
        return collective(async_op,
                          [&] { return dist::all_to_all(out, in, group_of(group), async_op); });
      },
      "output"_a, "input"_a, "group"_a = py::none(), "async_op"_a = false);
  d.def(
      "barrier",
      [](py::handle group, bool async_op) {
        return collective(async_op, [&] { return dist::barrier(group_of(group), async_op); });
      },
      "group"_a = py::none(), "async_op"_a = false);
  d.def(
      "send",
      [](const Tensor& t, int dst, py::handle group, int tag) {
        ReleaseGil no_gil;
        dist::send(t, dst, group_of(group), tag);
      },
      "tensor"_a, "dst"_a, "group"_a = py::none(), "tag"_a = 0);
  d.def(
      "recv",
      [](const Tensor& t, int src, py::handle group, int tag) {
        ReleaseGil no_gil;
        dist::recv(t, src, group_of(group), tag);
        return src;
      },
      "tensor"_a, "src"_a, "group"_a = py::none(), "tag"_a = 0);
  d.def(
      "isend",
      [](const Tensor& t, int dst, py::handle group, int tag) {
        ReleaseGil no_gil;
        return dist::isend(t, dst, group_of(group), tag);
      },
      "tensor"_a, "dst"_a, "group"_a = py::none(), "tag"_a = 0);
  d.def(
      "irecv",
      [](const Tensor& t, int src, py::handle group, int tag) {
        ReleaseGil no_gil;
        return dist::irecv(t, src, group_of(group), tag);
      },
      "tensor"_a, "src"_a, "group"_a = py::none(), "tag"_a = 0);

  py::class_<dist::SyncBatchNorm, nn::Module, std::shared_ptr<dist::SyncBatchNorm>> sync_bn(
      d, "SyncBatchNorm", py::dynamic_attr(),
      "batch normalisation with statistics all-reduced over the process group in training");
  sync_bn.attr("__ember_native__") = true;
  sync_bn
      .def(py::init([](int64_t num_features, double eps, double momentum, bool affine,
                       bool track_running_stats, py::handle process_group) {
             std::shared_ptr<dist::ProcessGroup> group;
             if (!process_group.is_none())
               group = process_group.cast<std::shared_ptr<dist::ProcessGroup>>();
             return std::make_shared<dist::SyncBatchNorm>(num_features, eps, momentum, affine,
                                                          track_running_stats, group);
           }),
           "num_features"_a, "eps"_a = 1e-5, "momentum"_a = 0.1, "affine"_a = true,
           "track_running_stats"_a = true, "process_group"_a = py::none())
      .def("_ember_args",
           [](const dist::SyncBatchNorm& b) {
             return py::make_tuple(b.num_features, b.eps, b.momentum, b.affine,
                                   b.track_running_stats);
           })
      .def_static(
          "convert_sync_batchnorm",
          [](py::handle module, py::handle process_group) {
            std::shared_ptr<dist::ProcessGroup> group;
            if (!process_group.is_none())
              group = process_group.cast<std::shared_ptr<dist::ProcessGroup>>();
            return module_object(
                dist::SyncBatchNorm::convert_sync_batchnorm(module_ptr(module), group));
          },
          "module"_a, "process_group"_a = py::none());
  py::class_<dist::DistributedDataParallel, nn::Module,
             std::shared_ptr<dist::DistributedDataParallel>>
      ddp(d, "DistributedDataParallel", py::dynamic_attr(),
          "Averages gradients across the process group while backward runs (bucketed "
          "all-reduces)");
  def_no_sync<dist::DistributedDataParallel>(d, "_NoSync", ddp);
  ddp
      .def(py::init([](py::handle module, py::handle device_ids, py::handle output_device,
                       bool broadcast_buffers, py::handle process_group, double bucket_cap_mb,
                       bool find_unused_parameters, bool gradient_as_bucket_view) {
             dist::DDPOptions o;
             o.broadcast_buffers = broadcast_buffers;
             o.bucket_cap_mb = bucket_cap_mb;
             o.find_unused_parameters = find_unused_parameters;
             o.gradient_as_bucket_view = gradient_as_bucket_view;
             if (!process_group.is_none())
               o.process_group = process_group.cast<std::shared_ptr<dist::ProcessGroup>>();
             std::shared_ptr<nn::Module> mm = module_ptr(module);
             ReleaseGil no_gil;  // broadcasts the parameters from rank 0
             return std::make_shared<dist::DistributedDataParallel>(mm, o);
           }),
           "module"_a, "device_ids"_a = py::none(), "output_device"_a = py::none(),
           "broadcast_buffers"_a = true, "process_group"_a = py::none(), "bucket_cap_mb"_a = 25.0,
           "find_unused_parameters"_a = false, "gradient_as_bucket_view"_a = false)
      .def_property_readonly(
          "module",
          [](const dist::DistributedDataParallel& ddp) { return module_object(ddp.module()); })
      .def("forward",
           [](py::handle self, py::args args, py::kwargs kwargs) {
             auto& ddp = self.cast<dist::DistributedDataParallel&>();
             {
               ReleaseGil no_gil;
               ddp.pre_forward();
             }
             py::object out = module_object(ddp.module())(*args, **kwargs);
             std::vector<Tensor> outs;
             collect_tensors(out, outs);
             ddp.post_forward(outs);
             return out;
           })
      .def("__call__", [](py::handle self, py::args args,
                          py::kwargs kwargs) { return self.attr("forward")(*args, **kwargs); });
  bind_fsdp(d);
}

}  // namespace ember::python
