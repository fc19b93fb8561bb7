// TFLite's quantized division (quantized_division.h), in gemmlowp's fixed point
// (gemmlowp_fixed_point.h).
#include "frontend/tflite/quantized_division.h"

#include <algorithm>
#include <bit>

#include "frontend/tflite/gemmlowp_fixed_point.h"

namespace anvil::frontend::tflite {

namespace {

using namespace gemmlowp;

// 1 / x for x > 0 as a Q0.31 multiplier and the power of two it leaves out (TFLite's
// GetReciprocal with 31 integer digits).
int32_t reciprocal(int32_t x, int* shift) {
    const int headroom_plus_one = std::countl_zero(uint32_t(x));
    *shift = 31 - headroom_plus_one;
    const uint32_t shifted = uint32_t(uint64_t(uint32_t(x)) << headroom_plus_one);
    return one_over_one_plus_x(int32_t(shifted - (uint32_t{1} << 31)));
}

// The redundant sign bits of x (TFLite's CountLeadingSignBits; 31 for 0).
int count_leading_sign_bits(int32_t x) {
    if (x == 0) return 31;
    return std::countl_zero(uint32_t(x >= 0 ? x : ~x)) - 1;
}

}  // namespace

int32_t QuantizedDivision::operator()(int32_t a, int32_t b) const {
    int32_t dividend = a - dividend_zero_point, divisor = b - divisor_zero_point;
    if (divisor == 0) {
        int32_t y = dividend > 0 ? hi : dividend < 0 ? lo : output_zero_point;
        return std::clamp(y, lo, hi);
    }
    if (divisor < 0) {
        dividend = -dividend;
        divisor = -divisor;
    }
    int reciprocal_shift = 0;
    const int32_t inverse = reciprocal(divisor, &reciprocal_shift);
    const int headroom = count_leading_sign_bits(dividend);
    // dividend * 2^headroom fits in int32 by the choice of headroom.
    const int32_t unscaled = saturating_rounding_doubling_high_mul(
        int32_t(int64_t(dividend) * (int64_t{1} << headroom)), inverse);
    const int total_shift = shift - reciprocal_shift - headroom;
    const int32_t scaled = saturating_rounding_doubling_high_mul(unscaled, multiplier);
    const int32_t rescaled = rounding_divide_by_pot(scaled, -total_shift);
    return int32_t(std::clamp(int64_t(output_zero_point) + rescaled, int64_t(lo), int64_t(hi)));
}

}  // namespace anvil::frontend::tflite
