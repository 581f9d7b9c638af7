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
void binary_function(OpTable& t, const std::string& name, Binary fn) {
  t.def(name,
        [fn](const Args& x) { return fn(x.tensor(0), x.tensor(1)); });
  t.def(name + ".Tensor_Scalar",
        [fn](const Args& x) { return fn(x.tensor(0), wrap(x.scalar(1), x.tensor(0))); });
  t.def(name + ".Scalar_Tensor",
        [fn](const Args& x) { return fn(wrap(x.scalar(0), x.tensor(1)), x.tensor(1)); });
}

using Unary = Tensor (*)(const Tensor&);

void unary_function(OpTable& t, const std::string& name, Unary fn) {
  t.def(name,
        [fn](const Args& a) { return fn(a.tensor(0)); });
}

}  // namespace

void def_special_top_level(OpTable& t) {
  struct {
    const char* name;
    Unary fn;
    Tensor& (*inplace)(Tensor&);
  } unary[] = {{"lgamma", &lgamma, &lgamma_},
               {"digamma", &digamma, &digamma_},
               {"erfinv", &erfinv, &erfinv_},
               {"i0", &i0, &i0_}};
  for (const auto& u : unary) def_unary(t, u.name, u.fn, u.inplace);
  t.def("polygamma", [](const Args& a) { return polygamma(a.int64(0), a.tensor(1)); });
  t.def("polygamma.method",
        [](const Args& a) { return polygamma(a.int64(1), a.tensor(0)); });
  t.def(
      "polygamma_",
      [](const Args& a) {
        int64_t n = a.int64(1);
        return inplace_op(a.tensor(0), "polygamma_", {},
                          [n](const Tensor& x) { return polygamma(n, x); });
      });
  for (const char* name : {"igamma", "igammac", "nextafter"}) {
    std::string n = name;
    Binary fn = n == "igamma" ? &igamma : n == "igammac" ? &igammac : &nextafter;
    t.def(n,
          [fn](const Args& a) { return fn(a.tensor(0), a.tensor(1)); });
    t.def(
        n + "_",
        [fn, op = n + "_"](const Args& a) {
          const Tensor& other = a.tensor(1);
          return inplace_op(a.tensor(0), op.c_str(), {&other},
                            [&](const Tensor& x) { return fn(x, other); });
        });
  }
  t.def("frexp", [](const Args& a) {
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
  for (const auto& p : polynomials) binary_function(t, p.name, p.fn);
  binary_function(t, "zeta", &special::zeta);
  binary_function(t, "xlog1py", &special::xlog1py);
  binary_function(t, "gammainc", &igamma);
  binary_function(t, "gammaincc", &igammac);
  t.def("polygamma",
        [](const Args& a) { return polygamma(a.int64(0), a.tensor(1)); });
}

}  // namespace ember::python
