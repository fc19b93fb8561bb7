"""TFLite's float UNIDIRECTIONAL_SEQUENCE_LSTM and its variants (coupled gates, peepholes,
layer normalization, projection with bias, clipping), against TFLite's float kernel in NumPy:
the runtime under Node.js refuses the variable tensors TFLite's converter writes an LSTM's
states as (and returns zeros when they are inputs instead). The integer LSTM:
test_tflite_integer_lstm.py."""
import numpy as np
import pytest

import anvil
from anvil import frontend

import tflite_writer as W
from test_tflite_ops import Model


def lstm_reference(x, v, time_major, n_output, cell_clip=0.0, proj_clip=0.0):
    """TFLite's float LSTM step by step in NumPy (float64), as its kernel (lstm_eval.cc) computes
    it: gates i, f, o sigmoid, cell tanh; the peepholes ("p_i", ...), projection ("proj", "pb"),
    layer norm coefficients ("ln_i", ...) where `v` has them; no "w_i" means coupled input and
    forget gates (i = 1 - f); states from zero."""
    xs = x if time_major else x.transpose(1, 0, 2)
    batch = xs.shape[1]
    n_cell = v["w_f"].shape[0]
    h, c = np.zeros((batch, n_output)), np.zeros((batch, n_cell))
    sigmoid = lambda z: 1 / (1 + np.exp(-z))

    def normalized(z):  # TFLite's MeanStddevNormalization
        mean = z.mean(axis=1, keepdims=True)
        return (z - mean) / np.sqrt(((z - mean) ** 2).mean(axis=1, keepdims=True) + 1e-8)

    out = []
    for x_t in xs.astype(np.float64):
        def pre(g, cell=None):
            z = x_t @ v[f"w_{g}"].T + h @ v[f"r_{g}"].T
            if f"p_{g}" in v:
                z = z + v[f"p_{g}"] * cell
            if f"ln_{g}" in v:
                z = normalized(z) * v[f"ln_{g}"]
            return z + v[f"b_{g}"]
        f = sigmoid(pre("f", c))
        i = sigmoid(pre("i", c)) if "w_i" in v else 1 - f
        c = f * c + i * np.tanh(pre("c"))
        if cell_clip > 0:
            c = np.clip(c, -cell_clip, cell_clip)
        o = sigmoid(pre("o", c))
        h = o * np.tanh(c)
        if "proj" in v:
            h = h @ v["proj"].T + v.get("pb", 0)
            if proj_clip > 0:
                h = np.clip(h, -proj_clip, proj_clip)
        out.append(h)
    y = np.stack(out)
    return y if time_major else y.transpose(1, 0, 2)


LSTM_CASES = {  # name: (time_major, variant flags)
    "plain": (False, ""), "time_major": (True, ""), "peepholes_projection": (False, "pP"),
    "cifg": (False, "c"), "cifg_peepholes": (True, "cp"), "layer_norm": (False, "l"),
    "cifg_layer_norm_projection_bias": (False, "clPb"), "clipped": (False, "pPbk"),
}


@pytest.mark.parametrize("case", LSTM_CASES)
def test_unidirectional_sequence_lstm(case):
    """Against the LSTM's definition in NumPy: the runtime under Node.js refuses the variable
    tensors TFLite's converter writes an LSTM's states as (and returns zeros when they are
    inputs instead). Flags: c coupled gates (CIFG), p peepholes, P projection, b projection
    bias, l layer norm, k cell and projection clipping."""
    time_major, flags = LSTM_CASES[case]
    batch, steps, n_input, n_cell = 2, 3, 4, 5
    n_output = 3 if "P" in flags else n_cell
    rng = np.random.default_rng(44)
    m = Model()
    shape = [steps, batch, n_input] if time_major else [batch, steps, n_input]
    x = m.w.tensor("x", shape)
    values = {}

    def weights(name, shape, scale=0.4, present=True):
        if not present:
            return -1
        values[name] = rng.standard_normal(shape).astype(np.float32) * scale
        return m.const(name, values[name])

    cifg, layer_norm = "c" in flags, "l" in flags
    ops = [x]
    ops += [weights(f"w_{g}", [n_cell, n_input], present=not (cifg and g == "i")) for g in "ifco"]
    ops += [weights(f"r_{g}", [n_cell, n_output], present=not (cifg and g == "i"))
            for g in "ifco"]
    ops += [weights(f"p_{g}", [n_cell], present="p" in flags and not (cifg and g == "i"))
            for g in "ifo"]
    ops += [weights(f"b_{g}", [n_cell], present=not (cifg and g == "i")) for g in "ifco"]
    ops += [weights("proj", [n_output, n_cell], present="P" in flags),
            weights("pb", [n_output], present="b" in flags)]
    ops += [m.w.tensor(name, [batch, size], variable=True)
            for name, size in (("h", n_output), ("c", n_cell))]
    if layer_norm:
        ops += [weights(f"ln_{g}", [n_cell], 1.0, present=not (cifg and g == "i"))
                for g in "ifco"]
    y = m.act("y", [steps, batch, n_output] if time_major else [batch, steps, n_output])
    # Clips that bind: the cell state and the projected output reach past them.
    clips = (0.6, 0.5) if "k" in flags else (0.0, 0.0)
    m.w.op(44, ops, [y], 71, [(0, "b", W.TANH_ACT), (1, "f", clips[0]), (2, "f", clips[1]),
                              (3, "B", time_major)])
    xv = (rng.standard_normal(shape) * 2).astype(np.float32)
    mod, params = frontend.from_tflite(m.w.build([x], [y]))
    lib = anvil.build(mod, target="llvm", params=params)
    got = anvil.runtime.VirtualMachine(lib)["main"](xv).numpy()
    want = lstm_reference(xv, values, time_major, n_output, *clips)
    if "k" in flags:
        unclipped = lstm_reference(xv, values, time_major, n_output)
        assert np.abs(unclipped).max() > clips[1] and not np.allclose(got, unclipped, atol=1e-3)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
