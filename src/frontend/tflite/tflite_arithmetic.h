// TFLite's arithmetic as graph ops (internal to frontend/tflite): its fused activations, its
// rounding, and the fixed-point rescaling its integer kernels apply, written so that the graph
// computes what TFLite's reference kernels compute, bit for bit.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "frontend/tflite/tflite_context.h"

namespace anvil::frontend::tflite {

// A float result with the operator's fused activation applied (NONE, RELU, RELU_N1_TO_1, RELU6,
// TANH); UserError for another.
graph::Expr float_activation(const TfContext& ctx, graph::Expr y, int8_t activation);

// The integers a quantized result may take under a fused activation: the type's range, cut at
// the output's quantized 0 (RELU), 0 and 6 (RELU6), -1 and 1 (RELU_N1_TO_1), as TFLite's
// CalculateActivationRangeQuantized computes them (zero point + the real bound / scale rounded
// half away from zero). `xnnpack_op`: an operator the runtime's XNNPACK delegate takes with
// rounding="XNNPACK" (8-bit products, ADD, SUB, MUL, MAX_POOL_2D), whose bounds are XNNPACK's:
// the real bound / scale + zero point, in float, rounded half to even.
std::pair<int64_t, int64_t> quantized_activation_range(const TfContext& ctx, int8_t activation,
                                                       const TfliteTensor& out, DataType t,
                                                       bool xnnpack_op = false);
// `x` (an integer tensor) clamped to [lo, hi] and cast to `t`.
graph::Expr clamp_to(const TfContext& ctx, const graph::Expr& x, int64_t lo, int64_t hi,
                     DataType t);

// The int32 `x` times each real ratio (one, or one per index along `axis` of x) in TFLite's
// fixed point (QuantizeMultiplier, then MultiplyByQuantizedMultiplier: a rounding doubling high
// multiply and a rounding right shift).
graph::Expr multiply_by_ratio(const TfContext& ctx, const graph::Expr& x,
                              const std::vector<double>& ratios, int64_t axis);

// The int32 `x` times TFLite's fixed-point multipliers m * 2^(shift - 31) as they are (one, or one
// per index along `axis`), by MultiplyByQuantizedMultiplier.
graph::Expr multiply_by_fixed_point(const TfContext& ctx, const graph::Expr& x,
                                    std::vector<int64_t> multipliers, std::vector<int64_t> shifts,
                                    int64_t axis);

// The same for an int64 `x` (16-bit kernels' sums), as TFLite's 64-bit
// MultiplyByQuantizedMultiplier: the multiplier rounded to 16 bits, x * m + 2^(s - 1) shifted
// right by s = 15 - shift; int32 result. With `whole_multiplier`, as ruy's single-rounding
// rescale (TFLite's optimized 16x8 FULLY_CONNECTED): the 31-bit multiplier, s = 31 - shift.
graph::Expr multiply_by_ratio_wide(const TfContext& ctx, const graph::Expr& x,
                                   const std::vector<double>& ratios, int64_t axis,
                                   bool whole_multiplier = false);

// a * b rounded to float32 once, as the runtime computes a product it then adds to or rounds: in
// float64, where the product of two float32 values, or of an integer below 2^29 and a float32, is
// exact, then narrowed. (A float32 multiply feeding an add may contract into a fused
// multiply-add, which rounds differently.)
graph::Expr float32_product(const TfContext& ctx, const graph::Expr& a, const graph::Expr& b);

// TFLite's CheckedLog2 of a scale, in float as it computes it: log2 rounded (halves away from
// zero), and whether the scale is within 1e-3 of that power of two (in log2).
struct ScaleLog2 {
    int32_t rounded;
    bool power_of_two;
};
ScaleLog2 scale_log2(double scale);

// A table (one entry per value of an 8- or 16-bit type, from `lowest` up) as a constant, and the
// entries of such a table at the integers x (any integer type), in the table's type. Operators
// whose integer kernels TFLite defines by a function of one 8- or 16-bit input gather from such
// tables, computed at import time.
graph::Expr table_constant(const TfContext& ctx, const std::vector<int16_t>& values);
// An int8 or uint8 table `t` of the bytes of its values.
graph::Expr table_constant(const TfContext& ctx, DataType t, const std::vector<uint8_t>& bytes);
graph::Expr table_lookup(const TfContext& ctx, const graph::Expr& table, const graph::Expr& x,
                         int64_t lowest);

// round(x) with halves away from zero (TFLite's TfLiteRound), exact for every float.
graph::Expr round_half_away(const TfContext& ctx, const graph::Expr& x);

// int8 `x` as uint8 shifted by 128, the data the x86 int8 products take (the differences from
// the zero point, itself + 128, stay the same). As a byte, x + 128 is x XOR 0x80: one instruction
// that leaves the producer's saturation to int8 a signed pack, where an add in int32 would keep
// its clamp.
graph::Expr int8_as_uint8(const TfContext& ctx, const graph::Expr& x);

// Scalar constants.
graph::Expr int32_scalar(const TfContext& ctx, int64_t v);
graph::Expr int64_scalar(const TfContext& ctx, int64_t v);
graph::Expr float32_scalar(const TfContext& ctx, double v);
// A 1-D constant, shaped [n, 1, ..., 1] to broadcast along `axis` of a rank-`rank` tensor (a
// scalar when it has one value).
graph::Expr int32_along(const TfContext& ctx, const std::vector<int64_t>& values, int64_t rank,
                        int64_t axis);
graph::Expr float32_along(const TfContext& ctx, const std::vector<double>& values, int64_t rank,
                          int64_t axis);

// The quantization of a quantized tensor: its scales (float, widened) and zero points, one each
// or one per index along `quantized_dimension`.
struct Quantized {
    std::vector<double> scales;
    std::vector<int64_t> zero_points;
    int32_t axis = -1;  // -1: per tensor
};
// UserError naming `what` when `t` is not quantized, its scales are not positive and finite,
// or its zero points are out of its type's range.
Quantized quantization_of(const TfContext& ctx, const TfliteTensor& t, const std::string& what);
// The same, required to be per tensor.
Quantized per_tensor(const TfContext& ctx, const TfliteTensor& t, const std::string& what);

// Integers `x` of quantization `in` as int32 integers of quantization `out` (per tensor both):
// (x - in zero point) times in scale / out scale in fixed point, plus the out zero point, as
// TFLite's requantizing kernels compute it (unclamped). `ratio_in_float`: the ratio divided in
// float, as the RELUs' kernels do, rather than in double (QUANTIZE's).
graph::Expr requantize_integers(const TfContext& ctx, const graph::Expr& x, const Quantized& in,
                                const Quantized& out, bool ratio_in_float = false);

}  // namespace anvil::frontend::tflite
