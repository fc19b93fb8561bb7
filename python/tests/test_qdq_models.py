"""QDQ ONNX models (tests/qdq_quantizer.py's static quantization of models exported from
PyTorch) computed in integers: fake_quantization_to_integer turns their dequantize -> float op ->
quantize regions into QNN ops, and the result stays within one quantization step of the QDQ
model's float semantics (the same model compiled at opt_level 0, where the pass does not run)
on >= 99 % of elements, with the same top-1."""
import io

import numpy as np
import onnx
import pytest
import torch
import torch.nn as nn

import anvil
from anvil import frontend
from qdq_quantizer import quantize_qdq


class SmallCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, stride=2, padding=1)
        self.conv2 = nn.Conv2d(16, 16, 3, padding=1, groups=2)
        self.conv3 = nn.Conv2d(16, 8, 1)
        self.fc = nn.Linear(24 * 4, 10)

    def forward(self, x):
        x = torch.relu(self.conv1(x))
        y = self.conv2(x)
        x = torch.relu(x + y)
        z = torch.clamp(self.conv3(x), 0, 6)
        x = torch.cat([nn.functional.max_pool2d(x, 2), nn.functional.avg_pool2d(z, 2)], 1)
        x = nn.functional.adaptive_avg_pool2d(x, 2)
        return self.fc(torch.flatten(x, 1))


def export(model, shape):
    torch.manual_seed(0)
    f = io.BytesIO()
    torch.onnx.export(model.eval(), torch.randn(*shape), f, input_names=["x"],
                      output_names=["y"], opset_version=13)
    return onnx.load_from_string(f.getvalue())


def run(model, x, opt_level):
    mod, params = frontend.from_onnx(model)
    with anvil.PassContext(opt_level=opt_level):
        lib = anvil.build(mod, target="llvm", params=params)
    m = anvil.runtime.GraphModule(lib["default"](anvil.cpu()))
    m.run(x=x)
    return m.get_output(0).numpy()


def output_step(model):
    """The scale of the model's last QuantizeLinear (its output's quantization step)."""
    last = [n for n in model.graph.node if n.op_type == "QuantizeLinear"][-1]
    inits = {i.name: onnx.numpy_helper.to_array(i) for i in model.graph.initializer}
    return float(inits[last.input[1]])


@pytest.mark.parametrize("per_channel", [True, False])
def test_qdq_cnn_runs_in_integers_within_one_step(per_channel):
    shape = (2, 3, 18, 18)
    rng = np.random.default_rng(0)
    calibration = [{"x": rng.standard_normal(shape).astype(np.float32)} for _ in range(4)]
    qdq = quantize_qdq(export(SmallCnn(), shape), calibration, per_channel=per_channel)
    mod, _ = frontend.from_onnx(qdq)
    text = anvil.transform.FakeQuantizationToInteger()(mod).astext()
    assert text.count("qnn.conv2d(") == 3 and "nn.conv2d(" not in text.replace("qnn.conv2d", "")
    for op in ("qnn.dense(", "qnn.concatenate(", "qnn.avg_pool2d(", "nn.max_pool2d(%"):
        assert op in text, op
    assert "qnn.add(" not in text  # adds stay in floats (the pass says why)
    step = output_step(qdq)
    for seed in range(3):
        x = np.random.default_rng(10 + seed).standard_normal(shape).astype(np.float32)
        want = run(qdq, x, 0)  # QDQ in floats: the model's exact semantics
        got = run(qdq, x, 3)
        close = np.abs(got - want) <= step * 1.001
        assert close.mean() >= 0.99, (close.mean(), np.abs(got - want).max() / step)
        np.testing.assert_array_equal(got.argmax(1), want.argmax(1))


def partitioned_for_dnnl(qdq, target=None):
    """The text of `qdq` imported and partitioned for oneDNN (TVM's partition_for_dnnl
    sequence), its int8 layers checked for `target` (the host when None)."""
    mod, _ = frontend.from_onnx(qdq)
    mod = anvil.transform.FakeQuantizationToInteger()(mod)
    table = anvil.transform.get_pattern_table("dnnl", target)
    for p in (anvil.transform.MergeComposite(table), anvil.transform.AnnotateTarget("dnnl"),
              anvil.transform.MergeCompilerRegions(), anvil.transform.PartitionGraph()):
        mod = p(mod)
    return mod.astext()


def test_qdq_cnn_int8_layers_offload_to_onednn():
    """The int8 convolutions and the dense layer become dnnl.qnn.* composites, and the model
    built for "dnnl, llvm" computes what it computes natively within one output step. Its
    weights keep to 7 bits, which oneDNN sums exactly on every x86 CPU."""
    shape = (2, 3, 18, 18)
    rng = np.random.default_rng(1)
    calibration = [{"x": rng.standard_normal(shape).astype(np.float32)} for _ in range(4)]
    qdq = quantize_qdq(export(SmallCnn(), shape), calibration, per_channel=True,
                       reduce_range=True)
    text = partitioned_for_dnnl(qdq)
    assert text.count('Composite="dnnl.qnn.conv2d"') == 3, text
    assert text.count('Composite="dnnl.qnn.dense"') == 1, text

    def build(target, x):
        m, params = frontend.from_onnx(qdq)
        with anvil.PassContext(opt_level=3):
            lib = anvil.build(m, target=target, params=params)
        g = anvil.runtime.GraphModule(lib["default"](anvil.cpu()))
        g.run(x=x)
        return g.get_output(0).numpy()

    step = output_step(qdq)
    x = np.random.default_rng(7).standard_normal(shape).astype(np.float32)
    want, got = build("llvm", x), build("dnnl, llvm", x)
    assert np.abs(got - want).max() <= step * 1.001
    np.testing.assert_array_equal(got.argmax(1), want.argmax(1))


def test_qdq_cnn_8_bit_weights_offload_only_for_cpus_with_vnni():
    """Full 8-bit weights: oneDNN's kernels for x86 CPUs without VNNI would saturate their sums,
    so the pattern table keeps those layers native for such a target (the enclosing one, or
    the argument), and offloads them for CPUs with VNNI."""
    shape = (1, 3, 18, 18)
    rng = np.random.default_rng(2)
    calibration = [{"x": rng.standard_normal(shape).astype(np.float32)} for _ in range(2)]
    qdq = quantize_qdq(export(SmallCnn(), shape), calibration, per_channel=True)
    with anvil.target.Target("llvm -mcpu=x86-64-v3"):
        assert "dnnl.qnn" not in partitioned_for_dnnl(qdq)
    text = partitioned_for_dnnl(qdq, "llvm -mcpu=znver4")
    assert text.count('Composite="dnnl.qnn.conv2d"') == 3, text
    assert text.count('Composite="dnnl.qnn.dense"') == 1, text
