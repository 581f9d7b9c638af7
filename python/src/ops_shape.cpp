// Views, joins, rearrangements, indexing, sorting and matrix products as functions and Tensor
// methods, one declaration each (op_table.h).
#include "ember/ops/join.h"
#include "ember/ops/linalg.h"
#include "ember/ops/inplace_geometry.h"
#include "ember/ops/search.h"
#include "ember/ops/shape.h"
#include "ember/ops/sort.h"
#include "ember/ops/tensor_index.h"
#include "op_table.h"

namespace ember::python {
namespace {

Shape sizes(const Args& a, size_t i) { return a.shape(i); }

// dims to a list of views (split, chunk, unbind return tuples).
using Tensors = std::vector<Tensor>;

// dim= of squeeze: one dim or several (PyTorch 2.0's tuple form).
Tensor squeeze_dims(const Tensor& x, const std::vector<int64_t>& dims) {
  std::vector<int64_t> ds;
  for (int64_t d : dims) ds.push_back(wrap_dim(d, x.dim() == 0 ? 1 : x.dim(), "squeeze"));
  std::sort(ds.rbegin(), ds.rend());
  Tensor r = x;
  for (int64_t d : ds)
    if (r.dim() > 0 && r.size(d) == 1) r = r.squeeze(d);
  return r;
}

// x.new_zeros(...) and friends: x's dtype and device unless given.
TensorOptions like(const Args& a, size_t dtype_at) {
  const Tensor& x = a.tensor(0);
  TensorOptions o = x.options();
  o.with_requires_grad(false);
  if (auto dt = a.dtype(dtype_at)) o.with_dtype(*dt);
  if (auto dev = a.device(dtype_at + 2)) o.with_device(*dev);
  return o;
}
Tensor grad_if(Tensor t, const Args& a, size_t at) {
  if (a.flag(at)) t.requires_grad_(true);
  return t;
}
// A Scalar-or-Tensor `value` of masked_fill / index_fill as a Scalar.
Scalar value_of(const Args& a, size_t i) {
  py::handle h = a.object(i);
  if (is_tensor(h)) {
    const Tensor& t = as_tensor(h);
    EMBER_CHECK(t.dim() == 0 || t.numel() == 1, "only a 0-dim value tensor is supported, got "
                "shape ", t.sizes());
    return t.item();
  }
  return to_scalar(h, "value");
}

}  // namespace

void def_shape_ops(OpTable& t) {
  // --- resizing in place ---
  t.def(
      "resize_",
      [](const Args& a) {
        Tensor x = a.tensor(0);
        resize_(x, sizes(a, 1));
        return InPlace{};
      });
  t.def("resize_as_",
        [](const Args& a) {
          Tensor x = a.tensor(0);
          resize_as_(x, a.tensor(1));
          return InPlace{};
        });
  // The in-place views: the tensor itself becomes the view.
  auto in_place = [&t](const std::string& key, Tensor& (*op)(Tensor&, const Args&)) {
    t.def(
        key,
        [op](const Args& a) {
          Tensor x = a.tensor(0);
          op(x, a);
          return InPlace{};
        });
  };
  in_place("squeeze_", [](Tensor& x, const Args&) -> Tensor& { return squeeze_(x); });
  in_place("squeeze_.dim",
           [](Tensor& x, const Args& a) -> Tensor& { return squeeze_(x, a.int64(1)); });
  in_place("unsqueeze_",
           [](Tensor& x, const Args& a) -> Tensor& { return unsqueeze_(x, a.int64(1)); });
  in_place("t_", [](Tensor& x, const Args&) -> Tensor& { return t_(x); });
  for (const char* name : {"transpose_", "swapdims_", "swapaxes_"})
    in_place(name, [](Tensor& x, const Args& a) -> Tensor& {
      return transpose_(x, a.int64(1), a.int64(2));
    });
  in_place("as_strided_",
           [](Tensor& x, const Args& a) -> Tensor& {
             return as_strided_(x, a.shape(1), a.shape(2), a.opt_int(3));
           });
  in_place("set_",
           [](Tensor& x, const Args& a) -> Tensor& { return set_(x, a.tensor(1)); });

  // --- views ---
  t.def("view", [](const Args& a) { return a.tensor(0).view(sizes(a, 1)); });
  t.def("view.dtype",
        [](const Args& a) { return view_dtype(a.tensor(0), *a.dtype(1)); });
  t.def("view_as",
        [](const Args& a) { return a.tensor(0).view(a.tensor(1).sizes()); });
  t.def("reshape",
        [](const Args& a) { return a.tensor(0).reshape(sizes(a, 1)); });
  t.def("reshape_as",
        [](const Args& a) { return a.tensor(0).reshape(a.tensor(1).sizes()); });
  for (const char* name : {"transpose", "swapaxes", "swapdims"})
    t.def(name,
          [](const Args& a) { return a.tensor(0).transpose(a.int64(1), a.int64(2)); });
  t.def("t", [](const Args& a) { return a.tensor(0).t(); });
  t.def("permute",
        [](const Args& a) { return a.tensor(0).permute(sizes(a, 1)); });
  t.def("movedim",
        [](const Args& a) { return movedim(a.tensor(0), sizes(a, 1), sizes(a, 2)); });
  t.def("moveaxis",
        [](const Args& a) { return movedim(a.tensor(0), sizes(a, 1), sizes(a, 2)); });
  // storage_offset None keeps the input's (PyTorch's default).
  t.def("as_strided",
        [](const Args& a) {
          const Tensor& x = a.tensor(0);
          return as_strided(x, a.shape(1), a.shape(2),
                            a.opt_int(3).value_or(x.storage_offset()));
        });
  t.def("narrow",
        [](const Args& a) { return a.tensor(0).narrow(a.int64(1), a.int64(2), a.int64(3)); });
  t.def("narrow.Tensor", [](const Args& a) {
    return a.tensor(0).narrow(a.int64(1), a.tensor(2).item<int64_t>(), a.int64(3));
  });
  t.def("select",
        [](const Args& a) { return a.tensor(0).select(a.int64(1), a.int64(2)); });
  t.def("squeeze", [](const Args& a) { return a.tensor(0).squeeze(); });
  t.def("squeeze.dims",
        [](const Args& a) { return squeeze_dims(a.tensor(0), a.ints(1)); });
  t.def("unsqueeze",
        [](const Args& a) { return a.tensor(0).unsqueeze(a.int64(1)); });
  t.def("expand", [](const Args& a) {
    const Tensor& x = a.tensor(0);
    Shape s = sizes(a, 1);
    // -1 keeps a dim's size.
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t xd = static_cast<int64_t>(i) - static_cast<int64_t>(s.size()) + x.dim();
      if (s[i] == -1 && xd >= 0) s[i] = x.size(xd);
    }
    return x.expand(s);
  });
  t.def("expand_as",
        [](const Args& a) { return a.tensor(0).expand(a.tensor(1).sizes()); });
  t.def("diagonal",
        [](const Args& a) { return diagonal(a.tensor(0), a.int64(1), a.int64(2), a.int64(3)); });
  t.def("unfold", [](const Args& a) {
    return unfold(a.tensor(0), a.int64(1), a.int64(2), a.int64(3));
  });
  t.def("flatten",
        [](const Args& a) { return a.tensor(0).flatten(a.int64(1), a.int64(2)); });
  t.def("unflatten",
        [](const Args& a) { return a.tensor(0).unflatten(a.int64(1), sizes(a, 2)); });
  t.def("ravel", [](const Args& a) { return a.tensor(0).reshape({-1}); });

