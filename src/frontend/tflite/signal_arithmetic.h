// Integer arithmetic the converters of TFLite Micro's signal operators share (internal to
// frontend/tflite): typed constants, bit counts and the integer square root, each composed of
// graph ops so that it compiles through TE like every other kernel.
//
// The signal library computes in fixed point on unsigned 32- and 64-bit words and relies on C's
// wrapping unsigned arithmetic; the graph's integer ops wrap the same way, so each converter
// follows its kernel's C expressions type for type.
#pragma once

#include <cstdint>
#include <vector>

#include "frontend/tflite/tflite_context.h"

namespace anvil::frontend::tflite {

// A constant of integer type `dtype` holding `values` (converted as C converts an int64 to it).
graph::Expr integer_constant(const TfContext& ctx, DataType dtype,
                             const std::vector<int64_t>& values, const std::vector<int64_t>& shape);
// A scalar (shape []) of integer type `dtype`.
graph::Expr integer_scalar(const TfContext& ctx, DataType dtype, int64_t value);
// Elementwise `op` ("add", "right_shift", ...) of `x` and the scalar `value` of x's type.
graph::Expr with_scalar(const TfContext& ctx, const char* op, const graph::Expr& x, int64_t value);

// For each element of unsigned `x`, the number of its significant bits (floor(log2 x) + 1; 0
// for 0), as int32: TFLite Micro's MostSignificantBit32/64 except at 0, where theirs is the
// word's width.
graph::Expr significant_bits(const TfContext& ctx, const graph::Expr& x);

// For each element of uint64 `x`, floor(sqrt(x)) exactly, as uint64 (a float64 estimate
// corrected by one step each way).
graph::Expr floor_sqrt(const TfContext& ctx, const graph::Expr& x);

// Operand i's data as integers, which must be a constant 1-D tensor of `type` (tflite_schema.h:
// TensorType); `what` names it in errors.
std::vector<int64_t> constant_vector(const TfContext& ctx, size_t i, int8_t type,
                                     const std::string& what);

// UserError unless operand / result i is a 1-D tensor of `type`.
void expect_vector(const TfContext& ctx, const TfliteTensor& t, int8_t type,
                   const std::string& what);

}  // namespace anvil::frontend::tflite
