// gemmlowp's scalar int32 fixed-point arithmetic (gemmlowp_fixed_point.h). Every intermediate is
// computed in int64 or unsigned arithmetic where TFLite's int32 arithmetic could overflow in C++
// (a shift into the sign bit, a wrapping add), with the same results.
#include "frontend/tflite/gemmlowp_fixed_point.h"

#include <limits>

namespace anvil::frontend::tflite::gemmlowp {

namespace {

constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
constexpr int32_t kMax = std::numeric_limits<int32_t>::max();

int32_t wrapping_add(int32_t a, int32_t b) {
    return int32_t(uint32_t(a) + uint32_t(b));
}
int32_t wrapping_subtract(int32_t a, int32_t b) {
    return int32_t(uint32_t(a) - uint32_t(b));
}
int32_t wrapping_negate(int32_t a) {
    return int32_t(0u - uint32_t(a));
}

// x * 2^exponent: saturating up, rounding down (SaturatingRoundingMultiplyByPOT; gemmlowp's
// Rescale between integer bit counts).
int32_t multiply_by_pot(int32_t x, int exponent) {
    return exponent >= 0 ? saturating_shift_left(x, exponent)
                         : rounding_divide_by_pot(x, -exponent);
}

// 2 / (1 + x) for x in [0, 1) (raw Q0.31), by three Newton-Raphson steps, in Q2.29.
int32_t two_over_one_plus_x(int32_t x) {
    const int32_t half_denominator = rounding_half_sum(x, kMax);  // (1 + x) / 2, Q0.31
    const int32_t c48_17 = 1515870810, c_neg32_17 = -1010580540;  // 48/17, -32/17 in Q2.29
    const int32_t one_q2 = int32_t{1} << 29;
    int32_t r =
        wrapping_add(c48_17, saturating_rounding_doubling_high_mul(half_denominator, c_neg32_17));
    for (int i = 0; i < 3; ++i) {
        int32_t error =
            wrapping_subtract(one_q2, saturating_rounding_doubling_high_mul(half_denominator, r));
        // Q2.29 * Q2.29 is Q4.27: back to Q2.29 by a saturating shift of 2.
        r = wrapping_add(r,
                         saturating_shift_left(saturating_rounding_doubling_high_mul(r, error), 2));
    }
    return r;
}

// (1 - x) / (1 + x) for x in [0, 1): Q0.31 in and out (one_minus_x_over_one_plus_x_for_x_in_0_1).
int32_t one_minus_x_over_one_plus_x(int32_t x) {
    // 2 / (1 + x) - 1 in Q2.29, to Q0.31 by a saturating shift of 2.
    return saturating_shift_left(wrapping_subtract(two_over_one_plus_x(x), int32_t{1} << 29), 2);
}

// exp(x) for x in [-1/4, 0) in Q0.31: a Taylor expansion around -1/8.
int32_t exp_on_interval_between_negative_one_quarter_and_0_excl(int32_t a) {
    const int32_t exp_minus_one_eighth = 1895147668, one_third = 715827883;
    const int32_t x = wrapping_add(a, int32_t{1} << 28);  // a + 1/8
    const int32_t x2 = saturating_rounding_doubling_high_mul(x, x);
    const int32_t x3 = saturating_rounding_doubling_high_mul(x2, x);
    const int32_t x4 = saturating_rounding_doubling_high_mul(x2, x2);
    const int32_t x4_over_4 = rounding_divide_by_pot(x4, 2);
    const int32_t sum = wrapping_add(
        saturating_rounding_doubling_high_mul(wrapping_add(x4_over_4, x3), one_third), x2);
    const int32_t x4_over_24_plus_x3_over_6_plus_x2_over_2 = rounding_divide_by_pot(sum, 1);
    return wrapping_add(
        exp_minus_one_eighth,
        saturating_rounding_doubling_high_mul(
            exp_minus_one_eighth, wrapping_add(x, x4_over_24_plus_x3_over_6_plus_x2_over_2)));
}

}  // namespace

int32_t saturating_rounding_doubling_high_mul(int32_t a, int32_t b) {
    if (a == kMin && b == kMin) return kMax;
    int64_t ab = int64_t(a) * int64_t(b);
    int64_t nudge = ab >= 0 ? (int64_t{1} << 30) : (1 - (int64_t{1} << 30));
    return int32_t((ab + nudge) / (int64_t{1} << 31));  // C++ division truncates, as gemmlowp's
}

int16_t saturating_rounding_doubling_high_mul(int16_t a, int16_t b) {
    constexpr int16_t kMin16 = std::numeric_limits<int16_t>::min();
    if (a == kMin16 && b == kMin16) return std::numeric_limits<int16_t>::max();
    const int32_t ab = int32_t(a) * int32_t(b);
    const int32_t nudge = ab >= 0 ? (1 << 14) : (1 - (1 << 14));
    return int16_t((ab + nudge) / (1 << 15));  // C++ division truncates, as gemmlowp's
}

int16_t rounding_divide_by_pot(int16_t x, int exponent) {
    const auto mask = int16_t((int64_t{1} << exponent) - 1);
    const auto remainder = int16_t(x & mask);
    const auto threshold = int16_t((mask >> 1) + (x < 0 ? 1 : 0));
    return int16_t((int32_t(x) >> exponent) + (remainder > threshold ? 1 : 0));
}

int32_t rounding_divide_by_pot(int32_t x, int exponent) {
    const auto mask = int32_t(uint32_t((uint64_t{1} << (unsigned(exponent) & 63)) - 1));
    const int32_t remainder = x & mask;
    const int32_t threshold = int32_t(uint32_t(mask >> 1) + (x < 0 ? 1u : 0u));
    return int32_t(uint32_t(x >> (unsigned(exponent) & 31)) + (remainder > threshold ? 1u : 0u));
}

int32_t saturating_shift_left(int32_t x, int exponent) {
    const int64_t threshold = (int64_t{1} << (31 - exponent)) - 1;
    if (x > threshold) return kMax;
    if (x < -threshold) return kMin;
    return int32_t(int64_t(x) * (int64_t{1} << exponent));
}

int32_t rounding_half_sum(int32_t a, int32_t b) {
    int64_t sum = int64_t(a) + int64_t(b);
    return int32_t((sum + (sum >= 0 ? 1 : -1)) / 2);
}

int32_t one_over_one_plus_x(int32_t x) {
    // (2 / (1 + x)) / 2 in Q1.30 is the same raw value; to Q0.31 by a saturating shift of 1.
    return saturating_shift_left(two_over_one_plus_x(x), 1);
}

int32_t multiply_by_quantized_multiplier(int32_t x, int32_t multiplier, int shift) {
    const int left_shift = shift > 0 ? shift : 0, right_shift = shift > 0 ? 0 : -shift;
    const auto shifted = int32_t(uint32_t(x) << left_shift);
    return rounding_divide_by_pot(saturating_rounding_doubling_high_mul(shifted, multiplier),
                                  right_shift);
}

int32_t exp_on_negative_values(int32_t a, int integer_bits) {
    const int fractional_bits = 31 - integer_bits;
    const int32_t one_quarter = int32_t{1} << (fractional_bits - 2);
    // a = (a mod 1/4 - 1/4) - remainder: exp of the first part by the Taylor expansion, times
    // exp(-2^k) for each bit 2^k of the (non-negative) remainder.
    const int32_t a_mod_quarter_minus_one_quarter =
        wrapping_subtract(a & (one_quarter - 1), one_quarter);
    int32_t result = exp_on_interval_between_negative_one_quarter_and_0_excl(
        multiply_by_pot(a_mod_quarter_minus_one_quarter, integer_bits));
    const int32_t remainder = wrapping_subtract(a_mod_quarter_minus_one_quarter, a);
    struct Step {
        int exponent;
        int32_t exp_of_minus_power;  // exp(-2^exponent) in Q0.31
    };
    constexpr Step kSteps[] = {{-2, 1672461947}, {-1, 1302514674}, {0, 790015084}, {1, 290630308},
                               {2, 39332535},    {3, 720401},      {4, 242}};
    for (const Step& s : kSteps) {
        if (integer_bits <= s.exponent) continue;
        if (remainder & int32_t(uint32_t{1} << (fractional_bits + s.exponent))) {
            result = saturating_rounding_doubling_high_mul(result, s.exp_of_minus_power);
        }
    }
    if (integer_bits > 5 && a < -(int32_t{1} << (36 - integer_bits))) result = 0;  // below -32
    if (a == 0) result = kMax;
    return result;
}

int32_t logistic(int32_t x, int integer_bits) {
    if (x == 0) return int32_t{1} << 30;  // 1/2
    const int32_t magnitude = x > 0 ? x : wrapping_negate(x);
    const int32_t positive =
        one_over_one_plus_x(exp_on_negative_values(wrapping_negate(magnitude), integer_bits));
    return x > 0 ? positive : wrapping_subtract(kMax, positive);
}

int32_t tanh(int32_t x, int integer_bits) {
    if (x == 0) return 0;
    const int32_t negative = x < 0 ? x : wrapping_negate(x);
    // -tanh of a negative value: (1 - exp(2n)) / (1 + exp(2n)), 2n read with one more integer bit.
    const int32_t t =
        one_minus_x_over_one_plus_x(exp_on_negative_values(negative, integer_bits + 1));
    return x < 0 ? wrapping_negate(t) : t;
}

}  // namespace anvil::frontend::tflite::gemmlowp
