"""Every torchvision family through the PyTorch importer (traced) and through ONNX (the same
network exported with torch.onnx.export, opset 13), each compared with PyTorch eager: max abs
error <= 1e-3 * max |reference| + 1e-4 and the same top-1 class.

The CI set has one network per family; ANVIL_TORCHVISION_ALL=1 (scripts/test.sh --full) runs
every network torchvision 0.14 ships.
"""
import io
import os

import numpy as np
import pytest
import torch

from anvil import frontend
from pt_check import assert_close, import_module, run_anvil
from torchvision_zoo import CLASSIFICATION, SEGMENTATION, OutputOf, make

ALL = os.environ.get("ANVIL_TORCHVISION_ALL", "") in ("1", "true")


def _selected(table):
    return [(name, size) for name, size, ci in table if ci or ALL]


def _reference(model, x):
    with torch.no_grad():
        out = model(x)
    outs = out if isinstance(out, tuple) else (out,)
    return [o.numpy() for o in outs]


def _check(actual, expected, what, top1=True):
    assert_close(actual, expected, what)
    if top1:
        assert actual[0].reshape(-1).argmax() == expected[0].reshape(-1).argmax(), \
            f"{what}: top-1 differs"


def _via_pytorch(model, x, mode="trace"):
    with torch.no_grad():
        scripted = torch.jit.trace(model, x) if mode == "trace" else torch.jit.script(model)
    mod, params = import_module(scripted, [x])
    return run_anvil(mod, params, [x])


def _via_onnx(model, x):
    buffer = io.BytesIO()
    # Not under no_grad: there nn.MultiheadAttention takes its fused fast path
    # (aten::_native_multi_head_attention), which torch.onnx cannot export.
    try:
        torch.onnx.export(model, (x,), buffer, opset_version=13, input_names=["input0"])
    except torch.onnx.errors.UnsupportedOperatorError as e:
        # PyTorch's exporter, not Anvil: Debian's torch 1.13 cannot export Swin V2 (aten::zero).
        pytest.skip(f"torch.onnx cannot export this network: {e}")
    mod, params = frontend.from_onnx(buffer.getvalue())
    return run_anvil(mod, params, [x])


@pytest.mark.parametrize("name,size", _selected(CLASSIFICATION))
def test_classification_from_pytorch(name, size):
    model, x = make(name, size)
    _check(_via_pytorch(model, x), _reference(model, x), f"{name} (TorchScript)")


@pytest.mark.parametrize("name,size", _selected(CLASSIFICATION))
def test_classification_from_onnx_export(name, size):
    model, x = make(name, size)
    _check(_via_onnx(model, x), _reference(model, x), f"{name} (ONNX)")


@pytest.mark.parametrize("name,size", _selected(SEGMENTATION))
def test_segmentation_from_pytorch(name, size):
    model, x = make(name, size, segmentation=True)
    model = OutputOf(model).eval()
    _check(_via_pytorch(model, x), _reference(model, x), f"{name} (TorchScript)", top1=False)


@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v3_small", "googlenet"])
def test_scripted_networks(name):
    model, x = make(name, 224)
    _check(_via_pytorch(model, x, mode="script"), _reference(model, x), f"{name} (scripted)")
