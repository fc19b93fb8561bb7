// The converters of TFLite Micro's signal operators that frame a spectrum (CUSTOM operators of
// its audio front ends, such as micro_speech's audio preprocessor): SignalWindow,
// SignalFftAutoScale, SignalEnergy, SignalFilterBank and SignalFilterBankSquareRoot. SignalRfft is
// in convert_signal_rfft.cpp, the noise reduction and the logarithm in convert_signal_noise.cpp.
//
// Each follows TFLite Micro's kernel (signal/micro/kernels/ and signal/src/, tflite-micro
// 90b983c) bit for bit, with two differences where that kernel's result is not defined by its
// inputs: SignalEnergy writes 0 outside [start_index, end_index) (TFLite Micro leaves those
// elements as the arena held them), and SignalFftAutoScale takes |-32768| as 32768 (TFLite
// Micro's MaxAbs16 negates in int16, so a -32768 resets its running maximum).
#include "frontend/composite_ops.h"
#include "frontend/tflite/convert_ops.h"
#include "frontend/tflite/signal_arithmetic.h"
#include "frontend/tflite/tflite_arithmetic.h"
#include "frontend/tflite/tflite_schema.h"

namespace anvil::frontend::tflite {

using graph::Expr;

namespace {

constexpr DataType kInt16 = DataType::int_(16), kInt32 = DataType::int32(),
                   kUInt32 = DataType::uint(32), kUInt64 = DataType::uint(64);

}  // namespace

// output = saturate_int16((input * window) >> shift), the window repeated along the flattened
// input (its length must divide the input's).
void convert_signal_window(TfContext& ctx) {
    ctx.expect_arity(2, 2, 1);
    int64_t shift = ctx.custom_options().integer("shift", 0, 31);
    const TfliteTensor& x = ctx.input_tensor(0);
    if (x.type != tensor_type::kInt16 || ctx.output_tensor(0).type != tensor_type::kInt16) {
        ctx.error() << "the input and the result must be int16";
    }
    std::vector<int64_t> window = constant_vector(ctx, 1, tensor_type::kInt16, "the window");
    std::vector<int64_t> shape = ctx.static_shape(ctx.input_tflite(0), "the input");
    int64_t count = ctx.static_count(ctx.input_tflite(0), "the input");
    int64_t n = int64_t(window.size());
    if (n == 0 || count % n != 0) {
        ctx.error() << "the window's length " << n << " must divide the input's " << count
                    << " elements";
    }
    Expr rows = cast_to(ctx, reshape_to(ctx, ctx.input_tflite(0), {count / n, n}), kInt32);
    Expr y = ctx.call("multiply", {rows, integer_constant(ctx, kInt32, window, {n})});
    y = with_scalar(ctx, "right_shift", y, shift);
    y = clamp_to(ctx, y, -32768, 32767, kInt16);
    ctx.set_output(0, reshape_to(ctx, y, shape));
}

// Scales a 1-D int16 signal up by the largest power of two that keeps its largest magnitude in
// int16: result 0 is input * 2^scale_bits, result 1 the int32 scalar scale_bits.
void convert_signal_fft_auto_scale(TfContext& ctx) {
    ctx.expect_arity(1, 1, 2);
    expect_vector(ctx, ctx.input_tensor(0), tensor_type::kInt16, "the input");
    expect_vector(ctx, ctx.output_tensor(0), tensor_type::kInt16, "result 0");
    if (ctx.output_tensor(1).type != tensor_type::kInt32 || !ctx.output_tensor(1).shape.empty()) {
        ctx.error() << "result 1 (the scale bits) must be an int32 scalar";
    }
    Expr x = cast_to(ctx, ctx.input_tflite(0), kInt32);
    Expr max_abs = reduce_over(ctx, "max", ctx.call("abs", {x}), 0);
    // scale_bits = 15 - significant_bits(max), at least 0; 0 for a silent signal (TFLite Micro's
    // MostSignificantBit32(0) is 32).
    Expr bits = significant_bits(ctx, cast_to(ctx, max_abs, kUInt32));
    Expr scale_bits =
        ctx.call("maximum", {ctx.call("subtract", {integer_scalar(ctx, kInt32, 15), bits}),
                             integer_scalar(ctx, kInt32, 0)});
    scale_bits = ctx.call("where", {ctx.call("equal", {max_abs, integer_scalar(ctx, kInt32, 0)}),
                                    integer_scalar(ctx, kInt32, 0), scale_bits});
    Expr y = ctx.call("left_shift", {x, scale_bits});
    ctx.set_output(0, cast_to(ctx, y, kInt16));
    ctx.set_output(1, scale_bits);
}

// The energy re^2 + im^2 of each bin of an int16 spectrum (re, im interleaved) in
// [start_index, end_index), as uint32; 0 elsewhere.
void convert_signal_energy(TfContext& ctx) {
    ctx.expect_arity(1, 1, 1);
    expect_vector(ctx, ctx.input_tensor(0), tensor_type::kInt16, "the input");
    expect_vector(ctx, ctx.output_tensor(0), tensor_type::kUInt32, "the result");
    int64_t length = ctx.input_tensor(0).shape[0];
    if (length % 2 != 0) {
        ctx.error() << "the input holds complex values (re, im): its length " << length
                    << " must be even";
    }
    int64_t bins = length / 2;
    TfliteCustomOptions options = ctx.custom_options();
    int64_t start = options.integer("start_index", 0, bins);
    int64_t end = options.integer("end_index", start, bins);
    Expr parts = cast_to(ctx, reshape_to(ctx, ctx.input_tflite(0), {bins, 2}), kInt32);
    // The int32 sum wraps where TFLite Micro's does (re = im = -32768 makes 2^31).
    Expr energy = reduce_over(ctx, "sum", ctx.call("multiply", {parts, parts}), 1);
    std::vector<int64_t> in_range(size_t(bins), 0);
    for (int64_t k = start; k < end; ++k) in_range[size_t(k)] = 1;
    energy = ctx.call("multiply", {cast_to(ctx, energy, kUInt32),
                                   integer_constant(ctx, kUInt32, in_range, {bins})});
    ctx.set_output(0, energy);
}

// A mel filter bank over a uint32 spectrum: channel c sums its bins times `weights` plus channel
// c - 1's bins times `unweights` (each bin feeds two adjacent channels), in wrapping uint64.
// Operands 3..5 give, for num_channels + 1 channels (channel 0 only lends its unweighted part to
// channel 1), the first bin, the first weight and the width.
void convert_signal_filter_bank(TfContext& ctx) {
    ctx.expect_arity(6, 6, 1);
    expect_vector(ctx, ctx.input_tensor(0), tensor_type::kUInt32, "the input");
    expect_vector(ctx, ctx.output_tensor(0), tensor_type::kUInt64, "the result");
    int64_t bins = ctx.input_tensor(0).shape[0];
    int64_t channels = ctx.custom_options().integer("num_channels", 1, 1 << 20);
    std::vector<int64_t> weights = constant_vector(ctx, 1, tensor_type::kInt16, "the weights");
    std::vector<int64_t> unweights = constant_vector(ctx, 2, tensor_type::kInt16, "the unweights");
    std::vector<int64_t> first_bin =
        constant_vector(ctx, 3, tensor_type::kInt16, "the channels' first bins");
    std::vector<int64_t> first_weight =
        constant_vector(ctx, 4, tensor_type::kInt16, "the channels' first weights");
    std::vector<int64_t> width =
        constant_vector(ctx, 5, tensor_type::kInt16, "the channels' widths");
    if (unweights.size() != weights.size()) {
        ctx.error() << "the weights (" << weights.size() << ") and unweights (" << unweights.size()
                    << ") must be as long";
    }
    if (int64_t(first_bin.size()) != channels + 1 || first_weight.size() != first_bin.size() ||
        width.size() != first_bin.size()) {
        ctx.error() << "the channels' first bins, first weights and widths must hold "
                    << channels + 1 << " values (num_channels + 1), got " << first_bin.size()
                    << ", " << first_weight.size() << " and " << width.size();
    }
    for (int64_t c = 0; c <= channels; ++c) {
        bool fits = width[c] >= 0 && first_bin[c] >= 0 && first_bin[c] + width[c] <= bins &&
                    first_weight[c] >= 0 && first_weight[c] + width[c] <= int64_t(weights.size());
        if (!fits) {
            ctx.error() << "channel " << c << " (first bin " << first_bin[c] << ", first weight "
                        << first_weight[c] << ", width " << width[c] << ") reaches outside the "
                        << bins << " bins or the " << weights.size() << " weights";
        }
    }
    if (ctx.output_tensor(0).shape[0] != channels) {
        ctx.error() << "the result must hold num_channels = " << channels << " values";
    }
    // Each result channel as a padded list of (bin, weight) terms.
    auto terms = std::vector<std::vector<std::pair<int64_t, int64_t>>>(size_t(channels));
    size_t longest = 1;
    for (int64_t c = 0; c < channels; ++c) {
        for (int64_t j = 0; j < width[c + 1]; ++j) {
            terms[c].emplace_back(first_bin[c + 1] + j, weights[first_weight[c + 1] + j]);
        }
        for (int64_t j = 0; j < width[c]; ++j) {
            terms[c].emplace_back(first_bin[c] + j, unweights[first_weight[c] + j]);
        }
        longest = std::max(longest, terms[c].size());
    }
    std::vector<int64_t> index(size_t(channels) * longest, 0), weight(index.size(), 0);
    for (size_t c = 0; c < terms.size(); ++c) {
        for (size_t j = 0; j < terms[c].size(); ++j) {
            index[c * longest + j] = terms[c][j].first;
            weight[c * longest + j] = terms[c][j].second;  // int16 -> uint64 as C converts it
        }
    }
    std::vector<int64_t> shape = {channels, int64_t(longest)};
    Expr gathered = take_along(ctx, cast_to(ctx, ctx.input_tflite(0), kUInt64),
                               integer_constant(ctx, DataType::int64(), index, shape), 0);
    Expr products = ctx.call("multiply", {gathered, integer_constant(ctx, kUInt64, weight, shape)});
    ctx.set_output(0, reduce_over(ctx, "sum", products, 1));
}

// sqrt(input) rounded to nearest (TFLite Micro's Sqrt64, whose 32-bit path cannot round up to
// 65536 and whose 64-bit path cannot round up to 2^32), shifted right by operand 1, the int32
// scalar that SignalFftAutoScale returns (taken in [0, 31]).
void convert_signal_filter_bank_square_root(TfContext& ctx) {
    ctx.expect_arity(2, 2, 1);
    expect_vector(ctx, ctx.input_tensor(0), tensor_type::kUInt64, "the input");
    expect_vector(ctx, ctx.output_tensor(0), tensor_type::kUInt32, "the result");
    const TfliteTensor& shift = ctx.input_tensor(1);
    if (shift.type != tensor_type::kInt32 || !shift.shape.empty()) {
        ctx.error() << "operand 1 (the scale bits) must be an int32 scalar";
    }
    Expr x = ctx.input_tflite(0);
    Expr root = floor_sqrt(ctx, x);
    Expr rest = ctx.call("subtract", {x, ctx.call("multiply", {root, root})});
    Expr capped = ctx.call("logical_or",
                           {ctx.call("equal", {root, integer_scalar(ctx, kUInt64, 0xFFFF)}),
                            ctx.call("equal", {root, integer_scalar(ctx, kUInt64, 0xFFFFFFFF)})});
    Expr up = ctx.call("logical_and",
                       {ctx.call("greater", {rest, root}), ctx.call("logical_not", {capped})});
    root = ctx.call("add", {root, cast_to(ctx, up, kUInt64)});
    Expr bits = clamp_to(ctx, ctx.input_tflite(1), 0, 31, kUInt32);
    ctx.set_output(0, ctx.call("right_shift", {cast_to(ctx, root, kUInt32), bits}));
}

}  // namespace anvil::frontend::tflite
