// The converters of TFLite Micro's signal operators that reduce noise and compress a filter
// bank's channels (CUSTOM operators of its audio front ends): SignalFilterBankSpectralSubtraction,
// SignalPCAN (per-channel amplitude normalization) and SignalFilterBankLog. Each follows TFLite
// Micro's kernel (signal/src/, tflite-micro 90b983c) bit for bit, in its C types: uint32 words,
// uint64 products, arithmetic right shifts of int32.
//
// SignalFilterBankSpectralSubtraction keeps a noise estimate per channel across invocations. A
// run of the compiled model is one invocation from the reset state, as a freshly loaded TFLite
// Micro interpreter computes it (as the LSTM's and SVDF's states, convert_lstm.cpp): the noise
// estimate before it is 0.
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

// (a * b) >> shift in uint64, as uint32: C's uint32_t(((uint64_t)a * b) >> shift).
Expr wide_product_shifted(const TfContext& ctx, const Expr& a, const Expr& b, int64_t shift) {
    Expr product = ctx.call("multiply", {cast_to(ctx, a, kUInt64), cast_to(ctx, b, kUInt64)});
    return cast_to(ctx, with_scalar(ctx, "right_shift", product, shift), kUInt32);
}

// PCAN's gains: TFLite Micro's WideDynamicFunction of each uint32 noise estimate, a piecewise
// quadratic read from the lookup table `lut` (int16, three coefficients per octave), as int32.
Expr wide_dynamic_gain(const TfContext& ctx, const Expr& x, const std::vector<int64_t>& lut) {
    Expr table = integer_constant(ctx, kInt32, lut, {int64_t(lut.size())});
    auto take = [&](const Expr& index) { return take_along(ctx, table, index, 0); };
    Expr interval = significant_bits(ctx, x);  // 2..32 where x > 2
    Expr base = with_scalar(ctx, "subtract", with_scalar(ctx, "multiply", interval, 4), 6);
    // frac = (interval < 11 ? x << (11 - interval) : x >> (interval - 11)) & 0x3FF
    Expr up = cast_to(
        ctx,
        ctx.call("maximum", {ctx.call("subtract", {integer_scalar(ctx, kInt32, 11), interval}),
                             integer_scalar(ctx, kInt32, 0)}),
        kUInt32);
    Expr down = cast_to(ctx,
                        ctx.call("maximum", {with_scalar(ctx, "subtract", interval, 11),
                                             integer_scalar(ctx, kInt32, 0)}),
                        kUInt32);
    Expr frac = ctx.call("right_shift", {ctx.call("left_shift", {x, up}), down});
    frac = cast_to(ctx, with_scalar(ctx, "bitwise_and", frac, 0x3FF), kInt32);
    // Indices clamp at 0 where x <= 2 (there the table entry x itself is the gain).
    Expr at = ctx.call("maximum", {base, integer_scalar(ctx, kInt32, 0)});
    Expr c0 = take(at), c1 = take(with_scalar(ctx, "add", at, 1)),
         c2 = take(with_scalar(ctx, "add", at, 2));
    Expr result = with_scalar(ctx, "right_shift", ctx.call("multiply", {c2, frac}), 5);
    result = ctx.call("add", {result, with_scalar(ctx, "multiply", c1, 32)});
    result = ctx.call("multiply", {result, frac});
    result = with_scalar(ctx, "right_shift", with_scalar(ctx, "add", result, 1 << 14), 15);
    result = cast_to(ctx, cast_to(ctx, ctx.call("add", {result, c0}), kInt16), kInt32);
    Expr small = ctx.call("less_equal", {x, integer_scalar(ctx, kUInt32, 2)});
    Expr direct =
        take(cast_to(ctx, ctx.call("minimum", {x, integer_scalar(ctx, kUInt32, 2)}), kInt32));
    return ctx.call("where", {small, direct, result});
}

