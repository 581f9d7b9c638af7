// Data parallelism in one process (torch.nn.parallel): a batch is split across devices, the module
// replicated onto each, the replicas run in parallel threads, and the outputs gathered on one
// device. Gradients of the replicas flow back into the original parameters. Works on GPUs and on
// virtual CPU devices (EMBER_CPU_DEVICES), so it is tested everywhere.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "ember/nn/module.h"

namespace ember::parallel {

/// Sizes of the chunks `n` items make on `devices` devices: balanced (9 on 4: 3, 2, 2, 2), and
/// never an empty chunk (3 items on 4 devices: 1, 1, 1 on three devices).
std::vector<int64_t> chunk_sizes(int64_t n, size_t devices);

/// Splits `input` along `dim` and moves chunk i to devices[i] (differentiably).
std::vector<Tensor> scatter(const Tensor& input, const std::vector<Device>& devices,
                            int64_t dim = 0);
/// Splits each tensor the same way: result[i] holds every input's chunk for devices[i].
std::vector<std::vector<Tensor>> scatter(const std::vector<Tensor>& inputs,
                                         const std::vector<Device>& devices, int64_t dim = 0);
/// Concatenates the outputs on `device` along `dim`; 0-dim outputs (losses) become a vector.
Tensor gather(const std::vector<Tensor>& outputs, Device device, int64_t dim = 0);

/// Copies of `module` on each device whose parameters are the original's, moved there: gradients
/// reaching a replica's parameters flow into the original's. On the device the module is on, the
/// replica shares the original's parameters and buffers (in-place buffer updates persist).
std::vector<std::shared_ptr<nn::Module>> replicate(const std::shared_ptr<nn::Module>& module,
                                                   const std::vector<Device>& devices);

/// Runs fn(i) for every device in a thread of its own (on the caller's thread when there is one
/// device), each under devices[i]'s guard, the caller's current stream of that device and the
/// caller's grad mode; rethrows the first error once all are done. parallel_apply runs the
/// replicas through it, and the Python binding runs replicas with any arguments.
void run_on_devices(const std::vector<Device>& devices, const std::function<void(size_t)>& fn);

/// Runs replicas[i]->forward(inputs[i]) in one thread per replica, each under its device's guard
/// and current stream and with the caller's grad mode; rethrows the first error once all are done.
std::vector<Tensor> parallel_apply(const std::vector<std::shared_ptr<nn::Module>>& replicas,
                                   const std::vector<Tensor>& inputs,
                                   const std::vector<Device>& devices);

/// scatter, replicate, parallel_apply, gather in one call (torch.nn.parallel.data_parallel).
Tensor data_parallel(const std::shared_ptr<nn::Module>& module, const Tensor& input,
                     const std::vector<Device>& devices,
                     std::optional<Device> output_device = std::nullopt, int64_t dim = 0);

/// "cuda:0,cuda:1" or "cpu:0,cpu:1" -> devices (each checked to exist).
std::vector<Device> parse_devices(const std::string& list);

}  // namespace ember::parallel

namespace ember::nn {

/// torch.nn.DataParallel: wraps a module whose parameters are on device_ids[0]; each forward
/// splits the batch over the devices. With one device it calls the module directly.
class DataParallel : public Module {
 public:
  DataParallel(std::shared_ptr<Module> module, std::vector<Device> device_ids,
               std::optional<Device> output_device = std::nullopt, int64_t dim = 0);
  Tensor forward(const Tensor& x) override;
  std::string name() const override { return "DataParallel"; }
  const std::shared_ptr<Module>& module() const { return module_; }
  const std::vector<Device>& device_ids() const { return device_ids_; }
  Device output_device() const { return output_device_; }
  int64_t dim() const { return dim_; }
  /// Throws unless the module's parameters and buffers are all on device_ids[0], as forward needs.
  void check_module_device() const;

 protected:
  std::shared_ptr<Module> clone_impl() const override;

 private:
  std::shared_ptr<Module> module_;
  std::vector<Device> device_ids_;
  Device output_device_;
  int64_t dim_;
};

}  // namespace ember::nn
