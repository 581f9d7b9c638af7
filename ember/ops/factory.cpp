#include "ember/ops/factory.h"

#include <cmath>
#include <limits>

#include "ember/core/grad_mode.h"
#include "ember/ops/complex.h"
#include "ember/ops/copy.h"
#include "ember/ops/dispatch.h"
#include "ember/ops/op_entry.h"

namespace ember {

Tensor full(const Shape& sizes, Scalar value, const TensorOptions& options) {
  EMBER_OP(full, sizes, value, options);
  Tensor t = empty(sizes, TensorOptions(options.dtype).with_device(options.device));
  t.fill_(value);
  if (options.requires_grad) t.requires_grad_(true);
  return t;
}
Tensor full(const Shape& sizes, Scalar value) { return full(sizes, value, value.dtype()); }
Tensor zeros(const Shape& sizes, const TensorOptions& options) { return full(sizes, 0, options); }
Tensor ones(const Shape& sizes, const TensorOptions& options) { return full(sizes, 1, options); }
Tensor zeros_like(const Tensor& t) { return full(t.sizes(), 0, t.options()); }
Tensor zeros_like(const Tensor& t, DType dtype) {
  EMBER_OP(zeros_like, t, dtype);
  return full(t.sizes(), 0, TensorOptions(dtype).with_device(t.device()));
}
Tensor ones_like(const Tensor& t) { return full(t.sizes(), 1, t.options()); }
Tensor ones_like(const Tensor& t, DType dtype) {
  EMBER_OP(ones_like, t, dtype);
  return full(t.sizes(), 1, TensorOptions(dtype).with_device(t.device()));
}
Tensor full_like(const Tensor& t, Scalar value) { return full(t.sizes(), value, t.options()); }
Tensor rand_like(const Tensor& t) { return rand(t.sizes(), t.options()); }
Tensor randn_like(const Tensor& t) { return randn(t.sizes(), t.options()); }
Tensor scalar_tensor(Scalar value, const TensorOptions& options) {
  EMBER_OP(scalar_tensor, value, options);
  return full({}, value, options);
}

Tensor arange(Scalar end) { return arange(0, end, 1); }
Tensor arange(Scalar end, const TensorOptions& options) { return arange(0, end, 1, options); }
Tensor arange(Scalar start, Scalar end, Scalar step) { return arange(start, end, step, {}); }
Tensor arange(Scalar start, Scalar end, Scalar step, const TensorOptions& options_in) {
  EMBER_OP(arange, start, end, step, options_in);
  // Without a dtype, int64 unless a bound or the step is a floating number (as torch.arange).
  TensorOptions options = options_in;
  bool floating = start.is_floating_point() || end.is_floating_point() || step.is_floating_point();
  if (!options.has_dtype) options.with_dtype(floating ? kDefaultFloat : kInt64);
  double s = start.to_double(), e = end.to_double(), d = step.to_double();
  EMBER_CHECK(std::isfinite(s) && std::isfinite(e) && std::isfinite(d),
              "[arange] unsupported range: ", start, " -> ", end, " (step ", step, ")");
  EMBER_CHECK(d != 0, "[arange] step must be nonzero");
  EMBER_CHECK((d > 0 && e >= s) || (d < 0 && e <= s),
              "[arange] upper bound and larger bound inconsistent with step sign: start=", start,
              ", end=", end, ", step=", step);
  double count = std::ceil((e - s) / d);
  EMBER_CHECK(count < 0x1.0p48, "[arange] ", start, " -> ", end, " in steps of ", step, " is ",
              count, " elements, too many");
  auto n = static_cast<int64_t>(count);
  // Computed in double on the host, then converted: exact for every integer range.
  std::vector<double> values(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) values[static_cast<size_t>(i)] = s + static_cast<double>(i) * d;
  return from_vector(values, {n}, TensorOptions(kFloat64)).to(options);
}

Tensor linspace(double start, double end, int64_t steps, const TensorOptions& options) {
  EMBER_OP(linspace, start, end, steps, options);
  EMBER_CHECK(steps >= 0, "[linspace] number of steps must be non-negative, got ", steps);
  // PyTorch's kernel: one element is `start`; else symmetric, the second half counting back
  // from `end`, in float arithmetic for float32 outputs (so that the values are PyTorch's bits).
  auto fill = [&](auto zero) {
    using T = decltype(zero);
    std::vector<double> values(static_cast<size_t>(steps));
    T s = static_cast<T>(start), e = static_cast<T>(end);
    T step = steps > 1 ? (e - s) / static_cast<T>(steps - 1) : T(0);
    for (int64_t i = 0; i < steps; ++i)
      values[static_cast<size_t>(i)] =
          steps == 1     ? start
          : i < steps / 2 ? static_cast<double>(s + step * static_cast<T>(i))
                          : static_cast<double>(e - step * static_cast<T>(steps - 1 - i));
    return from_vector(values, {steps}, TensorOptions(kFloat64)).to(options);
  };
  return options.dtype == kFloat32 ? fill(0.0f) : fill(0.0);
}

Tensor eye(int64_t n, int64_t m, const TensorOptions& options) {
  EMBER_OP(eye, n, m, options);
  if (m == -1) m = n;  // the default: square
  EMBER_CHECK(n >= 0 && m >= 0, "[eye] n and m must be non-negative, got ", n, " and ", m);
  Tensor t = zeros({n, m}, TensorOptions(options.dtype));
  int64_t k = std::min(n, m);
  if (k > 0) {
    dispatch_all_and_complex(t.dtype(), "eye", [&](auto tag) {
      using T = EMBER_TYPE(tag);
      T* p = static_cast<T*>(t.data_ptr());
      for (int64_t i = 0; i < k; ++i) p[i * m + i] = static_cast<T>(static_cast<opmath_t<T>>(1));
    });
  }
  Tensor r = t.to(options.device);
  if (options.requires_grad) r.requires_grad_(true);
  return r;
}

namespace {
// Significand bits of a floating dtype (53 for the others: integers take no uniform draws).
int significand_bits(DType t) {
  switch (t) {
    case kFloat32:
      return 24;
    case kFloat16:
      return 11;
    case kBFloat16:
      return 8;
    default:
      return 53;
  }
}

// Fills a contiguous tensor with the generator's next stream.
void draw(const Tensor& t, RandomParams p, Generator* gen) {
  if (t.is_complex()) {
    // Both parts drawn as reals; a normal's variance is split between them, as PyTorch's.
    if (p.kind == RandomKind::Normal) p.b *= M_SQRT1_2;
    NoGradGuard no_grad;
    return draw(view_as_real(t), p, gen);
  }
  p.bits = significand_bits(t.dtype());
  std::tie(p.seed, p.offset) = (gen ? *gen : default_generator()).next();
  EMBER_DISPATCH_DEVICE(t.device(), random, t, p);
}

Tensor random_tensor(const Shape& sizes, const TensorOptions& options, RandomParams p,
                     Generator* gen) {
  Tensor t = empty(sizes, TensorOptions(options.dtype).with_device(options.device));
  draw(t, p, gen);
  if (options.requires_grad) t.requires_grad_(true);
  return t;
}
void fill_random(Tensor& t, RandomParams p, Generator* gen) {
  if (t.is_contiguous()) {
    draw(t, p, gen);
  } else {
    Tensor tmp = random_tensor(t.sizes(), t.options(), p, gen);
    t.copy_(tmp);
  }
  t.bump_version();
}
}  // namespace

Tensor rand(const Shape& sizes, const TensorOptions& options, Generator* gen) {
  EMBER_OP(rand, sizes, options, gen);
  EMBER_CHECK(is_floating_point(options.dtype) || is_complex(options.dtype),
              "[rand] expected a floating or complex dtype, got ",
              options.dtype);
  return random_tensor(sizes, options, {RandomKind::Uniform, 0, 1}, gen);
}
Tensor randn(const Shape& sizes, const TensorOptions& options, Generator* gen) {
  EMBER_OP(randn, sizes, options, gen);
  EMBER_CHECK(is_floating_point(options.dtype) || is_complex(options.dtype),
              "[randn] expected a floating or complex dtype, got ",
              options.dtype);
  return random_tensor(sizes, options, {RandomKind::Normal, 0, 1}, gen);
}
Tensor randint(int64_t low, int64_t high, const Shape& sizes, const TensorOptions& options,
               Generator* gen) {
  EMBER_OP(randint, low, high, sizes, options, gen);
  EMBER_CHECK(high > low, "[randint] expected low < high, got low=", low, ", high=", high);
  TensorOptions o = options;
  if (!o.has_dtype) o.with_dtype(kInt64);  // a device alone keeps torch's int64
  if (!is_floating_point(o.dtype) && o.dtype != kInt64) {
    int64_t lo = integral_min(o.dtype), hi = integral_max(o.dtype);
    EMBER_CHECK(low >= lo && high - 1 <= hi, "[randint] [", low, ", ", high,
                ") is out of bounds for ", o.dtype);
  }
  return random_tensor(
      sizes, o, {RandomKind::Integer, static_cast<double>(low), static_cast<double>(high)}, gen);
}
Tensor randperm(int64_t n, const TensorOptions& options, Generator* gen) {
  EMBER_OP(randperm, n, options, gen);
  EMBER_CHECK(n >= 0, "[randperm] n must be non-negative, got ", n);
  Generator& g = gen ? *gen : default_generator();
  std::vector<int64_t> perm(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) perm[static_cast<size_t>(i)] = i;
  auto [seed, offset] = g.next();
  for (int64_t i = n - 1; i > 0; --i) {  // Fisher-Yates
    Philox r(seed, offset, static_cast<uint64_t>(i));
    uint64_t w = (static_cast<uint64_t>(r.c[0]) << 32) | r.c[1];
    std::swap(perm[static_cast<size_t>(i)],
              perm[static_cast<size_t>(w % static_cast<uint64_t>(i + 1))]);
  }
  return from_vector(perm, {n}, kInt64).to(options);
}
Tensor& uniform_(Tensor& t, double from, double to, Generator* gen) {
  EMBER_OP(uniform_, t, from, to, gen);
  EMBER_CHECK(from <= to, "[uniform_] expects to return a [from, to) range, but found from=", from,
              " > to=", to);
  fill_random(t, {RandomKind::Uniform, from, to}, gen);
  return t;
}
Tensor& normal_(Tensor& t, double mean, double std, Generator* gen) {
  EMBER_OP(normal_, t, mean, std, gen);
  EMBER_CHECK(std >= 0, "[normal_] expects std >= 0.0, but found std ", std);
  fill_random(t, {RandomKind::Normal, mean, std}, gen);
  return t;
}
Tensor bernoulli(const Tensor& like, double p, Generator* gen) {
  EMBER_OP(bernoulli, like, p, gen);
  EMBER_CHECK(p >= 0 && p <= 1, "[bernoulli] expected 0 <= p <= 1, got ", p);
  return random_tensor(like.sizes(), TensorOptions(like.dtype()).with_device(like.device()),
                       {RandomKind::Bernoulli, p, 0}, gen);
}

template <typename T>
Tensor from_vector(const std::vector<T>& values, Shape sizes, const TensorOptions& options) {
  EMBER_OP(from_vector, values, sizes, options);
  if (sizes.empty()) sizes = {static_cast<int64_t>(values.size())};
  EMBER_CHECK(numel_of(sizes) == static_cast<int64_t>(values.size()), "[tensor] shape ", sizes,
              " needs ", numel_of(sizes), " values, got ", values.size());
  Tensor t = empty(sizes, TensorOptions(dtype_of<T>));
  if (!values.empty()) std::memcpy(t.data_ptr(), values.data(), values.size() * sizeof(T));
  Tensor r = t.to(options.device, options.dtype);
  if (options.requires_grad) r.requires_grad_(true);
  return r;
}
template <>
Tensor from_vector(const std::vector<bool>& values, Shape sizes, const TensorOptions& options) {
  EMBER_OP(from_vector, values, sizes, options);
  std::vector<uint8_t> bytes(values.begin(), values.end());
  Tensor t = from_vector(bytes, std::move(sizes), kUInt8);
  return t.to(options.device, options.dtype);
}
template Tensor from_vector(const std::vector<uint8_t>&, Shape, const TensorOptions&);
template Tensor from_vector(const std::vector<int32_t>&, Shape, const TensorOptions&);
template Tensor from_vector(const std::vector<int64_t>&, Shape, const TensorOptions&);
template Tensor from_vector(const std::vector<float>&, Shape, const TensorOptions&);
template Tensor from_vector(const std::vector<double>&, Shape, const TensorOptions&);
template Tensor from_vector(const std::vector<Half>&, Shape, const TensorOptions&);
template Tensor from_vector(const std::vector<BFloat16>&, Shape, const TensorOptions&);

void TensorData::list(size_t dim, int64_t length) {
  if (dim == sizes_.size()) {  // the first list at this depth sets its length
    EMBER_CHECK_VALUE(values_.empty(), "[tensor] expected a number at dim ", dim,
                      ", got a sequence");
    sizes_.push_back(length);
  } else {
    EMBER_CHECK_VALUE(sizes_[dim] == length, "[tensor] expected sequence of length ", sizes_[dim],
                      " at dim ", dim, " (got ", length, ")");
  }
}

void TensorData::value(size_t dim, const Scalar& v) {
  EMBER_CHECK_VALUE(dim == sizes_.size(), "[tensor] expected a sequence at dim ", dim,
                    " (the first element nests ", sizes_.size(), " deep), got a number");
  if (values_.empty()) {
    // The first number completes the shape: room for all of it at once (bounded, as ragged data
    // may promise more than it holds) saves the regrowth of long lists.
    values_.reserve(static_cast<size_t>(std::min<int64_t>(numel_of(sizes_), int64_t{1} << 24)));
  }
  values_.push_back(v);
  kind_ = std::max(kind_, v.kind());
}

Tensor TensorData::make(const TensorOptions& options) const {
  DType inferred = kind_ == Scalar::Kind::Complex ? to_complex_dtype(kDefaultFloat)
                   : kind_ == Scalar::Kind::Float ? kDefaultFloat
                   : values_.empty()              ? kDefaultFloat
                   : kind_ == Scalar::Kind::Int   ? kInt64
                                                  : kBool;
  EMBER_CHECK(numel_of(sizes_) == static_cast<int64_t>(values_.size()), "[tensor] shape ", sizes_,
              " needs ", numel_of(sizes_), " values, got ", values_.size());
  // Written in float64 or int64 first so that int64 values stay exact, then converted at once.
  Tensor t;
  if (is_complex(inferred)) {
    t = empty(sizes_, TensorOptions(kComplex128));
    auto* p = static_cast<Complex<double>*>(t.data_ptr());
    for (const Scalar& x : values_) *p++ = x.to<Complex<double>>();
  } else if (inferred == kDefaultFloat) {
    t = empty(sizes_, TensorOptions(kFloat64));
    auto* p = static_cast<double*>(t.data_ptr());
    for (const Scalar& x : values_) *p++ = x.to_double();
  } else {
    t = empty(sizes_, TensorOptions(kInt64));
    auto* p = static_cast<int64_t*>(t.data_ptr());
    for (const Scalar& x : values_) *p++ = x.to_int();
  }
  Tensor r = t.to(options.device, options.has_dtype ? options.dtype : inferred);
  if (options.requires_grad) r.requires_grad_(true);
  return r;
}

namespace {
void walk(const NestedList& data, size_t dim, TensorData& out) {
  if (!data.is_list()) {
    out.value(dim, data.value());
    return;
  }
  out.list(dim, static_cast<int64_t>(data.items().size()));
  for (const NestedList& item : data.items()) walk(item, dim + 1, out);
}
}  // namespace

Tensor tensor(const NestedList& data, const TensorOptions& options) {
  EMBER_OP(tensor, data, options);
  TensorData out;
  walk(data, 0, out);
  return out.make(options);
}

}  // namespace ember
