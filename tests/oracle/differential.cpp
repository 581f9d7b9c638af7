// The differential runner: inputs built the same on both sides, each case run on both, results
// compared in dtype, shape and value (or in both raising).
#include "tests/oracle/differential.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
#include <numeric>
#include <sstream>

#include "tests/oracle/differential_internal.h"

namespace ember::oracle {

at::ScalarType to_torch(DType t) {
  switch (t) {
    case DType::Bool:
      return at::kBool;
    case DType::UInt8:
      return at::kByte;
    case DType::Int32:
      return at::kInt;
    case DType::Int64:
      return at::kLong;
    case DType::Float16:
      return at::kHalf;
    case DType::BFloat16:
      return at::kBFloat16;
    case DType::Float32:
      return at::kFloat;
    case DType::Float64:
      return at::kDouble;
  }
  return at::kDouble;
}

namespace {

std::string dtype_name(at::ScalarType t) { return c10::toString(t); }

// Values every dtype holds exactly, so the conversion from double is the same on both sides.
double draw(Rng& r, DType t, Stress s) {
  bool half = t == kFloat16 || t == kBFloat16;
  if (t == kBool) return s == Stress::Zeros ? 0 : static_cast<double>(r.coin());
  if (s == Stress::Zeros) return 0;
  if (t == kUInt8) {
    if (s == Stress::Large) return static_cast<double>(r.pick(200, 255));
    if (s == Stress::Ties) return static_cast<double>(r.pick(0, 2));
    return static_cast<double>(r.pick(0, 9));
  }
  if (!is_floating_point(t)) {
    if (s == Stress::Large)
      return static_cast<double>(r.pick(-2000000000, 2000000000)) *
             (t == kInt64 && r.coin() ? 4 : 1);
    if (s == Stress::Ties) return static_cast<double>(r.pick(-1, 1));
    return static_cast<double>(r.pick(-6, 6));
  }
  switch (s) {
    case Stress::Ties:
      return static_cast<double>(r.pick(-2, 2)) * 0.5;
    case Stress::Large: {
      double mag = half ? 1024 : (t == kFloat32 ? 1e8 : 1e17);
      return static_cast<double>(r.pick(-64, 64)) * mag / 8;
    }
    case Stress::Special: {
      int64_t k = r.pick(0, 9);
      if (k == 0) return std::numeric_limits<double>::infinity();
      if (k == 1) return -std::numeric_limits<double>::infinity();
      if (k == 2) return std::numeric_limits<double>::quiet_NaN();
      if (k == 3) return 0.0;
      break;
    }
    default:
      break;
  }
  // Multiples of 1/4 in [-4, 4]: exact in every floating dtype.
  if (half) return static_cast<double>(r.pick(-16, 16)) / 4;
  return std::round(r.uniform(-3, 3) * 4096) / 4096;
}

enum class Layout { Contiguous, Permuted, Strided, Expanded, Offset };

// Applies the layout to a base built for it; the same calls on both sides give the same strides.
template <typename T>
T apply_layout(const T& base, Layout l, const V& perm, int64_t dim, const V& shape,
               int64_t offset) {
  switch (l) {
    case Layout::Permuted:
      return base.permute(perm);
    case Layout::Strided:
      return base.slice(dim, 0, base.size(dim), 2);
    case Layout::Expanded:
      return base.expand(shape);
    case Layout::Offset:
      return base.narrow(0, offset, base.numel() - offset).view(shape);
    default:
      return base;
  }
}

}  // namespace

Input make_input(Rng& r, const InputSpec& spec) {
  V shape(spec.shape.begin(), spec.shape.end());
  int64_t nd = static_cast<int64_t>(shape.size());
  Layout l = Layout::Contiguous;
  if (spec.allow_noncontiguous && r.coin(0.5)) {
    l = static_cast<Layout>(r.pick(1, 4));
    if (nd == 0 && l != Layout::Offset) l = Layout::Contiguous;
  }
  V base = shape, perm(static_cast<size_t>(nd));
  std::iota(perm.begin(), perm.end(), 0);
  int64_t dim = 0, offset = 0;
  switch (l) {
    case Layout::Permuted:
      std::shuffle(perm.begin(), perm.end(), r.g);
      for (int64_t i = 0; i < nd; ++i) base[static_cast<size_t>(perm[i])] = shape[i];
      break;
    case Layout::Strided:
      dim = r.pick(0, nd - 1);
      base[static_cast<size_t>(dim)] = shape[static_cast<size_t>(dim)] * 2;
      break;
    case Layout::Expanded:
      for (auto& s : base)
        if (r.coin()) s = std::min<int64_t>(s, 1);
      break;
    case Layout::Offset: {
      offset = r.pick(1, 3);
      int64_t n = std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
      base = {n + offset};
      break;
    }
    default:
      break;
  }
  int64_t n = std::accumulate(base.begin(), base.end(), int64_t{1}, std::multiplies<>());
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = draw(r, spec.dtype, spec.stress);
  ETensor eb = empty(base, TensorOptions(kFloat64));
  if (n > 0) std::memcpy(eb.data_ptr(), v.data(), v.size() * sizeof(double));
  TTensor tb = torch::from_blob(v.data(), base, at::kDouble).clone();
  eb = eb.to(spec.dtype);
  tb = tb.to(to_torch(spec.dtype));
  return {apply_layout(eb, l, perm, dim, shape, offset),
          apply_layout(tb, l, perm, dim, shape, offset)};
}

Input make_index(Rng& r, const Shape& shape, int64_t lo, int64_t hi) {
  Input in = make_input(r, {shape, kInt64, Stress::Ties, true});
  // Replace the values, keep the layout: draw fresh integers in [lo, hi] over the same elements.
  int64_t n = in.e.numel();
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = static_cast<double>(r.pick(lo, hi));
  ETensor e = empty({n}, TensorOptions(kFloat64));
  if (n > 0) std::memcpy(e.data_ptr(), v.data(), v.size() * sizeof(double));
  TTensor t = torch::from_blob(v.data(), {n}, at::kDouble).clone();
  V s(shape.begin(), shape.end());
  in.e = e.to(kInt64).view(s);
  in.t = t.to(at::kLong).view(s);
  return in;
}

DType random_dtype(Rng& r, bool with_bool) {
  static const std::vector<DType> all = {kBool,    kUInt8,    kInt32,   kInt64,
                                         kFloat16, kBFloat16, kFloat32, kFloat64};
  static const std::vector<DType> weights = {kFloat32, kFloat64, kInt64};  // the common ones
  if (r.coin(0.4)) return r.choose(weights);
  DType t = r.choose(all);
  return !with_bool && t == kBool ? kInt32 : t;
}

Shape random_shape(Rng& r, int max_dim, int64_t max_size) {
  Shape s;
  int64_t nd = r.pick(0, max_dim);
  for (int64_t i = 0; i < nd; ++i) {
    int64_t k = r.pick(0, 9);
    s.push_back(k == 0 ? 0 : k <= 2 ? 1 : r.pick(2, max_size));
  }
  return s;
}

Shape broadcastable(Rng& r, const Shape& s) {
  Shape out;
  size_t drop = static_cast<size_t>(r.pick(0, static_cast<int64_t>(s.size())));
  for (size_t i = drop; i < s.size(); ++i) out.push_back(r.coin(0.3) ? 1 : s[i]);
  return out;
}

Stress random_stress(Rng& r) {
  int64_t k = r.pick(0, 19);
  if (k < 12) return Stress::Normal;
  if (k < 15) return Stress::Ties;
  if (k < 17) return Stress::Large;
  if (k < 19) return Stress::Zeros;
  return Stress::Special;
}

namespace {

double tolerance(at::ScalarType t) {
  switch (t) {
    case at::kHalf:
      return 2e-3;
    case at::kBFloat16:
      return 1.6e-2;
    case at::kFloat:
      return 2e-5;
    case at::kDouble:
      return 1e-9;
    default:
      return 0;
  }
}

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v)
    if (std::isfinite(x)) m = std::max(m, std::abs(x));
  return m;
}

