"""TFLite's SVDF against its reference kernels written in NumPy: float; int8 with an int16 state
(TFLite's and TFLite Micro's EvalIntegerSvdfReference) and with an int8 state (TFLite Micro's
only), zero points and wrapping stores included; the first SVDF of each keyword-spotting model
of ../shared/models with its real weights; and the whole models. One run is one step from the
reset state, as a freshly loaded interpreter computes it. (The TFLite runtime of the other tests,
litert.py, does not load models with SVDFs.)"""
import numpy as np
import pytest

import anvil
from anvil import frontend

import tflite_file
import tflite_writer as W
from test_tflite_models import compile_model, model_path, run
from test_tflite_ops import multiply_by_quantized_multiplier

SVDF, SVDF_OPTIONS = 27, 6
RNG = np.random.default_rng(27)


def wrap_int32(v):
    """int64 values as the int32 sums of the kernels hold them (two's complement)."""
    return (v + 2**31) % 2**32 - 2**31


def float_reference(x, wf, wt, bias, rank, activation):
    feature = x.astype(np.float64) @ wf.astype(np.float64).T  # the newest step; older ones 0
    per_filter = feature * wt[:, -1]
    y = per_filter.reshape(x.shape[0], -1, rank).sum(axis=2) + bias
    return np.maximum(y, 0) if activation == W.RELU_ACT else y


def integer_reference(x, wf, wt, bias, scales, zero_points, rank):
    """EvalIntegerSvdfReference (TFLite Micro; TFLite's for an int16 state of zero point 0) with
    the state of wt's type reset to its zero point. scales: input, weights_feature,
    weights_time, state, output; zero_points: input, state, output."""
    s_in, s_wf, s_wt, s_state, s_out = np.float32(scales)  # the model's float32 scales
    zp_in, zp_state, zp_out = zero_points
    info = np.iinfo(wt.dtype)
    acc = wrap_int32((x.astype(np.int64) - zp_in) @ wf.astype(np.int64).T)
    # The effective scales in float32, as the kernels' Prepare computes them.
    feature = np.clip(multiply_by_quantized_multiplier(acc, float(s_in * s_wf / s_state)),
                      info.min, info.max)
    stored = (feature + zp_state).astype(wt.dtype)  # the kernel's store wraps
    per_filter = (stored.astype(np.int64) - zp_state) * wt[:, -1].astype(np.int64)
    per_unit = wrap_int32(per_filter.reshape(x.shape[0], -1, rank).sum(axis=2) + bias)
    y = multiply_by_quantized_multiplier(per_unit, float(s_state * s_wt / s_out)) + zp_out
    return np.clip(y, -128, 127).astype(np.int8)


def svdf_model(x, wf, wt, bias, rank, activation, quant=None, with_bias=True):
    """One SVDF over an input like `x`. quant (integer models): (scales, zero_points) as
    integer_reference takes them. Without with_bias the operator omits its bias (`bias` only
    gives the unit count)."""
    w = W.ModelWriter()
    batch, n_unit, memory = x.shape[0], bias.shape[0], wt.shape[1]
    if quant is None:
        q = [{} for _ in range(6)]
        types = ["float32"] * 6
    else:
        (s_in, s_wf, s_wt, s_state, s_out), (zp_in, zp_state, zp_out) = quant
        q = [dict(scale=s_in, zero_point=zp_in), dict(scale=s_wf, zero_point=0),
             dict(scale=s_wt, zero_point=0), dict(scale=s_state * s_wt, zero_point=0),
             dict(scale=s_state, zero_point=zp_state), dict(scale=s_out, zero_point=zp_out)]
        types = ["int8", "int8", str(wt.dtype), "int32", str(wt.dtype), "int8"]
    tx = w.tensor("x", list(x.shape), types[0], **q[0])
    twf = w.tensor("wf", list(wf.shape), types[1], data=wf, **q[1])
    twt = w.tensor("wt", list(wt.shape), types[2], data=wt, **q[2])
    tb = w.tensor("b", [n_unit], types[3], data=bias, **q[3])
    ts = w.tensor("state", [batch, memory * wf.shape[0]], types[4], variable=True, **q[4])
    ty = w.tensor("y", [batch, n_unit], types[5], **q[5])
    w.op(SVDF, [tx, twf, twt, tb if with_bias else -1, ts], [ty], SVDF_OPTIONS,
         [(0, "i", rank), (1, "b", activation)],
         version=1 if quant is None else 3)
    return w.build([tx], [ty])


def run_model(model, x):
    mod, params = frontend.from_tflite(model)
    with anvil.PassContext(opt_level=3):
        lib = anvil.build(mod, target="llvm", params=params)
    return anvil.runtime.VirtualMachine(lib)["main"](x).numpy()


