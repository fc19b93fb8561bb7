// TFLite's quantized hard swish (quantized_hard_swish.h), in gemmlowp's int16 fixed point
// (gemmlowp_fixed_point.h) and TFLite's hard-swish helpers of the same names; every int16 result
// wraps as the kernel's int16_t arithmetic does (C++20 conversions are modular), which matters only
// for extreme scale ratios.
#include "frontend/tflite/quantized_hard_swish.h"

#include <algorithm>
#include <limits>
#include <string>

#include "frontend/tflite/gemmlowp_fixed_point.h"
#include "ops/qnn.h"
#include "support/error.h"

namespace anvil::frontend::tflite {

namespace {

using gemmlowp::rounding_divide_by_pot;
using gemmlowp::saturating_rounding_doubling_high_mul;

constexpr int32_t kMin = std::numeric_limits<int16_t>::min();
constexpr int32_t kMax = std::numeric_limits<int16_t>::max();

// a * b / 2^15 truncated toward zero (TFLite's SaturatingDoublingHighMul, which cancels the bias
// of the rounding one above).
int16_t saturating_doubling_high_mul(int16_t a, int16_t b) {
    if (a == kMin && b == kMin) return kMax;
    return int16_t(int32_t(a) * int32_t(b) / (1 << 15));
}

// x * 2^amount saturated to int16.
int16_t saturating_left_shift(int16_t x, int32_t amount) {
    const int64_t shifted = int64_t(x) * (int64_t{1} << amount);
    return int16_t(std::clamp<int64_t>(shifted, kMin, kMax));
}

// TFLite's DownScaleInt32ToInt16Multiplier: a Q0.31 multiplier rounded to Q0.15.
int16_t to_int16_multiplier(int32_t multiplier) {
    constexpr int32_t kRoundingOffset = 1 << 15;
    if (multiplier >= std::numeric_limits<int32_t>::max() - kRoundingOffset) return kMax;
    return int16_t((multiplier + kRoundingOffset) >> 16);
}

}  // namespace

QuantizedHardSwish QuantizedHardSwish::from_scales(float input_scale, int32_t input_zero_point,
                                                   float output_scale, int32_t output_zero_point,
                                                   int32_t lo, int32_t hi, const SourceLoc& loc) {
    const float hires_input_scale = (1.0f / 128.0f) * input_scale;
    const float reluish_scale = 3.0f / 32768.0f;
    ops::FixedPoint output = ops::fixed_point_of(double(hires_input_scale / output_scale),
                                                 "HARD_SWISH's output scale ratio", loc);
    ops::FixedPoint reluish = ops::fixed_point_of(double(hires_input_scale / reluish_scale),
                                                  "HARD_SWISH's input scale ratio", loc);
    if (output.shift > 0) {
        user_error(loc) << "a quantized HARD_SWISH needs an output scale above the input scale / "
                           "128, as TFLite's kernel; got the scales "
                        << input_scale << " and " << output_scale;
    }
    return {.input_zero_point = input_zero_point,
            .output_zero_point = output_zero_point,
            .output_multiplier = to_int16_multiplier(output.multiplier),
            .output_shift = output.shift,
            .reluish_multiplier = to_int16_multiplier(reluish.multiplier),
            .reluish_shift = reluish.shift,
            .lo = lo,
            .hi = hi};
}

int32_t QuantizedHardSwish::operator()(int32_t x) const {
    const auto input = int16_t(x - input_zero_point);
    // Shifted up by 7 bits: the 8-bit difference fills the int16's high bits.
    const auto hires_input = int16_t(input * (1 << 7));
    const int16_t preshift_output =
        saturating_rounding_doubling_high_mul(hires_input, output_multiplier);
    // x / 3 in Q0.15, saturated to [-1, 1]: a left shift saturates in two steps so that only the
    // last one's saturation counts, as TFLite's.
    int16_t reluish = hires_input;
    if (reluish_shift > 0) reluish = saturating_left_shift(reluish, reluish_shift - 1);
    reluish = saturating_rounding_doubling_high_mul(reluish, reluish_multiplier);
    if (reluish_shift > 0) reluish = saturating_left_shift(reluish, 1);
    if (reluish_shift < 0) reluish = rounding_divide_by_pot(reluish, -reluish_shift);
    // relu6(x + 3) / 6 in [0, 1].
    reluish = int16_t((int32_t(reluish) + (1 << 15)) >> 1);
    const int16_t preshift = saturating_doubling_high_mul(reluish, preshift_output);
    const auto y = int16_t(rounding_divide_by_pot(preshift, -output_shift) + output_zero_point);
    return std::clamp<int32_t>(y, lo, hi);
}

}  // namespace anvil::frontend::tflite
