// TFLite's quantized division of one 8-bit value by another (reference_ops::DivElementwise, with
// gemmlowp's fixed point and TFLite's default double rounding), in C++. Quantized DIV has 8-bit
// operands, so the importer computes every quotient once, into a table of 256 x 256 entries that
// the graph gathers from (convert_elementwise.cpp): the kernel is a lookup, bit for bit TFLite's.
#pragma once

#include <cstdint>

namespace anvil::frontend::tflite {

struct QuantizedDivision {
    int32_t dividend_zero_point = 0, divisor_zero_point = 0, output_zero_point = 0;
    // The rescale of the quotient: QuantizeMultiplier(input1_scale / (input2_scale *
    // output_scale)).
    int32_t multiplier = 0;
    int32_t shift = 0;
    int32_t lo = 0, hi = 0;  // the fused activation's range

    // The quantized quotient of the integers a and b, as TFLite computes it. TFLite leaves a
    // divisor equal to its zero point undefined (it asserts in debug builds); here it gives `hi`
    // for a positive dividend, `lo` for a negative one, and the output zero point (clamped) for
    // zero.
    int32_t operator()(int32_t a, int32_t b) const;
};

}  // namespace anvil::frontend::tflite
