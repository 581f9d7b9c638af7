// Printing like PyTorch's: tensor([[1.0000, 2.5000], ...], device='cuda:0', requires_grad=True).
// The number format follows torch/_tensor_str.py: integers in float tensors print as "1.", fixed
// point with 4 decimals, scientific when the range is wide; more than 1000 elements summarise.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include "ember/core/autograd_meta.h"
#include "ember/core/grad_mode.h"
#include "ember/ops/complex.h"
#include "ember/ops/copy.h"

namespace ember {
namespace {

constexpr int64_t kThreshold = 1000;
constexpr int64_t kEdgeItems = 3;
constexpr size_t kLineWidth = 80;

struct Formatter {
  bool int_mode = true, sci = false;
  size_t width = 1;

  // Floating values; bools and integers print elsewhere.
  std::string format(double v) const {
    char buf[64];
    if (std::isnan(v)) {
      return "nan";
    } else if (std::isinf(v)) {
      return v > 0 ? "inf" : "-inf";
    } else if (sci) {
      std::snprintf(buf, sizeof buf, "%.4e", v);
    } else if (int_mode) {
      std::snprintf(buf, sizeof buf, "%.0f.", v);
    } else {
      std::snprintf(buf, sizeof buf, "%.4f", v);
    }
    return buf;
  }
  std::string padded(double v) const {
    std::string s = format(v);
    return s.size() < width ? std::string(width - s.size(), ' ') + s : s;
  }
};

Formatter make_formatter(const std::vector<double>& values, bool floating, bool is_bool) {
  Formatter f;
  if (floating) {
    double lo = INFINITY, hi = 0;
    bool any = false;
    for (double v : values) {
      if (!std::isfinite(v)) continue;
      if (v != std::nearbyint(v)) f.int_mode = false;
      double a = std::fabs(v);
      if (a != 0) {
        lo = std::min(lo, a);
        hi = std::max(hi, a);
        any = true;
      }
    }
    if (any) {
      if (f.int_mode)
        f.sci = hi > 1e8;
      else
        f.sci = hi / lo > 1000.0 || hi > 1e8 || lo < 1e-4;
    }
  }
  for (double v : values)
    f.width = std::max(f.width, is_bool ? (v != 0 ? 4 : 5) : f.format(v).size());
  return f;
}

struct Printer {
  const Tensor& t;      // CPU contiguous copy: float64, or int64 for integer tensors
  const double* data;   // when float64
  const int64_t* ints;  // when int64
  const Formatter& f;
  bool summarize;
  bool is_bool;
  const double* imag = nullptr;  // complex tensors: `data` holds the real parts
  const Formatter* fi = nullptr;  // and this formats the imaginary ones

  std::string pad(const std::string& s) const {
    return s.size() < f.width ? std::string(f.width - s.size(), ' ') + s : s;
  }
  // PyTorch's complex format: the real part padded, then the imaginary part with its sign and j.
  std::string complex_element(int64_t pos) const {
    double im = imag[pos];
    std::string i = fi->format(std::fabs(im));
    if (i.size() + 1 < fi->width) i = std::string(fi->width - i.size() - 1, ' ') + i;
    return f.padded(data[pos]) + (std::signbit(im) && !std::isnan(im) ? "-" : "+") + i + "j";
  }
  size_t element_width() const { return imag ? f.width + fi->width + 2 : f.width; }
  std::string element(int64_t pos) const {
    if (imag) return complex_element(pos);
    if (ints) return pad(std::to_string(ints[pos]));
    if (!is_bool) return f.padded(data[pos]);
    return pad(data[pos] != 0 ? "True" : "False");
  }

