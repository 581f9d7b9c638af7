// Graphs from traces (Note [Graphs from traces]).
#include "ember/compile/graph.h"

#include <algorithm>
#include <optional>
#include <sstream>
#include <string_view>
#include <unordered_map>

#include "ember/core/error.h"

namespace ember::compiler {
namespace {

// The host-reading ops a replay still gets right: their results' shapes do not depend on the
// values they read (an index with integer indices checks them against the sizes; multinomial
// draws a fixed number). The others hand values to Python (allclose, is_nonzero) or shape their
// result by them (nonzero, unique, masked_select).
bool replayable_host_read(const CapturedOp& op) {
  std::string_view name = op_name(op.id);
  if (name == "index" || name == "index_put_") {
    for (const Tensor& t : op.inputs)
      if (t.defined() && t.dtype() == kBool) return false;  // a mask: the shape is its count
    return true;
  }
  return name == "masked_scatter_" || name == "histc" || name == "multinomial";
}

bool same_storage(const Tensor& a, const Tensor& b) {
  return a.defined() && b.defined() && a.storage() == b.storage();
}

// One traced op as a step of a fused program, where it is one (Note [Graphs from traces]).
struct FusableOp {
  FusedStep step;              // operands not yet numbered
  std::vector<int> in_values;  // the values its kernel read (a, then b)
  int out_value = -1;
  Shape shape;
  TensorOptions options;
};

std::optional<FusableOp> as_fusable(const CapturedOp& op, const Graph::Step& step,
                                    const KernelNote* note) {
  if (note == nullptr || op.outputs.size() != 1 || step.outputs.size() != 1) return std::nullopt;
  uint32_t tags = op_tags(op.id);
  if (!(tags & kPointwise) || (tags & (kInplace | kRandom))) return std::nullopt;
  const Tensor& out = op.outputs[0];
  if (!out.defined() || out.requires_grad() || !out.is_contiguous() ||
      out.device().type() != DeviceType::CPU || !is_floating_point(out.dtype()) ||
      !out.is_same(note->output))
    return std::nullopt;
  FusableOp f;
  f.out_value = step.outputs[0];
  f.shape = out.sizes();
  f.options = out.options();
  for (const Tensor& t : note->inputs) {
    if (t.dtype() != out.dtype()) return std::nullopt;
    bool whole = t.sizes() == out.sizes() && t.is_contiguous();
    if (!whole && t.numel() != 1) return std::nullopt;
    // The kernel's operand must be one of the op's own tensors (not a cast or a copy of one).
    auto it = std::find_if(op.inputs.begin(), op.inputs.end(),
                           [&](const Tensor& in) { return in.defined() && in.is_same(t); });
    if (it == op.inputs.end()) return std::nullopt;
    int v = step.inputs[static_cast<size_t>(it - op.inputs.begin())];
    if (v < 0) return std::nullopt;
    f.in_values.push_back(v);
  }
  switch (note->kind) {
    case KernelNote::Kind::Unary:
      f.step.kind = FusedStep::Kind::Unary;
      break;
    case KernelNote::Kind::Binary:
      f.step.kind = FusedStep::Kind::Binary;
      break;
    case KernelNote::Kind::BinaryScalar:
      f.step.kind = FusedStep::Kind::BinaryScalar;
      break;
  }
  f.step.code = note->code;
  f.step.unary_params = note->unary_params;
  f.step.binary_params = note->binary_params;
  f.step.scalar = note->scalar;
  return f;
}

// The fused step standing for `group` (steps[first, first + n)), whose values later steps or the
// results read where `read_after[v]` holds.
Graph::Step fuse(std::vector<Graph::Step>& steps, size_t first, const std::vector<FusableOp>& group,
                 const std::vector<bool>& read_after, const std::vector<bool>& broadcast_value) {
  auto program = std::make_shared<FusedProgram>();
  Graph::Step fused;
  fused.name = "fused";
  fused.shape = group.front().shape;
  fused.options = group.front().options;
  program->dtype = group.front().options.dtype;
  std::unordered_map<int, int> reg_of, input_of;
  // A register is free again after its last read, unless the group's results include it.
  std::unordered_map<int, size_t> last_read;
  for (size_t i = 0; i < group.size(); ++i)
    for (int v : group[i].in_values) last_read[v] = i;
  std::vector<int> free_regs;
  for (size_t i = 0; i < group.size(); ++i) {
    const FusableOp& f = group[i];
    int operand[2] = {0, 0};
    for (size_t k = 0; k < f.in_values.size(); ++k) {
      int v = f.in_values[k];
      if (auto r = reg_of.find(v); r != reg_of.end()) {
        operand[k] = r->second;
        continue;
      }
      auto [in, added] = input_of.emplace(v, static_cast<int>(fused.inputs.size()));
      if (added) {
        fused.inputs.push_back(v);
        fused.broadcast.push_back(broadcast_value[static_cast<size_t>(v)]);
      }
      operand[k] = FusedProgram::input(in->second);
    }
    FusedStep s = f.step;
    s.a = operand[0];
    s.b = operand[1];
    // Registers read for the last time here are free once this step has read them.
    for (size_t k = 0; k < f.in_values.size(); ++k) {
      int v = f.in_values[k];
      auto r = reg_of.find(v);
      if (r != reg_of.end() && last_read[v] == i && !read_after[static_cast<size_t>(v)] &&
          std::find(free_regs.begin(), free_regs.end(), r->second) == free_regs.end())
        free_regs.push_back(r->second);
    }
    if (free_regs.empty()) {
      s.dst = program->num_registers++;
    } else {
      s.dst = free_regs.back();
      free_regs.pop_back();
    }
    reg_of[f.out_value] = s.dst;
    program->steps.push_back(s);
    if (read_after[static_cast<size_t>(f.out_value)]) {
      program->outputs.push_back(s.dst);
      fused.outputs.push_back(f.out_value);
    }
  }
  program->num_inputs = static_cast<int>(fused.inputs.size());
  for (size_t i = 0; i < group.size(); ++i) fused.members.push_back(std::move(steps[first + i]));
  fused.fused = std::move(program);
  return fused;
}

// Replaces each run of two or more fusable steps with one fused step.
void fuse_chains(Graph& g, const std::vector<std::optional<FusableOp>>& fusable,
                 const std::vector<bool>& broadcast_value) {
  // Which values a step (or the results) reads, by the index of the first step reading it after
  // each point: a value escapes a group when anything past the group reads it.
  std::vector<size_t> last_reader(static_cast<size_t>(g.num_values), 0);
  for (size_t i = 0; i < g.steps.size(); ++i)
    for (int v : g.steps[i].inputs)
      if (v >= 0) last_reader[static_cast<size_t>(v)] = i;
  for (int v : g.outputs) last_reader[static_cast<size_t>(v)] = g.steps.size();

  std::vector<Graph::Step> out;
  size_t i = 0;
  while (i < g.steps.size()) {
    size_t end = i;
    if (fusable[i]) {
      end = i + 1;
      while (end < g.steps.size() && fusable[end] && fusable[end]->shape == fusable[i]->shape &&
             fusable[end]->options.dtype == fusable[i]->options.dtype)
        ++end;
    }
    if (end - i < 2) {
      out.push_back(std::move(g.steps[i]));
      ++i;
      continue;
    }
    std::vector<FusableOp> group;
    for (size_t k = i; k < end; ++k) group.push_back(*fusable[k]);
    std::vector<bool> read_after(static_cast<size_t>(g.num_values), false);
    for (const FusableOp& f : group)
      read_after[static_cast<size_t>(f.out_value)] =
          last_reader[static_cast<size_t>(f.out_value)] >= end;
    // A group whose results nothing reads still computes its last one, as the ops did.
    if (std::none_of(group.begin(), group.end(), [&](const FusableOp& f) {
          return read_after[static_cast<size_t>(f.out_value)];
        }))
      read_after[static_cast<size_t>(group.back().out_value)] = true;
    out.push_back(fuse(g.steps, i, group, read_after, broadcast_value));
    i = end;
  }
  g.steps = std::move(out);
}

std::vector<Tensor> run_step(const Graph::Step& s, const std::vector<Tensor>& values);

std::vector<Tensor> gather(const std::vector<int>& numbers, const std::vector<Tensor>& values) {
  std::vector<Tensor> out;
  out.reserve(numbers.size());
  for (int v : numbers) out.push_back(v < 0 ? Tensor() : values[static_cast<size_t>(v)]);
  return out;
}

void store(const Graph::Step& s, std::vector<Tensor> results, std::vector<Tensor>& values) {
  EMBER_CHECK(results.size() == s.outputs.size(), "[compile] replaying ", s.name,
              " gave ", results.size(), " tensors where the trace had ", s.outputs.size());
  for (size_t k = 0; k < results.size(); ++k)
    if (s.outputs[k] >= 0) values[static_cast<size_t>(s.outputs[k])] = std::move(results[k]);
}

std::vector<Tensor> run_fused(const Graph::Step& s, std::vector<Tensor>& values) {
  std::vector<Tensor> ins = gather(s.inputs, values);
  bool fits = true;
  for (size_t k = 0; k < ins.size() && fits; ++k) {
    const Tensor& t = ins[k];
    fits = t.defined() && t.dtype() == s.options.dtype && t.device() == s.options.device &&
           (s.broadcast[k] ? t.numel() == 1 : t.sizes() == s.shape && t.is_contiguous());
  }
  if (!fits) {  // other shapes than traced: the ops one by one
    for (const Graph::Step& m : s.members) store(m, run_step(m, values), values);
    return gather(s.outputs, values);
  }
  std::vector<const void*> in_ptrs;
  for (const Tensor& t : ins) in_ptrs.push_back(t.data_ptr());
  std::vector<Tensor> outs;
  std::vector<void*> out_ptrs;
  for (size_t k = 0; k < s.outputs.size(); ++k) {
    outs.push_back(empty(s.shape, s.options));
    out_ptrs.push_back(outs.back().data_ptr());
  }
  int64_t numel = 1;
  for (int64_t d : s.shape) numel *= d;
  fused_cpu(*s.fused, in_ptrs, s.broadcast, out_ptrs, numel);
  return outs;
}

std::vector<Tensor> run_step(const Graph::Step& s, const std::vector<Tensor>& values) {
  return s.replay(gather(s.inputs, values));
}

}  // namespace

Tracer::Tracer() : op_guard_(ops_), kernel_guard_(kernels_) {}
Tracer::~Tracer() = default;

Trace Tracer::trace() const { return {ops_.ops(), kernels_.notes, ops_.breaks()}; }

GraphOrBreak build_graph(const Trace& trace, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& outputs, bool fuse_ops) {
  GraphOrBreak result;
  if (!trace.breaks.empty()) {
    result.break_reason = trace.breaks.front();
    return result;
  }
  auto g = std::make_unique<Graph>();
  std::unordered_map<const TensorImpl*, int> value_of;
  std::vector<Tensor> traced;  // a tensor of each value, as traced
  auto new_value = [&](const Tensor& t) {
    int v = g->num_values++;
    value_of[t.unsafe_impl()] = v;
    traced.push_back(t);
    return v;
  };
  // For the constants' check: each op's results with the step that gave them, and the step at
  // which each constant was first read.
  std::vector<std::pair<size_t, Tensor>> made;
  std::unordered_map<int, size_t> first_read;
  std::vector<const CapturedOp*> step_op;  // each step's op (nullptr: an alias, as detach)
  for (const Tensor& t : inputs) {
    EMBER_CHECK(t.defined(), "[compile] a traced function's tensor arguments must be defined");
    auto it = value_of.find(t.unsafe_impl());
    g->inputs.push_back(it != value_of.end() ? it->second : new_value(t));
  }
  auto value = [&](const Tensor& t) -> int {
    if (!t.defined()) return -1;
    auto it = value_of.find(t.unsafe_impl());
    if (it != value_of.end()) return it->second;
    // detach() and .data make an alias of a traced value without an op: replay it as one.
    if (!t.requires_grad())
      for (int a = g->num_values - 1; a >= 0; --a) {
        const Tensor& o = traced[static_cast<size_t>(a)];
        if (same_storage(o, t) && o.sizes() == t.sizes() && o.strides() == t.strides() &&
            o.storage_offset() == t.storage_offset() && o.dtype() == t.dtype()) {
          Graph::Step s;
          s.name = "detach";
          s.inputs = {a};
          s.replay = [](const std::vector<Tensor>& in) {
            return std::vector<Tensor>{in.at(0).detach()};
          };
          int v = new_value(t);
          s.outputs = {v};
          made.emplace_back(g->steps.size(), t);
          g->steps.push_back(std::move(s));
          step_op.push_back(nullptr);
          return v;
        }
      }
    int v = new_value(t);
    g->constants.emplace_back(v, t);
    first_read[v] = g->steps.size();
    return v;
  };

  std::vector<const CapturedOp*> ops;
  for (const CapturedOp& op : trace.ops)
    if (op.depth == 0) ops.push_back(&op);
  for (const CapturedOp* op : ops) {
    if (!op->replay) {
      result.break_reason = std::string(op_name(op->id)) + " cannot be replayed";
      return result;
    }
    if ((op_tags(op->id) & kHostSync) && !replayable_host_read(*op)) {
      result.break_reason = std::string(op_name(op->id)) +
                            " reads tensor values on the host (its result depends on them)";
      return result;
    }
    Graph::Step s;
    s.name = op_name(op->id);
    s.replay = op->replay;
    for (const Tensor& t : op->inputs) s.inputs.push_back(value(t));
    for (const Tensor& t : op->outputs) {
      s.outputs.push_back(t.defined() ? new_value(t) : -1);
      if (t.defined()) made.emplace_back(g->steps.size(), t);
    }
    g->steps.push_back(std::move(s));
    step_op.push_back(op);
  }
  for (const Tensor& t : outputs) g->outputs.push_back(value(t));

  // A constant in the memory of an argument, or of an op's result from before it was first read,
  // was made from a traced value by something the op list does not see: replaying would hand
  // back the traced call's values. (A parameter an op later updates in place shares memory with
  // that op's result, after it was read: that is fine.)
  for (const auto& [v, c] : g->constants) {
    size_t read_at = first_read[v];
    auto shares = [&](const Tensor& t) { return same_storage(c, t); };
    bool from_traced =
        std::any_of(inputs.begin(), inputs.end(), shares) ||
        std::any_of(made.begin(), made.end(), [&](const std::pair<size_t, Tensor>& m) {
          return m.first < read_at && same_storage(c, m.second);
        });
    if (from_traced) {
      result.break_reason =
          "a tensor the function used was made from a traced one outside ember's ops (shape " +
          [&] {
            std::ostringstream os;
            os << c.sizes();
            return os.str();
          }() + ")";
      return result;
    }
  }

  if (fuse_ops) {
    std::unordered_map<const TensorImpl*, const KernelNote*> note_of;
    for (const KernelNote& n : trace.kernels) note_of[n.output.unsafe_impl()] = &n;
    std::vector<std::optional<FusableOp>> fusable;
    for (size_t i = 0; i < g->steps.size(); ++i) {
      const CapturedOp* op = step_op[i];
      const KernelNote* note = nullptr;
      if (op && op->outputs.size() == 1 && op->outputs[0].defined()) {
        auto it = note_of.find(op->outputs[0].unsafe_impl());
        if (it != note_of.end()) note = it->second;
      }
      fusable.push_back(op ? as_fusable(*op, g->steps[i], note) : std::nullopt);
    }
    std::vector<bool> broadcast(static_cast<size_t>(g->num_values), false);
    for (size_t v = 0; v < traced.size(); ++v) broadcast[v] = traced[v].numel() == 1;
    // Broadcast only where the group's shape has more than one element (else it is whole).
    for (auto& f : fusable)
      if (f && f->shape.empty()) f.reset();
    fuse_chains(*g, fusable, broadcast);
  }
  result.graph = std::move(g);
  return result;
}

std::vector<Tensor> Graph::run(const std::vector<Tensor>& args) const {
  EMBER_CHECK(args.size() == inputs.size(), "[compile] the graph takes ", inputs.size(),
              " tensors, got ", args.size());
  std::vector<Tensor> values(static_cast<size_t>(num_values));
  for (size_t i = 0; i < args.size(); ++i) values[static_cast<size_t>(inputs[i])] = args[i];
  for (const auto& [v, t] : constants) values[static_cast<size_t>(v)] = t;
  for (const Step& s : steps) {
    if (s.fused)
      store(s, run_fused(s, values), values);
    else
      store(s, run_step(s, values), values);
  }
  return gather(outputs, values);
}

int Graph::fused_ops() const {
  int n = 0;
  for (const Step& s : steps)
    if (s.fused) n += static_cast<int>(s.members.size());
  return n;
}

std::string Graph::describe() const {
  std::ostringstream os;
  for (const Step& s : steps) {
    if (s.fused) {
      os << "fused[";
      for (size_t k = 0; k < s.members.size(); ++k)
        os << (k ? ", " : "") << s.members[k].name;
      os << "] " << s.inputs.size() << " inputs -> " << s.outputs.size() << "\n";
    } else {
      os << s.name << "\n";
    }
  }
  return os.str();
}

}  // namespace ember::compiler
