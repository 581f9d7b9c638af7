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
  t.def(name + "(Tensor input, int? n=None, int dim=-1, str? norm=None, *, Tensor? out=None)",
        [one](const Args& a) { return one(a.tensor(0), a.opt_int(1), a.int64(2), norm(a, 3)); },
        kFunction);
  t.def(name + "2(Tensor input, int[]? s=None, int[] dim=(-2, -1), str? norm=None, *, "
               "Tensor? out=None)",
        [n](const Args& a) { return n(a.tensor(0), sizes(a, 1), a.shape(2), norm(a, 3)); },
        kFunction);
  t.def(name + "n(Tensor input, int[]? s=None, int[]? dim=None, str? norm=None, *, "
               "Tensor? out=None)",
        [n](const Args& a) { return n(a.tensor(0), sizes(a, 1), sizes(a, 2), norm(a, 3)); },
        kFunction);
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
    t.def(std::string(name) +
              "(int n, float d=1.0, *, Tensor? out=None, ScalarType? dtype=None, "
              "PyObject layout=None, Device? device=None, bool requires_grad=False)",
          [full](const Args& a) {
            TensorOptions o = factory_options(a, 3);
            Tensor r = full ? F::fftfreq(a.int64(0), a.real(1), o)
                            : F::rfftfreq(a.int64(0), a.real(1), o);
            if (a.flag(6)) r.requires_grad_(true);
            return r;
          },
          kFunction);
  }
  t.def("fftshift(Tensor input, int[]? dim=None)",
        [](const Args& a) { return F::fftshift(a.tensor(0), sizes(a, 1)); }, kFunction);
  t.def("ifftshift(Tensor input, int[]? dim=None)",
        [](const Args& a) { return F::ifftshift(a.tensor(0), sizes(a, 1)); }, kFunction);
}

void def_spectral_top_level(OpTable& t) {
  t.def("stft(Tensor input, int n_fft, int? hop_length=None, int? win_length=None, "
        "Tensor? window=None, bool center=True, str pad_mode='reflect', bool normalized=False, "
        "bool? onesided=None, bool? return_complex=None)",
        [](const Args& a) {
          return stft(a.tensor(0), a.int64(1), a.opt_int(2), a.opt_int(3),
                      a.tensor_or_undefined(4), a.flag(5), a.str(6), a.flag(7), a.opt_flag(8),
                      a.opt_flag(9));
        });
  t.def("istft(Tensor input, int n_fft, int? hop_length=None, int? win_length=None, "
        "Tensor? window=None, bool center=True, bool normalized=False, bool? onesided=None, "
        "int? length=None, bool return_complex=False)",
        [](const Args& a) {
          return istft(a.tensor(0), a.int64(1), a.opt_int(2), a.opt_int(3),
                       a.tensor_or_undefined(4), a.flag(5), a.flag(6), a.opt_flag(7),
                       a.opt_int(8), a.flag(9));
        });
}

}  // namespace ember::python
