// Recurrent cells as graph ops (rnn_builder.h).
#include "frontend/rnn_builder.h"

#include "frontend/composite_ops.h"
#include "ops/activation.h"
#include "ops/norm.h"
#include "ops/transform.h"

namespace anvil::frontend::rnn {

using graph::Expr;

int num_gates(Cell cell) {
    switch (cell) {
        case Cell::RNN:
            return 1;
        case Cell::GRU:
            return 3;
        case Cell::LSTM:
            return 4;
    }
    return 1;
}

std::vector<std::string> default_activations(Cell cell) {
    switch (cell) {
        case Cell::RNN:
            return {"Tanh"};
        case Cell::GRU:
            return {"Sigmoid", "Tanh"};
        case Cell::LSTM:
            return {"Sigmoid", "Tanh", "Tanh"};
    }
    return {};
}

Expr slice(const NodeBuilder& b, const Expr& x, int64_t axis, int64_t begin, int64_t end) {
    auto [attrs, a] = new_attrs<ops::StridedSliceAttrs>();
    a->begin = {begin};
    a->end = {end};
    a->strides = {1};
    a->axes = {axis};
    return b.call("strided_slice", {x}, attrs);
}

Expr row(const NodeBuilder& b, const Expr& x, int64_t index) {
    std::vector<int64_t> shape = b.static_shape(x, "an operand");
    shape.erase(shape.begin());
    return reshape_to(b, slice(b, x, 0, index, index + 1), shape);
}

Expr concat(const NodeBuilder& b, std::vector<Expr> parts, int64_t axis) {
    if (parts.size() == 1) return parts[0];
    auto [attrs, a] = new_attrs<ops::ConcatenateAttrs>();
    a->axis = axis;
    return b.call("concatenate", std::move(parts), attrs);
}

namespace {

Expr activation(const NodeBuilder& b, const std::string& name, const Expr& x) {
    if (name == "Sigmoid") return b.call("sigmoid", {x});
    if (name == "Tanh") return b.call("tanh", {x});
    if (name == "Relu") return b.call("nn.relu", {x});
    b.error() << "activation " << name << " is not supported (Sigmoid, Tanh, Relu)";
    ANVIL_UNREACHABLE();
}

Expr add_opt(const NodeBuilder& b, const Expr& x, const Expr& y) {
    return y.defined() ? b.call("add", {x, y}) : x;
}

// The gates' weights side by side: one product per step gives every gate ([gates * H, ...]),
// gates [first, last).
struct Packed {
    Expr w, r, wb, rb;
};

Expr stacked(const NodeBuilder& b, const std::vector<Expr>& parts, size_t first, size_t last) {
    if (parts.empty()) return {};
    return concat(b, std::vector<Expr>(parts.begin() + first, parts.begin() + last), 0);
}

Packed pack(const NodeBuilder& b, const Weights& w, size_t first, size_t last) {
    // Layer-normalized gates add their biases after the normalization (lstm_step).
    Expr wb = w.layer_norm.empty() ? stacked(b, w.wb, first, last) : Expr();
    return {stacked(b, w.w, first, last), stacked(b, w.r, first, last), wb,
            stacked(b, w.rb, first, last)};
}

// x W^T + Wb for every gate: [..., gates * H].
Expr project(const NodeBuilder& b, const Packed& p, const Expr& x) {
    return add_opt(b, b.call("nn.dense", {x, p.w}), p.wb);
}

// h R^T + Rb.
Expr recur(const NodeBuilder& b, const Packed& p, const Expr& h) {
    return add_opt(b, b.call("nn.dense", {h, p.r}), p.rb);
}

int64_t hidden_of(const NodeBuilder& b, const Weights& w) {
    return b.static_shape(w.w.at(0), "a gate's weight").at(0);
}

Expr clipped(const NodeBuilder& b, const Expr& x, double bound) {
    if (bound <= 0) return x;
    auto [attrs, a] = new_attrs<ops::ClipAttrs>();
    a->a_min = -bound;
    a->a_max = bound;
    return b.call("clip", {x}, attrs);
}

// One LSTM step (step_projected's). The gates' slots in the stacked products: i, o, f, c, or
// o, f, c with coupled gates.
State lstm_step(const NodeBuilder& b, const Spec& spec, const Weights& w, const Packed& all,
                const Expr& xp, const State& state) {
    const std::vector<std::string>& f = spec.activations;
    const int64_t hidden = hidden_of(b, w);
    const int64_t first = spec.coupled_input_forget ? -1 : 0;  // the slot of gate i
    const Expr& c = state.c;
    Expr pre = b.call("add", {xp, recur(b, all, state.h)});
    // Gate g (0 i, 1 o, 2 f, 3 c) before its activation, with `peephole` times `cell`.
    auto gate = [&](int64_t g, const Expr& cell) {
        const auto slot = static_cast<size_t>(g + first);
        Expr x = slice(b, pre, 1, (g + first) * hidden, (g + first + 1) * hidden);
        if (g < 3 && !w.peepholes.empty()) {
            x = b.call("add", {x, b.call("multiply", {w.peepholes[size_t(g)], cell})});
        }
        if (!w.layer_norm.empty()) {
            auto [attrs, a] = new_attrs<ops::LayerNormAttrs>();
            a->axis = -1;
            a->epsilon = 1e-8;  // TFLite's MeanStddevNormalization
            if (slot >= w.wb.size() || !w.wb[slot].defined()) {
                b.error() << "a layer-normalized LSTM needs the gates' biases";
            }
            x = b.call("nn.layer_norm", {x, w.layer_norm[size_t(g)], w.wb[slot]}, attrs);
        }
        return x;
    };
    Expr fg = activation(b, f[0], gate(2, c));
    Expr ig = spec.coupled_input_forget
                  ? b.call("subtract", {b.constant_scalar(b.tensor_type(fg, "f").dtype, 1.0), fg})
                  : activation(b, f[0], gate(0, c));
    Expr cc = activation(b, f[1], gate(3, c));
    Expr c_next = b.call("add", {b.call("multiply", {fg, c}), b.call("multiply", {ig, cc})});
    c_next = clipped(b, c_next, spec.cell_clip);
    Expr og = activation(b, f[0], gate(1, c_next));
    Expr h_next = b.call("multiply", {og, activation(b, f[2], c_next)});
    if (w.projection.defined()) {
        h_next = add_opt(b, b.call("nn.dense", {h_next, w.projection}), w.projection_bias);
        h_next = clipped(b, h_next, spec.projection_clip);
    }
    return {h_next, c_next};
}

// One step from the input's projection xp ([batch, gates * H], biases included unless the gates
// are layer-normalized).
State step_projected(const NodeBuilder& b, const Spec& spec, const Weights& w, const Packed& all,
                     const Expr& xp, const State& state) {
    const std::vector<std::string>& f = spec.activations;
    const int64_t hidden = hidden_of(b, w);
    auto gate = [&](const Expr& x, int64_t g) {
        return slice(b, x, 1, g * hidden, (g + 1) * hidden);
    };
    const Expr& h = state.h;
    switch (spec.cell) {
        case Cell::RNN:
            return {activation(b, f[0], b.call("add", {xp, recur(b, all, h)})), {}};
        case Cell::GRU: {
            Expr z, r, n;
            if (spec.linear_before_reset) {
                Expr hp = recur(b, all, h);
                z = activation(b, f[0], b.call("add", {gate(xp, 0), gate(hp, 0)}));
                r = activation(b, f[0], b.call("add", {gate(xp, 1), gate(hp, 1)}));
                n = b.call("add", {gate(xp, 2), b.call("multiply", {r, gate(hp, 2)})});
            } else {
                Expr hp = recur(b, pack(b, w, 0, 2), h);
                z = activation(b, f[0], b.call("add", {gate(xp, 0), gate(hp, 0)}));
                r = activation(b, f[0], b.call("add", {gate(xp, 1), gate(hp, 1)}));
                n = b.call("add",
                           {gate(xp, 2), recur(b, pack(b, w, 2, 3), b.call("multiply", {r, h}))});
            }
            n = activation(b, f[1], n);
            DataType dt = b.tensor_type(xp, "the input").dtype;
            Expr one_minus_z = b.call("subtract", {b.constant_scalar(dt, 1.0), z});
            return {
                b.call("add", {b.call("multiply", {one_minus_z, n}), b.call("multiply", {z, h})}),
                {}};
        }
        case Cell::LSTM:
            return lstm_step(b, spec, w, all, xp, state);
    }
    ANVIL_UNREACHABLE();
}

}  // namespace

State step(const NodeBuilder& b, const Spec& spec, const Weights& w, const Expr& x,
           const State& state) {
    Packed all = pack(b, w, 0, w.w.size());
    return step_projected(b, spec, w, all, project(b, all, x), state);
}

Run run_direction(const NodeBuilder& b, const Spec& spec, const Weights& w, const Expr& xs,
                  const std::vector<int64_t>& steps, State initial, const Expr& lens,
                  const Expr& zeros) {
    Packed all = pack(b, w, 0, w.w.size());
    // The input's projection for every step at once: [seq, batch, gates * H], split into the
    // steps by one op, so that every step's kernels are alike (a slice per step would make a
    // kernel per step, compiled apart).
    Expr xp = project(b, all, xs);
    std::vector<int64_t> shape = b.static_shape(xp, "the input's projection");
    std::vector<Expr> per_step;
    if (shape[0] == 1) {
        per_step.push_back(reshape_to(b, xp, {shape[1], shape[2]}));
    } else if (shape[0] > 1) {
        auto [attrs, a] = new_attrs<ops::SplitAttrs>();
        a->sections = shape[0];
        a->axis = 0;
        Expr parts = b.call("split", {xp}, attrs);
        for (int64_t t = 0; t < shape[0]; ++t) {
            per_step.push_back(
                reshape_to(b, graph::make_tuple_get_item(parts, static_cast<int>(t), b.loc()),
                           {shape[1], shape[2]}));
        }
    }
    Run run;
    State s = std::move(initial);
    for (int64_t t : steps) {
        if (t < 0 || t >= shape[0]) b.error() << "step " << t << " is out of the sequence";
        State next = step_projected(b, spec, w, all, per_step[static_cast<size_t>(t)], s);
        Expr y = next.h;
        if (lens.defined()) {
            Expr live = b.call("less", {b.constant_scalar(DataType::int64(), double(t)), lens});
            y = b.call("where", {live, next.h, zeros});
            next.h = b.call("where", {live, next.h, s.h});
            if (next.c.defined()) next.c = b.call("where", {live, next.c, s.c});
        }
        run.outputs.push_back(y);
        s = std::move(next);
    }
    run.last = std::move(s);
    return run;
}

}  // namespace anvil::frontend::rnn
