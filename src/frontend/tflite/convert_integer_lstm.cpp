// The integer UNIDIRECTIONAL_SEQUENCE_LSTM, as TFLite Micro's reference kernel computes it
// (tflite-micro lstm_eval.h, LstmStep; the operands are convert_lstm.cpp's): int8 activations
// with int8 weights and int32 biases, or int16 activations with int8 weights and int64 biases;
// an int16 cell state. Per step and gate g (i, f, c, o):
//   pre = sat16(sat16(MBQM(W_g (x - x_zp) + b_g, m_in_g)) + sat16(MBQM(R_g (h - h_zp), m_rec_g)))
// with MBQM TFLite's fixed-point rescale (the 64-bit one for int16 activations), m_in_g =
// float(x_scale * W_g scale) / 2^-12 and m_rec_g likewise (the sums in Q3.12); i, f, o =
// sigmoid(pre), c = tanh(pre), in Q0.15, by TFLite Micro's
// interpolated tables (int16_activation_tables.h); then
//   C = sat16(MBQM(f C, 2^-15)); C = sat16(C + sat16(MBQM(i c, 2^-30 / cell_scale))), clipped;
//   h = clamp(MBQM(o tanh(C), 2^-30 / h_scale) + h_zp)
// where tanh(C) reads C at its scale's power of two. The output is h of every step.
//
// TFLite Micro's kernel takes the plain LSTM only: coupled gates, peepholes, a projection and
// layer normalization are refused with an error (TFLite's own integer kernel, which has them,
// computes differently: not converted). The states start from their reset values, the output
// state's zero point and a zero cell, on every run.
#include <algorithm>
#include <climits>
#include <cmath>

#include "frontend/composite_ops.h"
#include "frontend/rnn_builder.h"
#include "frontend/tflite/convert_ops.h"
#include "frontend/tflite/int16_activation_tables.h"
#include "frontend/tflite/tflite_arithmetic.h"
#include "frontend/tflite/tflite_schema.h"
#include "ops/dense.h"
#include "ops/qnn.h"
#include "ops/transform.h"

