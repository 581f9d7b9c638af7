// The differential test's families for the ops sequence models brought: sorting and scans (sort,
// topk, cumsum, cumprod), triangles and reorderings (tril, triu, roll, flip), baddbmm and einsum,
// padding, layer norm and GELU, multinomial sampling where its outcome is certain, and scaled
// dot-product attention (masks, causal, scale) against the formula written in torch's ops. In
// float64 the gradients are compared too.
#include <cstring>
#include <limits>
#include <sstream>

#include "tests/oracle/differential_internal.h"

namespace ember::oracle {
namespace {

Input input(Rng& r, const Shape& s, DType t, Stress stress) {
  return make_input(r, {s, t, stress, true});
}

/// Both sides over the same float64 values.
Input from_values(const std::vector<double>& v, const Shape& shape) {
  ETensor e = empty({static_cast<int64_t>(v.size())}, TensorOptions(kFloat64));
  if (!v.empty()) std::memcpy(e.data_ptr(), v.data(), v.size() * sizeof(double));
  TTensor t = torch::tensor(v, at::kDouble);
  return {e.view(shape), t.view(V(shape.begin(), shape.end()))};
}

DType float_dtype(Rng& r) {
  return r.choose(std::vector<DType>{kFloat32, kFloat32, kFloat64, kFloat64, kFloat16, kBFloat16});
}

/// The calls whose names or argument orders differ between ember and torch.
template <typename A>
struct Seq;

template <>
struct Seq<EApi> {
  using T = ETensor;
  static std::tuple<T, T> sort(const T& x, int64_t dim, bool descending) {
    return ember::sort(x, dim, descending, /*stable=*/true);
  }
  static T pad(const T& x, const V& p, const std::string& mode, double value) {
    return ember::pad(x, Shape(p.begin(), p.end()), mode, value);
  }
  static T roll(const T& x, const V& shifts, const V& dims) {
    return ember::roll(x, Shape(shifts.begin(), shifts.end()), Shape(dims.begin(), dims.end()));
  }
  static T flip(const T& x, const V& dims) {
    return ember::flip(x, Shape(dims.begin(), dims.end()));
  }
  static T layer_norm(const T& x, const V& shape, const T* w, const T* b, double eps) {
    return nn::functional::layer_norm(x, Shape(shape.begin(), shape.end()), w ? *w : T(),
                                      b ? *b : T(), eps);
  }
  static T gelu(const T& x, bool tanh) { return ember::gelu(x, tanh ? "tanh" : "none"); }
  static T einsum(const std::string& eq, const std::vector<T>& ops) {
    return ember::einsum(eq, ops);
  }
  static T sdpa(const T& q, const T& k, const T& v, const T* mask, bool causal,
                std::optional<double> scale) {
    return ember::scaled_dot_product_attention(q, k, v, mask ? *mask : T(), 0, causal, scale);
  }
  static T multinomial(const T& p, int64_t n, bool replacement) {
    return ember::multinomial(p, n, replacement);
  }
};

template <>
struct Seq<TApi> {
  using T = TTensor;
  static std::tuple<T, T> sort(const T& x, int64_t dim, bool descending) {
    return at::sort(x, /*stable=*/true, dim, descending);
  }
  static T roll(const T& x, const V& shifts, const V& dims) { return at::roll(x, shifts, dims); }
  static T flip(const T& x, const V& dims) { return at::flip(x, dims); }
  static T pad(const T& x, const V& p, const std::string& mode, double value) {
    namespace F = torch::nn::functional;
    F::PadFuncOptions o(p);
    if (mode == "reflect")
      o.mode(torch::kReflect);
    else if (mode == "replicate")
      o.mode(torch::kReplicate);
    else if (mode == "circular")
      o.mode(torch::kCircular);
    else
      o.mode(torch::kConstant).value(value);
    return F::pad(x, o);
  }
  static T layer_norm(const T& x, const V& shape, const T* w, const T* b, double eps) {
    return at::layer_norm(x, shape, w ? c10::optional<T>(*w) : c10::nullopt,
                          b ? c10::optional<T>(*b) : c10::nullopt, eps);
  }
  static T gelu(const T& x, bool tanh) { return at::gelu(x, tanh ? "tanh" : "none"); }
  static T einsum(const std::string& eq, const std::vector<T>& ops) { return at::einsum(eq, ops); }
  // PyTorch 2's definition (1.13 has no public fused op): softmax(q k^T * scale + mask) v, a bool
  // mask true where attention is allowed, is_causal keeping keys j <= i.
  static T sdpa(const T& q, const T& k, const T& v, const T* mask, bool causal,
                std::optional<double> scale) {
    double s = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
    T scores = at::matmul(q, k.transpose(-2, -1)) * s;
    const double inf = std::numeric_limits<double>::infinity();
    if (causal) {
      T keep = at::ones({q.size(-2), k.size(-2)}, at::kBool).tril();
      scores = scores.masked_fill(keep.logical_not(), -inf);
    }
    if (mask)
      scores = mask->scalar_type() == at::kBool ? scores.masked_fill(mask->logical_not(), -inf)
                                                : scores + *mask;
    return at::matmul(at::softmax(scores, -1), v);
  }
  static T multinomial(const T& p, int64_t n, bool replacement) {
    return at::multinomial(p, n, replacement);
  }
};

const char* kOps[] = {"sort", "topk",    "cumsum", "cumprod", "tril",       "triu", "roll",
                      "flip", "baddbmm", "einsum", "pad",     "layer_norm", "gelu", "multinomial"};

// (equation, operand shapes from sizes a, b, c, d)
struct Einsum {
  const char* eq;
  std::vector<std::vector<int>> dims;  // indices into the four sizes
};
const Einsum kEinsums[] = {{"ij,jk->ik", {{0, 1}, {1, 2}}},
                           {"bij,bjk->bik", {{3, 0, 1}, {3, 1, 2}}},
                           {"ij->ji", {{0, 1}}},
                           {"ii->i", {{0, 0}}},
                           {"i,i->", {{0}, {0}}},
                           {"i,j->ij", {{0}, {1}}},
                           {"bhqd,bhkd->bhqk", {{3, 0, 1, 2}, {3, 0, 3, 2}}},
                           {"...ij,...jk", {{3, 0, 1}, {1, 2}}},
                           {"bij->bj", {{3, 0, 1}}}};

}  // namespace

OpCase sequence_ops_case(Rng& r) {
  OpCase c;
  c.family = "sequence_ops";
  int op = static_cast<int>(r.pick(0, 13));
  // float64 cases compare gradients too, on untied values (ties move a sort's gradient).
  DType t = r.coin(0.75) ? float_dtype(r) : random_dtype(r, /*with_bool=*/op == 2 || op == 4);
  c.grad = t == kFloat64 && op != 13 && r.coin(0.6);
  Stress stress = c.grad ? Stress::Normal : random_stress(r);
  Shape s = random_shape(r, 4, 5);
  int64_t nd = static_cast<int64_t>(s.size());
  int64_t dim = nd == 0 ? 0 : r.pick(-nd, nd - 1);
  std::ostringstream o;
  o << kOps[op] << "(" << str(t);
  switch (op) {
    case 0:
    case 1: {
      bool flag = r.coin();  // descending / largest
      int64_t size = nd == 0 ? 1 : s[static_cast<size_t>((dim + nd) % nd)];
      int64_t k = r.pick(0, size);
      // With gradients, no layout that repeats values (expanded): which of equal values topk
      // picks, and so where the gradient goes, is the kernel's choice.
      c.inputs = {make_input(r, {s, t, stress, /*allow_noncontiguous=*/!c.grad})};
      o << str(s) << ", dim=" << dim
        << (op == 0 ? ", descending=" : ", k=" + std::to_string(k) + ", largest=") << flag;
      if (op == 1 && nd == 0 && k == 0) {
        c.deliberate =
            "topk of a 0-dim tensor with k = 0 raises (torch 1.13 returns a 0-dim "
            "tensor of one unset value)";
        c.deliberate_results = true;
      }
      // topk's order among equal values is the kernel's choice: its values and the input read at
      // its indices are compared, not the indices themselves.
      set_op(c, [=](auto api, const auto& in) {
        using A = decltype(api);
        if (op == 0) {
          auto [values, indices] = Seq<A>::sort(in[0], dim, flag);
          return std::vector<std::decay_t<decltype(values)>>{values, indices};
        }
        auto [values, indices] = topk(in[0], k, dim, flag, true);
        return std::vector<std::decay_t<decltype(values)>>{values, in[0].gather(dim, indices)};
      });
      c.rtol_scale = 1;
      break;
    }
    case 2:
    case 3:
      c.inputs = {input(r, s, t, op == 3 && stress == Stress::Large ? Stress::Normal : stress)};
      o << str(s) << ", dim=" << dim;
      c.rtol_scale = 8;
      set_op(c, [=](auto, const auto& in) {
        return op == 2 ? cumsum(in[0], dim) : cumprod(in[0], dim);
      });
      break;
    case 4:
    case 5:
    case 6:
    case 7: {
      if (op <= 5 && nd < 2) s = {r.pick(0, 5), r.pick(0, 5)}, nd = 2;
      c.inputs = {input(r, s, t, stress)};
      int64_t diagonal = r.pick(-3, 3);
      V dims, shifts;
      for (int64_t d = 0; d < nd; ++d)
        if (r.coin()) dims.push_back(r.coin() ? d : d - nd), shifts.push_back(r.pick(-7, 7));
      if (op == 6 && dims.empty()) shifts.push_back(r.pick(-7, 7));  // roll of the flat tensor
      o << str(s);
      if (op <= 5) o << ", diagonal=" << diagonal;
      if (op >= 6) o << ", dims=" << str(Shape(dims.begin(), dims.end()));
      if (op == 6) o << ", shifts=" << str(Shape(shifts.begin(), shifts.end()));
      set_op(c, [=](auto api, const auto& in) {
        using A = decltype(api);
        const auto& x = in[0];
        if (op == 4) return tril(x, diagonal);
        if (op == 5) return triu(x, diagonal);
        if (op == 6) return Seq<A>::roll(x, shifts, dims);
        return Seq<A>::flip(x, dims);
      });
      break;
    }
    case 8: {
      if (!is_floating_point(t)) t = kFloat32, c.grad = false;
      int64_t b = r.pick(0, 3), n = r.pick(0, 4), m = r.pick(0, 4), p = r.pick(0, 4);
      Shape si = r.coin() ? Shape{b, n, p} : broadcastable(r, {b, n, p});
      c.inputs = {input(r, si, t, stress), input(r, {b, n, m}, t, stress),
                  input(r, {b, m, p}, t, stress)};
      // Not beta = 0 (input ignored): torch 1.13 then reads its output before writing it when
      // input is broadcast, and returns NaN now and then. ember's unit tests check that case.
      double beta = r.choose(std::vector<double>{1, 0.5, -2}),
             alpha = r.choose(std::vector<double>{1, 0.25, -1});
      o << str(si) << ", [" << b << "," << n << "," << m << "] @ [" << b << "," << m << "," << p
        << "], beta=" << beta << ", alpha=" << alpha;
      c.rtol_scale = 16;
      set_op(c, [=](auto, const auto& in) { return baddbmm(in[0], in[1], in[2], beta, alpha); });
      break;
    }
    case 9: {
      if (!is_floating_point(t)) t = kFloat64;
      const Einsum& e = kEinsums[r.pick(0, static_cast<int64_t>(std::size(kEinsums)) - 1)];
      int64_t sizes[4] = {r.pick(0, 4), r.pick(1, 4), r.pick(1, 4), r.pick(1, 3)};
      o << ", \"" << e.eq << "\"";
      for (const auto& operand : e.dims) {
        Shape sh;
        for (int d : operand) sh.push_back(sizes[d]);
        c.inputs.push_back(input(r, sh, t, stress));
        o << ", " << str(sh);
      }
      c.rtol_scale = 16;
      std::string eq = e.eq;
      set_op(c, [=](auto api, const auto& in) {
        using A = decltype(api);
        return Seq<A>::einsum(eq, in);
      });
      break;
    }
    case 10: {
      std::string mode = r.choose(
          std::vector<std::string>{"constant", "constant", "reflect", "replicate", "circular"});
      if (mode != "constant" && !is_floating_point(t)) t = kFloat32, c.grad = false;
      int64_t padded = r.pick(1, 2);  // dims padded, the last ones
      V p;
      if (mode == "constant") {
        s = random_shape(r, 4, 4);
        padded = std::min<int64_t>(padded, static_cast<int64_t>(s.size()));
        for (int64_t d = 0; d < 2 * padded; ++d) p.push_back(r.pick(-1, 3));
      } else {
        // torch 1.13's reflect and replicate take (N,) C, W or (N,) C, H, W; circular N, C, ...
        s = {};
        if (mode == "circular" || r.coin()) s.push_back(r.pick(1, 2));
        s.push_back(r.pick(1, 3));
        for (int64_t d = 0; d < padded; ++d) s.push_back(r.pick(2, 5));
        for (int64_t d = 0; d < padded; ++d) {
          int64_t size = s[s.size() - 1 - static_cast<size_t>(d)];
          int64_t limit = mode == "replicate" ? 3 : size - 1;  // reflect: < size; circular: <=
          p.push_back(r.pick(0, limit));
          p.push_back(r.pick(0, limit));
        }
      }
      double value = r.choose(std::vector<double>{0, 1.5, -2});
      c.inputs = {input(r, s, t, stress)};
      bool cropped = false;
      for (int64_t d = 0; d < 2 * padded; ++d) cropped |= p[static_cast<size_t>(d)] < 0;
      if (mode == "constant" && cropped && numel_of(s) == 0) {
        c.deliberate = "pad crops empty tensors too (torch 1.13 raises a dim error)";
        c.deliberate_results = true;
      }
      for (int64_t d = 0; d < padded && mode == "constant"; ++d)
        if (s[s.size() - 1 - static_cast<size_t>(d)] + p[2 * d] + p[2 * d + 1] == 0) {
          c.deliberate = "pad may crop a dim to size 0 (torch 1.13 raises; later versions do not)";
          c.deliberate_results = true;
        }
      o << str(s) << ", " << str(Shape(p.begin(), p.end())) << ", " << mode;
      if (mode == "constant") o << ", value=" << value;
      set_op(c, [=](auto api, const auto& in) {
        using A = decltype(api);
        return Seq<A>::pad(in[0], p, mode, value);
      });
      break;
    }
    case 11: {
      if (!is_floating_point(t)) t = kFloat32, c.grad = false;
      if (s.empty()) s = {r.pick(1, 4)}, nd = 1;
      int64_t normalized = r.pick(1, nd);
      V shape(s.end() - normalized, s.end());
      bool affine = r.coin(0.7), bias = affine && r.coin(0.8);
      double eps = r.coin() ? 1e-5 : 1e-3;
      Stress st = stress == Stress::Special || stress == Stress::Large ? Stress::Normal : stress;
      c.inputs = {input(r, s, t, st)};
      if (affine) c.inputs.push_back(input(r, Shape(shape.begin(), shape.end()), t, st));
      if (bias) c.inputs.push_back(input(r, Shape(shape.begin(), shape.end()), t, st));
      o << str(s) << ", normalized=" << str(Shape(shape.begin(), shape.end()))
        << ", weight=" << affine << ", bias=" << bias << ", eps=" << eps;
      c.rtol_scale = 64;
      set_op(c, [=](auto api, const auto& in) {
        using A = decltype(api);
        return Seq<A>::layer_norm(in[0], shape, affine ? &in[1] : nullptr, bias ? &in[2] : nullptr,
                                  eps);
      });
      break;
    }
    case 12: {
      if (!is_floating_point(t)) t = kFloat32, c.grad = false;
      bool tanh = r.coin();
      c.inputs = {input(r, s, t, stress)};
      o << str(s) << ", approximate=" << (tanh ? "tanh" : "none");
      c.rtol_scale = 4;
      set_op(c, [=](auto api, const auto& in) {
        using A = decltype(api);
        return Seq<A>::gelu(in[0], tanh);
      });
      break;
    }
    default: {
      // Only the certain outcomes of sampling: rows of one category (with replacement, every
      // draw is it), or all categories drawn without replacement (a permutation, compared sorted).
      int64_t rows = r.pick(1, 3), cats = r.pick(1, 6);
      bool replacement = r.coin();
      std::vector<double> p(static_cast<size_t>(rows * cats), 0.0);
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cats; ++j)
          p[static_cast<size_t>(i * cats + j)] =
              replacement ? (j == (i * 7 + 3) % cats ? 2.5 : 0.0) : 0.25 + j;
      int64_t n = replacement ? r.pick(1, 5) : cats;
      c.inputs = {from_values(p, {rows, cats})};
      c.grad = false;
      o << ", [" << rows << "," << cats << "], n=" << n << ", replacement=" << replacement;
      set_op(c, [=](auto api, const auto& in) {
        using A = decltype(api);
        auto drawn = Seq<A>::multinomial(in[0], n, replacement);
        return replacement ? drawn : std::get<0>(Seq<A>::sort(drawn, -1, false));
      });
      break;
    }
  }
  o << ")";
  c.desc = o.str();
  return c;
}

