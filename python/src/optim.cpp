// ember.optim: SGD, Adam, AdamW and the learning-rate schedulers. param_groups reads and writes
// the C++ optimizer's groups (optimizer.param_groups[0]['lr'] = 0.01 works as in PyTorch).
#include "bind.h"

namespace ember::python {
namespace {

// One parameter group seen as a dict: 'params' and the options ('lr', 'momentum', 'betas', ...).
struct GroupView {
  std::shared_ptr<optim::Optimizer> opt;
  size_t index;
  optim::ParamGroup& group() const { return opt->param_groups().at(index); }
};

py::object group_get(const GroupView& g, const std::string& key) {
  optim::ParamGroup& pg = g.group();
  if (key == "params") return py::cast(pg.params);
  if (key == "betas" && pg.options.count("beta1"))
    return py::make_tuple(pg.options["beta1"], pg.options["beta2"]);
  auto it = pg.options.find(key);
  if (it == pg.options.end()) throw py::key_error(key);
  if (key == "nesterov" || key == "amsgrad") return py::bool_(it->second != 0);
  return py::float_(it->second);
}

void group_set(const GroupView& g, const std::string& key, py::handle value) {
  optim::ParamGroup& pg = g.group();
  if (key == "params")
    throw py::value_error("param_groups: replacing 'params' is not supported; use add_param_group");
  if (key == "betas") {
    auto b = value.cast<std::pair<double, double>>();
    pg.options["beta1"] = b.first;
    pg.options["beta2"] = b.second;
    return;
  }
  pg.options[key] = PyBool_Check(value.ptr()) ? (value.ptr() == Py_True ? 1.0 : 0.0)
                                              : value.cast<double>();
}

// Options in a group dict as the C++ optimizer names them.
std::map<std::string, double> group_options(py::dict d) {
  std::map<std::string, double> out;
  for (auto item : d) {
    std::string k = py::str(item.first);
    if (k == "params") continue;
    if (k == "betas") {
      auto b = item.second.cast<std::pair<double, double>>();
      out["beta1"] = b.first;
      out["beta2"] = b.second;
    } else {
      out[k] = PyBool_Check(item.second.ptr()) ? (item.second.ptr() == Py_True ? 1.0 : 0.0)
                                              : item.second.cast<double>();
    }
  }
  return out;
}

std::vector<Tensor> tensors(py::handle h) {
  std::vector<Tensor> out;
  for (py::handle item : h) out.push_back(as_tensor(item));
  return out;
}

// params: an iterable of tensors, or of dicts (parameter groups with their own options).
std::vector<optim::ParamGroup> param_groups(py::handle params) {
  py::list items = py::list(py::reinterpret_borrow<py::object>(params));
  std::vector<optim::ParamGroup> groups;
  if (items.size() == 0) return groups;  // the optimizer reports the empty parameter list
  if (items.size() > 0 && py::isinstance<py::dict>(items[0])) {
    for (py::handle g : items) {
      py::dict d = py::reinterpret_borrow<py::dict>(g);
      if (!d.contains("params")) throw py::value_error("a parameter group needs 'params'");
      groups.push_back({tensors(d["params"]), group_options(d)});
    }
  } else {
    groups.push_back({tensors(items), {}});
  }
  return groups;
}

py::object state_to_dict(const nn::NamedTensors& state) {
  py::dict d;
  for (auto& [n, t] : state) d[py::str(n)] = py::cast(t);
  return d;
}

nn::NamedTensors state_from_dict(py::handle h) {
  nn::NamedTensors out;
  for (auto item : py::reinterpret_borrow<py::dict>(h))
    out.emplace_back(py::str(item.first), as_tensor(item.second));
  return out;
}

}  // namespace

void bind_optim(py::module_& m) {
  py::module_ o = m.def_submodule("_optim", "ember.optim's C++ part");
  py::class_<GroupView>(o, "_ParamGroup")
      .def("__getitem__", &group_get)
      .def("__setitem__", &group_set)
      .def("__contains__",
           [](const GroupView& g, const std::string& k) {
             return k == "params" || g.group().options.count(k) > 0 ||
                    (k == "betas" && g.group().options.count("beta1") > 0);
           })
      .def("get",
           [](const GroupView& g, const std::string& k, py::object dflt) {
             try {
               return group_get(g, k);
             } catch (const py::key_error&) {
               return dflt;
             }
           },
           "key"_a, "default"_a = py::none())
      .def("keys",
           [](const GroupView& g) {
             py::list keys;
             keys.append("params");
             for (auto& [k, v] : g.group().options)
               if (k != "beta1" && k != "beta2") keys.append(k);
             if (g.group().options.count("beta1")) keys.append("betas");
             return keys;
           })
      .def("__repr__", [](const GroupView& g) {
        std::string s = "{'params': [" + std::to_string(g.group().params.size()) + " tensors]";
        for (auto& [k, v] : g.group().options) s += ", '" + k + "': " + std::to_string(v);
        return s + "}";
      });

  py::class_<optim::Optimizer, std::shared_ptr<optim::Optimizer>>(o, "Optimizer")
      .def("step",
           [](optim::Optimizer& self, py::handle closure) -> py::object {
             py::object loss = py::none();
             if (!closure.is_none()) loss = closure();
             py::gil_scoped_release no_gil;
             self.step();
             return loss;
           },
           "closure"_a = py::none())
      .def("zero_grad",
           [](optim::Optimizer& self, bool set_to_none) {
             py::gil_scoped_release no_gil;
             self.zero_grad(set_to_none);
           },
           "set_to_none"_a = true)
      .def_property_readonly("param_groups",
                             [](const std::shared_ptr<optim::Optimizer>& self) {
                               py::list out;
                               for (size_t i = 0; i < self->param_groups().size(); ++i)
                                 out.append(GroupView{self, i});
                               return out;
                             })
      .def("add_param_group",
           [](optim::Optimizer& self, py::dict group) {
             self.add_param_group({tensors(group["params"]), group_options(group)});
           })
      .def("state_dict", [](const optim::Optimizer& self) { return state_to_dict(self.state_dict()); })
      .def("load_state_dict", [](optim::Optimizer& self, py::handle state) {
        self.load_state_dict(state_from_dict(state));
      });

  py::class_<optim::SGD, optim::Optimizer, std::shared_ptr<optim::SGD>>(o, "SGD")
      .def(py::init([](py::handle params, double lr, double momentum, double dampening,
                       double weight_decay, bool nesterov) {
             optim::SGDOptions opt(lr);
             opt.with_momentum(momentum).with_dampening(dampening).with_weight_decay(weight_decay);
             opt.with_nesterov(nesterov);
             return std::make_shared<optim::SGD>(param_groups(params), opt);
           }),
           "params"_a, "lr"_a, "momentum"_a = 0.0, "dampening"_a = 0.0, "weight_decay"_a = 0.0,
           "nesterov"_a = false);
  auto adam_options = [](double lr, std::pair<double, double> betas, double eps,
                         double weight_decay, bool amsgrad) {
    optim::AdamOptions opt(lr);
    opt.with_betas(betas.first, betas.second).with_eps(eps).with_weight_decay(weight_decay);
    opt.with_amsgrad(amsgrad);
    return opt;
  };
  py::class_<optim::Adam, optim::Optimizer, std::shared_ptr<optim::Adam>>(o, "Adam")
      .def(py::init([adam_options](py::handle params, double lr, std::pair<double, double> betas,
                                   double eps, double weight_decay, bool amsgrad) {
             return std::make_shared<optim::Adam>(
                 param_groups(params), adam_options(lr, betas, eps, weight_decay, amsgrad));
           }),
           "params"_a, "lr"_a = 1e-3, "betas"_a = std::make_pair(0.9, 0.999), "eps"_a = 1e-8,
           "weight_decay"_a = 0.0, "amsgrad"_a = false);
  py::class_<optim::AdamW, optim::Adam, std::shared_ptr<optim::AdamW>>(o, "AdamW")
      .def(py::init([adam_options](py::handle params, double lr, std::pair<double, double> betas,
                                   double eps, double weight_decay, bool amsgrad) {
             return std::make_shared<optim::AdamW>(
                 param_groups(params), adam_options(lr, betas, eps, weight_decay, amsgrad));
           }),
           "params"_a, "lr"_a = 1e-3, "betas"_a = std::make_pair(0.9, 0.999), "eps"_a = 1e-8,
           "weight_decay"_a = 0.01, "amsgrad"_a = false);

  py::class_<optim::LRScheduler>(o, "LRScheduler")
      .def("step", &optim::LRScheduler::step)
      .def("get_last_lr", &optim::LRScheduler::get_last_lr)
      .def_property_readonly("last_epoch", &optim::LRScheduler::last_epoch)
      .def("state_dict",
           [](const optim::LRScheduler& self) { return state_to_dict(self.state_dict()); })
      .def("load_state_dict", [](optim::LRScheduler& self, py::handle state) {
        self.load_state_dict(state_from_dict(state));
      });
  // keep_alive: a scheduler holds its optimizer by reference.
  py::class_<optim::StepLR, optim::LRScheduler>(o, "StepLR")
      .def(py::init<optim::Optimizer&, int64_t, double, int64_t>(), "optimizer"_a,
           "step_size"_a, "gamma"_a = 0.1, "last_epoch"_a = -1, py::keep_alive<1, 2>());
  py::class_<optim::CosineAnnealingLR, optim::LRScheduler>(o, "CosineAnnealingLR")
      .def(py::init<optim::Optimizer&, int64_t, double, int64_t>(), "optimizer"_a, "T_max"_a,
           "eta_min"_a = 0.0, "last_epoch"_a = -1, py::keep_alive<1, 2>());
}

}  // namespace ember::python
