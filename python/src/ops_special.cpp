// torch.special (ember._C._special) and the special functions at the top level (lgamma, digamma,
// polygamma, erfinv, i0, igamma, igammac, nextafter, frexp), one declaration each (op_table.h).
#include "ember/ops/dispatch.h"
#include "ember/ops/special.h"

#include "op_table.h"

namespace ember::python {
namespace {

using Binary = Tensor (*)(const Tensor&, const Tensor&);

// A Python number beside a tensor, as the 0-dim tensor of the dtype the pair promotes to.
Tensor wrap(Scalar s, const Tensor& like) {
  return scalar_tensor(s, TensorOptions(result_type(like, s)).with_device(like.device()));
}

// name(Tensor, Tensor), name(Tensor, Scalar), name(Scalar, Tensor): functions only.
void binary_function(OpTable& t, const std::string& name, Binary fn, const char* a,
                     const char* b) {
  std::string head = name + "(";
  t.def(head + "Tensor " + a + ", Tensor " + b + ", *, Tensor? out=None)",
        [fn](const Args& x) { return fn(x.tensor(0), x.tensor(1)); }, kFunction);
  t.def(head + "Tensor " + a + ", Scalar " + b + ", *, Tensor? out=None)",
        [fn](const Args& x) { return fn(x.tensor(0), wrap(x.scalar(1), x.tensor(0))); },
        kFunction);
  t.def(head + "Scalar " + a + ", Tensor " + b + ", *, Tensor? out=None)",
        [fn](const Args& x) { return fn(wrap(x.scalar(0), x.tensor(1)), x.tensor(1)); },
        kFunction);
}

using Unary = Tensor (*)(const Tensor&);

void unary_function(OpTable& t, const std::string& name, Unary fn) {
  t.def(name + "(Tensor input, *, Tensor? out=None)",
        [fn](const Args& a) { return fn(a.tensor(0)); }, kFunction);
}

}  // namespace

void def_special_top_level(OpTable& t) {
  struct {
    const char* name;
    Unary fn;
  } unary[] = {{"lgamma", &lgamma}, {"digamma", &digamma}, {"erfinv", &erfinv}, {"i0", &i0}};
  for (const auto& u : unary) {
    Unary fn = u.fn;
    std::string n = u.name;
    t.def(n + "(Tensor input, *, Tensor? out=None)", [fn](const Args& a) { return fn(a.tensor(0)); });
    t.def(
        n + "_(Tensor input)",
        [fn, op = n + "_"](const Args& a) { return inplace_op(a.tensor(0), op.c_str(), {}, fn); },
        kMethod);
  }
  t.def("polygamma(int n, Tensor input, *, Tensor? out=None)",
        [](const Args& a) { return polygamma(a.int64(0), a.tensor(1)); }, kFunction);
  t.def("polygamma(Tensor input, int n)",
        [](const Args& a) { return polygamma(a.int64(1), a.tensor(0)); }, kMethod);
  t.def(
      "polygamma_(Tensor input, int n)",
      [](const Args& a) {
        int64_t n = a.int64(1);
        return inplace_op(a.tensor(0), "polygamma_", {},
                          [n](const Tensor& x) { return polygamma(n, x); });
      },
      kMethod);
  for (const char* name : {"igamma", "igammac", "nextafter"}) {
    std::string n = name;
    Binary fn = n == "igamma" ? &igamma : n == "igammac" ? &igammac : &nextafter;
    t.def(n + "(Tensor input, Tensor other, *, Tensor? out=None)",
          [fn](const Args& a) { return fn(a.tensor(0), a.tensor(1)); });
    t.def(
        n + "_(Tensor input, Tensor other)",
        [fn, op = n + "_"](const Args& a) {
          const Tensor& other = a.tensor(1);
          return inplace_op(a.tensor(0), op.c_str(), {&other},
                            [&](const Tensor& x) { return fn(x, other); });
        },
        kMethod);
  }
  t.def("frexp(Tensor input, *, Tensor[]? out=None)", [](const Args& a) {
    auto [m, e] = frexp(a.tensor(0));
    return NamedResult{"return_types.frexp", {m, e}};
  });
}

void def_special_ops(OpTable& t) {
  struct {
    const char* name;
    Unary fn;
  } unary[] = {
      {"i0e", &special::i0e},
      {"i1", &special::i1},
      {"i1e", &special::i1e},
      {"ndtr", &special::ndtr},
      {"log_ndtr", &special::log_ndtr},
      {"ndtri", &special::ndtri},
      {"erfcx", &special::erfcx},
      {"entr", &special::entr},
      {"bessel_j0", &special::bessel_j0},
      {"bessel_j1", &special::bessel_j1},
      {"bessel_y0", &special::bessel_y0},
      {"bessel_y1", &special::bessel_y1},
      {"modified_bessel_i0", &special::modified_bessel_i0},
      {"modified_bessel_i1", &special::modified_bessel_i1},
      {"modified_bessel_k0", &special::modified_bessel_k0},
      {"modified_bessel_k1", &special::modified_bessel_k1},
      {"scaled_modified_bessel_k0", &special::scaled_modified_bessel_k0},
      {"scaled_modified_bessel_k1", &special::scaled_modified_bessel_k1},
      {"spherical_bessel_j0", &special::spherical_bessel_j0},
      {"airy_ai", &special::airy_ai},
      {"i0", &i0},
      {"gammaln", &lgamma},
      {"digamma", &digamma},
      {"psi", &digamma},
      {"erfinv", &erfinv},
  };
  for (const auto& u : unary) unary_function(t, u.name, u.fn);
  struct {
    const char* name;
    Binary fn;
  } polynomials[] = {
      {"chebyshev_polynomial_t", &special::chebyshev_polynomial_t},
      {"chebyshev_polynomial_u", &special::chebyshev_polynomial_u},
      {"chebyshev_polynomial_v", &special::chebyshev_polynomial_v},
      {"chebyshev_polynomial_w", &special::chebyshev_polynomial_w},
      {"shifted_chebyshev_polynomial_t", &special::shifted_chebyshev_polynomial_t},
      {"shifted_chebyshev_polynomial_u", &special::shifted_chebyshev_polynomial_u},
      {"shifted_chebyshev_polynomial_v", &special::shifted_chebyshev_polynomial_v},
      {"shifted_chebyshev_polynomial_w", &special::shifted_chebyshev_polynomial_w},
      {"hermite_polynomial_h", &special::hermite_polynomial_h},
      {"hermite_polynomial_he", &special::hermite_polynomial_he},
      {"laguerre_polynomial_l", &special::laguerre_polynomial_l},
      {"legendre_polynomial_p", &special::legendre_polynomial_p},
  };
  for (const auto& p : polynomials) binary_function(t, p.name, p.fn, "input", "n");
  binary_function(t, "zeta", &special::zeta, "input", "other");
  binary_function(t, "xlog1py", &special::xlog1py, "input", "other");
  binary_function(t, "gammainc", &igamma, "input", "other");
  binary_function(t, "gammaincc", &igammac, "input", "other");
  t.def("polygamma(int n, Tensor input, *, Tensor? out=None)",
        [](const Args& a) { return polygamma(a.int64(0), a.tensor(1)); }, kFunction);
}

}  // namespace ember::python
