// TFLite's int16 logistic and tanh (reference_integer_ops' Logistic and Tanh of int16, which
// TFLite, TFLite Micro and TFLite Micro's integer LSTM share: a 256-entry table of the sigmoid,
// linearly interpolated), tabulated over every int16 input. Graphs gather from these tables
// (the int16 LOGISTIC and TANH converters, convert_integer_lstm.cpp), so they compute TFLite's
// values bit for bit.
#pragma once

#include <cstdint>
#include <vector>

namespace anvil::frontend::tflite {

// How the kernels bring their input to the table's scale, 1 / (3 * 2^12): multiplier 0 means
// x * (3 << left_shift), else (x * multiplier + 2^(left_shift - 1)) >> left_shift.
struct Int16Prescale {
    int32_t multiplier = 0;
    int32_t left_shift = 0;
};

// sigmoid in Q0.15 (the input prescaled as `p`).
int16_t int16_logistic(Int16Prescale p, int16_t x);
// tanh in Q0.15 (the input prescaled as `p`).
int16_t int16_tanh(Int16Prescale p, int16_t x);

// The prescale of TFLite's int16 LOGISTIC (tanh: TANH) of an input of scale `scale` (zero point
// 0), as their Prepare computes it.
Int16Prescale int16_activation_prescale(double scale, bool tanh);

// The prescale of TFLite Micro's LSTM tanh of a value at scale 2^power (lstm_internal::Tanh): the
// cell gate at power -12 (Q3.12), the cell state at its scale's power of two. power <= 2 (above,
// the kernel's int32 arithmetic overflows).
Int16Prescale lstm_tanh_prescale(int32_t power);

// TFLite's 513-entry int16 table of `f` (LUTPopulateInt16 in float): f sampled at 512 steps over
// the input range, each entry biased by half its midpoint's interpolation error, in the output's
// quantization.
std::vector<int16_t> int16_lut(float input_scale, int32_t input_zero_point, float output_scale,
                               int32_t output_zero_point, float (*f)(float));
// TFLite's lookup in such a table (LUTLookup): the high 9 bits index it, the low 7 interpolate.
int16_t int16_lut_lookup(const std::vector<int16_t>& lut, int16_t x);

// f over every int16 input, indexed by x + 32768.
template <typename F>
std::vector<int16_t> int16_table(F f) {
    std::vector<int16_t> table;
    table.reserve(65536);
    for (int32_t x = -32768; x <= 32767; ++x) table.push_back(f(int16_t(x)));
    return table;
}

}  // namespace anvil::frontend::tflite