namespace anvil::frontend::tflite {

using graph::Expr;

namespace {

// TFLite's operands per gate, in its order i, f, c, o.
constexpr size_t kWeights = 1, kRecurrent = 5, kBias = 12;

// What the step needs of the operands' types and quantization.
struct IntegerLstm {
    DataType act;  // int8 or int16
    Quantized x, h, cell;
    std::vector<double> w_scale, r_scale;  // per gate i, f, c, o
    int32_t cell_power = 0;                // round(log2(cell scale))
    bool has_cell_clip = false;
    int64_t cell_clip = 0;  // quantized (0 clips the cell to 0, as TFLite Micro does)
    int64_t n_cell = 0;     // also n_output: no projection
};

void check_operands(const TfContext& ctx) {
    for (size_t i : {size_t(1), size_t(5), size_t(12)}) {
        if (!ctx.has_input(i)) {
            ctx.error() << "an integer LSTM computes as TFLite Micro's kernel, which needs the "
                           "input gate (operands 1, 5, 12): coupled input and forget gates are "
                           "not supported";
        }
    }
    for (size_t i : {9, 10, 11, 16, 17, 20, 21, 22, 23}) {
        if (ctx.has_input(i)) {
            ctx.error() << "an integer LSTM computes as TFLite Micro's kernel, which takes no "
                           "peepholes, projection or layer normalization (operand "
                        << i << " is given)";
        }
    }
}

// TFLite Micro sums in int32 for int8 activations and in int64 for int16 ones; here the products
// sum in int32 for both (as the other 16x8 products, convert_conv.cpp), so weights whose sums
// could pass int32's range for data `deviation` from its zero point are refused.
void check_sums_fit(const TfContext& ctx, size_t first, int64_t deviation) {
    for (size_t g = 0; g < 4; ++g) {
        runtime::NDArray w = ctx.constant_input(first + g, "the weights");
        const int64_t cols = w.shape().back();
        const int8_t* v = w.data<int8_t>();
        for (int64_t r = 0; r * cols < w.num_elements(); ++r) {
            int64_t sum = 0;
            for (int64_t k = 0; k < cols; ++k) sum += std::abs(int64_t(v[r * cols + k]));
            if (sum * deviation > INT32_MAX) {
                ctx.error() << "the sums of operand " << first + g << " ('"
                            << ctx.input_tensor(first + g).name << "') can reach "
                            << sum * deviation << ", past int32's range; weights whose rows sum "
                            << "(in magnitude) past " << INT32_MAX / deviation
                            << " are not supported";
            }
        }
    }
}

IntegerLstm integer_lstm(const TfContext& ctx, const TfliteOptions& o) {
    check_operands(ctx);
    const TfliteTensor& x_t = ctx.input_tensor(0);
    IntegerLstm l;
    l.act = ctx.dtype_of(x_t.type, "the input");
    const bool wide = l.act == DataType::int_(16);
    if (l.act != DataType::int_(8) && !wide) {
        ctx.error() << "an integer LSTM takes int8 or int16 activations, got "
                    << tensor_type_name(x_t.type);
    }
    const int8_t bias_type = wide ? tensor_type::kInt64 : tensor_type::kInt32;
    for (size_t g = 0; g < 4; ++g) {
        for (size_t i : {kWeights + g, kRecurrent + g}) {
            if (ctx.input_tensor(i).type != tensor_type::kInt8) {
                ctx.error() << "operand " << i << " ('" << ctx.input_tensor(i).name
                            << "') must be int8 weights, got "
                            << tensor_type_name(ctx.input_tensor(i).type);
            }
        }
        if (ctx.input_tensor(kBias + g).type != bias_type) {
            ctx.error() << "the biases of an LSTM with " << tensor_type_name(x_t.type)
                        << " activations must be " << tensor_type_name(bias_type) << ", got "
                        << tensor_type_name(ctx.input_tensor(kBias + g).type);
        }
        l.w_scale.push_back(
            per_tensor(ctx, ctx.input_tensor(kWeights + g), "the weights").scales[0]);
        l.r_scale.push_back(
            per_tensor(ctx, ctx.input_tensor(kRecurrent + g), "the recurrent weights").scales[0]);
    }
    const TfliteTensor& h_t = ctx.input_tensor(18);
    const TfliteTensor& c_t = ctx.input_tensor(19);
    if (h_t.type != x_t.type || ctx.output_tensor(0).type != x_t.type) {
        ctx.error() << "the output state and the result must have the input's type "
                    << tensor_type_name(x_t.type) << ", got " << tensor_type_name(h_t.type)
                    << " and " << tensor_type_name(ctx.output_tensor(0).type);
    }
    if (c_t.type != tensor_type::kInt16) {
        ctx.error() << "the cell state of an integer LSTM must be int16, got "
                    << tensor_type_name(c_t.type);
    }
    l.x = per_tensor(ctx, x_t, "the input");
    l.h = per_tensor(ctx, h_t, "the output state");
    l.cell = per_tensor(ctx, c_t, "the cell state");
    // round(log2(scale)) in float, as TFLite's CheckedLog2 (TFLite Micro ignores whether the
    // scale is a power of two; its multiplies take the scale itself).
    l.cell_power = scale_log2(l.cell.scales[0]).rounded;
    if (l.cell_power > 2 || l.cell_power < -31) {
        ctx.error() << "the cell state's scale " << l.cell.scales[0]
                    << " is outside [2^-31, 2^2], where TFLite Micro's tanh overflows";
    }
    const double clip = double(o.float32(sequence_lstm_options::kCellClip));
    if (!(clip >= 0) || std::isinf(clip)) {
        ctx.error() << "the cell clip must be finite and not negative (0: none), got " << clip;
    }
    l.has_cell_clip = clip > 0;
    if (clip > 0)
        l.cell_clip = int64_t(std::trunc(std::clamp(clip / l.cell.scales[0], -32768.0, 32767.0)));
    // The cell gate's function (the schema has no SIGMOID, which TFLite Micro would also take).
    const int8_t act = o.int8(sequence_lstm_options::kActivation);
    if (act != activation::kTanh) {
        ctx.error() << "the fused activation " << int(act)
                    << " is not supported for an integer LSTM (TANH)";
    }
    std::vector<int64_t> ws = ctx.static_shape(ctx.input_tflite(kWeights), "the weights");
    std::vector<int64_t> xs = ctx.static_shape(ctx.input_tflite(0), "the input");
    if (ws.size() != 2 || xs.size() != 3 || ws[1] != xs[2]) {
        ctx.error() << "the input gate's weights " << ints_str(ws)
                    << " are not [n_cell, n_input] for the input " << ints_str(xs);
    }
    // Without a projection, n_output = n_cell.
    const std::vector<int64_t> weights{ws[0], ws[1]}, recurrent{ws[0], ws[0]}, bias{ws[0]};
    for (size_t g = 0; g < 4; ++g) {
        for (auto [i, want] : {std::pair{kWeights + g, weights},
                               std::pair{kRecurrent + g, recurrent}, std::pair{kBias + g, bias}}) {
            std::vector<int64_t> shape =
                ctx.static_shape(ctx.input_tflite(i), "operand " + std::to_string(i));
            if (shape != want) {
                ctx.error() << "operand " << i << " ('" << ctx.input_tensor(i).name << "') is "
                            << ints_str(shape) << ", not " << ints_str(want);
            }
        }
    }
    // How far the data may lie from its zero point.
    auto deviation = [&](const Quantized& q) {
        const int64_t bound = int64_t{1} << (l.act.bits() - 1), zp = q.zero_points[0];
        return std::max(std::abs(-bound - zp), std::abs(bound - 1 - zp));
    };
    check_sums_fit(ctx, kWeights, deviation(l.x));
    check_sums_fit(ctx, kRecurrent, deviation(l.h));
    l.n_cell = ws[0];
    return l;
}

// The four gates' operands starting at `first`, stacked along axis 0 (i, f, c, o).
Expr stacked(const TfContext& ctx, size_t first) {
    std::vector<Expr> parts;
    for (size_t g = 0; g < 4; ++g) parts.push_back(ctx.input_tflite(first + g));
    return rnn::concat(ctx, parts, 0);
}

// One value per gate, repeated over its n_cell rows.
std::vector<double> per_row(const std::vector<double>& per_gate, int64_t n_cell) {
    std::vector<double> v;
    for (double e : per_gate) v.insert(v.end(), size_t(n_cell), e);
    return v;
}

// sat16(MBQM(W (data - zero_point) + bias, ratio per row)): [rows, 4 n_cell] in int32.
Expr gate_sums(const TfContext& ctx, const IntegerLstm& l, Expr data, int64_t zero_point,
               const Expr& weights, const std::vector<double>& scales, double data_scale,
               const Expr& bias) {
    if (l.act == DataType::int_(8)) {
        data = int8_as_uint8(ctx, data);  // as the other int8 products (tflite_arithmetic.h)
        zero_point += 128;
    }
    auto [attrs, a] = new_attrs<ops::QnnDenseAttrs>();
    a->units = 4 * l.n_cell;
    Expr sums = ctx.call(
        "qnn.dense",
        {data, weights, int32_scalar(ctx, zero_point), int32_scalar(ctx, 0),
         float32_scalar(ctx, data_scale), float32_along(ctx, per_row(scales, l.n_cell), 1, 0)},
        attrs);
    // TFLite Micro: float(data_scale * weight_scale) / 2^-12, the sum in Q3.12.
    std::vector<double> ratios;
    for (double s : scales) ratios.push_back(double(float(data_scale) * float(s)) * 4096.0);
    ratios = per_row(ratios, l.n_cell);
    Expr y;
    if (l.act == DataType::int_(16)) {
        Expr wide = cast_to(ctx, sums, DataType::int64());
        if (bias.defined()) wide = ctx.call("add", {wide, bias});
        y = multiply_by_ratio_wide(ctx, wide, ratios, 1);
    } else {
        if (bias.defined()) sums = ctx.call("add", {sums, bias});
        y = multiply_by_ratio(ctx, sums, ratios, 1);
    }
    return clamp_to(ctx, y, -32768, 32767, DataType::int32());
}

// `table` (an int16 table_constant) at x (int32 values in the int16 range), as int32.
Expr lookup(const TfContext& ctx, const Expr& table, const Expr& x) {
    return cast_to(ctx, table_lookup(ctx, table, x, -32768), DataType::int32());
}

Expr saturate16(const TfContext& ctx, const Expr& x) {
    return clamp_to(ctx, x, -32768, 32767, DataType::int32());
}

// The initial state operand i as int32 values: its reset value (TFLite fills a variable int8
// tensor with its zero point, others with 0) when it is a variable tensor, else the operand.
Expr initial_state(const TfContext& ctx, size_t i, int64_t batch, int64_t size,
                   int64_t zero_point) {
    const TfliteTensor& t = ctx.input_tensor(i);
    if (!t.is_variable) return cast_to(ctx, ctx.input_tflite(i), DataType::int32());
    int64_t reset = t.type == tensor_type::kInt8 ? zero_point : 0;
    runtime::NDArray a =
        runtime::NDArray::empty({batch, size}, graph::dl_dtype_of(DataType::int32()));
    a.copy_from(std::vector<int32_t>(size_t(batch * size), int32_t(reset)));
    return ctx.constant(a);
}

}  // namespace

void convert_integer_lstm(TfContext& ctx, const TfliteOptions& o, bool time_major) {
    const IntegerLstm l = integer_lstm(ctx, o);
    Expr x = ctx.input_tflite(0);
    std::vector<int64_t> xs = ctx.static_shape(x, "the input");  // 3-D (integer_lstm)
    const int64_t steps = time_major ? xs[0] : xs[1], batch = time_major ? xs[1] : xs[0];
    Expr seq = time_major ? x : ctx.transpose(x, {1, 0, 2});  // [time, batch, n_input]

    // The input's sums for every step at once, then split into the steps.
    Expr bias = stacked(ctx, kBias);
    Expr rows = reshape_to(ctx, seq, {steps * batch, xs[2]});
    Expr all = gate_sums(ctx, l, rows, l.x.zero_points[0], stacked(ctx, kWeights), l.w_scale,
                         l.x.scales[0], bias);
    all = reshape_to(ctx, all, {steps, batch, 4 * l.n_cell});
    std::vector<Expr> per_step;
    for (int64_t t = 0; t < steps; ++t) {
        per_step.push_back(
            reshape_to(ctx, rnn::slice(ctx, all, 0, t, t + 1), {batch, 4 * l.n_cell}));
    }

    // One constant per table, shared by every step (a table per step would put a copy per step
    // into the compiled model). The gates' sums are in Q3.12: the table's scale times 3
    // (multiplier 0, no shift).
    const Expr sigmoid = table_constant(ctx, int16_table([](int16_t v) {
                                            return int16_logistic({0, 0}, v);
                                        }));
    const Expr gate_tanh = table_constant(
        ctx, int16_table([](int16_t v) { return int16_tanh(lstm_tanh_prescale(-12), v); }));
    const Expr cell_tanh = table_constant(
        ctx,
        int16_table([&](int16_t v) { return int16_tanh(lstm_tanh_prescale(l.cell_power), v); }));
    const double q15 = 1.0 / 32768.0;
    const int64_t h_zp = l.h.zero_points[0];
    const int64_t bound = int64_t{1} << (l.act.bits() - 1);
    Expr recurrent = stacked(ctx, kRecurrent);

    Expr h = initial_state(ctx, 18, batch, l.n_cell, h_zp);
    Expr c = initial_state(ctx, 19, batch, l.n_cell, 0);
    std::vector<Expr> outputs;
    for (int64_t t = 0; t < steps; ++t) {
        Expr h_data = cast_to(ctx, h, l.act);
        Expr rec = gate_sums(ctx, l, h_data, h_zp, recurrent, l.r_scale, l.h.scales[0], Expr());
        Expr pre = saturate16(ctx, ctx.call("add", {per_step[size_t(t)], rec}));
        auto gate = [&](int64_t g) {
            return rnn::slice(ctx, pre, 1, g * l.n_cell, (g + 1) * l.n_cell);
        };
        Expr ig = lookup(ctx, sigmoid, gate(0));
        Expr fg = lookup(ctx, sigmoid, gate(1));
        Expr cg = lookup(ctx, gate_tanh, gate(2));
        Expr og = lookup(ctx, sigmoid, gate(3));
        // TFLite Micro's 2^-15 * cell_scale / cell_scale: f in Q0.15.
        c = saturate16(ctx, multiply_by_ratio(ctx, ctx.call("multiply", {fg, c}), {q15}, -1));
        Expr update = saturate16(ctx, multiply_by_ratio(ctx, ctx.call("multiply", {ig, cg}),
                                                        {q15 * q15 / l.cell.scales[0]}, -1));
        c = saturate16(ctx, ctx.call("add", {c, update}));
        if (l.has_cell_clip) c = clamp_to(ctx, c, -l.cell_clip, l.cell_clip, DataType::int32());
        Expr product = ctx.call("multiply", {lookup(ctx, cell_tanh, c), og});
        Expr hv = multiply_by_ratio(ctx, product, {q15 * q15 / l.h.scales[0]}, -1);
        if (h_zp != 0) hv = ctx.call("add", {hv, int32_scalar(ctx, h_zp)});
        h = clamp_to(ctx, hv, -bound, bound - 1, DataType::int32());
        outputs.push_back(expand_dims(ctx, cast_to(ctx, h, l.act), time_major ? 0 : 1));
    }
    ctx.set_output(0, rnn::concat(ctx, outputs, time_major ? 0 : 1));
}

}  // namespace anvil::frontend::tflite