std::vector<double> values_of(const ETensor& e) {
  ETensor c = e.detach().to(kFloat64).contiguous();
  const double* p = static_cast<const double*>(c.data_ptr());
  return std::vector<double>(p, p + c.numel());
}
std::vector<double> values_of(const TTensor& t) {
  TTensor c = t.detach().to(at::kDouble).contiguous();
  const double* p = c.data_ptr<double>();
  return std::vector<double>(p, p + c.numel());
}

std::string shape_str(const V& s) {
  std::ostringstream o;
  o << "[";
  for (size_t i = 0; i < s.size(); ++i) o << (i ? ", " : "") << s[i];
  o << "]";
  return o.str();
}

// Empty when they agree, else what differs.
std::string compare(const ETensor& e, const TTensor& t, double scale, double rtol_scale,
                    double min_tolerance) {
  if (!e.defined() || !t.defined())
    return e.defined() == t.defined() ? "" : "one side has no tensor";
  at::ScalarType et = to_torch(e.dtype());
  if (et != t.scalar_type())
    return "dtype " + dtype_name(et) + " vs torch " + dtype_name(t.scalar_type());
  V es(e.sizes().begin(), e.sizes().end());
  V ts(t.sizes().begin(), t.sizes().end());
  if (es != ts) return "shape " + shape_str(es) + " vs torch " + shape_str(ts);
  std::vector<double> a = values_of(e), b = values_of(t);
  double tol = std::max(tolerance(t.scalar_type()) * rtol_scale, min_tolerance);
  double atol = tol * std::max({1.0, max_abs(b), scale});
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) && std::isnan(b[i])) continue;
    if (a[i] == b[i]) continue;
    if (std::isfinite(a[i]) && std::isfinite(b[i]) &&
        std::abs(a[i] - b[i]) <= atol + tol * std::abs(b[i]))
      continue;
    std::ostringstream o;
    o.precision(17);
    o << "value at flat " << i << " of " << shape_str(ts) << ": " << a[i] << " vs torch " << b[i];
    return o.str();
  }
  return "";
}

