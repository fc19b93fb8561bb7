// TFLite's quantized division (quantized_division.h). The helpers follow gemmlowp's fixed-point
// functions of the same names; every intermediate is computed in int64 where TFLite's int32
// arithmetic could overflow in C++ (a shift into the sign bit), with the same results.
#include "frontend/tflite/quantized_division.h"

#include <algorithm>
#include <bit>
#include <limits>

namespace anvil::frontend::tflite {

namespace {

constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
constexpr int32_t kMax = std::numeric_limits<int32_t>::max();

// round(a * b / 2^31), halves away from zero, saturating the one overflow (INT32_MIN^2).
int32_t saturating_rounding_doubling_high_mul(int32_t a, int32_t b) {
    if (a == kMin && b == kMin) return kMax;
    int64_t ab = int64_t(a) * int64_t(b);
    int64_t nudge = ab >= 0 ? (int64_t{1} << 30) : (1 - (int64_t{1} << 30));
    return int32_t((ab + nudge) / (int64_t{1} << 31));  // C++ division truncates, as gemmlowp's
}

// x / 2^exponent rounded half away from zero: gemmlowp's RoundingDivideByPOT. It is defined for
// exponents in [0, 31]; near-zero dividends meet larger ones (and tiny scale ratios, negative
// ones), where its shifts are undefined in C++. TFLite's runtime then computes what x86 and
// WebAssembly do, which is reproduced: the 64-bit mask's shift count taken mod 64, the mask
// truncated to 32 bits, the 32-bit shift count taken mod 32.
int32_t rounding_divide_by_pot(int32_t x, int exponent) {
    const auto mask = int32_t(uint32_t((uint64_t{1} << (unsigned(exponent) & 63)) - 1));
    const int32_t remainder = x & mask;
    const int32_t threshold = int32_t(uint32_t(mask >> 1) + (x < 0 ? 1u : 0u));
    return int32_t(uint32_t(x >> (unsigned(exponent) & 31)) + (remainder > threshold ? 1u : 0u));
}

// x * 2^exponent saturated to int32 (SaturatingRoundingMultiplyByPOT of a positive exponent).
int32_t saturating_shift_left(int32_t x, int exponent) {
    const int64_t threshold = (int64_t{1} << (31 - exponent)) - 1;
    if (x > threshold) return kMax;
    if (x < -threshold) return kMin;
    return int32_t(int64_t(x) * (int64_t{1} << exponent));
}

// (a + b) / 2 rounded half away from zero.
int32_t rounding_half_sum(int32_t a, int32_t b) {
    int64_t sum = int64_t(a) + int64_t(b);
    return int32_t((sum + (sum >= 0 ? 1 : -1)) / 2);
}

// 1 / (1 + x) for x in [0, 1) (raw Q0.31), by three Newton-Raphson steps in Q2.29, as gemmlowp's
// one_over_one_plus_x_for_x_in_0_1; the result in Q0.31.
int32_t one_over_one_plus_x(int32_t x) {
    const int32_t half_denominator = rounding_half_sum(x, kMax);  // (1 + x) / 2, Q0.31
    const int32_t c48_17 = 1515870810, c_neg32_17 = -1010580540;  // 48/17, -32/17 in Q2.29
    const int32_t one_q2 = int32_t{1} << 29;
    int32_t r = c48_17 + saturating_rounding_doubling_high_mul(half_denominator, c_neg32_17);
    for (int i = 0; i < 3; ++i) {
        int32_t error = one_q2 - saturating_rounding_doubling_high_mul(half_denominator, r);
        // Q2.29 * Q2.29 is Q4.27: back to Q2.29 by a saturating shift of 2.
        r = r + saturating_shift_left(saturating_rounding_doubling_high_mul(r, error), 2);
    }
    // r / 2 in Q1.30 is the same raw value; to Q0.31 by a saturating shift of 1.
    return saturating_shift_left(r, 1);
}

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
