#include "ember/autograd/engine.h"

#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "ember/core/autograd_meta.h"
#include "ember/core/device_backend.h"
#include "ember/core/grad_mode.h"
#include "ember/ops/autograd_support.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/reduce.h"

namespace ember {
namespace autograd {
namespace {

struct Capture {
  Node* node;
  uint32_t input_nr;
  size_t slot;
};

// Makes a gradient fit the forward input it is for: same dtype, same shape (summing a broadcast).
Tensor validate(Tensor g, const Node& node, size_t i) {
  const Node::InputMeta& meta = node.input_meta[i];
  if (g.sizes() != meta.sizes) {
    Shape expanded = broadcast_shapes(meta.sizes, g.sizes(), "backward");
    EMBER_CHECK(expanded == g.sizes(), "[backward] function ", node.name(),
                " returned an invalid gradient at index ", i, " - got ", g.sizes(),
                " but expected shape compatible with ", meta.sizes);
    g = sum_to(g, meta.sizes);
  }
  if (g.dtype() != meta.dtype) g = g.to(meta.dtype);
  return g;
}

// Note [Backward stream]
// A node's backward runs on the stream its forward op ran on, so a model run on a side stream is
// differentiated there too. The gradients it receives were made on the streams current when the
// nodes before it ran: its stream first waits for that work. The gradients it returns go back to
// the engine's stream: that stream waits for them, and their memory is kept from reuse on the
// node's stream until the engine's stream is done with it.
class StreamScope {
 public:
  explicit StreamScope(const Node& node) : device_(node.device), stream_(node.stream) {
    if (!device_.is_cuda()) return;
    DeviceBackend& b = device_backend(kCUDA);
    previous_ = b.current_stream(device_.index());
    if (previous_ == stream_) return;
    b.stream_wait(device_.index(), stream_, previous_);
    b.set_current_stream(device_.index(), stream_);
    switched_ = true;
  }
  /// Hands the node's results to the engine's stream.
  void hand_back(const std::vector<Tensor>& grads) const {
    if (!switched_) return;
    device_backend(kCUDA).stream_wait(device_.index(), previous_, stream_);
    for (const Tensor& g : grads)
      if (g.defined() && g.device() == device_) g.record_stream(previous_);
  }
  ~StreamScope() {
    if (!switched_) return;
    try {
      device_backend(kCUDA).set_current_stream(device_.index(), previous_);
    } catch (...) {
    }
  }

 private:
  Device device_;
  uintptr_t stream_;
  uintptr_t previous_ = 0;
  bool switched_ = false;
};

void accumulate_into(Tensor& slot, const Tensor& g) { slot = slot.defined() ? slot + g : g; }

std::vector<Tensor> run(const std::vector<Tensor>& outputs, const std::vector<Tensor>& grad_outputs,
                        bool retain_graph, bool create_graph, const std::vector<Tensor>* inputs,
                        bool allow_unused) {
  EMBER_CHECK(grad_outputs.empty() || grad_outputs.size() == outputs.size(), "[backward] got ",
              grad_outputs.size(), " gradients for ", outputs.size(), " outputs");
  AutoGradMode mode(create_graph);

  // Roots and their initial gradients.
  std::unordered_map<Node*, std::vector<Tensor>> buffers;
  std::vector<std::shared_ptr<Node>> roots;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& out = outputs[i];
    EMBER_CHECK(out.defined(), "[backward] output ", i, " is undefined");
    Edge edge = history_edge(out);
    EMBER_CHECK(edge.valid(), "[backward] element ", i,
                " of tensors does not require grad and "
                "does not have a grad_fn");
    Tensor g = grad_outputs.empty() ? Tensor() : grad_outputs[i];
    if (!g.defined()) {
      EMBER_CHECK(out.numel() == 1,
                  "[backward] grad can be implicitly created only for scalar "
                  "outputs, got an output of shape ",
                  out.sizes());
      g = ones_like(out);
    } else {
      EMBER_CHECK(g.sizes() == out.sizes(), "[backward] mismatch in shape: grad_output[", i,
                  "] has a shape of ", g.sizes(), " and output[", i, "] has a shape of ",
                  out.sizes());
    }
    auto& buf = buffers[edge.node.get()];
    buf.resize(edge.node->num_outputs);
    accumulate_into(buf[edge.input_nr], g);
    roots.push_back(edge.node);
  }

  // Where the requested input gradients arrive (autograd::grad).
  std::vector<Capture> captures;
  std::vector<Tensor> captured;
  if (inputs) {
    captured.resize(inputs->size());
    for (size_t i = 0; i < inputs->size(); ++i) {
      Edge e = history_edge((*inputs)[i]);
      EMBER_CHECK(e.valid(), "[grad] input ", i, " does not require grad");
      captures.push_back({e.node.get(), e.input_nr, i});
    }
  }