  // --- splitting and joining ---
  t.def("split.Tensor",
        [](const Args& a) { return a.tensor(0).split(a.int64(1), a.int64(2)); });
  t.def("split.sizes",
        [](const Args& a) { return a.tensor(0).split(sizes(a, 1), a.int64(2)); });
  t.def("split_with_sizes",
        [](const Args& a) { return a.tensor(0).split(sizes(a, 1), a.int64(2)); });
  t.def("chunk",
        [](const Args& a) { return a.tensor(0).chunk(a.int64(1), a.int64(2)); });
  t.def("tensor_split.sections",
        [](const Args& a) { return tensor_split(a.tensor(0), a.int64(1), a.int64(2)); });
  t.def("tensor_split.indices",
        [](const Args& a) { return tensor_split_at(a.tensor(0), sizes(a, 1), a.int64(2)); });
  // A tensor of sections (0-dim) or indices (1-dim), as PyTorch's tensor_indices_or_sections.
  t.def("tensor_split.tensor_indices_or_sections",
        [](const Args& a) {
          const Tensor& x = a.tensor(0);
          Tensor s = a.tensor(1);
          EMBER_CHECK(s.device().is_cpu() && (s.dtype() == kInt64),
                      "tensor_split expected tensor_indices_or_sections to have dtype of long, "
                      "but got ", s.dtype());
          EMBER_CHECK(s.dim() <= 1, "tensor_split expected tensor_indices_or_sections to be a "
                      "zero-dimensional or one-dimensional tensor, but got a tensor with ",
                      s.dim(), " dims");
          if (s.dim() == 0) return tensor_split(x, s.item<int64_t>(), a.int64(2));
          std::vector<int64_t> v(static_cast<size_t>(s.numel()));
          for (int64_t i = 0; i < s.numel(); ++i) v[static_cast<size_t>(i)] = s[i].item<int64_t>();
          return tensor_split_at(x, Shape(v.begin(), v.end()), a.int64(2));
        });
  t.def("unbind",
        [](const Args& a) { return a.tensor(0).unbind(a.int64(1)); });
  for (const char* name : {"cat", "concat", "concatenate"})
    t.def(name,
          [](const Args& a) { return cat(a.tensors(0), a.int64(1)); });
  t.def("stack",
        [](const Args& a) { return stack(a.tensors(0), a.int64(1)); });
  t.def("hstack", [](const Args& a) {
    const Tensors& ts = a.tensors(0);
    bool one_d = !ts.empty() && ts[0].dim() <= 1;
    return cat(ts, one_d ? 0 : 1);
  });
  t.def("vstack", [](const Args& a) {
    Tensors ts;
    for (const Tensor& x : a.tensors(0)) ts.push_back(x.dim() < 2 ? x.reshape({1, -1}) : x);
    return cat(ts, 0);
  });
  t.def("row_stack", [](const Args& a) {
    Tensors ts;
    for (const Tensor& x : a.tensors(0)) ts.push_back(x.dim() < 2 ? x.reshape({1, -1}) : x);
    return cat(ts, 0);
  });
  t.def("column_stack", [](const Args& a) {
    Tensors ts;
    for (const Tensor& x : a.tensors(0)) ts.push_back(x.dim() < 2 ? x.reshape({-1, 1}) : x);
    return cat(ts, 1);
  });
  t.def("dstack", [](const Args& a) {
    Tensors ts;
    for (const Tensor& x : a.tensors(0))
      ts.push_back(x.dim() == 0 ? x.reshape({1, 1, 1})
                   : x.dim() == 1 ? x.reshape({1, -1, 1})
                   : x.dim() == 2 ? x.unsqueeze(2)
                                  : x);
    return cat(ts, 2);
  });
  t.def("repeat",
        [](const Args& a) { return a.tensor(0).repeat(sizes(a, 1)); });
  t.def("tile", [](const Args& a) { return tile(a.tensor(0), sizes(a, 1)); });
  t.def("repeat_interleave.self_int",
        [](const Args& a) {
          const Tensor& x = a.tensor(0);
          int64_t r = a.int64(1);
          if (!a.has(2)) {
            Tensor flat = x.reshape({-1});
            return flat.unsqueeze(1).expand({flat.size(0), r}).reshape({-1});
          }
          int64_t d = wrap_dim(a.int64(2), x.dim(), "repeat_interleave");
          Shape s = x.sizes();
          s.insert(s.begin() + d + 1, r);
          Shape out = x.sizes();
          out[static_cast<size_t>(d)] *= r;
          return x.unsqueeze(d + 1).expand(s).reshape(out);
        });
  t.def("repeat_interleave.self_Tensor",
        [](const Args& a) {
          const Tensor& x = a.tensor(0);
          Tensor rep = a.tensor(1);
          Tensor src = a.has(2) ? x : x.reshape({-1});
          int64_t d = a.has(2) ? wrap_dim(a.int64(2), x.dim(), "repeat_interleave") : 0;
          if (rep.numel() == 1) rep = rep.reshape({1}).expand({src.size(d)});
          // Each index i repeated rep[i] times, as a gather along d.
          Tensor idx = repeat_interleave(rep);
          return index_select(src, d, idx);
        });
  t.def("repeat_interleave.Tensor",
        [](const Args& a) { return repeat_interleave(a.tensor(0)); });