@pytest.mark.parametrize("rank", [1, 2])
@pytest.mark.parametrize("activation", [W.NONE, W.RELU_ACT])
def test_float_svdf(rank, activation):
    x = RNG.standard_normal((2, 10)).astype(np.float32)
    wf = (RNG.standard_normal((8, 10)) * 0.3).astype(np.float32)
    wt = RNG.standard_normal((8, 4)).astype(np.float32)
    bias = RNG.standard_normal(8 // rank).astype(np.float32)
    got = run_model(svdf_model(x, wf, wt, bias, rank, activation), x)
    want = float_reference(x, wf, wt, bias, rank, activation)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_float_svdf_with_int8_weights_and_no_bias():
    """TFLite's hybrid form: int8 weights compute as their real values (weights_feature's scale
    and weights_time's); without a bias the unit sums stand alone."""
    x = RNG.standard_normal((2, 6)).astype(np.float32)
    wf = RNG.integers(-127, 128, (4, 6)).astype(np.int8)
    wt = RNG.integers(-127, 128, (4, 3)).astype(np.int8)
    w = W.ModelWriter()
    tx = w.tensor("x", [2, 6])
    twf = w.tensor("wf", [4, 6], "int8", data=wf, scale=0.02, zero_point=0)
    twt = w.tensor("wt", [4, 3], "int8", data=wt, scale=0.05, zero_point=0)
    ts = w.tensor("state", [2, 12], variable=True)
    ty = w.tensor("y", [2, 2])
    w.op(SVDF, [tx, twf, twt, -1, ts], [ty], SVDF_OPTIONS, [(0, "i", 2), (1, "b", W.NONE)],
         version=2)
    got = run_model(w.build([tx], [ty]), x)
    want = float_reference(x, wf * np.float32(0.02), wt * np.float32(0.05), 0.0, 2, W.NONE)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("state_type,state_zero_point",
                         [("int16", 0), ("int8", 0), ("int8", -50), ("int8", 60)])
@pytest.mark.parametrize("rank", [1, 3])
@pytest.mark.parametrize("with_bias", [True, False])
def test_integer_svdf(state_type, state_zero_point, rank, with_bias):
    batch, n_input, n_filter, memory = 3, 16, 12, 5
    info = np.iinfo(state_type)
    x = RNG.integers(-128, 128, (batch, n_input)).astype(np.int8)
    wf = RNG.integers(-127, 128, (n_filter, n_input)).astype(np.int8)
    wt = RNG.integers(-info.max, info.max + 1, (n_filter, memory)).astype(state_type)
    bias = RNG.integers(-300, 300, n_filter // rank).astype(np.int32)
    # The state's scale is small enough that features reach the state type's clamp (and, with a
    # zero point, wrap when stored).
    state_scale = 0.02 if state_type == "int8" else 1e-4
    quant = ((0.05, 0.01, 0.5 / info.max, state_scale, 0.01), (-3, state_zero_point, -128))
    got = run_model(svdf_model(x, wf, wt, bias, rank, W.RELU_ACT, quant, with_bias), x)
    want = integer_reference(x, wf, wt, bias if with_bias else 0, *quant, rank)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", ["keyword_scrambled.tflite", "keyword_scrambled_8bit.tflite"])
def test_first_svdf_of_the_keyword_models(name):
    """The models' first SVDF (64 filters over 96 inputs, memory 8; int16 or int8 time weights
    and state) with their weights, biases and quantization: the scrambled biases make the int32
    sums wrap, as the kernels' do."""
    data = model_path(name).read_bytes()
    ts = tflite_file.tensors(data)

    def weights(i):
        types = {9: np.int8, 7: np.int16, 2: np.int32}
        return np.frombuffer(ts[i]["data"], types[ts[i]["type"]]).reshape(ts[i]["shape"])

    wf, wt, bias = weights(1), weights(2), weights(3)
    scales = tuple(float(ts[i]["scale"][0]) for i in (0, 1, 2, 4, 5))
    zero_points = tuple(int(ts[i]["zero_point"][0]) for i in (0, 4, 5))
    x = RNG.integers(-128, 100, (1, 96)).astype(np.int8)
    rank = wf.shape[0] // bias.shape[0]
    model = svdf_model(x, wf, wt, bias, rank, W.RELU_ACT, (scales, zero_points))
    np.testing.assert_array_equal(run_model(model, x),
                                  integer_reference(x, wf, wt, bias, scales, zero_points, rank))


@pytest.mark.parametrize("name", ["keyword_scrambled.tflite", "keyword_scrambled_8bit.tflite"])
def test_keyword_models_run(name):
    """Seven SVDFs between a QUANTIZE of the int16 input and a FULLY_CONNECTED + SOFTMAX head,
    whose int16 probabilities the model widens to int32 (1/32768 each). The scrambled weights
    saturate the network: the probabilities are the same for every input."""
    vm = compile_model(model_path(name))
    x = RNG.integers(-20000, 20000, (1, 96)).astype(np.int16)
    first, again = run(vm, x)[0], run(vm, x)[0]
    assert first.shape == (1, 2) and first.dtype == np.int32
    np.testing.assert_array_equal(first, again)
    assert 32766 <= first.sum() <= 32769, first


def test_svdf_errors():
    x = np.zeros((1, 4), np.float32)
    wf, wt = np.zeros((6, 4), np.float32), np.zeros((6, 2), np.float32)
    model = svdf_model(x, wf, wt, np.zeros(1, np.float32), 4, W.NONE)
    with pytest.raises(anvil.UserError, match=r"SVDF.*rank 4 must be positive and divide the 6"):
        frontend.from_tflite(model)