  // Dependencies: how many edges of the reachable graph point at each node.
  std::unordered_map<Node*, int> deps;
  std::unordered_map<Node*, std::shared_ptr<Node>> keep;  // nodes alive while we run
  std::vector<Node*> stack;
  for (auto& r : roots) {
    if (keep.emplace(r.get(), r).second) stack.push_back(r.get());
  }
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (const Edge& e : n->next_edges) {
      if (!e.valid()) continue;
      ++deps[e.node.get()];
      if (keep.emplace(e.node.get(), e.node).second) stack.push_back(e.node.get());
    }
  }

  // autograd::grad runs only the nodes on a path to a requested input and leaves the rest of the
  // graph intact for a later backward (PyTorch's exec_info). Depth-first, post-order: a node is
  // needed when one of its edges leads to a requested input's node or to a needed node.
  std::unordered_map<Node*, bool> needed;
  if (inputs) {
    std::unordered_set<Node*> targets;
    for (const Capture& c : captures) targets.insert(c.node);
    std::vector<std::pair<Node*, size_t>> path;  // (node, next edge to visit)
    for (auto& r : roots)
      if (needed.emplace(r.get(), false).second) path.emplace_back(r.get(), 0);
    while (!path.empty()) {
      auto& [n, i] = path.back();
      if (i < n->next_edges.size()) {
        const Edge& e = n->next_edges[i++];
        if (e.valid() && needed.emplace(e.node.get(), false).second)
          path.emplace_back(e.node.get(), 0);
        continue;
      }
      bool leads = false;
      for (const Edge& e : n->next_edges)
        if (e.valid()) leads |= targets.count(e.node.get()) > 0 || needed[e.node.get()];
      needed[n] = leads;
      path.pop_back();
    }
  }
  auto runs = [&](Node* n) { return !inputs || needed[n]; };

  auto newer = [](Node* a, Node* b) { return a->sequence_nr < b->sequence_nr; };
  std::priority_queue<Node*, std::vector<Node*>, decltype(newer)> ready(newer);
  for (auto& r : roots)
    if (deps[r.get()] == 0) ready.push(r.get());
  std::unordered_map<Node*, bool> queued;
  for (auto& r : roots) queued[r.get()] = deps[r.get()] == 0;

  while (!ready.empty()) {
    Node* node = ready.top();
    ready.pop();
    std::vector<Tensor> grads = std::move(buffers[node]);
    buffers.erase(node);
    grads.resize(node->num_outputs);
    for (const Capture& c : captures)
      if (c.node == node && c.input_nr < grads.size() && grads[c.input_nr].defined())
        accumulate_into(captured[c.slot], grads[c.input_nr]);
    bool any = false;
    for (const Tensor& g : grads) any |= g.defined();
    std::vector<Tensor> input_grads;
    bool skip = !any || !runs(node);
    if (!skip) {
      StreamScope scope(*node);
      for (auto& hook : node->pre_hooks) hook(grads);
      input_grads = node->apply(std::move(grads));
      scope.hand_back(input_grads);
      EMBER_ASSERT(input_grads.size() == node->next_edges.size(), node->name(), " returned ",
                   input_grads.size(), " gradients for ", node->next_edges.size(), " inputs");
    }
    if (!retain_graph && runs(node)) node->release_variables();
    for (size_t i = 0; i < node->next_edges.size(); ++i) {
      const Edge& e = node->next_edges[i];
      if (!e.valid()) continue;
      Node* next = e.node.get();
      if (!skip && i < input_grads.size() && input_grads[i].defined()) {
        auto& buf = buffers[next];
        buf.resize(next->num_outputs);
        accumulate_into(buf[e.input_nr], validate(std::move(input_grads[i]), *node, i));
      }
      if (--deps[next] == 0 && !queued[next]) {
        queued[next] = true;
        ready.push(next);
      }
    }
  }

  if (inputs) {
    for (size_t i = 0; i < captured.size(); ++i)
      EMBER_CHECK(allow_unused || captured[i].defined(),
                  "[grad] one of the differentiated tensors "
                  "(input ",
                  i,
                  ") appears to not have been used in the graph; set "
                  "allow_unused=true if this is the desired behavior");
  }
  return captured;
}

}  // namespace

void backward(const std::vector<Tensor>& outputs, const std::vector<Tensor>& grad_outputs,
              bool retain_graph, bool create_graph) {
  run(outputs, grad_outputs, retain_graph || create_graph, create_graph, nullptr, false);
}

std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs, bool retain_graph,
                         bool create_graph, bool allow_unused) {
  return run(outputs, grad_outputs, retain_graph || create_graph, create_graph, &inputs,
             allow_unused);
}

}  // namespace autograd

void Tensor::backward(const Tensor& gradient, bool retain_graph, bool create_graph) const {
  autograd::backward({*this},
                     gradient.defined() ? std::vector<Tensor>{gradient} : std::vector<Tensor>{},
                     retain_graph, create_graph);
}

}  // namespace ember
