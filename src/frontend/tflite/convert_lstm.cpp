// The converter of TFLite's UNIDIRECTIONAL_SEQUENCE_LSTM (float, or float with quantized
// weights: TFLite's dynamic-range models, whose weights compute as their real values), on the
// recurrent cell builder the ONNX and PyTorch importers share (frontend/rnn_builder.h), unrolled
// over the static sequence.
//
// Operands: 0 the input [batch, time, n_input] ([time, batch, n_input] when time_major);
// 1-4 the input weights of the input, forget, cell and output gates [n_cell, n_input];
// 5-8 their recurrent weights [n_cell, n_output]; 9-11 the peepholes of the input, forget and
// output gates [n_cell] (optional); 12-15 the gates' biases [n_cell]; 16 the projection
// [n_output, n_cell] (optional); 17 its bias (optional); 18 and 19 the output and cell states
// (variable tensors, which start at zero: each run of the compiled model starts from them
// afresh, as a freshly loaded TFLite interpreter does); 20-23 layer normalization coefficients.
// The fused activation is the cell's and the output's (TANH in TensorFlow's LSTMs).
//
// TFLite's variants are all taken: coupled input and forget gates (CIFG: no input gate operands,
// the input gate is 1 - f), peepholes, layer normalization (operands 20-23, with the biases added
// after it), a projection with or without bias, and cell and projection clipping. Integer LSTMs
// (quantized activations) are convert_integer_lstm.cpp's.
#include <cmath>

#include "frontend/composite_ops.h"
#include "frontend/rnn_builder.h"
#include "frontend/tflite/convert_ops.h"
#include "frontend/tflite/tflite_schema.h"