// Attention: q (B..., L, E), k (B..., S, E), v (B..., S, Ev) with no mask, a bool mask (true:
// attend) or an additive one broadcast over the batch, causal or not, a given scale or not.
OpCase attention_case(Rng& r) {
  OpCase c;
  c.family = "attention";
  DType t = r.coin(0.6) ? kFloat64 : kFloat32;
  c.grad = t == kFloat64 && r.coin(0.7);
  Shape batch;
  for (int64_t d = r.pick(0, 2); d > 0; --d) batch.push_back(r.pick(1, 3));
  int64_t L = r.pick(1, 9), S = r.pick(1, 9), E = r.pick(1, 8), Ev = r.pick(1, 8);
  bool causal = r.coin(0.3);
  int mask_kind = static_cast<int>(r.pick(0, 2));  // none, bool, float
  std::optional<double> scale;
  if (r.coin(0.3)) scale = r.uniform(0.05, 1.0);
  auto with = [&](Shape tail) {
    Shape sh = batch;
    for (int64_t d : tail) sh.push_back(d);
    return sh;
  };
  c.inputs = {input(r, with({L, E}), t, Stress::Normal), input(r, with({S, E}), t, Stress::Normal),
              input(r, with({S, Ev}), t, Stress::Normal)};
  Shape mask_shape = r.coin() ? Shape{L, S} : with({L, S});
  if (mask_kind == 1) {
    // Every query keeps its first key: a fully masked row is NaN in both, which is not the point.
    std::vector<double> keep(static_cast<size_t>(numel_of(mask_shape)));
    for (size_t i = 0; i < keep.size(); ++i)
      keep[i] = i % static_cast<size_t>(S) == 0 || r.coin(0.6) ? 1 : 0;
    Input m = from_values(keep, mask_shape);
    c.inputs.push_back(Input{m.e.to(kBool), m.t.to(at::kBool)});
  } else if (mask_kind == 2) {
    c.inputs.push_back(input(r, mask_shape, t, Stress::Normal));
  }
  std::ostringstream o;
  o << "scaled_dot_product_attention(" << str(t) << " q" << str(with({L, E})) << ", k"
    << str(with({S, E})) << ", v" << str(with({S, Ev}))
    << (mask_kind == 0   ? ""
        : mask_kind == 1 ? ", bool mask"
                         : ", float mask")
    << (mask_kind ? str(mask_shape) : "") << ", causal=" << causal;
  if (scale) o << ", scale=" << *scale;
  o << ")";
  c.desc = o.str();
  c.rtol_scale = 64;
  set_op(c, [=](auto api, const auto& in) {
    using A = decltype(api);
    return Seq<A>::sdpa(in[0], in[1], in[2], mask_kind ? &in[3] : nullptr, causal, scale);
  });
  return c;
}

}  // namespace ember::oracle
