// The backward engine: runs the graph from some outputs back to the leaves, in the order PyTorch
// does (a node runs once all its consumers have sent their gradients; newest first among ready).
#pragma once

#include <functional>
#include <vector>

#include "ember/core/tensor.h"

namespace ember::autograd {

/// Accumulates d(sum(outputs * grad_outputs)) / d(leaf) into every reachable leaf's .grad().
/// An undefined grad_output is ones for a one-element output, an error otherwise.
void backward(const std::vector<Tensor>& outputs, const std::vector<Tensor>& grad_outputs = {},
              bool retain_graph = false, bool create_graph = false);

/// Returns d(sum(outputs * grad_outputs)) / d(input) for each input, leaving .grad() untouched.
/// An input the outputs do not depend on is an error unless allow_unused (then undefined).
std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs = {}, bool retain_graph = false,
                         bool create_graph = false, bool allow_unused = false);

/// Runs `callback` when the backward pass running on this thread has run every node, before
/// backward() returns (PyTorch's queue_callback); an error outside a backward pass.
void queue_callback(std::function<void()> callback);

}  // namespace ember::autograd
