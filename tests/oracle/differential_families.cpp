// The differential test's structured families: views, matmul, softmax, conv2d, pooling, ResNet's
// layers (batch norm, adaptive pooling, interpolation), cat/split/stack, indexing, losses and
// autograd chains.
#include <sstream>

#include "tests/oracle/differential_internal.h"

namespace ember::oracle {
namespace {

Input input(Rng& r, const Shape& s, DType t, bool noncontig = true) {
  return make_input(r, {s, t, random_stress(r), noncontig});
}

DType float_dtype(Rng& r) {
  return r.choose(std::vector<DType>{kFloat32, kFloat32, kFloat64, kFloat64, kFloat16, kBFloat16});
}

const char* kViews[] = {"reshape", "view",      "transpose", "permute",       "narrow", "select",
                        "squeeze", "unsqueeze", "expand",    "flatten",       "t",      "split",
                        "chunk",   "unbind",    "unflatten", "contiguous_sum"};
const char* kIndex[] = {"gather",      "scatter_add", "index_select", "where",
                        "masked_fill", "one_hot",     "embedding"};

}  // namespace

OpCase views_case(Rng& r) {
  OpCase c;
  c.family = "views";
  int op = static_cast<int>(r.pick(0, 15));
  Shape s = random_shape(r);
  DType t = random_dtype(r);
  c.inputs = {input(r, s, t)};
  int64_t nd = static_cast<int64_t>(s.size()), range = std::max<int64_t>(nd, 1);
  int64_t d0 = r.pick(-range, range - 1), d1 = r.pick(-range, range - 1);
  if (r.coin(0.05)) d0 = range;
  int64_t numel = 1;
  for (int64_t x : s) numel *= x;
  V target;  // a reshape target: the shape with dims merged or split, or a -1
  if (r.coin(0.8)) {
    int64_t rest = numel;
    for (int64_t f : {2, 3}) {
      if (rest > 0 && rest % f == 0 && r.coin()) {
        target.push_back(f);
        rest /= f;
      }
    }
    target.push_back(r.coin(0.3) ? -1 : rest);
  } else {
    target = {r.pick(0, 4), -1};
  }
  V perm(static_cast<size_t>(nd));
  for (int64_t i = 0; i < nd; ++i) perm[static_cast<size_t>(i)] = i;
  std::shuffle(perm.begin(), perm.end(), r.g);
  if (nd > 0 && r.coin(0.3)) perm[0] -= nd;  // negative dims
  V expanded(s.begin(), s.end());
  for (auto& x : expanded)
    if (x == 1 && r.coin()) x = r.pick(0, 3);
  if (r.coin(0.3)) expanded.insert(expanded.begin(), r.pick(1, 2));
  if (r.coin(0.2)) expanded.insert(expanded.begin(), -1);
  int64_t size0 = nd == 0 ? 1 : s[static_cast<size_t>((d0 % range + range) % range)];
  int64_t start = r.pick(-1, size0), len = r.pick(0, size0);
  int64_t split = r.pick(0, 3);
  std::ostringstream d;
  d << kViews[op] << "(" << str(t) << str(s) << ", d0=" << d0 << ", d1=" << d1
    << ", target=" << str(Shape(target)) << ", perm=" << str(Shape(perm))
    << ", expand=" << str(Shape(expanded)) << ", start=" << start << ", len=" << len
    << ", split=" << split << ")";
  c.desc = d.str();
  set_op(c, [=](auto, const auto& in) {
    using T = std::decay_t<decltype(in[0])>;
    const T& x = in[0];
    switch (op) {
      case 0:
        return to_list(x.reshape(target));
      case 1:
        return to_list(x.view(target));
      case 2:
        return to_list(x.transpose(d0, d1));
      case 3:
        return to_list(x.permute(perm));
      case 4:
        return to_list(x.narrow(d0, start, len));
      case 5:
        return to_list(x.select(d0, start));
      case 6:
        return to_list(x.squeeze(d0));
      case 7:
        return to_list(x.unsqueeze(d0));
      case 8:
        return to_list(x.expand(expanded));
      case 9:
        return to_list(x.flatten(d0, d1));
      case 10:
        return to_list(x.t());
      case 11:
        return to_list(x.split(split, d0));
      case 12:
        return to_list(x.chunk(split, d0));
      case 13:
        return to_list(x.unbind(d0));
      case 14:
        return to_list(x.unflatten(d0, V{split == 0 ? 1 : split, -1}));
      default:
        return to_list(x.contiguous().mul(2));
    }
  });
  return c;
}

OpCase matmul_case(Rng& r) {
  OpCase c;
  c.family = "matmul";
  int op = static_cast<int>(r.pick(0, 4));
  DType t = r.coin(0.8) ? float_dtype(r) : random_dtype(r);
  DType t2 = r.coin(0.9) ? t : random_dtype(r);
  int64_t n = r.pick(0, 5), k = r.pick(0, 5), m = r.pick(0, 5), b = r.pick(0, 3);
  Shape sa, sb, sbias;
  const char* name = "matmul";
  switch (op) {
    case 0: {  // matmul: 1-D to 4-D on each side, batch dims broadcast
      int da = static_cast<int>(r.pick(1, 4)), db = static_cast<int>(r.pick(1, 4));
      Shape batch = {b, r.pick(1, 2)};
      sa = da == 1 ? Shape{k} : Shape{n, k};
      sb = db == 1 ? Shape{k} : Shape{k, m};
      for (int i = 2; i < da; ++i)
        sa.insert(sa.begin(), r.coin(0.3) ? 1 : batch[static_cast<size_t>(i - 2)]);
      for (int i = 2; i < db; ++i)
        sb.insert(sb.begin(), r.coin(0.3) ? 1 : batch[static_cast<size_t>(i - 2)]);
      break;
    }
    case 1:
      name = "mm";
      sa = {n, k};
      sb = {k, m};
      break;
    case 2:
      name = "bmm";
      sa = {b, n, k};
      sb = {b, k, m};
      break;
    case 3:
      name = "addmm";
      sa = {n, k};
      sb = {k, m};
      sbias = r.coin() ? Shape{m} : Shape{n, m};
      break;
    default:
      name = "linear";
      sa = r.coin() ? Shape{n, k} : Shape{b, n, k};
      sb = {m, k};
      if (r.coin()) sbias = {m};
      break;
  }
  if (r.coin(0.05)) sb[0] += 1;  // mismatched inner sizes
  c.inputs = {input(r, sa, t), input(r, sb, t2)};
  bool bias = !sbias.empty();
  if (bias) c.inputs.push_back(input(r, sbias, t));
  c.rtol_scale = 50;
  if (t != t2 && (c.inputs[0].e.numel() == 0 || c.inputs[1].e.numel() == 0)) {
    c.deliberate = "matmul of empty operands of two dtypes: ember raises, torch 1.13 returns";
    c.deliberate_results = true;
  }
  c.desc = std::string(name) + "(" + str(t) + str(sa) + ", " + str(t2) + str(sb) +
           (bias ? ", bias " + str(sbias) : "") + ")";
  set_op(c, [op, bias](auto, const auto& in) {
    switch (op) {
      case 0:
        return matmul(in[0], in[1]);
      case 1:
        return in[0].mm(in[1]);
      case 2:
        return in[0].bmm(in[1]);
      case 3:
        return addmm(in[2], in[0], in[1]);
      default: {
        using T = std::decay_t<decltype(in[0])>;
        return bias ? linear(in[0], in[1], in[2]) : linear(in[0], in[1], T());
      }
    }
  });
  return c;
}

OpCase softmax_case(Rng& r) {
  OpCase c;
  c.family = "softmax";
  bool log = r.coin();
  Shape s = random_shape(r);
  DType t = r.coin(0.8) ? float_dtype(r) : random_dtype(r);
  c.inputs = {input(r, s, t)};
  int64_t range = std::max<int64_t>(static_cast<int64_t>(s.size()), 1);
  int64_t dim = r.pick(-range, range - 1);
  if (r.coin(0.05)) dim = range;
  c.rtol_scale = 4;
  int64_t last = static_cast<int64_t>(s.size()) - 1;
  if (log && (t == kFloat16 || t == kBFloat16) && dim != last && dim != -1) {
    c.deliberate = "torch 1.13's 16-bit log_softmax over a non-last dim can overflow to inf";
    c.deliberate_results = true;
  }
  if (!is_floating_point(t)) {
    c.deliberate = "softmax and log_softmax of integers compute in float32";
    c.deliberate_results = true;  // torch has no integer kernel, but returns an empty input as is
  }
  c.desc = std::string(log ? "log_softmax" : "softmax") + "(" + str(t) + str(s) + ", " +
           std::to_string(dim) + ")";
  set_op(c, [log, dim](auto, const auto& in) {
    return log ? in[0].log_softmax(dim) : in[0].softmax(dim);
  });
  return c;
}

OpCase conv_case(Rng& r) {
  OpCase c;
  c.family = "conv2d";
  DType t = r.coin(0.9) ? r.choose(std::vector<DType>{kFloat32, kFloat64}) : random_dtype(r);
  int64_t g = r.pick(1, 2), N = r.pick(0, 2), C = g * r.pick(1, 2), O = g * r.pick(1, 2);
  int64_t H = r.pick(1, 6), W = r.pick(1, 6), kh = r.pick(1, 3), kw = r.pick(1, 3);
  Pair s{r.pick(1, 2), r.pick(1, 2)}, p{r.pick(0, 1), r.pick(0, 1)}, d{r.pick(1, 2), 1};
  Shape sx = r.coin(0.2) ? Shape{C, H, W} : Shape{N, C, H, W};
  if (N == 0 && sx.size() == 4 && r.coin()) sx[0] = 1;
  // No infinities: ember's padding contributes nothing, torch's multiplies zeros (0 * inf = NaN).
  auto finite = [&](const Shape& sh) {
    Stress st = random_stress(r);
    return make_input(r, {sh, t, st == Stress::Special ? Stress::Large : st, true});
  };
  c.inputs = {finite(sx), finite({O, C / g, kh, kw})};
  bool bias = r.coin();
  if (bias) c.inputs.push_back(finite({O}));
  c.rtol_scale = 50;
  if (sx.size() == 4 && sx[0] == 0)
    c.deliberate = "torch 1.13 raises a view error on some empty batches in conv2d";
  if (!is_floating_point(t)) {
    c.deliberate = "conv2d takes floating point only (torch also computes integer dtypes)";
    c.deliberate_results = true;
  }
  std::ostringstream o;
  o << "conv2d(" << str(t) << str(sx) << ", w[" << O << ", " << C / g << ", " << kh << ", " << kw
    << "], bias=" << bias << ", stride=" << s[0] << "," << s[1] << ", pad=" << p[0] << "," << p[1]
    << ", dil=" << d[0] << ", groups=" << g << ")";
  c.desc = o.str();
  set_op(c, [=](auto api, const auto& in) {
    using A = decltype(api);
    return A::conv2d(in[0], in[1], bias ? &in[2] : nullptr, s, p, d, g);
  });
  return c;
}

OpCase pool_case(Rng& r) {
  OpCase c;
  c.family = "pool2d";
  bool avg = r.coin();
  DType t = r.coin(0.8) ? r.choose(std::vector<DType>{kFloat32, kFloat64}) : random_dtype(r);
  Shape sx = {r.pick(0, 2), r.pick(1, 2), r.pick(1, 6), r.pick(1, 6)};
  if (r.coin(0.2)) sx.erase(sx.begin());
  c.inputs = {input(r, sx, t)};
  Pair k{r.pick(1, 4), r.pick(1, 4)}, s{r.pick(1, 3), r.pick(1, 3)};
  Pair p{r.pick(0, 2), r.pick(0, 2)}, d{r.pick(1, 2), r.pick(1, 2)};
  bool ceil = r.coin(), cip = r.coin();
  if (avg) d = {1, 1};
  std::ostringstream o;
  o << (avg ? "avg_pool2d(" : "max_pool2d(") << str(t) << str(sx) << ", k=" << k[0] << "," << k[1]
    << ", s=" << s[0] << "," << s[1] << ", p=" << p[0] << "," << p[1] << ", d=" << d[0] << ","
    << d[1] << ", ceil=" << ceil << ", count_include_pad=" << cip << ")";
  c.desc = o.str();
  set_op(c, [=](auto api, const auto& in) {
    using A = decltype(api);
    return avg ? A::avg_pool2d(in[0], k, s, p, ceil, cip) : A::max_pool2d(in[0], k, s, p, d, ceil);
  });
  return c;
}

OpCase cat_case(Rng& r) {
  OpCase c;
  c.family = "cat_stack";
  int op = static_cast<int>(r.pick(0, 2));
  Shape s = random_shape(r, 3, 4);
  int64_t n = r.pick(1, 4), range = std::max<int64_t>(static_cast<int64_t>(s.size()), 1);
  int64_t dim = r.pick(-range, range - 1);
  if (op == 1) dim = r.pick(-range - 1, range);  // stack inserts a dim
  std::string desc;
  for (int64_t i = 0; i < n; ++i) {
    Shape si = s;
    if (op == 0 && !si.empty() && r.coin())
      si[static_cast<size_t>((dim % range + range) % range)] = r.pick(0, 3);
    if (op == 0 && r.coin(0.15)) si = {0};         // legacy empty, skipped
    if (r.coin(0.03)) si = random_shape(r, 3, 4);  // mismatched
    DType t = r.coin(0.6) ? kFloat32 : random_dtype(r);
    c.inputs.push_back(input(r, si, t));
    desc += str(t) + str(si) + " ";
  }
  c.desc = std::string(op == 0   ? "cat"
                       : op == 1 ? "stack"
                                 : "split_cat") +
           "(" + desc + ", dim=" + std::to_string(dim) + ")";
  set_op(c, [op, dim](auto api, const auto& in) {
    using A = decltype(api);
    if (op == 0) return to_list(A::cat(in, dim));
    if (op == 1) return to_list(A::stack(in, dim));
    auto parts = in[0].split(1, dim);  // split then cat back: the identity
    return to_list(A::cat(parts, dim));
  });
  return c;
}

OpCase index_case(Rng& r) {
  OpCase c;
  c.family = "indexing";
  int op = static_cast<int>(r.pick(0, 6));
  Shape s = random_shape(r, 3, 4);
  DType t = random_dtype(r);
  int64_t nd = static_cast<int64_t>(s.size()), range = std::max<int64_t>(nd, 1);
  int64_t dim = r.pick(-range, range - 1);
  int64_t wd = (dim % range + range) % range;
  int64_t size = nd == 0 ? 1 : s[static_cast<size_t>(wd)];
  bool negative = r.coin(0.15);  // negative indices: ember wraps, torch raises
  int64_t lo = negative ? -size : 0, hi = size - 1 + (r.coin(0.05) ? 1 : 0);
  Shape is = s;  // index no larger than the input in every dim
  for (auto& x : is) x = r.pick(0, x);
  if (op == 2) is = {r.pick(0, 4)};
  c.inputs = {input(r, s, t)};
  double fill = r.pick(-4, 4) / 2.0;
  std::string extra;
  switch (op) {
    case 0:
      c.inputs.push_back(make_index(r, is, lo, hi));
      break;
    case 1:
      c.inputs.push_back(make_index(r, is, lo, hi));
      c.inputs.push_back(input(r, is, t));
      break;
    case 2:
      if (size == 0) lo = hi = 0;
      c.inputs.push_back(make_index(r, is, lo, hi));
      break;
    case 3: {
      Shape sb = broadcastable(r, s);
      c.inputs.push_back(input(r, broadcastable(r, s), kBool));
      c.inputs.push_back(input(r, sb, r.coin() ? t : random_dtype(r)));
      extra = " other " + str(sb);
      break;
    }
    case 4:
      c.inputs.push_back(input(r, broadcastable(r, s), kBool));
      break;
    case 5:
      c.inputs[0] = make_index(r, s, 0, 4);
      break;
    default:
      c.inputs[0] = input(r, {r.pick(1, 5), r.pick(0, 3)}, float_dtype(r));
      c.inputs.push_back(make_index(r, s, negative ? -1 : 0, c.inputs[0].e.size(0) - 1));
      break;
  }
  if (op == 2 && s.empty() && is[0] != 1)
    c.torch_broken =
        "reads or writes out of bounds (index_select of a 0-dim input with an index of other than one element)";
  if (negative && (op <= 2 || op == 6))
    c.deliberate = "negative indices wrap (gather, scatter_add, index_select, embedding)";
  c.desc = std::string(kIndex[op]) + "(" + str(t) + str(s) + ", dim=" + std::to_string(dim) +
           ", index " + str(is) + extra + ")";
  set_op(c, [op, dim, fill](auto api, const auto& in) {
    using A = decltype(api);
    switch (op) {
      case 0:
        return in[0].gather(dim, in[1]);
      case 1:
        return in[0].scatter_add(dim, in[1], in[2]);
      case 2:
        return in[0].index_select(dim, in[1]);
      case 3:
        return where(in[1], in[0], in[2]);
      case 4:
        return in[0].masked_fill(in[1], fill);
      case 5:
        return A::one_hot(in[0], 5);
      default:
        return A::embedding(in[0], in[1]);
    }
  });
  return c;
}

OpCase loss_case(Rng& r) {
  OpCase c;
  c.family = "loss";
  int op = static_cast<int>(r.pick(0, 2));  // cross_entropy with indices, with probabilities, nll
  DType t = r.coin(0.9) ? r.choose(std::vector<DType>{kFloat32, kFloat64}) : float_dtype(r);
  int64_t C = r.pick(1, 4), N = r.pick(0, 3);
  int form = static_cast<int>(r.pick(0, 3));  // (C), (N, C), (N, C, d), (N, C, d1, d2)
  Shape sx = form == 0 ? Shape{C} : Shape{N, C};
  for (int i = 2; i <= form; ++i) sx.push_back(r.pick(1, 3));
  Shape st = sx;
  if (op != 1) st.erase(st.begin() + (form == 0 ? 0 : 1));
  c.inputs = {input(r, sx, t)};
  int64_t ignore = r.coin(0.3) ? r.pick(0, C - 1) : -100;
  if (op != 1) {
    c.inputs.push_back(make_index(r, st, 0, C - 1));
  } else {
    Input p = make_input(r, {st, t, Stress::Normal, true});
    p.e = p.e.to(kFloat64).abs().softmax(form == 0 ? 0 : 1).to(t);  // torch: no half softmax
    p.t = p.t.to(at::kDouble).abs().softmax(form == 0 ? 0 : 1).to(to_torch(t));
    c.inputs.push_back(p);
  }
  bool weighted = r.coin();
  if (weighted) {
    Input w = make_input(r, {{C}, t, Stress::Normal, true});
    w.e = w.e.abs() + 0.5;
    w.t = w.t.abs() + 0.5;
    c.inputs.push_back(w);
  }
  int reduction = static_cast<int>(r.pick(0, 2));
  double smoothing = r.coin(0.3) ? r.pick(1, 4) / 10.0 : 0.0;
  if (op == 2) smoothing = 0;
  c.rtol_scale = 8;
  std::ostringstream o;
  o << (op == 2 ? "nll_loss(" : "cross_entropy(") << str(t) << str(sx) << ", "
    << (op == 1 ? "probabilities" : "indices") << str(st) << ", weighted=" << weighted
    << ", ignore=" << ignore << ", reduction=" << reduction << ", smoothing=" << smoothing << ")";
  c.desc = o.str();
  set_op(c, [=](auto api, const auto& in) {
    using A = decltype(api);
    const auto* w = weighted ? &in[2] : nullptr;
    if (op == 2)
      return A::nll_loss(in[0].log_softmax(sx.size() == 1 ? 0 : 1), in[1], w, ignore, reduction);
    return A::cross_entropy(in[0], in[1], w, ignore, reduction, smoothing);
  });
  return c;
}

// ResNet's layers: batch norm (training, with the running statistics compared after their update,
// or evaluation), adaptive average pooling, bilinear and nearest interpolation; in float64 the
// gradients too.
OpCase nn_layers_case(Rng& r) {
  OpCase c;
  c.family = "nn_layers";
  int op = static_cast<int>(r.pick(0, 2));
  DType t = r.coin(0.9) ? r.choose(std::vector<DType>{kFloat32, kFloat64}) : random_dtype(r);
  c.grad = t == kFloat64 && r.coin();
  c.rtol_scale = 50;
  auto finite = [&](const Shape& sh) {  // infinities make NaNs whose placement is not the point
    Stress st = random_stress(r);
    return make_input(r, {sh, t, st == Stress::Special ? Stress::Normal : st, true});
  };
  std::ostringstream o;
  if (op == 0) {
    Shape sx{r.pick(1, 4), r.pick(1, 3)};
    for (int64_t d = r.pick(0, 2); d > 0; --d) sx.push_back(r.pick(1, 4));
    bool training = r.coin(0.7), affine = r.coin(0.8);
    double momentum = r.coin() ? 0.1 : 0.5, eps = r.coin() ? 1e-5 : 1e-3;
    c.inputs = {finite(sx)};
    if (affine) c.inputs.push_back(finite({sx[1]})), c.inputs.push_back(finite({sx[1]}));
    int64_t per_channel = 1;
    for (size_t d = 0; d < sx.size(); ++d) per_channel *= d == 1 ? 1 : sx[d];
    if (training && per_channel == 1) {
      c.deliberate =
          "batch_norm in training raises on one value per channel, as F.batch_norm does "
          "(at::batch_norm computes)";
      c.deliberate_results = true;
    }
    o << "batch_norm(" << str(t) << str(sx) << ", training=" << training << ", affine=" << affine
      << ", momentum=" << momentum << ", eps=" << eps << ")";
    set_op(c, [=](auto api, const auto& in) {
      using A = decltype(api);
      // Running statistics of C elements made alike on both sides, returned after the update.
      auto channel = in[0].detach().transpose(0, 1).reshape({sx[1], -1}).select(1, 0);
      auto rm = A::full_like_scalar(channel, 0.25), rv = A::full_like_scalar(channel, 1.75);
      auto y = A::batch_norm(in[0], affine ? &in[1] : nullptr, affine ? &in[2] : nullptr, rm, rv,
                             training, momentum, eps);
      return std::vector<std::decay_t<decltype(y)>>{y, rm, rv};
    });
  } else {
    Shape sx{r.pick(0, 2), r.pick(1, 3), r.pick(1, 6), r.pick(1, 6)};
    if (op == 1 && r.coin(0.2)) sx.erase(sx.begin());
    Pair out{r.pick(op == 1 ? 0 : 1, 7), r.pick(1, 7)};
    bool bilinear = r.coin(), corners = bilinear && r.coin();
    c.inputs = {finite(sx)};
    if (!is_floating_point(t) && op == 1) {
      c.deliberate = "adaptive_avg_pool2d takes floating point only (torch 1.13 returns an empty "
                     "integer batch)";
      c.deliberate_results = true;
    }
    if (op == 1 && c.grad && out[0] == 0)
      c.deliberate =
          "adaptive_avg_pool2d's gradient for an empty output is zeros (torch 1.13 raises)";
    if (op == 1)
      o << "adaptive_avg_pool2d(" << str(t) << str(sx) << ", " << out[0] << "x" << out[1] << ")";
    else
      o << "interpolate(" << str(t) << str(sx) << ", " << out[0] << "x" << out[1] << ", "
        << (bilinear ? "bilinear" : "nearest") << ", align_corners=" << corners << ")";
    set_op(c, [=](auto api, const auto& in) {
      using A = decltype(api);
      return op == 1 ? A::adaptive_avg_pool2d(in[0], out)
                     : A::interpolate(in[0], out, bilinear, corners);
    });
  }
  c.desc = o.str();
  return c;
}

// 2-4 differentiable ops in a row on float64 leaves; the gradients are compared too.
OpCase grad_case(Rng& r) {
  OpCase c;
  c.family = "autograd";
  c.grad = true;
  Shape s = random_shape(r, 3, 4);
  int64_t steps = r.pick(2, 4);
  std::vector<int> ops;
  std::vector<int64_t> dims;
  static const char* names[] = {"tanh",      "sigmoid",     "mul",      "add",     "div", "square",
                                "softmax",   "log_softmax", "sum_dim",  "mean",    "std", "var",
                                "transpose", "amax",        "maximum",  "relu",    "abs", "norm",
                                "logsumexp", "exp",         "sqrt_abs", "max_dim", "pow", "sin"};
  std::string desc;
  for (int64_t i = 0; i < steps; ++i) {
    ops.push_back(static_cast<int>(r.pick(0, 23)));
    dims.push_back(r.pick(-4, 3));
    desc += std::string(names[ops.back()]) + " ";
  }
  // Equal inputs stay equal through ember's ops, but torch's vectorised loops round the tail
  // elements differently (pow(0.5, 2.5) differs in the last bit between lanes): a max over such
  // near-ties picks a winner by rounding, so tied inputs are kept away from the max ops.
  bool picks_winner = false;
  for (int op : ops) picks_winner |= op == 13 || op == 14 || op == 21;
  Stress stress = !picks_winner && r.coin(0.2) ? Stress::Ties
                  : r.coin(0.1)                ? Stress::Zeros
                                               : Stress::Normal;
  c.inputs = {make_input(r, {s, kFloat64, stress, true}),
              make_input(r, {broadcastable(r, s), kFloat64, Stress::Normal, true})};
  c.rtol_scale = 1000;
  c.desc = "chain(" + desc + ") on f64" + str(s) + " and " + str(c.inputs[1].e.sizes());
  set_op(c, [ops, dims](auto, const auto& in) {
    auto x = in[0];
    const auto& y = in[1];
    for (size_t i = 0; i < ops.size(); ++i) {
      int64_t nd = std::max<int64_t>(x.dim(), 1), d = (dims[i] % nd + nd) % nd;
      switch (ops[i]) {
        case 0:
          x = x.tanh();
          break;
        case 1:
          x = x.sigmoid();
          break;
        case 2:
          x = x.mul(y);
          break;
        case 3:
          x = x.add(y);
          break;
        case 4:
          x = x.div(y.abs().add(1));
          break;
        case 5:
          x = x.square();
          break;
        case 6:
          x = x.softmax(d);
          break;
        case 7:
          x = x.log_softmax(d);
          break;
        case 8:
          x = x.sum(V{d}, true);
          break;
        case 9:
          x = x.mean();
          break;
        case 10:
          x = x.std(V{d}, true, true);
          break;
        case 11:
          x = x.var(V{d}, false, true);
          break;
        case 12:
          x = x.dim() >= 2 ? x.transpose(0, x.dim() - 1) : x;
          break;
        case 13:
          x = x.amax(V{d}, true);
          break;
        case 14:
          x = x.maximum(y);
          break;
        case 15:
          x = x.relu();
          break;
        case 16:
          x = x.abs();
          break;
        case 17:
          x = x.norm(2);
          break;
        case 18:
          x = x.logsumexp(V{d}, true);
          break;
        case 19:
          x = x.exp();
          break;
        case 20:
          x = x.abs().add(1).sqrt();
          break;
        case 21:
          x = std::get<0>(x.max(d, true));
          break;
        case 22:
          x = x.pow(2.5);
          break;
        default:
          x = x.sin();
          break;
      }
    }
    return x;
  });
  return c;
}

}  // namespace ember::oracle