// TFLite Micro's Log32(x, scale) for each uint32 x > 1: log2 in 16-bit fixed point (the octave,
// then the fraction corrected by a 129-entry table), times ln 2, times scale / 2^16.
Expr fixed_point_log(const TfContext& ctx, const Expr& x, int64_t scale) {
    static const std::vector<int64_t> kLogTable = {
        0,    224,  442,  654,  861,  1063, 1259, 1450, 1636, 1817, 1992, 2163, 2329, 2490, 2646,
        2797, 2944, 3087, 3224, 3358, 3487, 3611, 3732, 3848, 3960, 4068, 4172, 4272, 4368, 4460,
        4549, 4633, 4714, 4791, 4864, 4934, 5001, 5063, 5123, 5178, 5231, 5280, 5326, 5368, 5408,
        5444, 5477, 5507, 5533, 5557, 5578, 5595, 5610, 5622, 5631, 5637, 5640, 5641, 5638, 5633,
        5626, 5615, 5602, 5586, 5568, 5547, 5524, 5498, 5470, 5439, 5406, 5370, 5332, 5291, 5249,
        5203, 5156, 5106, 5054, 5000, 4944, 4885, 4825, 4762, 4697, 4630, 4561, 4490, 4416, 4341,
        4264, 4184, 4103, 4020, 3935, 3848, 3759, 3668, 3575, 3481, 3384, 3286, 3186, 3084, 2981,
        2875, 2768, 2659, 2549, 2437, 2323, 2207, 2090, 1971, 1851, 1729, 1605, 1480, 1353, 1224,
        1094, 963,  830,  695,  559,  421,  282,  142,  0,    0};
    Expr octave = with_scalar(ctx, "subtract", significant_bits(ctx, x), 1);  // 1..31 for x > 1
    // frac = x - 2^octave, scaled to 16 fractional bits (int32).
    Expr power =
        ctx.call("left_shift", {integer_scalar(ctx, kUInt32, 1), cast_to(ctx, octave, kUInt32)});
    Expr frac = cast_to(ctx, ctx.call("subtract", {x, power}), kInt32);
    Expr up = ctx.call("maximum", {ctx.call("subtract", {integer_scalar(ctx, kInt32, 16), octave}),
                                   integer_scalar(ctx, kInt32, 0)});
    Expr down = ctx.call(
        "maximum", {with_scalar(ctx, "subtract", octave, 16), integer_scalar(ctx, kInt32, 0)});
    frac = ctx.call("right_shift", {ctx.call("left_shift", {frac, up}), down});
    Expr segment = with_scalar(ctx, "right_shift", frac, 9);  // 0..127
    Expr table = integer_constant(ctx, kInt32, kLogTable, {int64_t(kLogTable.size())});
    auto take = [&](const Expr& index) { return take_along(ctx, table, index, 0); };
    Expr c0 = take(segment), c1 = take(with_scalar(ctx, "add", segment, 1));
    Expr offset = ctx.call("subtract", {frac, with_scalar(ctx, "multiply", segment, 512)});
    Expr correction = with_scalar(
        ctx, "right_shift", ctx.call("multiply", {ctx.call("subtract", {c1, c0}), offset}), 16);
    Expr fraction =
        cast_to(ctx, ctx.call("add", {ctx.call("add", {frac, c0}), correction}), kUInt32);
    Expr log2 = ctx.call(
        "add", {with_scalar(ctx, "left_shift", cast_to(ctx, octave, kUInt32), 16), fraction});
    // loge = (45426 * (uint64) log2 + 2^15) >> 16; then (scale * loge + 2^15) >> 16 in uint32.
    Expr loge = with_scalar(
        ctx, "right_shift",
        with_scalar(ctx, "add", with_scalar(ctx, "multiply", cast_to(ctx, log2, kUInt64), 45426),
                    1 << 15),
        16);
    loge = cast_to(ctx, loge, kUInt32);
    return with_scalar(ctx, "right_shift",
                       with_scalar(ctx, "add", with_scalar(ctx, "multiply", loge, scale), 1 << 15),
                       16);
}

}  // namespace

// Subtracts a running noise estimate per channel (even channels smooth with `smoothing`, odd
// ones with `alternate_smoothing`), keeping at least min_signal_remaining of the signal. Result
// 0 is the cleaned signal, result 1 the new noise estimate.
void convert_signal_filter_bank_spectral_subtraction(TfContext& ctx) {
    ctx.expect_arity(1, 1, 2);
    expect_vector(ctx, ctx.input_tensor(0), tensor_type::kUInt32, "the input");
    expect_vector(ctx, ctx.output_tensor(0), tensor_type::kUInt32, "result 0");
    expect_vector(ctx, ctx.output_tensor(1), tensor_type::kUInt32, "result 1 (the noise estimate)");
    TfliteCustomOptions o = ctx.custom_options();
    const int64_t u32_max = 0xFFFFFFFF;
    int64_t channels = o.integer("num_channels", 1, 1 << 20);
    // The uint32 coefficients come from int32 options, as TFLite Micro reads them.
    auto coefficient = [&](const char* key) {
        return int64_t(uint32_t(int32_t(o.integer(key, INT32_MIN, u32_max))));
    };
    int64_t smoothing = coefficient("smoothing"),
            one_minus_smoothing = coefficient("one_minus_smoothing"),
            alternate_smoothing = coefficient("alternate_smoothing"),
            min_signal_remaining = coefficient("min_signal_remaining");
    (void)one_minus_smoothing;  // it weighs the previous estimate, 0 from the reset state
    o.integer("alternate_one_minus_smoothing", INT32_MIN, u32_max);
    int64_t smoothing_bits = o.integer("smoothing_bits", 0, 31);
    int64_t subtraction_bits = o.integer("spectral_subtraction_bits", 0, 63);
    bool clamping = o.boolean("clamping");
    if (ctx.input_tensor(0).shape[0] != channels || ctx.output_tensor(0).shape[0] != channels ||
        ctx.output_tensor(1).shape[0] != channels) {
        ctx.error() << "the input and both results must hold num_channels = " << channels
                    << " values";
    }
    Expr x = ctx.input_tflite(0);
    std::vector<int64_t> per_channel;
    for (int64_t c = 0; c < channels; ++c) {
        per_channel.push_back(c % 2 == 0 ? smoothing : alternate_smoothing);
    }
    Expr signal_up = with_scalar(ctx, "left_shift", x, smoothing_bits);
    Expr noise = wide_product_shifted(
        ctx, signal_up, integer_constant(ctx, kUInt32, per_channel, {channels}), subtraction_bits);
    Expr estimate = ctx.call("minimum", {noise, signal_up});
    Expr floor = wide_product_shifted(ctx, x, integer_scalar(ctx, kUInt32, min_signal_remaining),
                                      subtraction_bits);
    Expr subtracted = with_scalar(ctx, "right_shift", ctx.call("subtract", {signal_up, estimate}),
                                  smoothing_bits);
    ctx.set_output(0, ctx.call("maximum", {subtracted, floor}));
    ctx.set_output(1, clamping ? estimate : noise);
}

