"""The walk-throughs in examples/python run (smaller sizes)."""
import importlib.util
import os
import pathlib

import numpy as np

SOURCE_DIR = pathlib.Path(os.environ.get("ANVIL_SOURCE_DIR",
                                         pathlib.Path(__file__).resolve().parents[2]))


def load(name):
    spec = importlib.util.spec_from_file_location(name, SOURCE_DIR / "examples" / "python" /
                                                  f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_import_build_run(capsys):
    err = load("import_build_run").main(SOURCE_DIR / "models" / "mobilenet_v2")
    assert err < 1e-3
    out = capsys.readouterr().out
    assert "def @main" in out and "median (ms)" in out


def test_te_matmul(capsys):
    results = load("te_matmul").main(64)
    assert set(results) == {"default", "tiled", "vectorized + parallel"}
    assert "prim_func main" in capsys.readouterr().out


def test_from_pytorch(capsys):
    """TVM's PyTorch tutorial: ResNet-18 traced, imported, built, run; same top-1 as PyTorch."""
    top1_anvil, top1_torch, out, ref = load("from_pytorch").main()
    assert float(np.abs(out - ref).max()) <= 1e-3 * float(np.abs(ref).max()) + 1e-4
    assert top1_anvil == top1_torch
    text = capsys.readouterr().out
    assert f"Anvil top-1 id: {top1_anvil}, class name: " in text
    assert f"PyTorch top-1 id: {top1_torch}, class name: " in text
