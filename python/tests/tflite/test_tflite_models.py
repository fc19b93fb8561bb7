"""The real TFLite models of ../shared/models/tflite (its README says where they come from and
what each checks), imported with anvil.frontend.from_tflite, compiled and run, against what they
should compute and against the TFLite runtime (litert.py).

The runtime computes int8 convolutions and fully connected layers with XNNPACK, which rescales
their sums in float32; imported with rounding="XNNPACK" Anvil does the same and must match it
bit for bit. The default rounding ("TFLITE", TFLite's reference kernels: test_tflite_seanet.py
holds it to their goldens) may differ from it by a step here and there."""
import os
import pathlib

import numpy as np
import pytest

import anvil
from anvil import frontend

import litert
import tflite_file

MODELS = pathlib.Path(os.environ.get("ANVIL_TFLITE_MODELS",
                                     pathlib.Path(__file__).resolve().parents[4] / "shared" /
                                     "models" / "tflite"))


def model_path(name):
    path = MODELS / name
    if not path.exists():
        pytest.skip(f"{path} is missing (the shared TFLite models, ../shared/models/tflite)")
    return path


def compile_model(path, **kwargs):  # kwargs: from_tflite's
    mod, params = frontend.from_tflite(path, **kwargs)
    with anvil.PassContext(opt_level=3):
        lib = anvil.build(mod, target="llvm", params=params)
    return anvil.runtime.VirtualMachine(lib)


def run(vm, *inputs):
    out = vm["main"](*inputs)
    if isinstance(out, (tuple, list)):
        return [o.numpy() for o in out]
    return [out.numpy()]


def bmp_pixels(path):
    """The pixels of an 8-bit grayscale BMP, top row first (a BMP stores the bottom row first
    when its height is positive)."""
    data = path.read_bytes()
    offset = int.from_bytes(data[10:14], "little")
    width = int.from_bytes(data[18:22], "little", signed=True)
    height = abs(int.from_bytes(data[22:26], "little", signed=True))
    assert int.from_bytes(data[28:30], "little") == 8, f"{path} is not an 8-bit BMP"
    row = (width + 3) // 4 * 4
    rows = np.frombuffer(data, np.uint8, count=row * height, offset=offset).reshape(height, row)
    rows = rows[:, :width]
    return rows[::-1] if int.from_bytes(data[22:26], "little", signed=True) > 0 else rows


@pytest.mark.parametrize("rounding", ["TFLITE", "XNNPACK"])
def test_person_detect_tells_person_from_no_person(rounding):
    path = model_path("person_detect.tflite")
    vm = compile_model(path, rounding=rounding)
    # The images' 8-bit pixels as int8, as upstream's test feeds them.
    images = {name: bmp_pixels(MODELS / "person_detect_testdata" / f"{name}.bmp")
              .view(np.int8).reshape(1, 96, 96, 1) for name in ("person", "no_person")}
    scores = {name: run(vm, x)[0] for name, x in images.items()}
    # Output [no person, person].
    assert scores["person"][0, 1] > scores["person"][0, 0], scores
    assert scores["no_person"][0, 0] > scores["no_person"][0, 1], scores
    if rounding == "XNNPACK":
        litert.require()
        reference = litert.run([(path.read_bytes(), [x]) for x in images.values()])
        for (name, got), want in zip(scores.items(), reference):
            np.testing.assert_array_equal(got, want[0], err_msg=name)


@pytest.mark.parametrize("name", ["hello_world_float.tflite", "hello_world_int8.tflite"])
def test_hello_world_approximates_sine(name):
    path = model_path(name)
    vm = compile_model(path, rounding="XNNPACK")
    xs = np.linspace(0, 2 * np.pi, 32, dtype=np.float32)
    int8 = "int8" in name
    if int8:
        (x_t,), (y_t,) = tflite_file.inputs_and_outputs(path.read_bytes())
        in_scale, in_zp = float(x_t["scale"][0]), int(x_t["zero_point"][0])
        out_scale, out_zp = float(y_t["scale"][0]), int(y_t["zero_point"][0])
        inputs = [np.clip(np.round(x / in_scale) + in_zp, -128, 127).astype(np.int8)
                  .reshape(1, 1) for x in xs]
    else:
        inputs = [np.array([[x]], np.float32) for x in xs]
    outputs = [run(vm, x)[0] for x in inputs]
    ys = np.array([(float(o[0, 0]) - out_zp) * out_scale if int8 else o[0, 0] for o in outputs])
    assert np.max(np.abs(ys - np.sin(xs))) < 0.15, ys
    litert.require()
    reference = litert.run([(path.read_bytes(), [x]) for x in inputs])
    for got, want in zip(outputs, reference):
        if int8:
            np.testing.assert_array_equal(got, want[0])
        else:
            np.testing.assert_allclose(got, want[0], rtol=1e-5, atol=1e-6)


def test_simple_add_matches_the_runtime():
    path = model_path("simple_add_model.tflite")
    vm = compile_model(path)  # ADD is not XNNPACK's there: TFLite's kernel, either rounding
    rng = np.random.default_rng(0)
    a, b = (rng.integers(-128, 128, (1, 128, 128, 1), dtype=np.int8) for _ in range(2))
    got = run(vm, a, b)
    litert.require()
    want = litert.run([(path.read_bytes(), [a, b])])[0]
    np.testing.assert_array_equal(got[0], want[0])


def test_micro_speech_matches_the_runtime():
    path = model_path("micro_speech_quantized.tflite")
    vm = compile_model(path, rounding="XNNPACK")
    rng = np.random.default_rng(1)
    xs = [rng.integers(-128, 128, (1, 1960), dtype=np.int8) for _ in range(4)]
    litert.require()
    reference = litert.run([(path.read_bytes(), [x]) for x in xs])
    for x, want in zip(xs, reference):
        np.testing.assert_array_equal(run(vm, x)[0], want[0])
