// torch.fft (ember._C._fft): the transforms over one dim, two and n, and the frequency helpers;
// torch.stft and istft. One declaration each (op_table.h); the C++ is ember/ops/fft.h.
#include "bind.h"
#include "op_table.h"

namespace ember::python {
namespace {

namespace F = ember::fft;

std::optional<std::string> norm(const Args& a, size_t i) {
  return a.has(i) ? std::optional<std::string>(a.str(i)) : std::nullopt;
}
F::Sizes sizes(const Args& a, size_t i) {
  return a.has(i) ? F::Sizes(a.shape(i)) : std::nullopt;
}

using OneDim = Tensor (*)(const Tensor&, std::optional<int64_t>, int64_t, const F::Norm&);
using NDim = Tensor (*)(const Tensor&, const F::Sizes&, const F::Sizes&, const F::Norm&);

// name (one dim), name2 (the last two) and namen (any) of one transform.
void transform(OpTable& t, const std::string& name, OneDim one, NDim n) {
  t.def(name,
        [one](const Args& a) { return one(a.tensor(0), a.opt_int(1), a.int64(2), norm(a, 3)); });
  t.def(name + "2",
        [n](const Args& a) { return n(a.tensor(0), sizes(a, 1), a.shape(2), norm(a, 3)); });
  t.def(name + "n",
        [n](const Args& a) { return n(a.tensor(0), sizes(a, 1), sizes(a, 2), norm(a, 3)); });
}

TensorOptions factory_options(const Args& a, size_t dtype) {
  TensorOptions o;
  if (std::optional<DType> d = a.dtype(dtype)) o.with_dtype(*d);
  if (std::optional<Device> d = a.device(dtype + 2)) o.with_device(*d);
  return o;
}

}  // namespace

void def_fft_ops(OpTable& t) {
  transform(t, "fft", &F::fft, &F::fftn);
  transform(t, "ifft", &F::ifft, &F::ifftn);
  transform(t, "rfft", &F::rfft, &F::rfftn);
  transform(t, "irfft", &F::irfft, &F::irfftn);
  transform(t, "hfft", &F::hfft, &F::hfftn);
  transform(t, "ihfft", &F::ihfft, &F::ihfftn);
  for (const char* name : {"fftfreq", "rfftfreq"}) {
    bool full = std::string(name) == "fftfreq";
    t.def(name,
          [full](const Args& a) {
            TensorOptions o = factory_options(a, 3);
            Tensor r = full ? F::fftfreq(a.int64(0), a.real(1), o)
                            : F::rfftfreq(a.int64(0), a.real(1), o);
            if (a.flag(6)) r.requires_grad_(true);
            return r;
          });
  }
  t.def("fftshift",
        [](const Args& a) { return F::fftshift(a.tensor(0), sizes(a, 1)); });
  t.def("ifftshift",
        [](const Args& a) { return F::ifftshift(a.tensor(0), sizes(a, 1)); });
}

void def_spectral_top_level(OpTable& t) {
  t.def("stft",
        [](const Args& a) {
          return stft(a.tensor(0), a.int64(1), a.opt_int(2), a.opt_int(3),
                      a.tensor_or_undefined(4), a.flag(5), a.str(6), a.flag(7), a.opt_flag(8),
                      a.opt_flag(9));
        });
  t.def("istft",
        [](const Args& a) {
          return istft(a.tensor(0), a.int64(1), a.opt_int(2), a.opt_int(3),
                       a.tensor_or_undefined(4), a.flag(5), a.flag(6), a.opt_flag(7),
                       a.opt_int(8), a.flag(9));
        });
}

}  // namespace ember::python