  // --- rearranging ---
  t.def("flip", [](const Args& a) { return flip(a.tensor(0), sizes(a, 1)); });
  t.def("fliplr", [](const Args& a) { return flip(a.tensor(0), {1}); });
  t.def("flipud", [](const Args& a) { return flip(a.tensor(0), {0}); });
  t.def("roll",
        [](const Args& a) { return roll(a.tensor(0), sizes(a, 1), sizes(a, 2)); });
  t.def("rot90", [](const Args& a) { return rot90(a.tensor(0), a.int64(1), sizes(a, 2)); });
  t.def("tril",
        [](const Args& a) { return tril(a.tensor(0), a.int64(1)); });
  t.def("triu",
        [](const Args& a) { return triu(a.tensor(0), a.int64(1)); });
  t.def(
      "tril_",
      [](const Args& a) {
        return inplace_op(a.tensor(0), "tril_", {},
                          [&](const Tensor& x) { return tril(x, a.int64(1)); });
      });
  t.def(
      "triu_",
      [](const Args& a) {
        return inplace_op(a.tensor(0), "triu_", {},
                          [&](const Tensor& x) { return triu(x, a.int64(1)); });
      });
  t.def("diag",
        [](const Args& a) { return diag(a.tensor(0), a.int64(1)); });
  t.def("diag_embed", [](const Args& a) {
    return diag_embed(a.tensor(0), a.int64(1), a.int64(2), a.int64(3));
  });
  t.def("_meshgrid",
        [](const Args& a) { return meshgrid(a.tensors(0), a.has(1) ? a.str(1) : "ij"); });

