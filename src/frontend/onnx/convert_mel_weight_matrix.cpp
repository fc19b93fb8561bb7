// Converter of ONNX's MelWeightMatrix (opset 17), from ordinary ops.
//
// The matrix [dft_length / 2 + 1, num_mel_bins] maps a spectrogram's bins to mel bands, each a
// triangle over spectrogram bins. As ONNX's reference: the band edges are num_mel_bins + 2
// points spaced evenly on the mel scale (step (high - low) / (num_mel_bins + 2), mel =
// 2595 log10(1 + hz / 700), the edges' mels in float32, the rest in float64), converted back to
// hertz and to bins floor((dft_length + 1) hz / sample_rate). Band i rises from bin l = b[i] to
// c = b[i + 1] ((j - l) / (c - l), 1 at c when l = c) and falls to h = b[i + 2] ((h - j) /
// (h - c), for c <= j < h). Every input may be known only at run time: the sizes become
// dimensions the executor binds.
#include <cmath>

#include "frontend/onnx/convert_ops.h"

namespace anvil::frontend {

using graph::Expr;

namespace {

// A scalar input of the kinds given, as `to`.
Expr scalar_input(ConvertContext& ctx, size_t i, const char* what, bool integer, DataType to) {
    Expr x = ctx.input(i);
    const auto& t = ctx.tensor_type(x, what);
    if (!t.is_static() || t.num_elements() != 1 || (integer && !t.dtype.is_integer()) ||
        (!integer && !t.dtype.is_floating())) {
        ctx.error() << what << " must be one " << (integer ? "integer" : "floating-point")
                    << " value, got " << graph::type_str(x->type);
    }
    return cast_to(ctx, reshape_to(ctx, x, {}), to);
}

}  // namespace

Exprs convert_mel_weight_matrix(ConvertContext& ctx) {
    DataType f32 = DataType::float32(), f64 = DataType::float64(), i64 = DataType::int64();
    auto onnx_type = static_cast<int>(ctx.attr_int("output_datatype", 1));
    std::optional<DataType> out_type = dtype_from_onnx(onnx_type);
    if (!out_type || out_type->is_string()) {
        ctx.error() << "output_datatype " << onnx_dtype_name(onnx_type) << " is not supported";
    }
    Expr mel_bins = scalar_input(ctx, 0, "num_mel_bins", true, i64);
    Expr dft_length = scalar_input(ctx, 1, "dft_length", true, i64);
    Expr sample_rate = scalar_input(ctx, 2, "sample_rate", true, f64);
    Expr lower = scalar_input(ctx, 3, "lower_edge_hertz", false, f32);
    Expr upper = scalar_input(ctx, 4, "upper_edge_hertz", false, f32);
    auto op = [&](const char* name, Expr a, Expr b) { return ctx.call(name, {a, b}); };
    auto c64 = [&](double v) { return ctx.constant_scalar(f64, v); };
    auto c32 = [&](double v) { return ctx.constant_scalar(f32, v); };

    // The sizes: num_mel_bins columns, dft_length / 2 + 1 rows.
    Expr rows = op("add", op("divide", dft_length, ctx.constant_scalar(i64, 2)),
                   ctx.constant_scalar(i64, 1));
    ShapeValues m = shape_values(ctx, mel_bins, "num_mel_bins");
    ShapeValues s = shape_values(ctx, rows, "the number of spectrogram bins");
    if (m.values.size() != 1 || s.values.size() != 1) ctx.error() << "the sizes must be scalars";
    Expr zero = c64(0);
    Expr j = expand_dims(
        ctx, iota(ctx, s.values[0], bind_shape_values(ctx, zero, s, {s.values[0] > 0})), 1);
    Expr k = expand_dims(
        ctx, iota(ctx, m.values[0], bind_shape_values(ctx, zero, m, {m.values[0] > 0})), 0);

    // The edges' mels in float32 (as the reference computes them), then float64.
    auto mel = [&](const Expr& hz) {
        Expr log10 = op("divide", ctx.call("log", {op("add", c32(1), op("divide", hz, c32(700)))}),
                        c32(std::log(10.0)));
        return cast_to(ctx, op("multiply", c32(2595), log10), f64);
    };
    Expr low = mel(lower), high = mel(upper);
    Expr step =
        op("divide", op("subtract", high, low), op("add", cast_to(ctx, mel_bins, f64), c64(2)));
    Expr scale = op("divide", op("add", cast_to(ctx, dft_length, f64), c64(1)), sample_rate);
    // Edge b[k + offset] as a spectrogram bin (float64 holding an integer).
    auto edge = [&](double offset) {
        Expr point = op("add", op("multiply", op("add", k, c64(offset)), step), low);
        Expr hz =
            op("multiply", c64(700),
               op("subtract",
                  ctx.call("exp",
                           {op("multiply", op("divide", point, c64(2595)), c64(std::log(10.0)))}),
                  c64(1)));
        return ctx.call("floor", {op("multiply", scale, hz)});
    };
    Expr l = edge(0), c = edge(1), h = edge(2);
    Expr rising = ctx.call("where", {op("equal", c, l), c64(1),
                                     op("divide", op("subtract", j, l), op("subtract", c, l))});
    Expr on_rise = op("logical_and", op("greater_equal", j, l), op("less_equal", j, c));
    Expr falling = op("divide", op("subtract", h, j), op("subtract", h, c));
    Expr on_fall = op("logical_and", op("greater_equal", j, c), op("less", j, h));
    Expr out = ctx.call("where", {on_fall, falling, ctx.call("where", {on_rise, rising, zero})});
    return {cast_to(ctx, out, *out_type)};
}

}  // namespace anvil::frontend
