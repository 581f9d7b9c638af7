// The autograd graph's data: nodes (backward functions), the edges between them, and the autograd
// state of a tensor. The engine that runs the graph is in autograd/; the nodes of each op in ops/.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ember/core/hook_list.h"
#include "ember/core/small_vector.h"
#include "ember/core/tensor.h"

namespace ember {

/// Where a gradient flows: input `input_nr` of `node`.
struct Edge {
  std::shared_ptr<Node> node;
  uint32_t input_nr = 0;
  bool valid() const { return node != nullptr; }
};

/// A backward function: takes the gradients of the forward op's outputs and returns the gradients
/// of its inputs, one per entry of next_edges (undefined where an input needs none).
class Node : public std::enable_shared_from_this<Node> {
 public:
  Node();
  virtual ~Node() = default;
  virtual std::vector<Tensor> apply(std::vector<Tensor>&& grad_outputs) = 0;
  virtual std::string name() const = 0;
  /// Whether input i of the forward op needs a gradient.
  bool needs_input_grad(size_t i) const { return i < next_edges.size() && next_edges[i].valid(); }
  /// Frees saved tensors after backward (unless retain_graph).
  virtual void release_variables() {}

  std::vector<Edge> next_edges;
  /// dtype and shape of each forward input: the engine casts and checks gradients against them.
  struct InputMeta {
    DType dtype;
    Shape sizes;
  };
  std::vector<InputMeta> input_meta;
  uint32_t num_outputs = 1;
  uint64_t sequence_nr;  // creation order; the engine runs newer nodes first
  /// Device and stream the forward op ran on; backward runs there too.
  Device device{DeviceType::CPU, 0};
  uintptr_t stream = 0;

  /// Hooks run on the gradients before apply (DDP-style hooks use post-accumulate hooks instead).
  HookList<std::function<void(std::vector<Tensor>&)>> pre_hooks;

  /// The sequence_nr the next node will get (the profiler links an op to its backward by it).
  static uint64_t peek_sequence_nr() { return next_sequence_nr_.load(std::memory_order_relaxed); }

 private:
  static std::atomic<uint64_t> next_sequence_nr_;
};

struct AutogradMeta {
  bool requires_grad = false;  // set on leaves by the user
  bool retains_grad = false;
  Tensor grad;
  std::shared_ptr<Node> grad_fn;         // null for leaves
  uint32_t output_nr = 0;                // which output of grad_fn this tensor is
  std::weak_ptr<Node> grad_accumulator;  // leaves: the node that accumulates into .grad
  HookList<std::function<Tensor(const Tensor&)>> hooks;
  HookList<std::function<void(const Tensor&)>> post_accumulate_hooks;
};

/// The autograd state of `t`, created on first use.
AutogradMeta& autograd_meta(const Tensor& t);

/// The edge gradients of `t` flow into: its grad_fn, or its accumulator if it is a leaf that
/// requires grad; invalid otherwise.
Edge gradient_edge(const Tensor& t);

/// Makes the node that accumulates gradients into a leaf's .grad(). The layer above provides it
/// (autograd/accumulate_grad.cpp, at static initialisation), as torch/csrc/autograd sets c10's
/// AutogradMetaFactory, so that core does not depend on autograd.
using GradAccumulatorFactory = std::shared_ptr<Node> (*)(const Tensor& leaf);
void set_grad_accumulator_factory(GradAccumulatorFactory factory);

/// Makes `t` the output `output_nr` of `node`.
void set_history(const Tensor& t, const std::shared_ptr<Node>& node, uint32_t output_nr = 0);

}  // namespace ember
