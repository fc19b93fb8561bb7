// The TFLite importer's converters (internal to frontend/tflite). A converter turns one
// operator into graph expressions and sets the operator's results (TfContext::set_output); all of
// them are listed once, in converters.def, keyed by builtin operator code.
#pragma once

#include <string>
#include <vector>

#include "frontend/tflite/tflite_context.h"

namespace anvil::frontend::tflite {

using TfConvertFn = void (*)(TfContext& ctx);

struct TfConverter {
    int32_t builtin;
    TfConvertFn convert;
};
// The one table of converters (converters.def).
const std::vector<TfConverter>& converter_table();
// The converter of builtin operator `builtin`; null when there is none.
TfConvertFn find_converter(int32_t builtin);
// The converter of the CUSTOM operator named `custom` (converters.def); null when there is none.
TfConvertFn find_custom_converter(const std::string& custom);
// The converter of an operator code; null when there is none.
TfConvertFn find_converter(const TfliteOperatorCode& code);

// convert_conv.cpp
void convert_conv2d(TfContext& ctx);
void convert_depthwise_conv2d(TfContext& ctx);
void convert_transpose_conv(TfContext& ctx);
void convert_fully_connected(TfContext& ctx);
void convert_batch_matmul(TfContext& ctx);

// convert_elementwise.cpp
void convert_add(TfContext& ctx);
void convert_sub(TfContext& ctx);
void convert_mul(TfContext& ctx);
void convert_div(TfContext& ctx);
void convert_maximum(TfContext& ctx);
void convert_minimum(TfContext& ctx);
void convert_prelu(TfContext& ctx);
void convert_cast(TfContext& ctx);

// convert_activation.cpp
void convert_relu(TfContext& ctx);
void convert_relu_n1_to_1(TfContext& ctx);
void convert_relu6(TfContext& ctx);
void convert_leaky_relu(TfContext& ctx);
void convert_hard_swish(TfContext& ctx);
void convert_logistic(TfContext& ctx);
void convert_tanh(TfContext& ctx);
void convert_softmax(TfContext& ctx);
void convert_quantize(TfContext& ctx);
void convert_dequantize(TfContext& ctx);

// convert_pool.cpp
void convert_average_pool2d(TfContext& ctx);
void convert_max_pool2d(TfContext& ctx);
void convert_mean(TfContext& ctx);
void convert_sum(TfContext& ctx);

// convert_lstm.cpp
void convert_unidirectional_sequence_lstm(TfContext& ctx);

// convert_svdf.cpp
void convert_svdf(TfContext& ctx);

// convert_signal.cpp: TFLite Micro's signal library (audio front ends), CUSTOM operators
void convert_signal_window(TfContext& ctx);
void convert_signal_fft_auto_scale(TfContext& ctx);
void convert_signal_energy(TfContext& ctx);
void convert_signal_filter_bank(TfContext& ctx);
void convert_signal_filter_bank_square_root(TfContext& ctx);
// convert_signal_rfft.cpp
void convert_signal_rfft(TfContext& ctx);
// convert_signal_noise.cpp
void convert_signal_filter_bank_spectral_subtraction(TfContext& ctx);
void convert_signal_pcan(TfContext& ctx);
void convert_signal_filter_bank_log(TfContext& ctx);

// convert_gather.cpp
void convert_gather(TfContext& ctx);
void convert_split(TfContext& ctx);

// convert_resize.cpp
void convert_resize_bilinear(TfContext& ctx);
void convert_resize_nearest_neighbor(TfContext& ctx);

// convert_shape.cpp
void convert_reshape(TfContext& ctx);
void convert_squeeze(TfContext& ctx);
void convert_expand_dims(TfContext& ctx);
void convert_transpose(TfContext& ctx);
void convert_concatenation(TfContext& ctx);
void convert_pad(TfContext& ctx);
void convert_slice(TfContext& ctx);
void convert_strided_slice(TfContext& ctx);

// Shared by the converters of windowed ops (convert_conv.cpp, convert_pool.cpp).

// TFLite's SAME / VALID padding of one spatial dimension: [begin, end].
std::pair<int64_t, int64_t> window_padding(const TfContext& ctx, int8_t padding, int64_t in,
                                           int64_t window, int64_t stride, int64_t dilation);
// The NHWC axis `axis` of a 4-D tensor held channels first.
int64_t channels_first_axis(int64_t axis);
// The real numbers a (possibly quantized) operand stands for, as float32: itself when float.
graph::Expr dequantized_input(const TfContext& ctx, size_t i, bool channels_first);
// Operand i (weights, a bias) in TFLite's layout as real numbers: dequantized when it is
// quantized (a float operator's weights in TFLite's dynamic-range models).
graph::Expr float_weights(const TfContext& ctx, size_t i);
// A float32 result quantized to result 0's type and quantization (TFLite's rounding); itself
// when that result is float.
graph::Expr quantized_result(const TfContext& ctx, const graph::Expr& y);

// UNIDIRECTIONAL_SEQUENCE_LSTM of integer activations (convert_integer_lstm.cpp), from
// convert_unidirectional_sequence_lstm with the operator's options.
void convert_integer_lstm(TfContext& ctx, const TfliteOptions& options, bool time_major);

}  // namespace anvil::frontend::tflite
