// The elementwise op tables expanded into typed kernel launches, once for both backends: a
// backend supplies a Launcher whose run<Out, In...>(iter, functor) starts its loop (the CPU's
// cpu_kernel, CUDA's gpu_kernel), and gets every op of the tables for every dtype its kind allows.
#pragma once

#include "ember/backend/functors/binary.h"
#include "ember/backend/functors/kind_dispatch.h"
#include "ember/backend/functors/unary.h"
#include "ember/backend/tensor_iter.h"
#include "ember/core/scalar.h"

namespace ember {

template <typename L>
struct Expand {
  template <template <typename> class Fn, OpKind kind, bool complex>
  static void unary(const TensorIter& it, const UnaryParams& p, const char* name) {
    dispatch_kind<kind, complex && L::kComplex>(it.dtypes[1], name, [&](auto tag) {
      using T = EMBER_TYPE(tag);
      L::template run<T, T>(it, Fn<opmath_t<T>>(p));
    });
  }
  template <template <typename> class Fn, OpKind kind, bool complex>
  static void binary(const TensorIter& it, const BinaryParams& p, const char* name) {
    dispatch_kind<kind, complex && L::kComplex>(it.dtypes[1], name, [&](auto tag) {
      using T = EMBER_TYPE(tag);
      using F = Fn<opmath_t<T>>;
      L::template run<binary_result_t<F, T>, T, T>(it, F(p));
    });
  }
  template <template <typename> class Fn, OpKind kind, bool complex>
  static void binary_scalar(const TensorIter& it, Scalar b, const BinaryParams& p,
                            const char* name) {
    dispatch_kind<kind, complex && L::kComplex>(it.dtypes[1], name, [&](auto tag) {
      using T = EMBER_TYPE(tag);
      using M = opmath_t<T>;
      using F = Fn<M>;
      L::template run<binary_result_t<F, T>, T>(it, BindRight<F, M>{F(p), b.to<M>()});
    });
  }
  template <template <typename> class Fn, OpKind kind, bool complex>
  static void ternary(const TensorIter& it, const TernaryParams& p, const char* name) {
    dispatch_kind<kind, complex && L::kComplex>(it.dtypes[1], name, [&](auto tag) {
      using T = EMBER_TYPE(tag);
      L::template run<T, T, T, T>(it, Fn<opmath_t<T>>(p));
    });
  }
};

template <typename L>
void expand_unary(UnaryOp op, const TensorIter& it, const UnaryParams& p) {
  switch (op) {
#define EMBER_CASE(name, fn, kind) \
  case UnaryOp::name:              \
    return Expand<L>::template unary<fn, OpKind::kind, unary_takes_complex(UnaryOp::name)>(it, p, \
                                                                                          #name);
    EMBER_UNARY_OPS(EMBER_CASE)
#undef EMBER_CASE
  }
}

template <typename L>
void expand_binary(BinaryOp op, const TensorIter& it, const BinaryParams& p) {
  switch (op) {
#define EMBER_CASE(name, fn, kind) \
  case BinaryOp::name:             \
    return Expand<L>::template binary<fn, OpKind::kind, binary_takes_complex(BinaryOp::name)>( \
        it, p, #name);
    EMBER_BINARY_OPS(EMBER_CASE)
#undef EMBER_CASE
  }
}

template <typename L>
void expand_binary_scalar(BinaryOp op, const TensorIter& it, Scalar b, const BinaryParams& p) {
  switch (op) {
#define EMBER_CASE(name, fn, kind) \
  case BinaryOp::name:             \
    return Expand<L>::template binary_scalar<fn, OpKind::kind,                       \
                                             binary_takes_complex(BinaryOp::name)>( \
        it, b, p, #name);
    EMBER_BINARY_OPS(EMBER_CASE)
#undef EMBER_CASE
  }
}

template <typename L>
void expand_ternary(TernaryOp op, const TensorIter& it, const TernaryParams& p) {
  switch (op) {
#define EMBER_CASE(name, fn, kind) \
  case TernaryOp::name:            \
    return Expand<L>::template ternary<fn, OpKind::kind, ternary_takes_complex(TernaryOp::name)>( \
        it, p, #name);
    EMBER_TERNARY_OPS(EMBER_CASE)
#undef EMBER_CASE
  }
}

/// (out, cond, a, b)
// The ops that move values (where, fill, copy) take every dtype the backend has.
template <typename L, typename F>
void dispatch_values(DType t, const char* op, F&& f) {
  if constexpr (L::kComplex)
    dispatch_all_and_complex(t, op, f);
  else
    dispatch_all(t, op, f);
}

template <typename L>
void expand_where(const TensorIter& it) {
  dispatch_values<L>(it.dtypes[2], "where", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    L::template run<T, bool, T, T>(it, WhereFn<opmath_t<T>>{});
  });
}

/// (out)
template <typename L>
void expand_fill(const TensorIter& it, Scalar v) {
  dispatch_values<L>(it.dtypes[0], "fill_", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    L::template run<T>(it, FillFn<opmath_t<T>>{v.to<opmath_t<T>>()});
  });
}

/// (out, in) between any two dtypes.
template <typename L>
void expand_copy(const TensorIter& it) {
  dispatch_values<L>(it.dtypes[0], "copy_", [&](auto out_tag) {
    using Out = EMBER_TYPE(out_tag);
    dispatch_values<L>(it.dtypes[1], "copy_", [&](auto in_tag) {
      using In = EMBER_TYPE(in_tag);
      L::template run<Out, In>(it, ConvertFn<opmath_t<Out>>{});
    });
  });
}

}  // namespace ember