namespace anvil::frontend::tflite {

using graph::Expr;

namespace {

// Initial state operand i: zeros of `shape` when it is a variable tensor, else the operand.
Expr initial_state(const TfContext& ctx, size_t i, std::vector<int64_t> shape) {
    const TfliteTensor& t = ctx.input_tensor(i);
    if (!t.is_variable) return ctx.input_tflite(i);
    runtime::NDArray zeros = runtime::NDArray::empty(shape, {kDLFloat, 32, 1});
    std::vector<float> values(size_t(zeros.num_elements()), 0.0f);
    zeros.copy_from(values);
    return ctx.constant(zeros);
}

const char* activation_name(const TfContext& ctx, int8_t act) {
    switch (act) {
        case activation::kTanh:
            return "Tanh";
        case activation::kRelu:
            return "Relu";
        default:
            break;
    }
    ctx.error() << "the fused activation " << int(act)
                << " is not supported for an LSTM (TANH, RELU)";
    ANVIL_UNREACHABLE();
}

}  // namespace

void convert_unidirectional_sequence_lstm(TfContext& ctx) {
    ctx.expect_arity(20, 24, 1, {0, 2, 3, 4, 6, 7, 8, 13, 14, 15, 18, 19});
    const TfliteOptions& o = ctx.options(options_type::kUnidirectionalSequenceLstm);
    const bool time_major = o.boolean(sequence_lstm_options::kTimeMajor);
    if (ctx.is_quantized(ctx.input_tensor(0))) {
        convert_integer_lstm(ctx, o, time_major);
        return;
    }
    // TFLite's operands per gate, in its order i, f, c, o.
    const size_t kWeights = 1, kRecurrent = 5, kPeephole = 9, kBias = 12, kLayerNorm = 20;
    const bool cifg = !ctx.has_input(kWeights);
    if (cifg != !ctx.has_input(kRecurrent)) {
        ctx.error() << "the input gate's weights (operand 1) and recurrent weights (operand 5) "
                       "must be given both, or neither for coupled input and forget gates";
    }
    if (cifg && (ctx.has_input(kPeephole) || ctx.has_input(kBias) || ctx.has_input(kLayerNorm))) {
        ctx.error() << "with coupled input and forget gates (no operands 1 and 5), the input "
                       "gate's peephole, bias and layer norm coefficients (operands 9, 12, 20) "
                       "must be absent";
    }
    const bool layer_norm = ctx.has_input(kLayerNorm + 1);
    for (size_t g = 0; g < 4; ++g) {
        if (cifg && g == 0) continue;
        if (!ctx.has_input(kBias + g))
            ctx.error() << "the gates' biases (operands 12-15) are required";
        if (ctx.has_input(kLayerNorm + g) != layer_norm) {
            ctx.error() << "the layer norm coefficients (operands 20-23) must be given for every "
                           "gate"
                        << (cifg ? " but the input gate" : "") << " or for none";
        }
    }
    const size_t peepholes =
        size_t(ctx.has_input(9)) + size_t(ctx.has_input(10)) + size_t(ctx.has_input(11));
    if (peepholes != 0 && peepholes != (cifg ? 2 : 3)) {
        ctx.error() << "the peepholes must be given for all of the input, forget and output "
                       "gates (but the input gate with coupled input and forget gates) or for none";
    }
    if (ctx.has_input(17) && !ctx.has_input(16))
        ctx.error() << "a projection bias needs a projection";
    const char* act = activation_name(ctx, o.int8(sequence_lstm_options::kActivation));
    const double cell_clip = o.float32(sequence_lstm_options::kCellClip);
    const double proj_clip = o.float32(sequence_lstm_options::kProjClip);
    if (!(cell_clip >= 0) || !(proj_clip >= 0) || std::isinf(cell_clip) || std::isinf(proj_clip)) {
        ctx.error() << "the cell and projection clips must be finite and not negative (0: none), "
                       "got "
                    << cell_clip << " and " << proj_clip;
    }

    Expr x = ctx.input_tflite(0);
    std::vector<int64_t> xs = ctx.static_shape(x, "the input");
    if (xs.size() != 3) ctx.error() << "the input must be 3-D, got " << ints_str(xs);
    Expr seq = time_major ? x : ctx.transpose(x, {1, 0, 2});  // [time, batch, n_input]
    int64_t batch = time_major ? xs[1] : xs[0], steps = time_major ? xs[0] : xs[1];

    // Gate order of rnn::Weights: i, o, f, c; TFLite's operands: i, f, c, o.
    const size_t gate_operand[4] = {0, 3, 1, 2};
    rnn::Weights w;
    for (size_t g : gate_operand) {
        if (layer_norm)
            w.layer_norm.push_back(
                ctx.has_input(kLayerNorm + g) ? float_weights(ctx, kLayerNorm + g) : Expr());
        if (cifg && g == 0) continue;
        w.w.push_back(float_weights(ctx, kWeights + g));
        w.r.push_back(float_weights(ctx, kRecurrent + g));
        w.wb.push_back(float_weights(ctx, kBias + g));
    }
    if (peepholes != 0) {
        w.peepholes = {cifg ? Expr() : float_weights(ctx, 9), float_weights(ctx, 11),
                       float_weights(ctx, 10)};
    }
    if (ctx.has_input(16)) w.projection = float_weights(ctx, 16);
    if (ctx.has_input(17)) w.projection_bias = float_weights(ctx, 17);
    std::vector<int64_t> ws = ctx.static_shape(w.w[0], "a gate's weights");
    std::vector<int64_t> rs = ctx.static_shape(w.r[0], "a gate's recurrent weights");
    if (ws.size() != 2 || rs.size() != 2 || ws[1] != xs[2] || rs[0] != ws[0]) {
        ctx.error() << "the gates' weights " << ints_str(ws) << " and recurrent weights "
                    << ints_str(rs) << " are not [n_cell, " << xs[2] << "] and [n_cell, n_output]";
    }
    int64_t n_cell = ws[0], n_output = rs[1];

    rnn::Spec spec{.cell = rnn::Cell::LSTM,
                   .activations = {"Sigmoid", act, act},
                   .coupled_input_forget = cifg,
                   .cell_clip = cell_clip,
                   .projection_clip = proj_clip};
    rnn::State initial{initial_state(ctx, 18, {batch, n_output}),
                       initial_state(ctx, 19, {batch, n_cell})};
    std::vector<int64_t> order(static_cast<size_t>(steps), 0);
    for (int64_t t = 0; t < steps; ++t) order[size_t(t)] = t;
    rnn::Run run = rnn::run_direction(ctx, spec, w, seq, order, initial);
    std::vector<Expr> outputs;
    for (const Expr& h : run.outputs) outputs.push_back(expand_dims(ctx, h, time_major ? 0 : 1));
    ctx.set_output(0, rnn::concat(ctx, outputs, time_major ? 0 : 1));
}

}  // namespace anvil::frontend::tflite
