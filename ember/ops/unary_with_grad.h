// EMBER_UNARY_WITH_GRAD: a unary op of the elementwise tables with its entry line and its
// backward formula in one line each, for the files of unary ops (unary.cpp, pointwise.cpp,
// special.cpp).
#pragma once

#include "ember/ops/autograd_support.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/op_entry.h"

// Defines op(x), with `backward` a lambda body taking (g, x, out) and returning the input grad;
// `policy` is the op's autocast policy (ops/autocast.h).
#define EMBER_UNARY_WITH_GRAD(fname, Op, policy, NodeName, saves_input, ...)                      \
  Tensor fname(const Tensor& x) {                                                                 \
    EMBER_OP_CAST(policy, fname, x);                                                              \
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
