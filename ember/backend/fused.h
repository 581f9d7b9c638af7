// A fused elementwise program: a chain of the shared table entries (backend/functors: unary,
// binary, binary with a number) run over each element in turn, with its intermediate values in
// registers (small blocks that stay in the cache) instead of tensors. ember/compile/ builds them
// from a trace; the CPU runs them block by block (backend/cpu/fused.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "ember/backend/functors/params.h"
#include "ember/core/dtype.h"
#include "ember/core/scalar.h"

namespace ember {

/// One table entry of a fused program.
struct FusedStep {
  enum class Kind : uint8_t { Unary, Binary, BinaryScalar };
  Kind kind = Kind::Unary;
  int code = 0;  // UnaryOp or BinaryOp
  UnaryParams unary_params;
  BinaryParams binary_params;
  Scalar scalar;  // BinaryScalar's right operand
  int a = 0;      // operands: a register (>= 0) or input i as -1 - i
  int b = 0;      // Binary only
  int dst = 0;    // the register written
};

struct FusedProgram {
  DType dtype = kFloat32;  // of every input, register and output
  int num_inputs = 0;
  int num_registers = 0;
  std::vector<FusedStep> steps;
  std::vector<int> outputs;  // the registers stored to the outputs, in order

  static int input(int i) { return -1 - i; }
};

/// Runs `p` over `numel` elements: inputs[i] is contiguous with numel elements, or one element
/// broadcast where input_broadcast[i]; outputs[k] (contiguous) receives register p.outputs[k].
void fused_cpu(const FusedProgram& p, const std::vector<const void*>& inputs,
               const std::vector<bool>& input_broadcast, const std::vector<void*>& outputs,
               int64_t numel);

}  // namespace ember