  // Formats the sub-tensor at dim `d` starting at element offset `off`; indent is the column.
  std::string block(int64_t d, int64_t off, size_t indent) const {
    int64_t n = t.size(d);
    int64_t stride = t.stride(d);
    std::vector<int64_t> idx;
    bool cut = summarize && n > 2 * kEdgeItems;
    for (int64_t i = 0; i < n; ++i)
      if (!cut || i < kEdgeItems || i >= n - kEdgeItems) idx.push_back(i);
    std::string out = "[";
    if (d == t.dim() - 1) {
      size_t per_line = std::max<size_t>(1, (kLineWidth - indent) / (element_width() + 2));
      for (size_t k = 0; k < idx.size(); ++k) {
        if (k > 0) out += (k % per_line == 0) ? ",\n" + std::string(indent + 1, ' ') : ", ";
        if (cut && k == static_cast<size_t>(kEdgeItems)) out += " ..., ";
        out += element(off + idx[k] * stride);
      }
    } else {
      std::string sep = "," + std::string(static_cast<size_t>(t.dim() - d - 1), '\n') +
                        std::string(indent + 1, ' ');
      for (size_t k = 0; k < idx.size(); ++k) {
        if (k > 0) out += sep;
        if (cut && k == static_cast<size_t>(kEdgeItems)) out += "..." + sep;
        out += block(d + 1, off + idx[k] * stride, indent + 1);
      }
    }
    return out + "]";
  }
};

// The values that will be printed (only the edges when summarising).
template <typename T>
std::vector<T> shown_values(const Tensor& c, bool summarize) {
  std::vector<T> all = c.tolist<T>();
  if (!summarize) return all;
  std::vector<T> edges;
  for (size_t i = 0; i < all.size(); ++i) {
    bool keep = true;
    int64_t rem = static_cast<int64_t>(i);
    for (int64_t d = c.dim() - 1; d >= 0; --d) {
      int64_t n = c.size(d), k = rem % n;
      rem /= n;
      if (n > 2 * kEdgeItems && k >= kEdgeItems && k < n - kEdgeItems) keep = false;
    }
    if (keep) edges.push_back(all[i]);
  }
  return edges;
}

// "tensor(body, device=..., dtype=..., grad_fn=...)".
std::ostream& finish(std::ostream& os, const Tensor& t, const std::string& body,
                     std::vector<std::string> suffixes) {
  if (!(t.device().is_cpu() && t.device().index() <= 0))
    suffixes.push_back("device='" + t.device().str() + "'");
  if (t.dtype() != kFloat32 && t.dtype() != kInt64 && t.dtype() != kBool &&
      t.dtype() != kComplex64)
    suffixes.push_back(std::string("dtype=ember.") + dtype_name(t.dtype()));
  if (t.grad_fn())
    suffixes.push_back("grad_fn=<" + t.grad_fn()->name() + ">");
  else if (t.requires_grad())
    suffixes.push_back("requires_grad=True");
  os << "tensor(" << body;
  for (const std::string& s : suffixes) os << ", " << s;
  return os << ")";
}

// Complex tensors: the real and the imaginary parts each get a formatter, as in PyTorch.
std::ostream& print_complex(std::ostream& os, const Tensor& t) {
  Tensor parts = view_as_real(t.to(Device(DeviceType::CPU, 0), kComplex128)).contiguous();
  Tensor re = parts.select(-1, 0).contiguous(), im = parts.select(-1, 1).contiguous();
  bool summarize = t.numel() > kThreshold;
  Formatter f = make_formatter(shown_values<double>(re, summarize), true, false);
  Formatter fi = make_formatter(shown_values<double>(im, summarize), true, false);
  std::vector<std::string> suffixes;
  std::string body = "[]";
  Printer p{re, static_cast<const double*>(re.data_ptr()), nullptr, f, summarize, false,
            static_cast<const double*>(im.data_ptr()), &fi};
  if (t.dim() == 0) {
    body = p.complex_element(0);
    body.erase(0, body.find_first_not_of(' '));
  } else if (t.numel() > 0) {
    body = p.block(0, 0, 7);
  }
  if (t.numel() == 0 && t.dim() > 1) {
    std::string dims;
    for (int64_t d = 0; d < t.dim(); ++d) dims += (d ? ", " : "") + std::to_string(t.size(d));
    suffixes.push_back("size=(" + dims + ")");
  }
  return finish(os, t, body, suffixes);
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "[ undefined tensor ]";
  NoGradGuard no_grad;
  if (t.is_complex()) return print_complex(os, t);
  bool floating = t.is_floating_point();
  bool is_bool = t.dtype() == kBool;
  bool integral = !floating && !is_bool;  // printed from int64: a double rounds above 2^53
  Tensor c = t.to(Device(DeviceType::CPU, 0), integral ? kInt64 : kFloat64).contiguous();
  bool summarize = t.numel() > kThreshold;
  Formatter f;
  std::vector<double> values;
  if (integral) {
    for (int64_t v : shown_values<int64_t>(c, summarize))
      f.width = std::max(f.width, std::to_string(v).size());
  } else {
    values = shown_values<double>(c, summarize);
    f = make_formatter(values, floating, is_bool);
  }
  std::string body;
  std::vector<std::string> suffixes;
  if (t.dim() == 0) {
    body = integral  ? std::to_string(c.item<int64_t>())
           : is_bool ? (values[0] != 0 ? "True" : "False")
                     : f.format(values[0]);
  } else if (t.numel() == 0) {
    body = "[]";
    if (t.dim() > 1) {
      std::string dims;
      for (int64_t d = 0; d < t.dim(); ++d) dims += (d ? ", " : "") + std::to_string(t.size(d));
      suffixes.push_back("size=(" + dims + ")");
    }
  } else {
    const double* data = integral ? nullptr : static_cast<const double*>(c.data_ptr());
    const int64_t* ints = integral ? static_cast<const int64_t*>(c.data_ptr()) : nullptr;
    Printer p{c, data, ints, f, summarize, is_bool};
    body = p.block(0, 0, 7);
  }
  return finish(os, t, body, suffixes);
}

}  // namespace ember
