// FullyShardedDataParallel's C++ part: the wrapper module over ember::distributed::FSDP whose
// forward takes any arguments. ember/distributed/fsdp/ builds PyTorch's API on it (auto-wrap
// policies, state dict types, summon_full_params).
#include "bind.h"
#include "ember/distributed/fsdp.h"

namespace ember::python {
namespace {

namespace dist = distributed;

dist::ShardingStrategy strategy_of(const std::string& name) {
  if (name == "FULL_SHARD") return dist::ShardingStrategy::FULL_SHARD;
  if (name == "SHARD_GRAD_OP") return dist::ShardingStrategy::SHARD_GRAD_OP;
  if (name == "NO_SHARD") return dist::ShardingStrategy::NO_SHARD;
  if (name == "HYBRID_SHARD") return dist::ShardingStrategy::HYBRID_SHARD;
  throw py::value_error("unknown sharding strategy '" + name +
                        "' (expected FULL_SHARD, SHARD_GRAD_OP, NO_SHARD or HYBRID_SHARD)");
}

py::dict to_dict(const nn::NamedTensors& state) {
  py::dict out = py::module_::import("collections").attr("OrderedDict")();
  for (const auto& [name, t] : state) out[py::str(name)] = py::cast(t);
  return out;
}

// The options both FSDP forms take from Python.
dist::FsdpOptions fsdp_options(py::handle process_group, const std::string& strategy,
                               py::handle param_dtype, py::handle reduce_dtype,
                               bool sync_module_states, int ranks_per_shard_group) {
  dist::FsdpOptions o;
  o.sharding_strategy = strategy_of(strategy);
  if (!param_dtype.is_none()) o.mixed_precision.param_dtype = to_dtype(param_dtype);
  if (!reduce_dtype.is_none()) o.mixed_precision.reduce_dtype = to_dtype(reduce_dtype);
  o.sync_module_states = sync_module_states;
  o.ranks_per_shard_group = ranks_per_shard_group;
  if (!process_group.is_none())
    o.process_group = process_group.cast<std::shared_ptr<dist::ProcessGroup>>();
  return o;
}

// FSDP's optimizer state dicts: tensors laid out as the shards gathered per parameter, and back.
template <typename Class>
void def_state_layout(Class& c, dist::FlatParamHandle& (*handle)(typename Class::type&)) {
  c.def("_set_forward_prefetch",
        [handle](typename Class::type& self, bool on) { handle(self).set_forward_prefetch(on); })
      .def("_prefetched_forwards",
           [handle](typename Class::type& self) { return handle(self).prefetched_forwards(); })
      .def("_gather_like_shards",
        [handle](typename Class::type& self, const std::vector<Tensor>& parts) {
          nn::NamedTensors full;
          {
            ReleaseGil no_gil;
            full = handle(self).gather_like_shards(parts);
          }
          return to_dict(full);
        })
      .def("_shard_like_parameters",
           [handle](typename Class::type& self, py::dict values) {
             nn::NamedTensors named;
             for (auto item : values)
               named.emplace_back(item.first.cast<std::string>(), as_tensor(item.second));
             ReleaseGil no_gil;
             return handle(self).shard_like_parameters(named);
           })
      .def("_shards", [handle](typename Class::type& self) { return handle(self).shards(); })
      .def("_shard_names",
           [handle](typename Class::type& self) { return handle(self).shard_names(); });
}

}  // namespace

void bind_fsdp(py::module_& d) {
  // FSDP2's fully_shard: a handle on the module itself (no wrapper), each parameter sharded in
  // its own slot; ember/distributed/fsdp/_fully_shard.py calls it around the module's forward.
  py::class_<dist::FlatParamHandle, std::shared_ptr<dist::FlatParamHandle>> sharded(
      d, "_ShardedParams", py::dynamic_attr());
  def_state_layout(sharded, +[](dist::FlatParamHandle& h) -> dist::FlatParamHandle& { return h; });
  sharded
      .def(py::init([](py::handle module, py::list nested, py::handle process_group,
                       const std::string& strategy, py::handle param_dtype,
                       py::handle reduce_dtype, int ranks_per_shard_group) {
             dist::FsdpOptions o = fsdp_options(process_group, strategy, param_dtype,
                                                reduce_dtype, false, ranks_per_shard_group);
             o.per_parameter = true;
             std::shared_ptr<nn::Module> m = module_ptr(module);
             std::vector<const nn::Module*> inner;
             for (py::handle n : nested) inner.push_back(module_ptr(n).get());
             ReleaseGil no_gil;
             return std::make_shared<dist::FlatParamHandle>(*m, *m, inner,
                                                            dist::flat_param_options(o));
           }),
           "module"_a, "nested"_a, "process_group"_a = py::none(), "strategy"_a = "FULL_SHARD",
           "param_dtype"_a = py::none(), "reduce_dtype"_a = py::none(),
           "ranks_per_shard_group"_a = 0)
      .def("pre_forward", [](dist::FlatParamHandle& h) {
             ReleaseGil no_gil;
             h.pre_forward();
           })
      .def("post_forward", [](dist::FlatParamHandle& h, py::handle out) {
             std::vector<Tensor> outs;
             collect_tensors(out, outs);
             ReleaseGil no_gil;
             h.post_forward(outs);
           })
      .def("summon_full", [](dist::FlatParamHandle& h) {
             ReleaseGil no_gil;
             h.summon_full();
           })
      .def("release_full", [](dist::FlatParamHandle& h, bool writeback) {
             ReleaseGil no_gil;
             h.release_full(writeback);
           })
      .def("set_require_sync", &dist::FlatParamHandle::set_require_sync)
      .def("full_shapes", [](const dist::FlatParamHandle& h) {
        py::list out;
        for (const Shape& s : h.full_shapes())
          out.append(py::tuple(py::cast(std::vector<int64_t>(s.begin(), s.end()))));
        return out;
      });

  py::class_<dist::FSDP, nn::Module, std::shared_ptr<dist::FSDP>> fsdp(
      d, "FullyShardedDataParallel", py::dynamic_attr(),
      "Shards the parameters, gradients and optimizer state of a module across the ranks");
  def_state_layout(fsdp, +[](dist::FSDP& f) -> dist::FlatParamHandle& { return f.handle(); });
  def_no_sync<dist::FSDP>(d, "_FsdpNoSync", fsdp);
  fsdp
      .def(py::init([](py::handle module, py::handle process_group, const std::string& strategy,
                       py::handle param_dtype, py::handle reduce_dtype, bool sync_module_states,
                       int ranks_per_shard_group) {
             dist::FsdpOptions o = fsdp_options(process_group, strategy, param_dtype,
                                                reduce_dtype, sync_module_states,
                                                ranks_per_shard_group);
             std::shared_ptr<nn::Module> mm = module_ptr(module);
             ReleaseGil no_gil;  // may broadcast from rank 0
             return std::make_shared<dist::FSDP>(mm, o);
           }),
           "module"_a, "process_group"_a = py::none(), "sharding_strategy"_a = "FULL_SHARD",
           "param_dtype"_a = py::none(), "reduce_dtype"_a = py::none(),
           "sync_module_states"_a = false, "ranks_per_shard_group"_a = 0)
      .def_property_readonly("module",
                             [](const dist::FSDP& f) { return module_object(f.module()); })
      .def("forward",
           [](py::handle self, py::args args, py::kwargs kwargs) {
             auto& fsdp = self.cast<dist::FSDP&>();
             {
               ReleaseGil no_gil;
               fsdp.handle().pre_forward();
             }
             py::object out;
             std::vector<Tensor> outs;
             try {
               out = module_object(fsdp.module())(*args, **kwargs);
               collect_tensors(out, outs);
             } catch (...) {
               fsdp.handle().post_forward({});
               throw;
             }
             ReleaseGil no_gil;
             fsdp.handle().post_forward(outs);
             return out;
           })
      .def("__call__", [](py::handle self, py::args args,
                          py::kwargs kwargs) { return self.attr("forward")(*args, **kwargs); })
      .def("_full_state_dict",
           [](dist::FSDP& f) {
             nn::NamedTensors state;
             {
               ReleaseGil no_gil;
               state = f.full_state_dict();
             }
             return to_dict(state);
           })
      .def("_load_full_state_dict",
           [](dist::FSDP& f, py::dict state) {
             nn::NamedTensors named;
             for (auto item : state) named.emplace_back(item.first.cast<std::string>(), as_tensor(item.second));
             ReleaseGil no_gil;
             f.load_full_state_dict(named);
           })
      .def("_summon_full", [](dist::FSDP& f) {
             ReleaseGil no_gil;
             f.handle().summon_full();
           })
      .def("_release_full", [](dist::FSDP& f, bool writeback) {
             ReleaseGil no_gil;
             f.handle().release_full(writeback);
           }, "writeback"_a)
      .def(
          "clip_grad_norm_",
          [](dist::FSDP& f, double max_norm, double norm_type) {
            ReleaseGil no_gil;
            return full({}, f.clip_grad_norm_(max_norm, norm_type), kFloat32);
          },
          "max_norm"_a, "norm_type"_a = 2.0);
}

}  // namespace ember::python
