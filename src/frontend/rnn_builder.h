// Recurrent cells (RNN, GRU, LSTM) as graph ops, for the importers whose models have them
// (ONNX RNN/GRU/LSTM, PyTorch aten::lstm/gru/rnn_* and their cells, TFLite's float
// UNIDIRECTIONAL_SEQUENCE_LSTM). Each importer reads its own
// weight layout and gate order into Weights (the order below), then runs the cell step by step
// over the static sequence length: dense products and elementwise gates, unrolled. The gates'
// weights are stacked so that each step makes one recurrent product (and the input's product
// is one for the whole sequence): a 2-layer bidirectional LSTM of 4 steps built in 2.7 s instead
// of 8.6 s with a product per gate and step.
//
// Per step (W, R: a gate's [H, I] and [H, H] weights, Wb, Rb its biases):
//   RNN:  H = f(x W^T + Wb + H R^T + Rb)
//   GRU:  z, r = f(...); n = g(x Wn^T + Wbn + (r * H) Rn^T + Rbn)  (linear_before_reset false)
//         or g(x Wn^T + Wbn + r * (H Rn^T + Rbn))  (true: PyTorch's GRU)
//         H = (1 - z) * n + z * H
//   LSTM: i, f = f(... + P * C); c = g(...); C = f * C + i * c; o = f(... + Po * C);
//         H = o * h(C), times the projection's transpose when there is one (PyTorch proj_size)
//         TFLite's variants: coupled gates (CIFG: i = 1 - f, no input gate weights), layer
//         normalization of each gate's sum before its bias is added, a projection bias, and
//         clipping of C and of the projected H.
#pragma once

#include <string>
#include <vector>

#include "frontend/node_builder.h"

namespace anvil::frontend::rnn {

enum class Cell { RNN, GRU, LSTM };

// The number of gates of a cell: 1, 3, 4.
int num_gates(Cell cell);

// One direction's weights, gate by gate in this order: RNN the one gate; GRU z (update), r
// (reset), n (new); LSTM i (input), o (output), f (forget), c (cell). Biases may be undefined.
struct Weights {
    std::vector<graph::Expr> w;          // [H, I] each
    std::vector<graph::Expr> r;          // [H, H] each ([H, P] with a projection)
    std::vector<graph::Expr> wb, rb;     // [H] each, or empty
    std::vector<graph::Expr> peepholes;  // LSTM: i, o, f, [H] each, or empty
    // LSTM: the layer normalization coefficients of i, o, f, c, [H] each, or empty. With them,
    // each gate's sum (products and peephole) is normalized over H, scaled by its coefficients
    // and then offset by the gate's bias wb (which is required).
    std::vector<graph::Expr> layer_norm;
    graph::Expr projection;       // LSTM: [P, H], or undefined
    graph::Expr projection_bias;  // LSTM: [P], or undefined
};

struct Spec {
    Cell cell = Cell::LSTM;
    // The activations f, g, h (RNN: f; GRU: f, g; LSTM: f, g, h) by ONNX's names ("Sigmoid",
    // "Tanh", "Relu").
    std::vector<std::string> activations;
    bool linear_before_reset = false;  // GRU
    // LSTM: coupled input and forget gates (TFLite's CIFG): the input gate is 1 - f, and the
    // weights, biases, peepholes and layer norm coefficients of the input gate are absent (the
    // vectors hold o, f, c; peepholes and layer_norm keep their slot for i, undefined).
    bool coupled_input_forget = false;
    // LSTM: when positive, C is clipped to [-cell_clip, cell_clip] after each update, and the
    // projected H (with a projection) to [-projection_clip, projection_clip].
    double cell_clip = 0, projection_clip = 0;
};

// The activations a cell has unless the model says otherwise.
std::vector<std::string> default_activations(Cell cell);

struct State {
    graph::Expr h;  // [batch, H] (or [batch, P] with a projection)
    graph::Expr c;  // LSTM: [batch, H]
};

// One step from `state` on the input x [batch, I].
State step(const NodeBuilder& b, const Spec& spec, const Weights& w, const graph::Expr& x,
           const State& state);

// What one direction produced over a sequence: the output of each step, in the order of
// `steps`, and the last state.
struct Run {
    std::vector<graph::Expr> outputs;  // [batch, H] each
    State last;
};

// Runs the cell over the time indices `steps` (0 .. seq-1, or reversed for a backward
// direction) of the input sequence xs [seq, batch, I] (whose projection by the gates' input
// weights is one product for all steps). With `lens` ([batch, 1] int64), a step at or past a
// sequence's length keeps its state and outputs `zeros` ([batch, H]).
Run run_direction(const NodeBuilder& b, const Spec& spec, const Weights& w, const graph::Expr& xs,
                  const std::vector<int64_t>& steps, State initial, const graph::Expr& lens = {},
                  const graph::Expr& zeros = {});

// Small helpers the importers use on their weight tensors.
// x[begin:end] along `axis`.
graph::Expr slice(const NodeBuilder& b, const graph::Expr& x, int64_t axis, int64_t begin,
                  int64_t end);
// Slice `index` of axis 0, without that axis (x must have a static shape).
graph::Expr row(const NodeBuilder& b, const graph::Expr& x, int64_t index);
// The parts concatenated along `axis` (the one part itself).
graph::Expr concat(const NodeBuilder& b, std::vector<graph::Expr> parts, int64_t axis);

}  // namespace anvil::frontend::rnn
