// The int16 gate functions of TFLite Micro's integer LSTM (reference_integer_ops' Logistic and
// Tanh of int16: a 256-entry table of the sigmoid, linearly interpolated), tabulated over every
// int16 input. The integer LSTM's graph gathers from these tables (convert_integer_lstm.cpp), so
// its gates are TFLite Micro's bit for bit.
#pragma once

#include <cstdint>
#include <vector>

namespace anvil::frontend::tflite {

// sigmoid(x / 2^12) in Q0.15 for x in Q3.12 (the gates' sums), as TFLite Micro computes it.
int16_t micro_logistic(int16_t x);

// tanh(x * 2^power) in Q0.15, as TFLite Micro's LSTM computes it (lstm_internal::Tanh): the
// cell gate at power -12 (Q3.12), the cell state at its scale's power of two. power <= 2 (above,
// TFLite Micro's int32 arithmetic overflows).
int16_t micro_tanh(int32_t power, int16_t x);

// f over every int16 input, indexed by x + 32768.
template <typename F>
std::vector<int16_t> int16_table(F f) {
    std::vector<int16_t> table;
    table.reserve(65536);
    for (int32_t x = -32768; x <= 32767; ++x) table.push_back(f(int16_t(x)));
    return table;
}

}  // namespace anvil::frontend::tflite
