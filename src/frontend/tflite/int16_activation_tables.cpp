// TFLite's int16 logistic and tanh (int16_activation_tables.h).
#include "frontend/tflite/int16_activation_tables.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "frontend/tflite/tflite_arithmetic.h"

namespace anvil::frontend::tflite {

namespace {

// sigmoid(k / 24) for k = 0..255 in Q0.16: the values of TFLite's sigmoid_table_uint16. They are
// data of the kernel's definition (a few differ by one from the correctly rounded sigmoid), so
// they are TFLite's, not recomputed.
constexpr uint16_t kSigmoid[256] = {
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149, 40794,
    41432, 42064, 42688, 43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369, 47911, 48443,
    48964, 49475, 49975, 50464, 50942, 51409, 51865, 52311, 52745, 53169, 53581, 53983, 54374,
    54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433, 57724, 58007, 58280, 58544,
    58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370, 60565, 60753, 60935, 61110, 61279,
    61441, 61599, 61750, 61896, 62036, 62172, 62302, 62428, 62549, 62666, 62778, 62886, 62990,
    63090, 63186, 63279, 63368, 63454, 63536, 63615, 63691, 63765, 63835, 63903, 63968, 64030,
    64090, 64148, 64204, 64257, 64308, 64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652,
    64687, 64721, 64754, 64786, 64816, 64845, 64873, 64900, 64926, 64950, 64974, 64997, 65019,
    65039, 65060, 65079, 65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208, 65221, 65234,
    65246, 65258, 65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360,
    65367, 65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433,
    65438, 65442, 65445, 65449, 65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474, 65476,
    65479, 65481, 65483, 65485, 65488, 65489, 65491, 65493, 65495, 65497, 65498, 65500, 65501,
    65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513, 65514, 65515, 65516,
    65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524,
    65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529, 65529,
    65529, 65530, 65530, 65530, 65530, 65531, 65531, 65531, 65531, 65531, 65532, 65532, 65532,
    65532, 65532, 65532, 65533, 65533, 65533, 65533, 65533, 65533, 65533, 65533, 65534, 65534,
    65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65535};

// The sigmoid of magnitude / (24 * 2^fraction_bits), interpolated between table entries, in
// Q0.(16 + fraction_bits); `saturated` past the table's end. (The two callers finish it apart.)
int64_t interpolated_sigmoid(int64_t magnitude, int fraction_bits, int64_t saturated) {
    const int64_t k = magnitude >> fraction_bits;
    if (k >= 255) return saturated;
    const int64_t a = kSigmoid[k], b = kSigmoid[k + 1];
    const int64_t fraction = magnitude & ((int64_t{1} << fraction_bits) - 1);
    return (a << fraction_bits) + fraction * (b - a);
}

// The input at the table's scale, as the kernels compute it (in int32: the prescales keep it in
// range).
int64_t prescaled(Int16Prescale p, int16_t x) {
    if (p.multiplier == 0) return int64_t(x) * (int64_t{3} << p.left_shift);
    const int64_t round = p.left_shift > 0 ? int64_t{1} << (p.left_shift - 1) : 0;
    return (int64_t(x) * p.multiplier + round) >> p.left_shift;
}

}  // namespace

int16_t int16_logistic(Int16Prescale p, int16_t x) {
    // v / 2^9 is the input in units of 1/24.
    const int64_t v = prescaled(p, x);
    const int64_t r = interpolated_sigmoid(std::llabs(v), 9, int64_t{0x7FFF} << 10);
    const int64_t q = v >= 0 ? r + (1 << 9) : (int64_t{1} << 25) - r + (1 << 9) - 1;
    return int16_t(q >> 10);
}

int16_t int16_tanh(Int16Prescale p, int16_t x) {
    // tanh(y) = 2 sigmoid(2y) - 1: v / 2^8 is 2y in units of 1/24.
    const int64_t v = prescaled(p, x);
    const int64_t r = interpolated_sigmoid(std::llabs(v), 8, int64_t{0xFFFF} << 8);
    const int64_t q =
        v >= 0 ? r - (int64_t{1} << 23) + (1 << 7) : -r + (int64_t{1} << 23) + (1 << 7) - 1;
    return int16_t(q >> 8);
}

Int16Prescale int16_activation_prescale(double scale, bool tanh) {
    // A power-of-two scale of 2^-12 (tanh: 2^-12 or 2^-11) takes the table's scale by a shift;
    // any other by a multiplier of at most 15 bits (truncated) and a right shift.
    const ScaleLog2 log2 = scale_log2(scale);
    const int32_t shift = 12 + log2.rounded;
    const bool pot = log2.power_of_two && (shift == 0 || (tanh && shift == 1));
    if (pot) return {0, shift};
    double multiplier = scale * 4096.0 * 3.0;
    Int16Prescale p;
    while (multiplier <= 32767.0 / 2.0 && p.left_shift <= 30) {
        ++p.left_shift;
        multiplier *= 2.0;
    }
    p.multiplier = int32_t(multiplier);
    return p;
}

std::vector<int16_t> int16_lut(float input_scale, int32_t input_zero_point, float output_scale,
                               int32_t output_zero_point, float (*f)(float)) {
    // In float throughout, as TFLite computes it (TfLiteRound: halves away from zero).
    const float input_min = input_scale * float(-32768 - input_zero_point);
    const float input_max = input_scale * float(32767 - input_zero_point);
    const float output_min = output_scale * float(-32768 - output_zero_point);
    const float output_max = output_scale * float(32767 - output_zero_point);
    const int steps = 512;
    const float step = (input_max - input_min) / float(steps);
    const float half_step = step / 2;
    const float scaling = 65536.0f / (output_max - output_min);
    std::vector<int16_t> lut(steps + 1);
    for (int i = 0; i < steps; ++i) {
        const float v = f(input_min + float(i) * step);
        const float midpoint = f(input_min + float(i) * step + half_step);
        const float next = f(input_min + float(i + 1) * step);
        const float sample = std::round(v * scaling);
        const float interpolated = std::round((next * scaling + std::round(v * scaling)) / 2);
        const float bias = std::round((interpolated - std::round(midpoint * scaling)) / 2);
        lut[size_t(i)] = int16_t(std::clamp(sample - bias, -32768.0f, 32767.0f));
    }
    lut[steps] = int16_t(std::clamp(std::round(f(input_max) * scaling), -32768.0f, 32767.0f));
    return lut;
}

int16_t int16_lut_lookup(const std::vector<int16_t>& lut, int16_t x) {
    const size_t index = size_t(256 + (x >> 7));
    const int32_t offset = x & 0x7f;
    const int32_t slope = int16_t(lut[index + 1] - lut[index]);  // in int16, as TFLite
    return int16_t(int32_t(lut[index]) + ((slope * offset + 64) >> 7));
}

Int16Prescale lstm_tanh_prescale(int32_t power) {
    const int32_t shift = 12 + power;
    return shift >= 0 ? Int16Prescale{0, shift} : Int16Prescale{3, -shift};
}

}  // namespace anvil::frontend::tflite
