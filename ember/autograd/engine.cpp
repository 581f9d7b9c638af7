#include "ember/autograd/engine.h"

#include <optional>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "ember/core/autograd_meta.h"
#include "ember/core/device_backend.h"
#include "ember/core/grad_mode.h"
#include "ember/core/profiler_events.h"
#include "ember/ops/autograd_support.h"
#include "ember/ops/capture.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/reduce.h"

namespace ember {
namespace autograd {
namespace {

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

// One backward pass: the graph reachable from the outputs, the gradients in flight, and the
// callbacks to run once every node has run (PyTorch's GraphTask).
class GraphTask {
 public:
  GraphTask(bool retain_graph, const std::vector<Tensor>* inputs)
      : retain_graph_(retain_graph), inputs_(inputs) {}

  std::vector<Tensor> run(const std::vector<Tensor>& outputs,
                          const std::vector<Tensor>& grad_outputs, bool allow_unused) {
    seed_roots(outputs, grad_outputs);
    if (inputs_) add_captures();
    count_dependencies();
    if (inputs_) mark_needed();
    execute();
    run_final_callbacks();
    if (inputs_) check_captures(allow_unused);
    return std::move(captured_);
  }

  void queue_callback(std::function<void()> callback) {
    final_callbacks_.push_back(std::move(callback));
  }

 private:
  struct Capture {
    Node* node;
    uint32_t input_nr;
    size_t slot;
  };

  // The roots' nodes and their initial gradients (ones for a scalar output without one).
  void seed_roots(const std::vector<Tensor>& outputs, const std::vector<Tensor>& grad_outputs) {
    EMBER_CHECK(grad_outputs.empty() || grad_outputs.size() == outputs.size(), "[backward] got ",
                grad_outputs.size(), " gradients for ", outputs.size(), " outputs");
    for (size_t i = 0; i < outputs.size(); ++i) {
      const Tensor& out = outputs[i];
      EMBER_CHECK(out.defined(), "[backward] output ", i, " is undefined");
      Edge edge = history_edge(out);
      EMBER_CHECK(edge.valid(), "[backward] element ", i,
                  " of tensors does not require grad and does not have a grad_fn");
      Tensor g = grad_outputs.empty() ? Tensor() : grad_outputs[i];
      if (!g.defined()) {
        EMBER_CHECK(
            out.numel() == 1,
            "[backward] grad can be implicitly created only for scalar outputs, got an output of shape ",
            out.sizes());
        g = ones_like(out);
      } else {
        EMBER_CHECK(g.sizes() == out.sizes(), "[backward] mismatch in shape: grad_output[", i,
                    "] has a shape of ", g.sizes(), " and output[", i, "] has a shape of ",
                    out.sizes());
      }
      auto& buf = buffers_[edge.node.get()];
      buf.resize(edge.node->num_outputs);
      accumulate_into(buf[edge.input_nr], g);
      roots_.push_back(edge.node);
    }
  }

  // Where the requested input gradients arrive (autograd::grad).
  void add_captures() {
    captured_.resize(inputs_->size());
    for (size_t i = 0; i < inputs_->size(); ++i) {
      Edge e = history_edge((*inputs_)[i]);
      EMBER_CHECK(e.valid(), "[grad] input ", i, " does not require grad");
      captures_.push_back({e.node.get(), e.input_nr, i});
    }
  }

  // How many edges of the reachable graph point at each node; keeps every node alive meanwhile.
  void count_dependencies() {
    std::vector<Node*> stack;
    for (auto& r : roots_)
      if (keep_.emplace(r.get(), r).second) stack.push_back(r.get());
    while (!stack.empty()) {
      Node* n = stack.back();
      stack.pop_back();
      for (const Edge& e : n->next_edges) {
        if (!e.valid()) continue;
        ++deps_[e.node.get()];
        if (keep_.emplace(e.node.get(), e.node).second) stack.push_back(e.node.get());
      }
    }
  }

  // autograd::grad runs only the nodes on a path to a requested input and leaves the rest of the
  // graph intact for a later backward (PyTorch's exec_info). Depth-first, post-order: a node is
  // needed when one of its edges leads to a requested input's node or to a needed node.
  void mark_needed() {
    std::unordered_set<Node*> targets;
    for (const Capture& c : captures_) targets.insert(c.node);
    // One root at a time: a node met again is then always finished (the graph has no cycles),
    // never a root still waiting its turn (roots [y, y.exp()] lost exp's gradient that way).
    std::vector<std::pair<Node*, size_t>> path;  // (node, next edge to visit)
    for (auto& r : roots_) {
      if (!needed_.emplace(r.get(), false).second) continue;
      path.emplace_back(r.get(), 0);
      while (!path.empty()) {
        auto& [n, i] = path.back();
        if (i < n->next_edges.size()) {
          const Edge& e = n->next_edges[i++];
          if (e.valid() && needed_.emplace(e.node.get(), false).second)
            path.emplace_back(e.node.get(), 0);
          continue;
        }
        bool leads = false;
        for (const Edge& e : n->next_edges)
          if (e.valid()) leads |= targets.count(e.node.get()) > 0 || needed_[e.node.get()];
        needed_[n] = leads;
        path.pop_back();
      }
    }
  }

  bool runs(Node* n) { return !inputs_ || needed_[n]; }

