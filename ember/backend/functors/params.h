// What the elementwise op tables share: the parameters their functors are built from and the
// kinds that say which dtypes an op accepts.
#pragma once

namespace ember {

/// Parameters of the parameterised unary ops (clamp bounds, a power, polygamma's order).
struct UnaryParams {
  double a = 0;
  double b = 0;
};

struct BinaryParams {
  double alpha = 1;  // add and sub: a + alpha * b
};

// Which dtypes an op accepts: Floating ops see integer inputs promoted to float by ops/;
// Numeric ops run on every dtype but bool; Bool ops run on bool only; Integral ops on the integer
// dtypes and bool (the bitwise ops).
enum class OpKind { Floating, Numeric, Bool, Compare, Integral };

}  // namespace ember
