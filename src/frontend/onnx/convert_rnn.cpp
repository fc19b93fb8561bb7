// Converters of ONNX's recurrent layers (RNN, GRU, LSTM), unrolled over the static sequence
// length with both layouts and every direction. The cell math is frontend/rnn_builder.h's; this
// file reads ONNX's weight layout (a direction's W [G*H, I], R [G*H, H], B [2*G*H], gates in
// ONNX's order, which is the builder's) and attributes.
#include "frontend/onnx/convert_ops.h"
#include "frontend/rnn_builder.h"
#include "ops/transform.h"

namespace anvil::frontend {

using graph::Expr;
using rnn::concat;
using rnn::row;
using rnn::slice;

Exprs convert_recurrent(ConvertContext& ctx) {
    const std::string& op = ctx.node().op_type();
    const rnn::Cell cell = op == "RNN"   ? rnn::Cell::RNN
                           : op == "GRU" ? rnn::Cell::GRU
                                         : rnn::Cell::LSTM;
    const int gates = rnn::num_gates(cell);
    Expr x = ctx.input(0), w = ctx.input(1), r = ctx.input(2);
    Expr bias = ctx.optional_input(3), initial_h = ctx.optional_input(5);
    Expr initial_c = op == "LSTM" ? ctx.optional_input(6) : Expr();
    Expr peep = op == "LSTM" ? ctx.optional_input(7) : Expr();
    Expr seq_lens = ctx.optional_input(4);
    if (ctx.has_attr("clip")) ctx.error() << "clip is not supported";
    if (op == "LSTM" && ctx.attr_int("input_forget", 0) != 0) {
        ctx.error() << "input_forget is not supported";
    }
    DataType dt = ctx.tensor_type(x, "the input").dtype;
    if (!dt.is_floating()) ctx.error() << "the input must be floating-point, got " << dt.str();
    const bool batch_major = ctx.attr_int("layout", 0) != 0;
    if (batch_major) {
        auto [attrs, a] = new_attrs<ops::TransposeAttrs>();
        a->axes = {1, 0, 2};
        x = ctx.call("transpose", {x}, attrs);
    }
    std::vector<int64_t> xs = ctx.static_shape(x, "the input");  // [seq, batch, input]
    if (xs.size() != 3) ctx.error() << "the input must be 3-D, got rank " << xs.size();
    const int64_t seq = xs[0], batch = xs[1];
    const int64_t hidden = ctx.attr_int("hidden_size", 0);
    if (hidden <= 0) ctx.error() << "hidden_size must be given and positive";
    std::string direction = ctx.attr_string("direction", "forward");
    if (direction != "forward" && direction != "reverse" && direction != "bidirectional") {
        ctx.error() << "direction '" << direction << "' is not forward, reverse or bidirectional";
    }
    const int64_t dirs = direction == "bidirectional" ? 2 : 1;
    // sequence_lens (read at run time): steps at or past a sequence's length keep its state
    // and output zeros. Reversed directions would start at each sequence's own end.
    Expr lens;
    if (seq_lens.defined()) {
        if (direction != "forward") {
            ctx.error() << "sequence_lens is supported for the forward direction only";
        }
        lens = reshape_to(ctx, cast_to(ctx, seq_lens, DataType::int64()), {batch, 1});
    }
    std::vector<std::string> acts;
    if (const auto* a = ctx.find_attr("activations")) {
        for (const auto& name : a->strings()) acts.push_back(name);
    }
    const std::vector<std::string> defaults = rnn::default_activations(cell);
    if (ctx.has_attr("activation_alpha") || ctx.has_attr("activation_beta")) {
        ctx.error() << "activation_alpha and activation_beta are not supported";
    }
    const bool linear_before_reset = op == "GRU" && ctx.attr_int("linear_before_reset", 0) != 0;
    auto [zattrs, za] = new_attrs<ops::BroadcastToAttrs>();
    za->shape = {batch, hidden};
    Expr zeros = ctx.call("broadcast_to", {ctx.constant_scalar(dt, 0.0)}, zattrs);
    std::vector<Expr> ys(static_cast<size_t>(seq * dirs)), last_h, last_c;
    for (int64_t d = 0; d < dirs; ++d) {
        rnn::Spec spec{
            .cell = cell, .activations = defaults, .linear_before_reset = linear_before_reset};
        if (!acts.empty()) {
            if (acts.size() != defaults.size() * static_cast<size_t>(dirs)) {
                ctx.error() << "activations has " << acts.size() << " names, expected "
                            << defaults.size() * static_cast<size_t>(dirs);
            }
            for (size_t k = 0; k < defaults.size(); ++k) {
                spec.activations[k] = acts[d * defaults.size() + k];
            }
        }
        Expr wd = row(ctx, w, d), rd = row(ctx, r, d);  // [G*H, I], [G*H, H]
        rnn::Weights weights;
        for (int g = 0; g < gates; ++g) {
            weights.w.push_back(slice(ctx, wd, 0, g * hidden, (g + 1) * hidden));
            weights.r.push_back(slice(ctx, rd, 0, g * hidden, (g + 1) * hidden));
        }
        if (bias.defined()) {
            Expr bd = row(ctx, bias, d);  // [2*G*H]
            for (int g = 0; g < gates; ++g) {
                weights.wb.push_back(slice(ctx, bd, 0, g * hidden, (g + 1) * hidden));
                weights.rb.push_back(
                    slice(ctx, bd, 0, (gates + g) * hidden, (gates + g + 1) * hidden));
            }
        }
        if (peep.defined()) {
            Expr pd = row(ctx, peep, d);
            for (int g = 0; g < 3; ++g) {
                weights.peepholes.push_back(slice(ctx, pd, 0, g * hidden, (g + 1) * hidden));
            }
        }
        // Zero initial states when none are given.
        rnn::State initial{
            initial_h.defined() ? row(ctx, initial_h, d) : zeros,
            op == "LSTM" ? (initial_c.defined() ? row(ctx, initial_c, d) : zeros) : Expr()};
        std::vector<int64_t> steps;
        for (int64_t step = 0; step < seq; ++step) {
            steps.push_back((direction == "reverse" || d == 1) ? seq - 1 - step : step);
        }
        rnn::Run run = rnn::run_direction(ctx, spec, weights, x, steps, initial, lens, zeros);
        for (size_t k = 0; k < steps.size(); ++k) {
            ys[static_cast<size_t>(steps[k] * dirs + d)] =
                reshape_to(ctx, run.outputs[k], {1, 1, batch, hidden});
        }
        last_h.push_back(reshape_to(ctx, run.last.h, {1, batch, hidden}));
        Expr c = run.last.c.defined() ? run.last.c : zeros;
        last_c.push_back(reshape_to(ctx, c, {1, batch, hidden}));
    }
    // Y [seq, dirs, batch, hidden]: steps along axis 0, directions along axis 1.
    std::vector<Expr> steps;
    for (int64_t t = 0; t < seq; ++t) {
        std::vector<Expr> per_dir(ys.begin() + t * dirs, ys.begin() + (t + 1) * dirs);
        steps.push_back(concat(ctx, per_dir, 1));
    }
    Expr y = concat(ctx, steps, 0);
    Expr yh = concat(ctx, last_h, 0), yc = concat(ctx, last_c, 0);
    if (batch_major) {
        auto [ya, a] = new_attrs<ops::TransposeAttrs>();
        a->axes = {2, 0, 1, 3};
        y = ctx.call("transpose", {y}, ya);
        auto [ha, b] = new_attrs<ops::TransposeAttrs>();
        b->axes = {1, 0, 2};
        yh = ctx.call("transpose", {yh}, ha);
        yc = ctx.call("transpose", {yc}, ha);
    }
    Exprs out = {y, yh};
    if (op == "LSTM") out.push_back(yc);
    if (out.size() > static_cast<size_t>(ctx.node().output_size()))
        out.resize(ctx.node().output_size());
    return out;
}

}  // namespace anvil::frontend
