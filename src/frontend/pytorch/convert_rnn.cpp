// Converters of PyTorch's recurrent layers: aten::lstm, aten::gru, aten::rnn_tanh,
// aten::rnn_relu (nn.LSTM, nn.GRU, nn.RNN: any number of layers, bidirectional, batch_first,
// with or without biases, initial states and LSTM's proj_size) and their single-step cells
// (nn.LSTMCell, nn.GRUCell, nn.RNNCell). The cell math is frontend/rnn_builder.h's, unrolled
// over the static sequence length; this file reads PyTorch's weights: per layer and direction
// w_ih [G*H, I], w_hh [G*H, H], then b_ih, b_hh [G*H] when the layer has biases, then w_hr
// [P, H] with proj_size, the gates in PyTorch's order (LSTM i, f, g, o; GRU r, z, n).
#include "frontend/pytorch/convert_ops.h"
#include "frontend/rnn_builder.h"
#include "ops/transform.h"

namespace anvil::frontend::pytorch {

using graph::Expr;

namespace {

// The builder's gate k (rnn_builder.h's order) is PyTorch's gate kPyTorchGate[cell][k].
int pytorch_gate(rnn::Cell cell, int k) {
    static constexpr int kLstm[] = {0, 3, 1, 2};  // i, o, f, c ← i, f, g, o
    static constexpr int kGru[] = {1, 0, 2};      // z, r, n ← r, z, n
    switch (cell) {
        case rnn::Cell::LSTM:
            return kLstm[k];
        case rnn::Cell::GRU:
            return kGru[k];
        case rnn::Cell::RNN:
            return 0;
    }
    return 0;
}

rnn::Cell cell_of(const std::string& kind) {
    if (kind.find("lstm") != std::string::npos) return rnn::Cell::LSTM;
    if (kind.find("gru") != std::string::npos) return rnn::Cell::GRU;
    return rnn::Cell::RNN;
}

rnn::Spec spec_of(const std::string& kind) {
    rnn::Cell cell = cell_of(kind);
    rnn::Spec spec{.cell = cell, .activations = rnn::default_activations(cell)};
    if (kind.find("relu") != std::string::npos) spec.activations = {"Relu"};
    // PyTorch's GRU applies the reset gate after the recurrent product.
    spec.linear_before_reset = cell == rnn::Cell::GRU;
    return spec;
}

// A weight of `rows` x `cols` (cols = 0: a vector of `rows`), checked.
Expr weight(PtContext& ctx, const Expr& w, int64_t rows, int64_t cols, const std::string& what) {
    std::vector<int64_t> shape = ctx.static_shape(w, what);
    std::vector<int64_t> want =
        cols ? std::vector<int64_t>{rows, cols} : std::vector<int64_t>{rows};
    if (shape != want) {
        ctx.error() << what << " has shape " << ints_str(shape) << ", expected " << ints_str(want);
    }
    return w;
}

// One direction's weights from PyTorch's tensors (biases and projection may be undefined).
rnn::Weights split_weights(PtContext& ctx, rnn::Cell cell, const Expr& w_ih, const Expr& w_hh,
                           const Expr& b_ih, const Expr& b_hh, const Expr& w_hr, int64_t input,
                           int64_t hidden, int64_t state, const std::string& what) {
    const int gates = rnn::num_gates(cell);
    weight(ctx, w_ih, gates * hidden, input, what + " w_ih");
    weight(ctx, w_hh, gates * hidden, state, what + " w_hh");
    rnn::Weights w;
    for (int k = 0; k < gates; ++k) {
        int64_t g = pytorch_gate(cell, k);
        w.w.push_back(rnn::slice(ctx, w_ih, 0, g * hidden, (g + 1) * hidden));
        w.r.push_back(rnn::slice(ctx, w_hh, 0, g * hidden, (g + 1) * hidden));
        if (b_ih.defined()) {
            weight(ctx, b_ih, gates * hidden, 0, what + " b_ih");
            w.wb.push_back(rnn::slice(ctx, b_ih, 0, g * hidden, (g + 1) * hidden));
        }
        if (b_hh.defined()) {
            weight(ctx, b_hh, gates * hidden, 0, what + " b_hh");
            w.rb.push_back(rnn::slice(ctx, b_hh, 0, g * hidden, (g + 1) * hidden));
        }
    }
    if (w_hr.defined()) w.projection = weight(ctx, w_hr, state, hidden, what + " w_hr");
    return w;
}

Expr transpose01(PtContext& ctx, const Expr& x) {
    auto [attrs, a] = new_attrs<ops::TransposeAttrs>();
    a->axes = {1, 0, 2};
    return ctx.call("transpose", {x}, attrs);
}

Expr zeros(PtContext& ctx, DataType dt, std::vector<int64_t> shape) {
    auto [attrs, a] = new_attrs<ops::BroadcastToAttrs>();
    a->shape = std::move(shape);
    return ctx.call("broadcast_to", {ctx.constant_scalar(dt, 0.0)}, attrs);
}

// An optional tensor operand (None: undefined).
Expr optional_tensor(PtContext& ctx, size_t i) {
    return ctx.is_none(i) ? Expr() : ctx.tensor(i);
}

}  // namespace

// aten::lstm / gru / rnn_tanh / rnn_relu (.input overloads): the whole stack of layers.
PtValues convert_rnn(PtContext& ctx) {
    const rnn::Spec spec = spec_of(ctx.kind());
    const rnn::Cell cell = spec.cell;
    const bool lstm = cell == rnn::Cell::LSTM;
    // The .data overloads (packed sequences) have batch_sizes as operand 1.
    bool packed = lstm ? ctx.input(1).kind != PtValue::List : ctx.input(2).kind != PtValue::List;
    if (packed) {
        ctx.error() << "packed sequences (nn.utils.rnn.pack_padded_sequence) are not supported; "
                       "pass the padded tensor";
    }
    Expr x = ctx.tensor(0);
    std::vector<Expr> hx = lstm ? ctx.tensors(1) : std::vector<Expr>{ctx.tensor(1)};
    std::vector<Expr> params = ctx.tensors(2);
    const bool has_biases = ctx.bool_arg(3);
    const int64_t layers = ctx.int_arg(4);
    const double dropout = ctx.float_arg(5);
    const bool train = ctx.bool_arg(6);
    const int64_t dirs = ctx.bool_arg(7) ? 2 : 1;
    const bool batch_first = ctx.bool_arg(8);
    if (train && dropout > 0) {
        ctx.error() << "dropout between layers in training mode is not supported (call .eval())";
    }
    if (layers < 1) ctx.error() << "num_layers is " << layers;
    DataType dt = ctx.tensor_type(x, "the input").dtype;
    if (!dt.is_floating()) ctx.error() << "the input must be floating-point, got " << dt.str();
    if (batch_first) x = transpose01(ctx, x);
    std::vector<int64_t> xs = ctx.static_shape(x, "the input");
    if (xs.size() != 3) ctx.error() << "the input must be 3-D, got rank " << xs.size();
    const int64_t seq = xs[0], batch = xs[1];
    // Per layer and direction: w_ih, w_hh, [b_ih, b_hh], [w_hr].
    const int64_t per = static_cast<int64_t>(params.size()) / (layers * dirs);
    const int64_t base = has_biases ? 4 : 2;
    if (per * layers * dirs != static_cast<int64_t>(params.size()) || per < base ||
        per > base + (lstm ? 1 : 0)) {
        ctx.error() << params.size() << " weight tensors do not fit " << layers << " layer(s), "
                    << dirs << " direction(s)" << (has_biases ? " with biases" : "");
    }
    const bool projected = per == base + 1;
    const int64_t gates = rnn::num_gates(cell);
    const int64_t hidden = ctx.static_shape(params[1], "w_hh_l0")[0] / gates;
    const int64_t state = projected ? ctx.static_shape(params[base], "w_hr_l0")[0] : hidden;
    if (hx.size() != (lstm ? 2u : 1u)) {
        ctx.error() << "the initial state has " << hx.size() << " tensor(s)";
    }
    // Initial states: [layers * dirs, batch, state] (and LSTM's cells [.., hidden]).
    auto initial = [&](const Expr& t, int64_t size, int64_t k, const char* what) {
        std::vector<int64_t> want = {layers * dirs, batch, size};
        if (ctx.static_shape(t, what) != want) {
            ctx.error() << what << " has shape " << ints_str(ctx.static_shape(t, what))
                        << ", expected " << ints_str(want);
        }
        return rnn::row(ctx, t, k);
    };
    // Each layer's input is the sequence below it: the input, then the last layer's output
    // [seq, batch, dirs * state], each step's directions side by side.
    Expr y = x;
    int64_t input_size = xs[2];
    std::vector<Expr> last_h, last_c;
    for (int64_t l = 0; l < layers; ++l) {
        std::vector<std::vector<Expr>> outputs(static_cast<size_t>(dirs));
        for (int64_t d = 0; d < dirs; ++d) {
            int64_t k = l * dirs + d;
            const Expr* p = &params[static_cast<size_t>(k * per)];
            std::string what = "layer " + std::to_string(l) + (d ? " (reverse)" : "");
            rnn::Weights w = split_weights(ctx, cell, p[0], p[1], has_biases ? p[2] : Expr(),
                                           has_biases ? p[3] : Expr(), projected ? p[base] : Expr(),
                                           input_size, hidden, state, what);
            rnn::State s{initial(hx[0], state, k, "h0"),
                         lstm ? initial(hx[1], hidden, k, "c0") : Expr()};
            std::vector<int64_t> steps;
            for (int64_t i = 0; i < seq; ++i) steps.push_back(d ? seq - 1 - i : i);
            rnn::Run run = rnn::run_direction(ctx, spec, w, y, steps, s);
            auto& out = outputs[static_cast<size_t>(d)];
            out.resize(static_cast<size_t>(seq));
            for (size_t i = 0; i < steps.size(); ++i) {
                out[static_cast<size_t>(steps[i])] = run.outputs[i];
            }
            last_h.push_back(expand_dims(ctx, run.last.h, 0));
            if (lstm) last_c.push_back(expand_dims(ctx, run.last.c, 0));
        }
        // Each direction's steps stacked [seq, batch, state], then the directions side by side.
        std::vector<Expr> per_direction;
        for (const auto& d : outputs) {
            std::vector<Expr> steps_of_d;
            for (const auto& o : d) steps_of_d.push_back(expand_dims(ctx, o, 0));
            if (!steps_of_d.empty()) per_direction.push_back(rnn::concat(ctx, steps_of_d, 0));
        }
        y = seq == 0 ? zeros(ctx, dt, {0, batch, dirs * state})
                     : rnn::concat(ctx, per_direction, 2);
        input_size = state * dirs;
    }
    if (batch_first) y = transpose01(ctx, y);
    PtValues out = {PtValue::of_tensor(y), PtValue::of_tensor(rnn::concat(ctx, last_h, 0))};
    if (lstm) out.push_back(PtValue::of_tensor(rnn::concat(ctx, last_c, 0)));
    return out;
}

// aten::lstm_cell / gru_cell / rnn_tanh_cell / rnn_relu_cell: one step.
PtValues convert_rnn_cell(PtContext& ctx) {
    const rnn::Spec spec = spec_of(ctx.kind());
    const bool lstm = spec.cell == rnn::Cell::LSTM;
    Expr x = ctx.tensor(0);
    std::vector<Expr> hx = lstm ? ctx.tensors(1) : std::vector<Expr>{ctx.tensor(1)};
    if (hx.size() != (lstm ? 2u : 1u)) {
        ctx.error() << "the state has " << hx.size() << " tensor(s)";
    }
    std::vector<int64_t> xs = ctx.static_shape(x, "the input");
    if (xs.size() != 2)
        ctx.error() << "the input must be [batch, input_size], got rank " << xs.size();
    Expr w_ih = ctx.tensor(2), w_hh = ctx.tensor(3);
    const int64_t hidden = ctx.static_shape(w_hh, "w_hh").at(0) / rnn::num_gates(spec.cell);
    rnn::Weights w =
        split_weights(ctx, spec.cell, w_ih, w_hh, optional_tensor(ctx, 4), optional_tensor(ctx, 5),
                      Expr(), xs[1], hidden, hidden, "the cell");
    rnn::State next = rnn::step(ctx, spec, w, x, {hx[0], lstm ? hx[1] : Expr()});
    if (lstm) return {PtValue::of_tensor(next.h), PtValue::of_tensor(next.c)};
    return {PtValue::of_tensor(next.h)};
}

}  // namespace anvil::frontend::pytorch
