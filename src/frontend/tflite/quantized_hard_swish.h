// TFLite's quantized HARD_SWISH (reference_ops::HardSwish, which TFLite's CPU runtime and TFLite
// Micro compute alike) in C++: x * relu6(x + 3) / 6 in 16-bit fixed point. The operator has 8-bit
// operands, so the importer computes the result of every input value once, into a 256-entry
// table that the graph gathers from (convert_activation.cpp): bit for bit TFLite's.
#pragma once

#include <cstdint>

#include "support/source_loc.h"

namespace anvil::frontend::tflite {

struct QuantizedHardSwish {
    int32_t input_zero_point = 0, output_zero_point = 0;
    // The input at 128 times its resolution, rescaled to the output's scale: a Q0.15 multiplier
    // (TFLite's 31-bit multiplier rounded to 16 bits) and a shift <= 0.
    int16_t output_multiplier = 0;
    int32_t output_shift = 0;
    // The same input rescaled so that 3.0 is 2^15 (the "relu-ish" value: x / 3 in [-1, 1]).
    int16_t reluish_multiplier = 0;
    int32_t reluish_shift = 0;
    int32_t lo = 0, hi = 0;  // the result type's range

    // The parameters as TFLite's Prepare computes them from the scales (in float, as TFLite). A
    // ratio no fixed-point multiplier holds, and an output scale at most input scale / 128 (which
    // TFLite refuses: output_shift would be positive), are UserErrors at `loc`.
    static QuantizedHardSwish from_scales(float input_scale, int32_t input_zero_point,
                                          float output_scale, int32_t output_zero_point, int32_t lo,
                                          int32_t hi, const SourceLoc& loc);

    // The quantized result of the integer x, as TFLite computes it.
    int32_t operator()(int32_t x) const;
};

}  // namespace anvil::frontend::tflite
