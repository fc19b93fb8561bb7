// Converters of ONNX's recurrent layers (RNN, GRU, LSTM), unrolled over the static sequence
// length into dense products and elementwise gates, with both layouts and every direction.
// Per step (W, R: a direction's [gates * H, I] and [gates * H, H] weights, b = Wb + Rb):
//   RNN:  H = f(x W^T + H R^T + b)
//   GRU:  z, r = sigmoid(...); h = g(x Wh^T + (r * H) Rh^T + bh) (linear_before_reset 0) or
//         g(x Wh^T + r * (H Rh^T + Rbh) + Wbh) (1); H = (1 - z) * h + z * H
//   LSTM: i, f = sigmoid(... + P * C); c = g(...); C = f * C + i * c;
//         o = sigmoid(... + Po * C); H = o * h(C)
#include "frontend/onnx/convert_ops.h"
#include "ops/transform.h"

namespace anvil::frontend {

using graph::Expr;

namespace {

// x[begin:end] along `axis`.
Expr slice(ConvertContext& ctx, const Expr& x, int64_t axis, int64_t begin, int64_t end) {
    auto [attrs, a] = new_attrs<ops::StridedSliceAttrs>();
    a->begin = {begin};
    a->end = {end};
    a->strides = {1};
    a->axes = {axis};
    return ctx.call("strided_slice", {x}, attrs);
}

// Slice `index` of axis 0, without that axis.
Expr row(ConvertContext& ctx, const Expr& x, int64_t index) {
    std::vector<int64_t> shape = ctx.static_shape(x, "an operand");
    shape.erase(shape.begin());
    return reshape_to(ctx, slice(ctx, x, 0, index, index + 1), shape);
}

Expr concat(ConvertContext& ctx, std::vector<Expr> parts, int64_t axis) {
    if (parts.size() == 1) return parts[0];
    auto [attrs, a] = new_attrs<ops::ConcatenateAttrs>();
    a->axis = axis;
    return ctx.call("concatenate", std::move(parts), attrs);
}

Expr activation(ConvertContext& ctx, const std::string& name, const Expr& x) {
    if (name == "Sigmoid") return ctx.call("sigmoid", {x});
    if (name == "Tanh") return ctx.call("tanh", {x});
    if (name == "Relu") return ctx.call("nn.relu", {x});
    ctx.error() << "activation " << name << " is not supported (Sigmoid, Tanh, Relu)";
    ANVIL_UNREACHABLE();
}

}  // namespace

Exprs convert_recurrent(ConvertContext& ctx) {
    const std::string& op = ctx.node().op_type();
    const int gates = op == "RNN" ? 1 : op == "GRU" ? 3 : 4;
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
    std::vector<std::string> defaults = op == "RNN" ? std::vector<std::string>{"Tanh"}
                                        : op == "GRU"
                                            ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                            : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
    if (ctx.has_attr("activation_alpha") || ctx.has_attr("activation_beta")) {
        ctx.error() << "activation_alpha and activation_beta are not supported";
    }
    const bool linear_before_reset = op == "GRU" && ctx.attr_int("linear_before_reset", 0) != 0;
    auto [zattrs, za] = new_attrs<ops::BroadcastToAttrs>();
    za->shape = {batch, hidden};
    Expr zeros = ctx.call("broadcast_to", {ctx.constant_scalar(dt, 0.0)}, zattrs);
    std::vector<Expr> ys(static_cast<size_t>(seq * dirs)), last_h, last_c;
    for (int64_t d = 0; d < dirs; ++d) {
        std::vector<std::string> f(defaults);
        if (!acts.empty()) {
            if (acts.size() != defaults.size() * static_cast<size_t>(dirs)) {
                ctx.error() << "activations has " << acts.size() << " names, expected "
                            << defaults.size() * static_cast<size_t>(dirs);
            }
            for (size_t k = 0; k < f.size(); ++k) f[k] = acts[d * f.size() + k];
        }
        Expr wd = row(ctx, w, d), rd = row(ctx, r, d);  // [G*H, I], [G*H, H]
        auto gate = [&](const Expr& m, int g) {
            return slice(ctx, m, 0, g * hidden, (g + 1) * hidden);
        };
        std::vector<Expr> wb(gates), rb(gates);
        if (bias.defined()) {
            Expr bd = row(ctx, bias, d);  // [2*G*H]
            for (int g = 0; g < gates; ++g) {
                wb[g] = slice(ctx, bd, 0, g * hidden, (g + 1) * hidden);
                rb[g] = slice(ctx, bd, 0, (gates + g) * hidden, (gates + g + 1) * hidden);
            }
        }
        std::vector<Expr> wg(gates), rg(gates);
        for (int g = 0; g < gates; ++g) {
            wg[g] = gate(wd, g);
            rg[g] = gate(rd, g);
        }
        std::vector<Expr> pg;
        if (peep.defined()) {
            Expr pd = row(ctx, peep, d);
            for (int g = 0; g < 3; ++g)
                pg.push_back(slice(ctx, pd, 0, g * hidden, (g + 1) * hidden));
        }
        // Zero initial states when none are given.
        Expr h = initial_h.defined() ? row(ctx, initial_h, d) : zeros;
        Expr c = initial_c.defined() ? row(ctx, initial_c, d) : zeros;
        auto add_opt = [&](Expr a, const Expr& b) {
            return b.defined() ? ctx.call("add", {a, b}) : a;
        };
        auto lin = [&](const Expr& in, int g, const Expr& hh) {
            Expr v = ctx.call(
                "add", {ctx.call("nn.dense", {in, wg[g]}), ctx.call("nn.dense", {hh, rg[g]})});
            return add_opt(add_opt(v, wb[g]), rb[g]);
        };
        for (int64_t step = 0; step < seq; ++step) {
            int64_t t = (direction == "reverse" || d == 1) ? seq - 1 - step : step;
            Expr xt = row(ctx, x, t);  // [batch, input]
            Expr h_prev = h, c_prev = c;
            if (op == "RNN") {
                h = activation(ctx, f[0], lin(xt, 0, h));
            } else if (op == "GRU") {
                Expr z = activation(ctx, f[0], lin(xt, 0, h));
                Expr rr = activation(ctx, f[0], lin(xt, 1, h));
                Expr hh;
                if (linear_before_reset) {
                    Expr rec = add_opt(ctx.call("nn.dense", {h, rg[2]}), rb[2]);
                    hh = add_opt(ctx.call("add", {ctx.call("nn.dense", {xt, wg[2]}),
                                                  ctx.call("multiply", {rr, rec})}),
                                 wb[2]);
                } else {
                    hh = lin(xt, 2, ctx.call("multiply", {rr, h}));
                }
                hh = activation(ctx, f[1], hh);
                Expr one_minus_z = ctx.call("subtract", {ctx.constant_scalar(dt, 1.0), z});
                h = ctx.call(
                    "add", {ctx.call("multiply", {one_minus_z, hh}), ctx.call("multiply", {z, h})});
            } else {  // LSTM, gates i, o, f, c; peepholes i, o, f
                Expr ig = lin(xt, 0, h), fg = lin(xt, 2, h);
                if (!pg.empty()) {
                    ig = ctx.call("add", {ig, ctx.call("multiply", {pg[0], c})});
                    fg = ctx.call("add", {fg, ctx.call("multiply", {pg[2], c})});
                }
                ig = activation(ctx, f[0], ig);
                fg = activation(ctx, f[0], fg);
                Expr cc = activation(ctx, f[1], lin(xt, 3, h));
                c = ctx.call("add",
                             {ctx.call("multiply", {fg, c}), ctx.call("multiply", {ig, cc})});
                Expr og = lin(xt, 1, h);
                if (!pg.empty()) og = ctx.call("add", {og, ctx.call("multiply", {pg[1], c})});
                og = activation(ctx, f[0], og);
                h = ctx.call("multiply", {og, activation(ctx, f[2], c)});
            }
            Expr yt = h;
            if (lens.defined()) {
                Expr live =
                    ctx.call("less", {ctx.constant_scalar(DataType::int64(), double(t)), lens});
                yt = ctx.call("where", {live, h, zeros});
                h = ctx.call("where", {live, h, h_prev});
                c = ctx.call("where", {live, c, c_prev});
            }
            ys[static_cast<size_t>(t * dirs + d)] = reshape_to(ctx, yt, {1, 1, batch, hidden});
        }
        last_h.push_back(reshape_to(ctx, h, {1, batch, hidden}));
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