struct Outcome {
  bool raised = false;
  std::string error;
};

template <typename T, typename F, typename Api>
Outcome run_side(const std::vector<Input>& inputs, bool grad, bool autocast, F f, Api,
                 std::vector<T>& outs, T Input::*side) {
  Outcome o;
  try {
    std::vector<T> in;
    for (const Input& i : inputs) {
      const T& x = i.*side;
      in.push_back(grad && x.is_floating_point() ? Api::leaf(x) : x);
    }
    {
      std::optional<typename Api::Autocast> region;
      if (autocast) region.emplace();
      outs = f(in);
    }
    if (grad) {
      // The gradients of sum(out * w) with w fixed: every output element's gradient differs.
      T loss;
      for (const T& out : outs)
        if (out.defined() && out.is_floating_point()) {
          T l = (out * Api::weight_like(out)).sum();
          loss = loss.defined() ? loss + l : l;
        }
      if (loss.defined() && loss.requires_grad()) {
        Api::backward(loss);
        for (const T& x : in)
          if (x.requires_grad()) outs.push_back(Api::grad(x));
      }
    }
  } catch (const std::exception& e) {
    o.raised = true;
    o.error = e.what();
    o.error = o.error.substr(0, o.error.find('\n'));
  }
  return o;
}

}  // namespace