  // --- sorting, searching ---
  t.def("sort",
        [](const Args& a) {
          auto [v, i] = sort(a.tensor(0), a.int64(1), a.flag(2), a.opt_flag(3).value_or(false));
          return NamedResult{"return_types.sort", {v, i}};
        });
  t.def("sort.stable",
        [](const Args& a) {
          auto [v, i] = sort(a.tensor(0), a.int64(2), a.flag(3), a.opt_flag(1).value_or(false));
          return NamedResult{"return_types.sort", {v, i}};
        });
  t.def("argsort",
        [](const Args& a) { return argsort(a.tensor(0), a.int64(1), a.flag(2), a.flag(3)); });
  t.def("msort", [](const Args& a) { return std::get<0>(sort(a.tensor(0), 0)); });
  t.def("topk",
        [](const Args& a) {
          auto [v, i] = topk(a.tensor(0), a.int64(1), a.int64(2), a.flag(3), a.flag(4));
          return NamedResult{"return_types.topk", {v, i}};
        });
  t.def("kthvalue", [](const Args& a) {
    auto [v, i] = kthvalue(a.tensor(0), a.int64(1), a.int64(2), a.flag(3));
    return NamedResult{"return_types.kthvalue", {v, i}};
  });
  t.def("median", [](const Args& a) { return median(a.tensor(0)); });
  t.def("median.dim", [](const Args& a) {
    auto [v, i] = median(a.tensor(0), a.int64(1), a.flag(2));
    return NamedResult{"return_types.median", {v, i}};
  });
  t.def("cumsum",
        [](const Args& a) { return cumsum(a.tensor(0), a.int64(1), a.dtype(2)); });
  t.def("cumprod",
        [](const Args& a) { return cumprod(a.tensor(0), a.int64(1), a.dtype(2)); });
  t.def(
      "cumsum_",
      [](const Args& a) {
        return inplace_op(a.tensor(0), "cumsum_", {},
                          [&](const Tensor& x) { return cumsum(x, a.int64(1), a.dtype(2)); });
      });
  t.def("unique",
        [](const Args& a) -> py::object {
          EMBER_CHECK_VALUE(!a.has(4), "unique(dim=...) is not supported by ember yet");
          const Tensor& x = a.tensor(0);
          auto r = nogil_any([&] { return unique(x); });
          bool inv = a.flag(2), cnt = a.flag(3);
          if (!inv && !cnt) return py::cast(std::get<0>(r));
          py::list out;
          out.append(std::get<0>(r));
          if (inv) out.append(std::get<1>(r));
          if (cnt) out.append(std::get<2>(r));
          return py::tuple(out);
        });
  t.def("unique_consecutive",
        [](const Args& a) -> py::object {
          EMBER_CHECK_VALUE(!a.has(3), "unique_consecutive(dim=...) is not supported by ember yet");
          const Tensor& x = a.tensor(0);
          auto r = nogil_any([&] { return unique_consecutive(x); });
          bool inv = a.flag(1), cnt = a.flag(2);
          if (!inv && !cnt) return py::cast(std::get<0>(r));
          py::list out;
          out.append(std::get<0>(r));
          if (inv) out.append(std::get<1>(r));
          if (cnt) out.append(std::get<2>(r));
          return py::tuple(out);
        });
  t.def("bincount", [](const Args& a) {
    return bincount(a.tensor(0), a.tensor_or_undefined(1), a.int64(2));
  });
  t.def("histc",
        [](const Args& a) {
          return histc(a.tensor(0), a.int64(1), a.scalar(2).to_double(), a.scalar(3).to_double());
        });
  t.def("searchsorted.Tensor",
        [](const Args& a) {
          bool right = a.flag(3) || (a.has(4) && a.str(4) == "right");
          Tensor seq = a.has(5) ? gather(a.tensor(0), -1, a.tensor(5)) : a.tensor(0);
          return searchsorted(seq, a.tensor(1), right, a.flag(2));
        });
  t.def("searchsorted.Scalar",
        [](const Args& a) {
          bool right = a.flag(3) || (a.has(4) && a.str(4) == "right");
          Tensor seq = a.has(5) ? gather(a.tensor(0), -1, a.tensor(5)) : a.tensor(0);
          Tensor v = scalar_tensor(a.scalar(1), seq.options());
          return searchsorted(seq, v, right, a.flag(2));
        });
  t.def("bucketize",
        [](const Args& a) { return searchsorted(a.tensor(1), a.tensor(0), a.flag(3), a.flag(2)); });
  t.def("count_nonzero",
        [](const Args& a) { return count_nonzero(a.tensor(0), a.dims(1)); });

