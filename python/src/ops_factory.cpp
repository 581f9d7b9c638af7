// Tensor factories and random draws, declared by signature (op_table.h), and ember.Generator.
// Every factory takes PyTorch's keywords: out=, dtype=, layout=, device=, requires_grad=,
// pin_memory= and, for random draws, generator=.
#include "ember/ops/random.h"
#include "op_table.h"

namespace ember::python {
namespace {

// Options from the dtype (at `first`), layout, device keywords, in that order.
TensorOptions options(const Args& a, size_t first, std::optional<DType> fallback = {}) {
  TensorOptions o;
  if (auto dt = a.dtype(first))
    o.with_dtype(*dt);
  else if (fallback)
    o.with_dtype(*fallback);
  if (auto dev = a.device(first + 2)) o.with_device(*dev);
  return o;
}

// Applies pin_memory and requires_grad (at `first` + 3 and + 4) to a made tensor.
Tensor finish(Tensor t, const Args& a, size_t first) {
  if (a.flag(first + 3) && t.is_cpu() && cuda::is_available()) t = t.pin_memory();
  if (a.flag(first + 4)) t.requires_grad_(true);
  return t;
}

// The keywords of *_like factories: input's dtype and device unless given.
TensorOptions like_options(const Args& a, size_t first) {
  const Tensor& x = a.tensor(0);
  TensorOptions o = x.options();
  o.with_requires_grad(false);
  o.with_dtype(a.dtype(first).value_or(x.dtype()));  // given: randint_like keeps it too
  if (auto dev = a.device(first + 2)) o.with_device(*dev);
  return o;
}

Generator* gen(const Args& a, size_t i) { return a.generator(i); }

}  // namespace

void def_factory_ops(OpTable& t) {
  // --- filled ---
  t.def(
      "zeros",
      [](const Args& a) { return finish(zeros(a.shape(0), options(a, 2)), a, 2); },
      "A tensor of zeros.");
  t.def(
      "ones", [](const Args& a) { return finish(ones(a.shape(0), options(a, 2)), a, 2); }, "A tensor of ones.");
  t.def(
      "empty",
      [](const Args& a) { return finish(empty(a.shape(0), options(a, 2)), a, 2); },
      "A tensor of uninitialised memory.");
  t.def(
      "full",
      [](const Args& a) {
        Scalar v = a.scalar(1);
        TensorOptions o = options(a, 3, v.dtype());  // the dtype follows the value
        return finish(full(a.shape(0), v, o), a, 3);
      }, "A tensor filled with fill_value.");
  t.def(
      "zeros_like", [](const Args& a) { return finish(zeros(a.tensor(0).sizes(), like_options(a, 1)), a, 1); });
  t.def(
      "ones_like", [](const Args& a) { return finish(ones(a.tensor(0).sizes(), like_options(a, 1)), a, 1); });
  t.def(
      "empty_like", [](const Args& a) { return finish(empty(a.tensor(0).sizes(), like_options(a, 1)), a, 1); });
  t.def(
      "full_like",
      [](const Args& a) { return finish(full(a.tensor(0).sizes(), a.scalar(1), like_options(a, 2)), a, 2); });
  t.def(
      "rand_like", [](const Args& a) { return finish(rand(a.tensor(0).sizes(), like_options(a, 1)), a, 1); });
  t.def(
      "randn_like", [](const Args& a) { return finish(randn(a.tensor(0).sizes(), like_options(a, 1)), a, 1); });
  t.def(
      "randint_like",
      [](const Args& a) {
        return finish(randint(0, a.int64(1), a.tensor(0).sizes(), like_options(a, 2)), a, 2);
      });
  t.def(
      "randint_like.low_dtype",
      [](const Args& a) {
        return finish(randint(a.int64(1), a.int64(2), a.tensor(0).sizes(), like_options(a, 3)),
                      a, 3);
      });
  t.def(
      "scalar_tensor",
      [](const Args& a) { return finish(scalar_tensor(a.scalar(0), options(a, 1, kFloat32)), a, 1); });

  // --- ranges ---
  t.def(
      "arange",
      [](const Args& a) {
        return finish(a.has(2) ? arange(0, a.scalar(0), 1, options(a, 2))
                               : arange(a.scalar(0)).to(options(a, 2).device),
                      a, 2);
      }, "Values from start (0) up to end, by step (1).");
  t.def(
      "arange.start_step",
      [](const Args& a) {
        Tensor r = a.has(4) ? arange(a.scalar(0), a.scalar(1), a.scalar(2), options(a, 4))
                            : arange(a.scalar(0), a.scalar(1), a.scalar(2))
                                  .to(options(a, 4).device);
        return finish(r, a, 4);
      });
  t.def(
      "linspace",
      [](const Args& a) {
        return finish(linspace(a.scalar(0).to_double(), a.scalar(1).to_double(), a.int64(2),
                               options(a, 4)),
                      a, 4);
      });
  t.def(
      "logspace",
      [](const Args& a) {
        TensorOptions o = options(a, 5);
        Tensor exps = linspace(a.scalar(0).to_double(), a.scalar(1).to_double(), a.int64(2),
                               TensorOptions(kFloat64).with_device(o.device));
        return finish(pow(scalar_tensor(a.real(3), exps.options()), exps).to(o.dtype), a, 5);
      });
  t.def(
      "eye",
      [](const Args& a) {
        return finish(eye(a.int64(0), a.opt_int(1).value_or(-1), options(a, 3)), a, 3);
      }, "The identity matrix, n x m (n x n).");

  // --- random ---
  t.def(
      "rand",
      [](const Args& a) { return finish(rand(a.shape(0), options(a, 3), gen(a, 1)), a, 3); }, "Uniform in [0, 1).");
  t.def(
      "randn",
      [](const Args& a) { return finish(randn(a.shape(0), options(a, 3), gen(a, 1)), a, 3); }, "Standard normal.");
  t.def(
      "randint",
      [](const Args& a) {
        return finish(randint(0, a.int64(0), a.shape(1), options(a, 4, kInt64), gen(a, 2)), a, 4);
      }, "Integers uniform in [low, high).");
  t.def(
      "randint.low",
      [](const Args& a) {
        return finish(
            randint(a.int64(0), a.int64(1), a.shape(2), options(a, 5, kInt64), gen(a, 3)), a, 5);
      });
  t.def(
      "randperm",
      [](const Args& a) {
        return finish(randperm(a.int64(0), options(a, 3, kInt64), gen(a, 1)), a, 3);
      }, "A random permutation of 0 .. n-1.");
  t.def("bernoulli",
        [](const Args& a) { return bernoulli(a.tensor(0), gen(a, 1)); }, "1 with probability input (elementwise), else 0.");
  t.def("bernoulli.p",
        [](const Args& a) { return bernoulli(a.tensor(0), a.real(1), gen(a, 2)); });
  t.def(
      "multinomial",
      [](const Args& a) {
        return multinomial(a.tensor(0), a.int64(1), a.flag(2), gen(a, 3));
      },
      "num_samples indices per row, drawn with probabilities proportional to input's rows.");
  t.def("normal.Tensor_Tensor",
        [](const Args& a) { return normal(a.tensor(0), a.tensor(1), gen(a, 2)); },
        "Draws from normal distributions of the given means and standard deviations.");
  t.def("normal.Tensor_float",
        [](const Args& a) {
          return normal(a.tensor(0), full_like(a.tensor(0), a.real(1)), gen(a, 2));
        });
  t.def("normal.float_Tensor",
        [](const Args& a) {
          return normal(full_like(a.tensor(1), a.real(0)), a.tensor(1), gen(a, 2));
        });
  t.def("normal.float_float",
        [](const Args& a) {
          Tensor r = empty(a.shape(2), options(a, 5));
          normal_(r, a.real(0), a.real(1), gen(a, 3));
          return finish(r, a, 5);
        });

  // --- in-place random fills (methods) ---
  t.def("uniform_",
        [](const Args& a) {
          Tensor x = a.tensor(0);
          return uniform_(x, a.real(1), a.real(2), gen(a, 3));
        });
  t.def("normal_",
        [](const Args& a) {
          Tensor x = a.tensor(0);
          return normal_(x, a.real(1), a.real(2), gen(a, 3));
        });
  t.def("bernoulli_.Tensor",
        [](const Args& a) {
          Tensor x = a.tensor(0);
          return bernoulli_(x, a.tensor(1), gen(a, 2));
        });
  t.def("bernoulli_.float",
        [](const Args& a) {
          Tensor x = a.tensor(0);
          return bernoulli_(x, a.real(1), gen(a, 2));
        });
  t.def("exponential_",
        [](const Args& a) {
          Tensor x = a.tensor(0);
          return exponential_(x, a.real(1), gen(a, 2));
        });
  t.def("random_.from",
        [](const Args& a) {
          Tensor x = a.tensor(0);
          return random_(x, a.int64(1), a.opt_int(2), gen(a, 3));
        });
  t.def("random_.to",
        [](const Args& a) {
          Tensor x = a.tensor(0);
          return random_(x, 0, a.int64(1), gen(a, 2));
        });
  t.def("random_",
        [](const Args& a) {
          Tensor x = a.tensor(0);
          return random_(x, 0, std::nullopt, gen(a, 1));
        });
}

void bind_generator(py::module_& m) {
  py::class_<Generator, std::shared_ptr<Generator>>(
      m, "Generator", "A random number generator: a seed and a counter (torch.Generator).")
      .def(py::init([](py::handle device) {
             if (!device.is_none() && to_device(device).is_cuda() && !cuda::is_available())
               throw py::value_error("Generator(device='cuda'): no CUDA device");
             return std::make_shared<Generator>();
           }),
           "device"_a = "cpu")
      .def(
          "manual_seed",
          [](py::object self, int64_t seed) {
            self.cast<Generator&>().manual_seed(static_cast<uint64_t>(seed));
            return self;
          },
          "seed"_a)
      .def("initial_seed", &Generator::initial_seed)
      .def("seed",
           [](Generator& g) {
             uint64_t s = default_generator().random64() & ((uint64_t{1} << 63) - 1);
             g.manual_seed(s);
             return s;
           })
      .def("get_state",
           [](Generator& g) {
             auto [seed, offset] = g.get_state();
             return from_vector(std::vector<int64_t>{static_cast<int64_t>(seed),
                                                     static_cast<int64_t>(offset)},
                                {2}, kInt64);
           })
      .def("set_state",
           [](Generator& g, const Tensor& state) {
             EMBER_CHECK_VALUE(state.numel() == 2 && state.dtype() == kInt64,
                               "[Generator.set_state] expected the int64 tensor get_state() "
                               "returned, got ",
                               state.dtype(), " of shape ", state.sizes());
             std::vector<int64_t> v = state.contiguous().tolist<int64_t>();
             g.set_state({static_cast<uint64_t>(v[0]), static_cast<uint64_t>(v[1])});
           })
      .def_property_readonly("device", [](const Generator&) { return Device(kCPU); });
  m.attr("default_generator") =
      py::cast(std::shared_ptr<Generator>(&default_generator(), [](Generator*) {}));
}

}  // namespace ember::python
