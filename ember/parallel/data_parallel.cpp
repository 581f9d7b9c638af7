#include "ember/parallel/data_parallel.h"

#include <exception>
#include <sstream>
#include <thread>

#include "ember/backend/cuda/device.h"
#include "ember/backend/cuda/stream.h"
#include "ember/core/grad_mode.h"
#include "ember/core/scope_guard.h"
#include "ember/core/thread_local_state.h"
#include "ember/ops/copy.h"
#include "ember/ops/join.h"

namespace ember::parallel {

std::vector<int64_t> chunk_sizes(int64_t n, size_t devices) {
  EMBER_CHECK(devices > 0, "[scatter] expected at least one device");
  EMBER_CHECK(n > 0, "[scatter] cannot split an empty batch over devices");
  int64_t k = std::min<int64_t>(n, static_cast<int64_t>(devices));
  std::vector<int64_t> sizes(static_cast<size_t>(k), n / k);
  for (int64_t i = 0; i < n % k; ++i) ++sizes[static_cast<size_t>(i)];
  return sizes;
}

std::vector<Tensor> scatter(const Tensor& input, const std::vector<Device>& devices, int64_t dim) {
  EMBER_CHECK(input.dim() > 0, "[scatter] cannot split a 0-dim tensor");
  int64_t d = wrap_dim(dim, input.dim(), "scatter");
  std::vector<int64_t> sizes = chunk_sizes(input.size(d), devices.size());
  std::vector<Tensor> out;
  int64_t start = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    out.push_back(input.narrow(d, start, sizes[i]).to(devices[i], /*non_blocking=*/true));
    start += sizes[i];
  }
  return out;
}

std::vector<std::vector<Tensor>> scatter(const std::vector<Tensor>& inputs,
                                         const std::vector<Device>& devices, int64_t dim) {
  EMBER_CHECK(!inputs.empty(), "[scatter] no inputs");
  std::vector<std::vector<Tensor>> out;
  for (size_t k = 0; k < inputs.size(); ++k) {
    std::vector<Tensor> chunks = scatter(inputs[k], devices, dim);
    if (k == 0) out.resize(chunks.size());
    EMBER_CHECK(chunks.size() == out.size(), "[scatter] input ", k, " has a different batch size (",
                inputs[k].sizes(), ") than input 0 (", inputs[0].sizes(), ")");
    for (size_t i = 0; i < chunks.size(); ++i) out[i].push_back(chunks[i]);
  }
  return out;
}

Tensor gather(const std::vector<Tensor>& outputs, Device device, int64_t dim) {
  EMBER_CHECK(!outputs.empty(), "[gather] no outputs");
  std::vector<Tensor> moved;
  bool scalars = outputs[0].dim() == 0;
  for (const Tensor& t : outputs) {
    EMBER_CHECK((t.dim() == 0) == scalars, "[gather] outputs mix scalars and tensors");
    moved.push_back(scalars ? t.to(device).reshape({1}) : t.to(device));
  }
  return cat(moved, scalars ? 0 : dim);
}

std::vector<std::shared_ptr<nn::Module>> replicate(const std::shared_ptr<nn::Module>& module,
                                                   const std::vector<Device>& devices) {
  std::vector<std::shared_ptr<nn::Module>> replicas;
  std::vector<Tensor*> params = module->parameter_slots(), buffers = module->buffer_slots();
  for (const Device& d : devices) {
    std::shared_ptr<nn::Module> r = module->clone_structure();
    std::vector<Tensor*> rp = r->parameter_slots(), rb = r->buffer_slots();
    EMBER_ASSERT(rp.size() == params.size() && rb.size() == buffers.size(), module->name(),
                 "::clone_impl made a module with different tensors");
    // to() is differentiable: gradients at the replica's parameters reach the original's. On the
    // original's own device it returns the tensor itself.
    // A None parameter or buffer (register_parameter("bias", None)) stays None.
    auto on = [&d](const Tensor& t) { return t.defined() ? t.to(d) : Tensor(); };
    for (size_t i = 0; i < params.size(); ++i) *rp[i] = on(*params[i]);
    {
      NoGradGuard no_grad;
      for (size_t i = 0; i < buffers.size(); ++i) *rb[i] = on(*buffers[i]);
    }
    replicas.push_back(std::move(r));
  }
  return replicas;
}

