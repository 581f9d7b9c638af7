// EMBER_UNARY_WITH_GRAD: a unary op of the elementwise tables with its entry line and its
// backward formula in one line each, for the files of unary ops (unary.cpp, pointwise.cpp,
// special.cpp).
#pragma once

#include "ember/ops/autograd_support.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/op_entry.h"

// Defines op(x), with `backward` a lambda body taking (g, x, out) and returning the input grad.
// The op's autocast policy is in its row of ops/ops.def.
#define EMBER_UNARY_WITH_GRAD(fname, Op, NodeName, saves_input, ...)                              \
  Tensor fname(const Tensor& x) {                                                                 \
    EMBER_OP(fname, x);                                                                           \
    Tensor out = detail::unary(UnaryOp::Op, x);                                                   \
    if (any_requires_grad({&x})) {                                                                \
      record(                                                                                     \
          NodeName, {&out}, {&x},                                                                 \
          [sx = SavedTensor(saves_input ? x : Tensor()),                                          \
           so = SavedTensor(saves_input ? Tensor() : out, true)](const Tensor& g) -> TensorList { \
            const Tensor& x = sx.get();                                                           \
            const Tensor& out = so.get();                                                         \
            (void)x;                                                                              \
            (void)out;                                                                            \
            return {__VA_ARGS__};                                                                 \
          });                                                                                     \
    }                                                                                             \
    return out;                                                                                   \
  }

// Defines op_(x), the in-place variant of a unary op defined above: the kernel in place
// (detail::unary_inplace_op), entered as an op of its own.
#define EMBER_UNARY_INPLACE(fname, Op)                                         \
  Tensor& fname##_(Tensor& x) {                                                \
    EMBER_OP(fname##_, x);                                                     \
    return detail::unary_inplace_op(                                           \
        UnaryOp::Op, x, [](const Tensor& s) { return fname(s); }, #fname "_"); \
  }
