// The converter of TFLite's SVDF (a rank-`rank` singular value decomposition filter: a feature
// product per filter, kept over `memory_size` time steps in a state, weighted in time, summed
// over each unit's `rank` filters).
//
// Operands: 0 the input [batch, n_input]; 1 weights_feature [n_filter, n_input]; 2 weights_time
// [n_filter, memory_size]; 3 the bias [n_unit] (optional); 4 the state, a variable tensor
// [batch, memory_size * n_filter], filter-major, the newest step last. Each step shifts the state
// one step older, writes the new feature products as the newest, and multiplies by weights_time.
//
// A run of the compiled model is one step from the reset state, as a freshly loaded TFLite or
// TFLite Micro interpreter computes it (as the LSTM's states, convert_lstm.cpp): the older steps
// hold zero (a quantized state holds its zero point), so only weights_time's newest column
// weighs the new feature products.
//
// Float: float32 input and output; weights float32 or int8 (TFLite's hybrid models, whose
// weights compute as their real values here). Integer: int8 input and output, int8
// weights_feature, int16 weights_time and state (TFLite), or int8 ones (TFLite Micro), an int32
// bias or none, as TFLite Micro's EvalIntegerSvdfReference (tflite-micro 90b983c, the shared
// models' source; a later revision saturates the store instead of wrapping it): the feature sum of
// (x - input zero point) times the weights rescaled by input scale * feature scale / state scale in
// fixed point, clamped to the state type, stored with the state's zero point added in that type
// (wrapping, as the kernel's store does); the time products of (state - its zero point) summed over
// the unit's filters with the bias; rescaled by state scale * time scale / output scale, plus the
// output zero point, clamped to int8. The fused activation is not applied in the integer kernel
// (TFLite requires RELU there and gets it from the output's range).
#include <cmath>

#include "frontend/composite_ops.h"
#include "frontend/tflite/convert_ops.h"
#include "frontend/tflite/tflite_arithmetic.h"
#include "frontend/tflite/tflite_schema.h"
#include "ops/dense.h"
#include "ops/qnn.h"