  // --- indexing ---
  t.def("gather",
        [](const Args& a) { return gather(a.tensor(0), a.int64(1), a.tensor(2)); });
  t.def("take_along_dim", [](const Args& a) {
    return take_along_dim(a.tensor(0), a.tensor(1), a.opt_int(2));
  });
  t.def("take", [](const Args& a) { return take(a.tensor(0), a.tensor(1)); });
  // scatter's reduce= ('add' or 'multiply', PyTorch's older spelling of scatter_reduce's).
  auto scatter_by = [](const Args& a, const Tensor& x, const Tensor& src) {
    if (!a.has(4)) return scatter(x, a.int64(1), a.tensor(2), src);
    std::string r = a.str(4);
    EMBER_CHECK(r == "add" || r == "multiply", "reduce argument must be either add or multiply.");
    return scatter_reduce(x, a.int64(1), a.tensor(2), src, r == "add" ? "sum" : "prod");
  };
  auto value_src = [](const Args& a, const Tensor& x) {
    return full(a.tensor(2).sizes(), a.scalar(3), x.options());
  };
  t.def("scatter.Tensor",
        [scatter_by](const Args& a) { return scatter_by(a, a.tensor(0), a.tensor(3)); });
  t.def("scatter.Scalar",
        [scatter_by, value_src](const Args& a) {
          return scatter_by(a, a.tensor(0), value_src(a, a.tensor(0)));
        });
  t.def(
      "scatter_.Tensor",
      [scatter_by](const Args& a) {
        const Tensor& src = a.tensor(3);
        return inplace_op(a.tensor(0), "scatter_", {&src},
                          [&](const Tensor& x) { return scatter_by(a, x, src); });
      });
  t.def(
      "scatter_.Scalar",
      [scatter_by, value_src](const Args& a) {
        return inplace_op(a.tensor(0), "scatter_", {}, [&](const Tensor& x) {
          return scatter_by(a, x, value_src(a, x));
        });
      });
  t.def("scatter_reduce",
        [](const Args& a) {
          return scatter_reduce(a.tensor(0), a.int64(1), a.tensor(2), a.tensor(3), a.str(4),
                                a.flag(5));
        });
  t.def(
      "scatter_reduce_",
      [](const Args& a) {
        const Tensor& src = a.tensor(3);
        return inplace_op(a.tensor(0), "scatter_reduce_", {&src},
                          [&](const Tensor& x) {
                            return scatter_reduce(x, a.int64(1), a.tensor(2), src, a.str(4),
                                                  a.flag(5));
                          });
      });
  t.def("scatter_add",
        [](const Args& a) { return scatter_add(a.tensor(0), a.int64(1), a.tensor(2), a.tensor(3)); });
  t.def(
      "scatter_add_",
      [](const Args& a) {
        Tensor x = a.tensor(0);
        x.scatter_add_(a.int64(1), a.tensor(2), a.tensor(3));
        return InPlace{};
      });
  t.def("embedding_renorm_",
        [](const Args& a) {
          Tensor w = a.tensor(0);
          return embedding_renorm_(w, a.tensor(1), a.real(2), a.real(3));
        });
  t.def("index_select",
        [](const Args& a) { return index_select(a.tensor(0), a.int64(1), a.tensor(2)); });
  t.def("index_add",
        [](const Args& a) {
          return index_add(a.tensor(0), a.int64(1), a.tensor(2), a.tensor(3), a.scalar(4));
        });
  t.def(
      "index_add_",
      [](const Args& a) {
        const Tensor& source = a.tensor(3);
        return inplace_op(a.tensor(0), "index_add_", {&source}, [&](const Tensor& x) {
          return index_add(x, a.int64(1), a.tensor(2), source, a.scalar(4));
        });
      });
  t.def(
      "index_fill_",
      [](const Args& a) -> py::object {
        Tensor x = a.tensor(0);
        int64_t d = a.int64(1);
        Scalar v = value_of(a, 3);
        const Tensor& idx = a.tensor(2);
        nogil_any([&] {
          // A 0-dim input is filled through its 1-element view.
          Tensor target = x.dim() == 0 ? x.unsqueeze(0) : x;
          std::vector<TensorIndex> ind(
              static_cast<size_t>(wrap_dim(d, target.dim(), "index_fill_")),
              TensorIndex(Slice{}));
          ind.push_back(TensorIndex(idx.dim() == 0 ? idx.unsqueeze(0) : idx));
          index_put_(target, ind, v);
          return 0;
        });
        return py::reinterpret_borrow<py::object>(a.object(0));
      });
  t.def(
      "index_copy_",
      [](const Args& a) {
        Tensor x = a.tensor(0);
        int64_t d = wrap_dim(a.int64(1), x.dim(), "index_copy_");
        std::vector<TensorIndex> ind(static_cast<size_t>(d), TensorIndex(Slice{}));
        ind.push_back(TensorIndex(a.tensor(2)));
        index_put_(x, ind, a.tensor(3));
        return InPlace{};
      });
  // A 0-dim tensor value stays a tensor: no host read, and its gradient (PyTorch's).
  t.def("masked_fill", [](const Args& a) -> py::object {
    const Tensor &x = a.tensor(0), &m = a.tensor(1);
    if (is_tensor(a.object(2)) && as_tensor(a.object(2)).dim() == 0) {
      Tensor v = as_tensor(a.object(2));
      return py::cast(nogil([&] { return masked_fill(x, m, v); }));
    }
    Scalar v = value_of(a, 2);
    return py::cast(nogil([&] { return x.masked_fill(m, v); }));
  });
  t.def(
      "masked_fill_",
      [](const Args& a) -> py::object {
        Tensor x = a.tensor(0);
        const Tensor& m = a.tensor(1);
        if (is_tensor(a.object(2)) && as_tensor(a.object(2)).dim() == 0) {
          Tensor v = as_tensor(a.object(2));
          nogil_any([&] {
            return inplace_op(x, "masked_fill_", {&v},
                              [&](const Tensor& s) { return masked_fill(s, m, v); });
          });
          return py::reinterpret_borrow<py::object>(a.object(0));
        }
        Scalar v = value_of(a, 2);
        nogil_any([&] {
          x.masked_fill_(m, v);
          return 0;
        });
        return py::reinterpret_borrow<py::object>(a.object(0));
      });
  t.def("masked_select",
        [](const Args& a) { return masked_select(a.tensor(0), a.tensor(1)); });
  t.def(
      "masked_scatter_",
      [](const Args& a) {
        Tensor x = a.tensor(0);
        Tensor m = a.tensor(1).expand(x.sizes());
        int64_t n = m.to(kInt64).sum().item<int64_t>();
        index_put_(x, {TensorIndex(m)}, a.tensor(2).reshape({-1}).narrow(0, 0, n));
        return InPlace{};
      });
  t.def("nonzero",
        [](const Args& a) -> py::object {
          const Tensor& x = a.tensor(0);
          Tensor nz = nogil([&] { return nonzero(x); });
          if (!a.flag(2)) return py::cast(nz);
          if (x.dim() == 0) return py::make_tuple(nz.reshape({-1}));
          return detail::to_python(nz.unbind(1));
        });
  t.def("argwhere", [](const Args& a) { return nonzero(a.tensor(0)); });