  // Runs ready nodes, newest first, until none is left. A node is ready when every edge into it
  // has delivered (deps reaches zero); a root nothing points at is ready from the start.
  void execute() {
    auto newer = [](Node* a, Node* b) { return a->sequence_nr < b->sequence_nr; };
    std::priority_queue<Node*, std::vector<Node*>, decltype(newer)> ready(newer);
    std::unordered_set<Node*> queued;
    for (auto& r : roots_)
      if (deps_[r.get()] == 0 && queued.insert(r.get()).second) ready.push(r.get());
    while (!ready.empty()) {
      Node* node = ready.top();
      ready.pop();
      std::vector<Tensor> grads = std::move(buffers_[node]);
      buffers_.erase(node);
      grads.resize(node->num_outputs);
      capture(node, grads);
      bool any = false;
      for (const Tensor& g : grads) any |= g.defined();
      bool skip = !any || !runs(node);
      std::vector<Tensor> input_grads;
      if (!skip) input_grads = apply(*node, std::move(grads));
      if (!retain_graph_ && runs(node)) node->release_variables();
      for (size_t i = 0; i < node->next_edges.size(); ++i) {
        const Edge& e = node->next_edges[i];
        if (!e.valid()) continue;
        Node* next = e.node.get();
        if (!skip && input_grads[i].defined()) {
          auto& buf = buffers_[next];
          buf.resize(next->num_outputs);
          accumulate_into(buf[e.input_nr], validate(std::move(input_grads[i]), *node, i));
        }
        if (--deps_[next] == 0 && queued.insert(next).second) ready.push(next);
      }
    }
  }

  void capture(Node* node, const std::vector<Tensor>& grads) {
    for (const Capture& c : captures_)
      if (c.node == node && c.input_nr < grads.size() && grads[c.input_nr].defined())
        accumulate_into(captured_[c.slot], grads[c.input_nr]);
  }

  // The node's pre-hooks and backward, on its stream (Note [Backward stream]).
  static std::vector<Tensor> apply(Node& node, std::vector<Tensor>&& grads) {
    // The profiler's backward event, linked to the forward op by the node's sequence number.
    std::optional<profiler::RecordScope> record;
    if (profiler::active_session()) {
      record.emplace(profiler::EventKind::Backward, node.name());
      record->event().sequence_nr = static_cast<int64_t>(node.sequence_nr);
      record->event().device = node.device;
    }
    StreamScope scope(node);
    node.pre_hooks.for_each([&grads](auto& hook) { hook(grads); });
    std::vector<Tensor> input_grads = node.apply(std::move(grads));
    scope.hand_back(input_grads);
    EMBER_ASSERT(input_grads.size() == node.next_edges.size(), node.name(), " returned ",
                 input_grads.size(), " gradients for ", node.next_edges.size(), " inputs");
    return input_grads;
  }

  // A callback may queue further callbacks: they run too, in order.
  void run_final_callbacks() {
    for (size_t i = 0; i < final_callbacks_.size(); ++i) {
      std::function<void()> callback = std::move(final_callbacks_[i]);
      callback();
    }
    final_callbacks_.clear();
  }

  void check_captures(bool allow_unused) {
    for (size_t i = 0; i < captured_.size(); ++i)
      EMBER_CHECK(allow_unused || captured_[i].defined(),
                  "[grad] one of the differentiated tensors (input ", i,
                  ") appears to not have been used in the graph; "
                  "set allow_unused=true if this is the desired behavior");
  }

  bool retain_graph_;
  const std::vector<Tensor>* inputs_;
  std::vector<std::shared_ptr<Node>> roots_;
  std::unordered_map<Node*, std::vector<Tensor>> buffers_;  // gradients waiting for their node
  std::unordered_map<Node*, int> deps_;
  std::unordered_map<Node*, std::shared_ptr<Node>> keep_;
  std::unordered_map<Node*, bool> needed_;
  std::vector<Capture> captures_;
  std::vector<Tensor> captured_;
  std::vector<std::function<void()>> final_callbacks_;
};

// The backward pass running on this thread, innermost first (a hook may call backward).
thread_local GraphTask* current_task = nullptr;

std::vector<Tensor> run(const std::vector<Tensor>& outputs, const std::vector<Tensor>& grad_outputs,
                        bool retain_graph, bool create_graph, const std::vector<Tensor>* inputs,
                        bool allow_unused) {
  AutoGradMode mode(create_graph);
  GraphTask task(retain_graph, inputs);
  GraphTask* outer = current_task;
  current_task = &task;
  struct Restore {
    GraphTask* outer;
    ~Restore() { current_task = outer; }
  } restore{outer};
  return task.run(outputs, grad_outputs, allow_unused);
}

}  // namespace

void queue_callback(std::function<void()> callback) {
  EMBER_CHECK(
      current_task != nullptr,
      "[queue_callback] expected to be called during backward (from a hook), but no backward is running on this thread");
  current_task->queue_callback(std::move(callback));
}

namespace {
// A backward pass under a capture runs ops whose results land in .grad, outside the trace's
// values: a trace that holds one cannot be replayed (Note [Capture at the op entry]).
void mark_capture_break(const char* what) {
  if (OpCapture* c = detail::t_local_state.capture)
    c->mark_break(std::string(what) + " ran inside the traced function");
}
}  // namespace

void backward(const std::vector<Tensor>& outputs, const std::vector<Tensor>& grad_outputs,
              bool retain_graph, bool create_graph) {
  mark_capture_break("autograd's backward()");
  run(outputs, grad_outputs, retain_graph || create_graph, create_graph, nullptr, false);
}

std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs, bool retain_graph,
                         bool create_graph, bool allow_unused) {
  mark_capture_break("autograd.grad()");
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