// Per-channel amplitude normalization: each channel times a gain that falls with its noise
// estimate (operand 1) through the lookup table (operand 2), shifted right by snr_shift, then
// compressed: x^2 / 4 below 2, x - 1 above (12 fractional bits in, 6 out).
void convert_signal_pcan(TfContext& ctx) {
    ctx.expect_arity(3, 3, 1);
    expect_vector(ctx, ctx.input_tensor(0), tensor_type::kUInt32, "the input");
    expect_vector(ctx, ctx.input_tensor(1), tensor_type::kUInt32, "the noise estimate");
    expect_vector(ctx, ctx.output_tensor(0), tensor_type::kUInt32, "the result");
    int64_t snr_shift = ctx.custom_options().integer("snr_shift", 0, 63);
    std::vector<int64_t> lut = constant_vector(ctx, 2, tensor_type::kInt16, "the gain table");
    // WideDynamicFunction reads entries up to 4 * 32 - 4 for the largest uint32 estimates.
    if (lut.size() < 125) {
        ctx.error() << "the gain table must hold at least 125 values (three per octave of a "
                       "uint32 noise estimate), got "
                    << lut.size();
    }
    int64_t channels = ctx.input_tensor(0).shape[0];
    if (ctx.input_tensor(1).shape[0] != channels || ctx.output_tensor(0).shape[0] != channels) {
        ctx.error() << "the input, the noise estimate and the result must be as long";
    }
    // The int16 gain converts to uint32 as C converts it (a negative one wraps).
    Expr gain = cast_to(ctx, wide_dynamic_gain(ctx, ctx.input_tflite(1), lut), kUInt32);
    Expr snr = wide_product_shifted(ctx, ctx.input_tflite(0), gain, snr_shift);
    constexpr int kSnrBits = 12, kOutputBits = 6;
    Expr square = with_scalar(ctx, "right_shift", ctx.call("multiply", {snr, snr}),
                              2 + 2 * kSnrBits - kOutputBits);
    Expr linear =
        with_scalar(ctx, "subtract", with_scalar(ctx, "right_shift", snr, kSnrBits - kOutputBits),
                    1 << kOutputBits);
    Expr below = ctx.call("less", {snr, integer_scalar(ctx, kUInt32, 2 << kSnrBits)});
    ctx.set_output(0, ctx.call("where", {below, square, linear}));
}

// The natural logarithm of each channel (shifted left by input_correction_bits), times
// output_scale, in fixed point, saturated to int16; 0 for values below 2.
void convert_signal_filter_bank_log(TfContext& ctx) {
    ctx.expect_arity(1, 1, 1);
    expect_vector(ctx, ctx.input_tensor(0), tensor_type::kUInt32, "the input");
    expect_vector(ctx, ctx.output_tensor(0), tensor_type::kInt16, "the result");
    if (ctx.input_tensor(0).shape != ctx.output_tensor(0).shape) {
        ctx.error() << "the input and the result must be as long";
    }
    TfliteCustomOptions o = ctx.custom_options();
    int64_t correction_bits = o.integer("input_correction_bits", 0, 31);
    // output_scale is an int32 option the kernel multiplies as uint32.
    int64_t scale = int64_t(uint32_t(int32_t(o.integer("output_scale", INT32_MIN, INT32_MAX))));
    Expr scaled = with_scalar(ctx, "left_shift", ctx.input_tflite(0), correction_bits);
    Expr log = ctx.call("minimum",
                        {fixed_point_log(ctx, scaled, scale), integer_scalar(ctx, kUInt32, 32767)});
    Expr positive = ctx.call("greater", {scaled, integer_scalar(ctx, kUInt32, 1)});
    ctx.set_output(
        0,
        cast_to(ctx, ctx.call("where", {positive, log, integer_scalar(ctx, kUInt32, 0)}), kInt16));
}

}  // namespace anvil::frontend::tflite