void run_on_devices(const std::vector<Device>& devices, const std::function<void(size_t)>& fn) {
  std::vector<std::exception_ptr> errors(devices.size());
  // Grad mode and autocast apply on the devices' threads as in the caller (as in PyTorch).
  ThreadLocalState caller = ThreadLocalState::capture();
  // Each thread makes the caller's current stream of its device current for itself.
  std::vector<uintptr_t> streams(devices.size(), 0);
  for (size_t i = 0; i < devices.size(); ++i)
    if (devices[i].is_cuda()) streams[i] = cuda::current_stream(devices[i].index()).handle();
  auto run = [&](size_t i) {
    try {
      ThreadLocalStateGuard state(caller);
      if (devices[i].is_cuda()) {
        cuda::DeviceGuard guard(devices[i]);
        cuda::StreamGuard stream(cuda::Stream(devices[i].index(), streams[i]));
        fn(i);
      } else {
        fn(i);
      }
    } catch (...) {
      errors[i] = std::current_exception();
    }
  };
  if (devices.size() == 1) {
    run(0);
  } else {
    std::vector<std::thread> threads;
    // Also when a thread cannot start: the started ones finish before that error is reported.
    ScopeGuard join([&] {
      for (auto& t : threads) t.join();
    });
    for (size_t i = 0; i < devices.size(); ++i) threads.emplace_back(run, i);
  }
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

std::vector<Tensor> parallel_apply(const std::vector<std::shared_ptr<nn::Module>>& replicas,
                                   const std::vector<Tensor>& inputs,
                                   const std::vector<Device>& devices) {
  EMBER_CHECK(replicas.size() == inputs.size() && inputs.size() <= devices.size(),
              "[parallel_apply] got ", replicas.size(), " replicas, ", inputs.size(),
              " inputs and ", devices.size(), " devices");
  std::vector<Tensor> outputs(replicas.size());
  std::vector<Device> used(devices.begin(), devices.begin() + static_cast<long>(replicas.size()));
  run_on_devices(used, [&](size_t i) { outputs[i] = (*replicas[i])(inputs[i]); });
  return outputs;
}

Tensor data_parallel(const std::shared_ptr<nn::Module>& module, const Tensor& input,
                     const std::vector<Device>& devices, std::optional<Device> output_device,
                     int64_t dim) {
  EMBER_CHECK(!devices.empty(), "[data_parallel] expected at least one device");
  Device out = output_device ? *output_device : devices[0];
  std::vector<Tensor> chunks = scatter(input, devices, dim);
  std::vector<Device> used(devices.begin(), devices.begin() + static_cast<long>(chunks.size()));
  std::vector<std::shared_ptr<nn::Module>> replicas = replicate(module, used);
  return gather(parallel_apply(replicas, chunks, used), out, dim);
}

std::vector<Device> parse_devices(const std::string& list) {
  std::vector<Device> out;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(resolve_device(Device(item)));
  EMBER_CHECK(!out.empty(),
              "[devices] expected a comma-separated list such as cuda:0,cuda:1, got '", list, "'");
  for (size_t i = 0; i < out.size(); ++i)
    for (size_t j = i + 1; j < out.size(); ++j)
      EMBER_CHECK(out[i] != out[j], "[devices] ", out[i], " appears twice in '", list, "'");
  return out;
}

}  // namespace ember::parallel

namespace ember::nn {

DataParallel::DataParallel(std::shared_ptr<Module> module, std::vector<Device> device_ids,
                           std::optional<Device> output_device, int64_t dim)
    : module_(register_module("module", std::move(module))),
      device_ids_(std::move(device_ids)),
      output_device_(Device(kCPU, 0)),
      dim_(dim) {
  EMBER_CHECK(!device_ids_.empty(), "[DataParallel] expected at least one device id");
  for (Device& d : device_ids_) d = resolve_device(d);
  output_device_ = output_device ? resolve_device(*output_device) : device_ids_[0];
}

Tensor DataParallel::forward(const Tensor& x) {
  check_module_device();
  if (device_ids_.size() == 1) return (*module_)(x.to(device_ids_[0]));
  return parallel::data_parallel(module_, x, device_ids_, output_device_, dim_);
}

void DataParallel::check_module_device() const {
  // The module's parameters and buffers must already be on device_ids[0], as in PyTorch.
  for (auto& [name, t] : module_->named_parameters())
    EMBER_CHECK(t.device() == device_ids_[0],
                "[DataParallel] module must have its parameters and buffers on device ",
                device_ids_[0], " (device_ids[0]) but found parameter '", name, "' on device ",
                t.device());
  for (auto& [name, t] : module_->named_buffers())
    EMBER_CHECK(t.device() == device_ids_[0],
                "[DataParallel] module must have its parameters and buffers on device ",
                device_ids_[0], " (device_ids[0]) but found buffer '", name, "' on device ",
                t.device());
}

std::shared_ptr<Module> DataParallel::clone_impl() const {
  return std::make_shared<DataParallel>(module_->clone_structure(), device_ids_, output_device_,
                                        dim_);
}

}  // namespace ember::nn
