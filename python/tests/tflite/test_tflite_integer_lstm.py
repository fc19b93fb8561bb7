"""The integer UNIDIRECTIONAL_SEQUENCE_LSTM (int8 and int16 activations), bit for bit against
TFLite Micro's kernel: its own test model's integers (produced by compiling tflite-micro's
kernel code) and random models through integer_lstm_reference.py, which reproduces them. The
runtime under Node.js does not run the LSTMs TFLite's converter writes (variable state tensors),
so it is not the reference here."""
import numpy as np
import pytest

import anvil
from anvil import frontend

import integer_lstm_reference as R
import tflite_writer as W

GATES = "ifco"


def test_the_reference_reproduces_tflite_micro():
    for name, exact, within_tolerance in R._check_micro():
        assert exact and within_tolerance, name


def write_lstm(t, shape, bits, time_major, cell_clip, states_as_inputs=False):
    """A model of one integer LSTM with the reference's operands `t` (R.QT each); returns
    (model bytes, its input tensors)."""
    w = W.ModelWriter()
    act = f"int{bits}"
    x = w.tensor("x", shape, act, scale=t["x"].scale, zero_point=t["x"].zp)

    def const(name, qt, dtype):
        return w.tensor(name, list(qt.q.shape), dtype, data=qt.q, scale=qt.scale, zero_point=0)

    ops = [x]
    ops += [const(f"w_x{g}", t[f"w_x{g}"], "int8") for g in GATES]
    ops += [const(f"w_h{g}", t[f"w_h{g}"], "int8") for g in GATES]
    ops += [-1, -1, -1]
    ops += [const(f"b_{g}", t[f"b_{g}"], "int32" if bits == 8 else "int64") for g in GATES]
    ops += [-1, -1]
    batch = shape[1] if time_major else shape[0]
    n_cell = t["w_xi"].q.shape[0]
    h = w.tensor("h", [batch, n_cell], act, scale=t["h"].scale, zero_point=t["h"].zp,
                 variable=not states_as_inputs)
    c = w.tensor("c", [batch, n_cell], "int16", scale=t["c"].scale, zero_point=0,
                 variable=not states_as_inputs)
    ops += [h, c]
    y = w.tensor("y", shape[:2] + [n_cell], act, scale=t["h"].scale, zero_point=t["h"].zp)
    w.op(44, ops, [y], 71, [(0, "b", W.TANH_ACT), (1, "f", cell_clip), (3, "B", time_major)])
    inputs = [x, h, c] if states_as_inputs else [x]
    return w.build(inputs, [y])


def run(model, *inputs):
    mod, params = frontend.from_tflite(model)
    lib = anvil.build(mod, target="llvm", params=params)
    return anvil.runtime.VirtualMachine(lib)["main"](*inputs).numpy()


@pytest.mark.parametrize("bits", [8, 16])
@pytest.mark.parametrize("kind", ["eval", "step"])
def test_tflite_micro_test_model(bits, kind):
    """tflite-micro's 2x3x2x2 LSTM test model: 3 steps from the reset states ("eval"), or one
    step from given states ("step", the states as model inputs); the outputs are TFLite Micro's
    integers."""
    gold = R._MICRO_GOLDEN[(kind, bits)]
    t = R._micro_model(bits)
    steps = 3 if kind == "eval" else 1
    dtype = np.int8 if bits == 8 else np.int16
    x = np.array(gold["x"], dtype).reshape(2, steps, 2)
    model = write_lstm(t, [2, steps, 2], bits, False, R._MICRO_FLOAT["cell_clip"],
                       states_as_inputs=kind == "step")
    if kind == "eval":
        got = run(model, x)
    else:
        got = run(model, x, np.array(gold["h0"], dtype).reshape(2, 2),
                  np.array(gold["c0"], np.int16).reshape(2, 2))
    np.testing.assert_array_equal(got.reshape(-1), gold["out"])


def random_lstm(rng, bits, n_input, n_cell):
    """Operands of a random integer LSTM as TFLite's quantizer would write them: per-tensor
    symmetric int8 weights, biases at input scale x weight scale, a power-of-two cell scale."""
    t = {}
    act_scale = 1 / 128 if bits == 8 else 1 / 32768
    t["x"] = R.QT([], act_scale * rng.uniform(0.5, 2), rng.integers(-20, 20) if bits == 8 else 0)
    t["h"] = R.QT([], act_scale * rng.uniform(0.5, 1), rng.integers(-10, 10) if bits == 8 else 0)
    t["c"] = R.QT([], 2.0 ** -rng.integers(11, 14), 0)
    for g in GATES:
        for kind, cols in (("x", n_input), ("h", n_cell)):
            scale = rng.uniform(0.002, 0.01)
            t[f"w_{kind}{g}"] = R.QT(rng.integers(-127, 128, (n_cell, cols)), scale)
        bias_scale = np.float32(t["x"].scale) * np.float32(t[f"w_x{g}"].scale)
        t[f"b_{g}"] = R.QT(np.round(rng.uniform(-1, 1, n_cell) / bias_scale).astype(np.int64),
                           bias_scale)
    return t


@pytest.mark.parametrize("bits", [8, 16])
@pytest.mark.parametrize("time_major", [False, True])
@pytest.mark.parametrize("cell_clip", [0.0, 0.25, 1e-5])  # 1e-5: quantized to 0, clips to 0
def test_random_integer_lstm(bits, time_major, cell_clip):
    rng = np.random.default_rng(bits * 7 + time_major * 3 + int(cell_clip > 0))
    batch, steps, n_input, n_cell = 2, 5, 3, 4
    t = random_lstm(rng, bits, n_input, n_cell)
    shape = [steps, batch, n_input] if time_major else [batch, steps, n_input]
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    dtype = np.int8 if bits == 8 else np.int16
    x = rng.integers(lo, hi + 1, shape).astype(dtype)
    got = run(write_lstm(t, shape, bits, time_major, cell_clip), x)
    p = R.micro_prepare(t, cell_clip)
    h0 = np.full((batch, n_cell), t["h"].zp if bits == 8 else 0)
    want, _, c = R.micro_run(t, p, x, h0, np.zeros((batch, n_cell)), bits, time_major)
    if cell_clip:
        assert np.abs(c).max() == p["qcell_clip"]  # the clip binds
    np.testing.assert_array_equal(got, want)
