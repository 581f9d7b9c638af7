#include "ember/autograd/gradcheck.h"

#include <cmath>
#include <sstream>

#include "ember/autograd/engine.h"
#include "ember/core/grad_mode.h"
#include "ember/ops/copy.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/reduce.h"

namespace ember::autograd {

std::string gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
                      const std::vector<Tensor>& inputs, const GradcheckOptions& o) {
  for (const Tensor& t : inputs)
    EMBER_CHECK(!t.defined() || (t.dtype() == kFloat64 && t.is_cpu() && t.is_contiguous()),
                "[gradcheck] inputs must be contiguous float64 CPU tensors, got ", t.toString());
  Tensor y = fn(inputs);
  EMBER_CHECK(y.defined() && y.is_floating_point(), "[gradcheck] fn must return a floating tensor");
  bool full = y.numel() <= o.max_full_outputs;
  // Directions v: one-hot rows of the Jacobian, or one random direction.
  int64_t rows = full ? y.numel() : 1;
  std::vector<Tensor> directions;
  for (int64_t r = 0; r < rows; ++r) {
    Tensor v;
    if (full) {
      v = zeros({y.numel()}, kFloat64);
      static_cast<double*>(v.data_ptr())[r] = 1.0;
      v = v.reshape(y.sizes());
    } else {
      v = randn(y.sizes(), kFloat64);
    }
    directions.push_back(v.to(y.dtype()));
  }
  std::vector<Tensor> checked;
  std::vector<size_t> positions;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].defined() && inputs[i].requires_grad()) {
      checked.push_back(inputs[i]);
      positions.push_back(i);
    }
  EMBER_CHECK(!checked.empty(), "[gradcheck] no input requires grad");

  double worst = 0;
  std::string report;
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<Tensor> analytic;
    if (y.requires_grad()) {
      Tensor yr = fn(inputs);
      analytic = grad({yr}, checked, {directions[static_cast<size_t>(r)]}, false, false, true);
    } else {
      analytic.resize(checked.size());
    }
    for (size_t c = 0; c < checked.size(); ++c) {
      const Tensor& x = checked[c];
      double* data = static_cast<double*>(x.data_ptr());
      Tensor a = analytic[c].defined() ? analytic[c].to(kFloat64).contiguous()
                                       : zeros(x.sizes(), kFloat64);
      const double* ad = static_cast<const double*>(a.data_ptr());
      for (int64_t k = 0; k < x.numel(); ++k) {
        double saved = data[k];
        double fp, fm;
        {
          NoGradGuard no_grad;
          data[k] = saved + o.eps;
          fp = sum(fn(inputs).to(kFloat64) * directions[static_cast<size_t>(r)].to(kFloat64))
                   .item<double>();
          data[k] = saved - o.eps;
          fm = sum(fn(inputs).to(kFloat64) * directions[static_cast<size_t>(r)].to(kFloat64))
                   .item<double>();
          data[k] = saved;
        }
        double numeric = (fp - fm) / (2 * o.eps);
        double err = std::fabs(numeric - ad[k]);
        double tol = o.atol + o.rtol * std::fabs(numeric);
        double excess = std::isnan(err) ? INFINITY : err - tol;  // a NaN fails too
        if (!(err <= tol) && excess > worst) {
          worst = excess;
          std::ostringstream os;
          os << "input " << positions[c] << " element " << k << " (output direction " << r
             << "): numerical " << numeric << " vs analytical " << ad[k];
          report = os.str();
        }
      }
    }
  }
  return report;
}

}  // namespace ember::autograd