namespace anvil::frontend::tflite {

using graph::Expr;

namespace {

struct SvdfShape {
    int64_t batch, n_input, n_filter, memory, rank, n_unit;
};

SvdfShape svdf_shape(const TfContext& ctx) {
    std::vector<int64_t> xs = ctx.static_shape(ctx.input(0).expr, "the input");
    std::vector<int64_t> fs = ctx.static_shape(ctx.input(1).expr, "weights_feature");
    std::vector<int64_t> ts = ctx.static_shape(ctx.input(2).expr, "weights_time");
    // The state is never read (each run starts from its reset value): its shape is checked.
    const std::vector<int32_t>& state_shape = ctx.input_tensor(4).shape;
    std::vector<int64_t> ss(state_shape.begin(), state_shape.end());
    if (xs.size() != 2) ctx.error() << "the input must be [batch, n_input], got " << ints_str(xs);
    if (fs.size() != 2 || fs[1] != xs[1]) {
        ctx.error() << "weights_feature " << ints_str(fs) << " must be [n_filter, " << xs[1] << "]";
    }
    if (ts.size() != 2 || ts[0] != fs[0] || ts[1] < 1) {
        ctx.error() << "weights_time " << ints_str(ts) << " must be [" << fs[0] << ", memory_size]";
    }
    SvdfShape s{.batch = xs[0], .n_input = xs[1], .n_filter = fs[0], .memory = ts[1]};
    s.rank = ctx.options(options_type::kSvdf).int32(svdf_options::kRank);
    if (s.rank < 1 || s.n_filter % s.rank != 0) {
        ctx.error() << "rank " << s.rank << " must be positive and divide the " << s.n_filter
                    << " filters";
    }
    s.n_unit = s.n_filter / s.rank;
    if (ss != std::vector<int64_t>{s.batch, s.memory * s.n_filter}) {
        ctx.error() << "the state " << ints_str(ss) << " must be [" << s.batch << ", "
                    << s.memory * s.n_filter << "] (batch, memory_size * n_filter)";
    }
    if (!ctx.input_tensor(4).is_variable) {
        ctx.error() << "the state (operand 4) must be a variable tensor";
    }
    if (ctx.has_input(3)) {
        std::vector<int64_t> bs = ctx.static_shape(ctx.input(3).expr, "the bias");
        if (bs != std::vector<int64_t>{s.n_unit}) {
            ctx.error() << "the bias " << ints_str(bs) << " must be [" << s.n_unit << "]";
        }
    }
    return s;
}

// weights_time's newest column, weights_time[:, memory_size - 1], as stored (integers, or
// floats; int8 weights of a float operator as their real values).
std::vector<double> newest_time_weights(const TfContext& ctx, const SvdfShape& s, bool real) {
    runtime::NDArray w = ctx.constant_input(2, "weights_time");
    double scale = 1.0;
    if (real && ctx.is_quantized(ctx.input_tensor(2))) {
        scale = per_tensor(ctx, ctx.input_tensor(2), "weights_time").scales[0];
    }
    std::vector<double> column;
    for (int64_t f = 0; f < s.n_filter; ++f) {
        int64_t at = f * s.memory + s.memory - 1;
        switch (ctx.input_tensor(2).type) {
            case tensor_type::kFloat32:
                column.push_back(w.data<float>()[at]);
                break;
            case tensor_type::kInt8:
                column.push_back(w.data<int8_t>()[at] * scale);
                break;
            case tensor_type::kInt16:
                column.push_back(w.data<int16_t>()[at] * scale);
                break;
            default:
                ctx.error() << "weights_time must be float32, int8 or int16, got "
                            << tensor_type_name(ctx.input_tensor(2).type);
        }
    }
    return column;
}

// a / b as TFLite and TFLite Micro compute their effective scales: in float32 (a, a product of
// float32 scales, rounded to float32 first), widened afterwards.
double float_ratio(double a, double b) {
    return double(float(a) / float(b));
}

// Per unit, the sum of its `rank` filters' values [batch, n_filter] -> [batch, n_unit].
Expr sum_over_rank(const TfContext& ctx, const SvdfShape& s, const Expr& per_filter) {
    if (s.rank == 1) return per_filter;
    return reduce_over(ctx, "sum", reshape_to(ctx, per_filter, {s.batch, s.n_unit, s.rank}), 2);
}

void convert_float_svdf(TfContext& ctx, const SvdfShape& s) {
    int8_t activation = ctx.options(options_type::kSvdf).int8(svdf_options::kActivation);
    Expr feature = ctx.call("nn.dense", {ctx.input_tflite(0), float_weights(ctx, 1)},
                            make_ref<ops::DenseAttrs>());
    Expr weighted = ctx.call(
        "multiply", {feature, float32_along(ctx, newest_time_weights(ctx, s, true), 2, 1)});
    Expr y = sum_over_rank(ctx, s, weighted);
    if (ctx.has_input(3)) y = add_bias(ctx, y, float_weights(ctx, 3), 1);
    ctx.set_output(0, float_activation(ctx, y, activation));
}

void convert_integer_svdf(TfContext& ctx, const SvdfShape& s) {
    const TfliteTensor &x = ctx.input_tensor(0), &wf = ctx.input_tensor(1),
                       &wt = ctx.input_tensor(2), &state = ctx.input_tensor(4);
    bool types_ok = wf.type == tensor_type::kInt8 &&
                    (wt.type == tensor_type::kInt16 || wt.type == tensor_type::kInt8) &&
                    state.type == wt.type && ctx.output_tensor(0).type == tensor_type::kInt8 &&
                    (!ctx.has_input(3) || ctx.input_tensor(3).type == tensor_type::kInt32);
    if (!types_ok) {
        ctx.error() << "an int8 SVDF needs int8 weights_feature, int16 or int8 weights_time and "
                       "a state of that type, an int32 bias or none, and an int8 result; got "
                    << tensor_type_name(wf.type) << ", " << tensor_type_name(wt.type) << ", "
                    << tensor_type_name(state.type) << ", "
                    << (ctx.has_input(3) ? tensor_type_name(ctx.input_tensor(3).type) : "no bias")
                    << ", " << tensor_type_name(ctx.output_tensor(0).type);
    }
    Quantized in = per_tensor(ctx, x, "the input");
    Quantized feature_q = per_tensor(ctx, wf, "weights_feature");
    Quantized time_q = per_tensor(ctx, wt, "weights_time");
    Quantized state_q = per_tensor(ctx, state, "the state");
    Quantized out = per_tensor(ctx, ctx.output_tensor(0), "the result");
    const int bits = wt.type == tensor_type::kInt16 ? 16 : 8;
    const int64_t lo = -(int64_t{1} << (bits - 1)), hi = (int64_t{1} << (bits - 1)) - 1;

    // The feature sums: int8 data enters as uint8 (zero point + 128), as the other products'.
    Expr data = int8_as_uint8(ctx, ctx.input_tflite(0));
    auto [attrs, a] = new_attrs<ops::QnnDenseAttrs>();
    a->units = s.n_filter;
    Expr sums = ctx.call("qnn.dense",
                         {data, ctx.input_tflite(1), int32_scalar(ctx, in.zero_points[0] + 128),
                          int32_scalar(ctx, 0), float32_scalar(ctx, in.scales[0]),
                          float32_scalar(ctx, feature_q.scales[0])},
                         attrs);
    Expr feature = multiply_by_ratio(
        ctx, sums, {float_ratio(in.scales[0] * feature_q.scales[0], state_q.scales[0])}, 1);
    feature = clamp_to(ctx, feature, lo, hi, DataType::int32());
    // Stored as feature + zero point in the state's type (wrapping), read back less the zero
    // point.
    int64_t zp = state_q.zero_points[0];
    if (zp != 0) {
        Expr stored = ctx.call("add", {feature, int32_scalar(ctx, zp - lo)});
        stored = ctx.call("bitwise_and", {stored, int32_scalar(ctx, hi - lo)});
        feature = ctx.call("add", {stored, int32_scalar(ctx, lo - zp)});
    }
    std::vector<int64_t> column;
    for (double w : newest_time_weights(ctx, s, false)) column.push_back(int64_t(w));
    Expr weighted = ctx.call("multiply", {feature, int32_along(ctx, column, 2, 1)});
    // The unit sums, from the bias where there is one (from 0 otherwise, as TFLite's kernels).
    Expr y = sum_over_rank(ctx, s, weighted);
    if (ctx.has_input(3)) y = ctx.call("add", {y, ctx.input_tflite(3)});
    y = multiply_by_ratio(ctx, y,
                          {float_ratio(state_q.scales[0] * time_q.scales[0], out.scales[0])}, 1);
    if (out.zero_points[0] != 0) y = ctx.call("add", {y, int32_scalar(ctx, out.zero_points[0])});
    ctx.set_output(0, clamp_to(ctx, y, -128, 127, DataType::int_(8)));
}

}  // namespace

void convert_svdf(TfContext& ctx) {
    ctx.expect_arity(5, 5, 1, {0, 1, 2, 4});
    SvdfShape s = svdf_shape(ctx);
    int8_t type = ctx.input_tensor(0).type;
    if (type == tensor_type::kFloat32) {
        convert_float_svdf(ctx, s);
    } else if (type == tensor_type::kInt8) {
        convert_integer_svdf(ctx, s);
    } else {
        ctx.error() << "the input must be float32 or int8, got " << tensor_type_name(type);
    }
}

}  // namespace anvil::frontend::tflite
