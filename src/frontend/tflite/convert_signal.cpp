// The converters of TFLite Micro's signal operators that frame a spectrum (CUSTOM operators of
// its audio front ends, such as micro_speech's audio preprocessor): SignalWindow,
// SignalFftAutoScale, SignalEnergy, SignalFilterBank and SignalFilterBankSquareRoot. SignalRfft is
// in convert_signal_rfft.cpp, the noise reduction and the logarithm in convert_signal_noise.cpp.
//
// Each follows TFLite Micro's kernel (signal/micro/kernels/ and signal/src/, tflite-micro
// 90b983c) bit for bit, with one difference where that kernel's result is not defined by its
// inputs: SignalEnergy writes 0 outside [start_index, end_index) (TFLite Micro leaves those
// elements as the arena held them).
#include <algorithm>

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

// TFLite Micro's MaxAbs16 of the int16 values `x` (as int32, length n), as an int32 scalar. It
// scans with an int16 running maximum m: m = v where v > m, else m = -v where -v > m, the
// negation stored back in int16. That is max |v| unless the signal holds a -32768, whose
// negation wraps to m = -32768. After the last one, at index k, the next value v becomes m; m
// stays negative while the values keep rising below 0 (each becomes m), and turns positive at
// the first index j > k where v >= 0, or where v <= its predecessor (m = -v). From there on it
// is max |v| again, over [j, n); without such a j the result is the last value (negative), or
// -32768 when the signal ends with it.
Expr max_abs16(TfContext& ctx, const Expr& x, int64_t n) {
    auto scalar = [&](int64_t v) { return integer_scalar(ctx, kInt32, v); };
    if (n == 0) return scalar(0);
    std::vector<int64_t> indices(static_cast<size_t>(n)), previous(indices.size());
    for (int64_t i = 0; i < n; ++i) {
        indices[size_t(i)] = i;
        previous[size_t(i)] = std::max<int64_t>(i - 1, 0);
    }
    Expr index = integer_constant(ctx, kInt32, indices, {n});
    Expr magnitude = ctx.call("abs", {x});
    Expr is_min = ctx.call("equal", {x, scalar(-32768)});
    Expr last_min = reduce_over(ctx, "max", ctx.call("where", {is_min, index, scalar(-1)}), 0);
    Expr before = take_along(ctx, x, integer_constant(ctx, kInt32, previous, {n}), 0);
    Expr falls = ctx.call("logical_and",
                          {ctx.call("less_equal", {x, before}),
                           ctx.call("greater", {index, with_scalar(ctx, "add", last_min, 1)})});
    Expr rises_to_zero = ctx.call("greater_equal", {x, scalar(0)});
    Expr turns = ctx.call("logical_and", {ctx.call("greater", {index, last_min}),
                                          ctx.call("logical_or", {rises_to_zero, falls})});
    Expr first_turn = reduce_over(ctx, "min", ctx.call("where", {turns, index, scalar(n)}), 0);
    Expr from_turn = ctx.call("greater_equal", {index, first_turn});
    Expr tail = reduce_over(ctx, "max", ctx.call("where", {from_turn, magnitude, scalar(0)}), 0);
    Expr last = take_along(ctx, x, scalar(n - 1), 0);
    Expr after_min = ctx.call("where", {ctx.call("less", {first_turn, scalar(n)}), tail, last});
    return ctx.call("where", {ctx.call("less", {last_min, scalar(0)}),
                              reduce_over(ctx, "max", magnitude, 0), after_min});
}

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
    Expr max_abs = max_abs16(ctx, x, ctx.static_count(ctx.input_tflite(0), "the input"));
    // scale_bits = 15 - significant_bits(max) for a positive max; 0 for a silent signal and a
    // negative max (TFLite Micro's MostSignificantBit32 of 0 and of a negative int16 is 32).
    Expr bits = significant_bits(ctx, cast_to(ctx, max_abs, kUInt32));
    Expr positive = ctx.call("greater", {max_abs, integer_scalar(ctx, kInt32, 0)});
    Expr scale_bits =
        ctx.call("where", {positive, ctx.call("subtract", {integer_scalar(ctx, kInt32, 15), bits}),
                           integer_scalar(ctx, kInt32, 0)});
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
    // The table below is channels x longest: bounded first, as a malformed model could make it
    // huge (every channel spanning the same 32767 weights). Real front ends have a few thousand.
    size_t longest = 1;
    for (int64_t c = 0; c < channels; ++c) {
        longest = std::max(longest, size_t(width[c] + width[c + 1]));
    }
    constexpr size_t kMostTerms = size_t{1} << 22;
    if (size_t(channels) * longest > kMostTerms) {
        ctx.error() << "the filter bank's table of " << channels << " channels by up to " << longest
                    << " terms exceeds " << kMostTerms << " terms";
    }
    // Each result channel as a padded list of (bin, weight) terms.
    auto terms = std::vector<std::vector<std::pair<int64_t, int64_t>>>(size_t(channels));
    for (int64_t c = 0; c < channels; ++c) {
        for (int64_t j = 0; j < width[c + 1]; ++j) {
            terms[c].emplace_back(first_bin[c + 1] + j, weights[first_weight[c + 1] + j]);
        }
        for (int64_t j = 0; j < width[c]; ++j) {
            terms[c].emplace_back(first_bin[c] + j, unweights[first_weight[c] + j]);
        }
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