  // --- matrix products ---
  t.def("matmul",
        [](const Args& a) { return matmul(a.tensor(0), a.tensor(1)); });
  t.def("mm",
        [](const Args& a) { return mm(a.tensor(0), a.tensor(1)); });
  t.def("bmm",
        [](const Args& a) { return bmm(a.tensor(0), a.tensor(1)); });
  t.def("mv",
        [](const Args& a) { return mv(a.tensor(0), a.tensor(1)); });
  t.def("dot",
        [](const Args& a) { return dot(a.tensor(0), a.tensor(1)); });
  t.def("inner", [](const Args& a) {
    const Tensor &x = a.tensor(0), &y = a.tensor(1);
    if (x.dim() == 0 || y.dim() == 0) return x * y;
    return matmul(x, y.dim() == 1 ? y : y.transpose(-1, -2));
  });
  for (const char* name : {"outer", "ger"})
    t.def(name,
          [](const Args& a) { return outer(a.tensor(0), a.tensor(1)); });
  t.def("addmm",
        [](const Args& a) {
          return addmm(a.tensor(0), a.tensor(1), a.tensor(2), a.scalar(3), a.scalar(4));
        });
  t.def("addmv",
        [](const Args& a) {
          return addmv(a.tensor(0), a.tensor(1), a.tensor(2), a.scalar(3), a.scalar(4));
        });
  t.def("addr",
        [](const Args& a) {
          return addr(a.tensor(0), a.tensor(1), a.tensor(2), a.scalar(3), a.scalar(4));
        });
  t.def("baddbmm",
        [](const Args& a) {
          return baddbmm(a.tensor(0), a.tensor(1), a.tensor(2), a.scalar(3), a.scalar(4));
        });
  t.def("addbmm",
        [](const Args& a) {
          return addbmm(a.tensor(0), a.tensor(1), a.tensor(2), a.scalar(3), a.scalar(4));
        });
  t.def("_einsum",
        [](const Args& a) { return einsum(a.str(0), a.tensors(1)); });
  t.def("cross",
        [](const Args& a) {
          const Tensor& x = a.tensor(0);
          int64_t d = -1;
          if (a.has(2)) {
            d = a.int64(2);
          } else {
            for (int64_t i = 0; i < x.dim(); ++i)
              if (x.size(i) == 3) {
                d = i;
                break;
              }
          }
          return cross(x, a.tensor(1), d);
        });
  t.def("softmax",
        [](const Args& a) { return softmax(a.tensor(0), a.int64(1), a.dtype(2)); });
  t.def("log_softmax",
        [](const Args& a) { return log_softmax(a.tensor(0), a.int64(1), a.dtype(2)); });

  // --- new tensors like this one ---
  t.def("new_zeros",
        [](const Args& a) { return grad_if(zeros(sizes(a, 1), like(a, 2)), a, 6); });
  t.def("new_ones",
        [](const Args& a) { return grad_if(ones(sizes(a, 1), like(a, 2)), a, 6); });
  t.def("new_empty",
        [](const Args& a) { return grad_if(empty(sizes(a, 1), like(a, 2)), a, 6); });
  t.def("new_full",
        [](const Args& a) { return grad_if(full(sizes(a, 1), a.scalar(2), like(a, 3)), a, 7); });
}

}  // namespace ember::python
