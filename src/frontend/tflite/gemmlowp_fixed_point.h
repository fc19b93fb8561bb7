// gemmlowp's scalar int32 fixed-point arithmetic, which TFLite's integer kernels are written in:
// the multiplies, shifts and the Newton-Raphson reciprocal of quantized DIV
// (quantized_division.cpp), the fixed-point logistic and tanh of TFLite Micro's int8 LOGISTIC
// and TANH (convert_activation.cpp), and the int16 forms HARD_SWISH uses
// (quantized_hard_swish.cpp). A value with I integer bits is a raw int32 of 31 - I fractional bits
// (Q(I).(31 - I)). Every function computes what TFLite's C++ does, with the wraps of its int32
// arithmetic done in unsigned arithmetic here.
#pragma once

#include <cstdint>

namespace anvil::frontend::tflite::gemmlowp {

// round(a * b / 2^31), halves away from zero, saturating the one overflow (INT32_MIN^2).
int32_t saturating_rounding_doubling_high_mul(int32_t a, int32_t b);
// The int16 form: round(a * b / 2^15), saturating INT16_MIN^2.
int16_t saturating_rounding_doubling_high_mul(int16_t a, int16_t b);

// x / 2^exponent rounded half away from zero (RoundingDivideByPOT), for exponents in [0, 31].
// Past that range TFLite's shifts are undefined in C++; this computes what x86 and WebAssembly
// execute (the mask's shift count mod 64, truncated to 32 bits, the shift's count mod 32).
int32_t rounding_divide_by_pot(int32_t x, int exponent);
// The int16 form, exponent in [0, 31]: its mask is 2^exponent - 1 truncated to 16 bits, so
// exponents past 15 give what the kernels give (1 for x >= 0, -1 for x < 0).
int16_t rounding_divide_by_pot(int16_t x, int exponent);

// x * 2^exponent saturated to int32 (SaturatingRoundingMultiplyByPOT of exponent in [0, 31]).
int32_t saturating_shift_left(int32_t x, int exponent);

// (a + b) / 2 rounded half away from zero.
int32_t rounding_half_sum(int32_t a, int32_t b);

// 1 / (1 + x) for x in [0, 1): Q0.31 in and out, by Newton-Raphson in Q2.29
// (one_over_one_plus_x_for_x_in_0_1).
int32_t one_over_one_plus_x(int32_t x);

// TFLite's MultiplyByQuantizedMultiplier: x * multiplier * 2^(shift - 31), the left shift
// wrapping as int32, then the doubling high multiply and a rounding right shift.
int32_t multiply_by_quantized_multiplier(int32_t x, int32_t multiplier, int shift);

// exp(x) for x <= 0 with `integer_bits` integer bits, in Q0.31 (exp_on_negative_values).
int32_t exp_on_negative_values(int32_t x, int integer_bits);

// logistic(x) of x with `integer_bits` integer bits, in Q0.31 (gemmlowp::logistic).
int32_t logistic(int32_t x, int integer_bits);

// tanh(x) of x with `integer_bits` integer bits, in Q0.31 (gemmlowp::tanh).
int32_t tanh(int32_t x, int integer_bits);

}  // namespace anvil::frontend::tflite::gemmlowp
