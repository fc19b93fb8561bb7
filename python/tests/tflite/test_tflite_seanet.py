"""The single-operator int16x8 models of ../shared/models/tflite/seanet (ADD, CONV_2D,
LEAKY_RELU, PAD, QUANTIZE, STRIDED_SLICE, SUB, TRANSPOSE_CONV) against their golden outputs,
bit for bit: <op>N_input<k>_<type>.csv hold the inputs, <op>N_golden_<type>.csv the output, as
comma-separated values, flattened."""
import numpy as np
import pytest

import anvil
from anvil import frontend

import tflite_file
from test_tflite_models import MODELS

SEANET = MODELS / "seanet"
TYPES = {2: "int32", 7: "int16", 9: "int8"}


def seanet_models():
    if not SEANET.is_dir():
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"{SEANET} is missing"))]
    return sorted(SEANET.glob("*/*.tflite"), key=lambda p: (p.parent.name, len(p.stem), p.stem))


def read_csv(path, dtype):
    return np.loadtxt(path, delimiter=",", dtype=np.int64).reshape(-1).astype(dtype)


def run_model(path, inputs):
    mod, params = frontend.from_tflite(path)
    lib = anvil.build(mod, target="llvm", params=params)
    return anvil.runtime.VirtualMachine(lib)["main"](*inputs).numpy()


@pytest.mark.parametrize("path", seanet_models(), ids=lambda p: p.stem if p else "missing")
def test_matches_the_golden_output_bit_for_bit(path):
    model_inputs, (output,) = tflite_file.inputs_and_outputs(path.read_bytes())
    inputs = []
    for k, t in enumerate(model_inputs):
        dtype = TYPES[t["type"]]
        inputs.append(read_csv(path.parent / f"{path.stem}_input{k}_{dtype}.csv", dtype)
                      .reshape(t["shape"]))
    dtype = TYPES[output["type"]]
    want = read_csv(path.parent / f"{path.stem}_golden_{dtype}.csv", dtype)
    got = run_model(path, inputs)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.reshape(-1), want)


def test_a_run_time_output_shape_must_be_the_declared_one():
    path = SEANET / "transpose_conv" / "transpose_conv0.tflite"
    if not path.exists():
        pytest.skip(f"{path} is missing")
    (shape_t, x_t), _ = tflite_file.inputs_and_outputs(path.read_bytes())
    shape = read_csv(path.parent / "transpose_conv0_input0_int32.csv", "int32")
    x = np.zeros(x_t["shape"], np.int16)
    run_model(path, [shape, x])
    wrong = shape.copy()
    wrong[2] += 1
    with pytest.raises(anvil.UserError, match="operator 0"):
        run_model(path, [wrong, x])
