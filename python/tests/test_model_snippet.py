"""The issue's first snippet, exactly as written, on ResNet-18 (when present) and MobileNet-v2."""
import os
import pathlib

import numpy as np
import pytest

import anvil
from anvil import frontend

SOURCE_DIR = pathlib.Path(os.environ.get("ANVIL_SOURCE_DIR",
                                         pathlib.Path(__file__).resolve().parents[2]))
MODELS = {
    "resnet18": pathlib.Path("/work/shared/models/resnet18"),
    "mobilenet_v2": SOURCE_DIR / "models" / "mobilenet_v2",
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_snippet(name, tmp_path, monkeypatch, capsys):
    model_dir = MODELS[name]
    if not (model_dir / "model.onnx").exists():
        pytest.skip(f"{model_dir} is absent")
    # The snippet names "resnet18/model.onnx" and "resnet18.so" relative to the working directory.
    (tmp_path / "resnet18").symlink_to(model_dir)
    monkeypatch.chdir(tmp_path)

    # ---- the snippet, as written ----
    import anvil, numpy as np, onnx  # noqa: F811
    from anvil import frontend, te, graph  # noqa: F401

    model = onnx.load("resnet18/model.onnx")
    mod, params = frontend.from_onnx(model, shape={"input": (1, 3, 224, 224)})   # a path works too
    print(mod)                                   # the graph IR text, with types
    with anvil.PassContext(opt_level=3, disabled_pass=["fold_scale_axis"]):
        lib = anvil.build(mod, target="llvm -mcpu=native", params=params)
    lib.export_library("resnet18.so")
    dev = anvil.cpu(0)
    m = anvil.runtime.GraphModule(anvil.runtime.load_module("resnet18.so")["default"](dev))
    m.set_input("input", np.random.rand(1, 3, 224, 224).astype("float32"))
    m.run()
    out = m.get_output(0).numpy()
    print(m.benchmark(dev, repeat=10))            # median/mean/std in ms
    # ---- end of the snippet ----

    text = capsys.readouterr().out
    assert "def @main(%input: Tensor[(1, 3, 224, 224), float32])" in text
    assert "/* ty=Tensor[" in text
    assert "median (ms)" in text
    assert out.shape == (1, 1000)

    # Against the ONNX reference output.
    data = model_dir / "test_data_set_0"
    m.set_input("input", frontend.read_tensor_pb(data / "input_0.pb").numpy())
    m.run()
    expected = frontend.read_tensor_pb(data / "output_0.pb").numpy()
    np.testing.assert_allclose(m.get_output(0).numpy(), expected, rtol=1e-3, atol=1e-3)

    result = m.benchmark(dev, repeat=3)
    assert result.min <= result.median <= result.max and result.std >= 0 and result.mean > 0


def test_from_path_and_in_memory_run():
    path = MODELS["mobilenet_v2"] / "model.onnx"
    mod, params = frontend.from_onnx(str(path), shape={"input": (1, 3, 224, 224)})
    assert params == {}
    lib = anvil.build(mod, target="llvm", params=params)
    m = anvil.runtime.GraphModule(lib["default"](anvil.cpu(0)))
    assert m.get_num_inputs() == 1 and m.get_num_outputs() == 1
    x = frontend.read_tensor_pb(path.parent / "test_data_set_0" / "input_0.pb")
    m.run(input=x)
    expected = frontend.read_tensor_pb(path.parent / "test_data_set_0" / "output_0.pb").numpy()
    np.testing.assert_allclose(m.get_output(0).numpy(), expected, rtol=1e-3, atol=1e-3)