DifferentialReport run_differential(uint64_t seed, int64_t cases, int64_t first_case) {
  DifferentialReport rep;
  at::set_num_threads(1);  // small tensors: torch's thread pool only costs time here
  // EMBER_DIFFERENTIAL_TRACE=1 names each case before it runs: the last line names a crash.
  const bool trace = std::getenv("EMBER_DIFFERENTIAL_TRACE") != nullptr;
  // EMBER_DIFFERENTIAL_FAMILY=autocast runs only that family's cases (of the same numbering).
  const char* only = std::getenv("EMBER_DIFFERENTIAL_FAMILY");
  // EMBER_DIFFERENTIAL_DUMP=i prints case i's inputs and results.
  const char* dump_env = std::getenv("EMBER_DIFFERENTIAL_DUMP");
  const int64_t dump = dump_env ? std::stoll(dump_env) : -1;
  for (int64_t i = first_case; i < first_case + cases; ++i) {
    Rng r(seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(i));
    int family = static_cast<int>(r.pick(0, family_count() - 1));
    OpCase c = make_case(r, family);
    if (only && c.family != only) continue;
    ++rep.cases;
    ++rep.per_family[c.family];
    if (trace) std::cerr << "case " << i << " [" << c.family << "] " << c.desc << std::endl;
    std::vector<ETensor> eo;
    std::vector<TTensor> to;
    Outcome eres = run_side(c.inputs, c.grad, c.autocast, c.ember, EApi{}, eo, &Input::e);
    if (dump == i) {  // a mismatch's inputs and both sides' results, to read
      for (const Input& in : c.inputs)
        std::cerr << "input (strides " << in.t.strides() << ")\n" << in.t << "\n";
      for (const ETensor& e : eo) std::cerr << "ember result\n" << e << "\n";
    }
    if (!c.torch_broken.empty() && eres.raised) {
      ++rep.deliberate["ember raises where torch 1.13 " + c.torch_broken];
      continue;
    }
    Outcome tres;
    if (c.torch_broken.empty())
      tres = run_side(c.inputs, c.grad, c.autocast, c.torch, TApi{}, to, &Input::t);
    if (dump == i)
      for (const TTensor& t : to) std::cerr << "torch result\n" << t << "\n";
    std::string problem;
    if (!c.torch_broken.empty()) {
      problem = "ember computed where torch 1.13 " + c.torch_broken;
    } else if (eres.raised && tres.raised) {
      ++rep.both_raised;
      continue;
    } else if (tres.raised) {
      if (!c.deliberate.empty()) {
        ++rep.deliberate[c.deliberate];
        continue;
      }
      if (tres.error.find("not implemented for") != std::string::npos) {
        ++rep.extensions;
        continue;
      }
      problem = "torch raised (" + tres.error + "), ember computed";
    } else if (eres.raised) {
      problem = "ember raised (" + eres.error + "), torch computed";
    } else if (eo.size() != to.size()) {
      problem = "ember gave " + std::to_string(eo.size()) + " results, torch " +
                std::to_string(to.size());
    } else {
      double scale = 0;
      for (const Input& in : c.inputs)
        if (in.t.is_floating_point()) scale = std::max(scale, max_abs(values_of(in.t)));
      for (size_t k = 0; k < eo.size() && problem.empty(); ++k) {
        std::string d = compare(eo[k], to[k], scale, c.rtol_scale, c.min_tolerance);
        if (!d.empty()) problem = "result " + std::to_string(k) + ": " + d;
      }
    }
    if (problem.empty()) {
      ++rep.compared;
      continue;
    }
    if (c.deliberate_results) {
      ++rep.deliberate[c.deliberate];
      continue;
    }
    ++rep.mismatch_count;
    if (rep.mismatches.size() < 40) {
      std::ostringstream o;
      o << "seed " << seed << " case " << i << " [" << c.family << "] " << c.desc << ": "
        << problem;
      if (trace)
        for (const Input& in : c.inputs) o << "\n" << in.t;
      rep.mismatches.push_back(o.str());
    }
  }
  return rep;
}

std::string format_report(uint64_t seed, const DifferentialReport& r) {
  std::ostringstream o;
  o << "seed " << seed << ": " << r.cases << " cases, " << r.compared << " agreed, "
    << r.both_raised << " both raised, " << r.extensions
    << " ember extensions (torch: not implemented for the dtype), " << r.mismatch_count
    << " mismatches\n";
  for (const auto& [name, n] : r.deliberate)
    o << "  deliberate difference: " << name << ": " << n << "\n";
  o << "  families:";
  for (const auto& [name, n] : r.per_family) o << " " << name << "=" << n;
  o << "\n";
  for (const std::string& m : r.mismatches) o << "  MISMATCH " << m << "\n";
  return o.str();
}

}  // namespace ember::oracle
