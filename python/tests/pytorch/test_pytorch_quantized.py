"""Quantized PyTorch models (torch.ao.quantization, eager mode, the qnnpack and onednn engines of
Debian's torch) through from_pytorch onto the QNN dialect, against PyTorch's own integer
kernels: outputs within one quantization step on at least 99 % of elements, the same top-1."""
import numpy as np
import pytest
import torch
import torch.ao.quantization as tq
import torch.nn as nn

import anvil
from pt_check import import_module, run_anvil
from pt_graph_edit import constant_of, describe, import_description, nodes_of_kind

ENGINES = [e for e in ("qnnpack", "onednn") if e in torch.backends.quantized.supported_engines]


def cpu_has_vnni():
    """Whether this CPU has VNNI or AMX. Without them oneDNN's int8 kernels (the onednn engine's)
    add pairs of uint8 x int8 products in int16 with saturation, which 7-bit activations avoid."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = set(f.read().split())
    except OSError:
        return False
    return bool(flags & {"avx512_vnni", "avx_vnni", "amx_int8"})


def qconfig_backend(engine):
    """The backend whose default qconfigs quantize for `engine` here: onednn's own (8-bit
    activations) where its kernels sum exactly, else x86's (7-bit activations, reduce_range, as
    PyTorch quantizes for fbgemm on such CPUs), so that PyTorch's results are exact as Anvil's
    are."""
    return "x86" if engine == "onednn" and not cpu_has_vnni() else engine


def quantized(model, engine, example_shape, calibrate=8, fuse=()):
    """`model` (with QuantStub / DeQuantStub) quantized statically for `engine`: per-tensor
    weights on qnnpack, per-channel on onednn, calibrated on random inputs."""
    torch.backends.quantized.engine = engine
    torch.manual_seed(0)
    model = model.eval()
    if fuse:
        tq.fuse_modules(model, list(fuse), inplace=True)
    model.qconfig = tq.get_default_qconfig(qconfig_backend(engine))
    tq.prepare(model, inplace=True)
    with torch.no_grad():
        for _ in range(calibrate):
            model(torch.randn(*example_shape))
    tq.convert(model, inplace=True)
    return model


def compare(model, x, out_scale=None):
    """Imports the traced model, runs both, and checks Anvil against PyTorch: within one output
    step (out_scale, when the output is dequantized) on >= 99 % of elements, the same argmax."""
    traced = torch.jit.trace(model, x)
    mod, params = import_module(traced, [x])
    got, = run_anvil(mod, params, [x])
    with torch.no_grad():
        want = model(x).numpy()
    assert got.shape == want.shape and got.dtype == want.dtype
    step = out_scale if out_scale is not None else 1e-6
    close = np.abs(got.astype(np.float64) - want) <= step * 1.001 + 1e-6
    assert close.mean() >= 0.99, (close.mean(), np.abs(got - want).max(), step)
    np.testing.assert_array_equal(got.reshape(got.shape[0], -1).argmax(1),
                                  want.reshape(want.shape[0], -1).argmax(1))
    return mod


class ConvNet(nn.Module):
    """Convolutions (strided, grouped, with and without fused relu), add / add_relu, cat,
    pooling, mean and a linear layer: what torchvision's quantized CNNs are made of."""

    def __init__(self):
        super().__init__()
        self.quant = tq.QuantStub()
        self.conv1 = nn.Conv2d(3, 16, 3, stride=2, padding=1)
        self.relu1 = nn.ReLU()
        self.conv2 = nn.Conv2d(16, 16, 3, padding=1, groups=4)
        self.conv3 = nn.Conv2d(16, 8, 1)
        self.pool = nn.MaxPool2d(2)
        self.add = torch.ao.nn.quantized.FloatFunctional()
        self.add_relu = torch.ao.nn.quantized.FloatFunctional()
        self.cat = torch.ao.nn.quantized.FloatFunctional()
        self.fc = nn.Linear(24, 10)
        self.dequant = tq.DeQuantStub()

    def forward(self, x):
        x = self.relu1(self.conv1(self.quant(x)))
        y = self.conv2(x)
        x = self.add_relu.add_relu(x, y)
        x = self.add.add(x, y)
        z = self.conv3(x)
        x = self.cat.cat([self.pool(x)[:, :16], self.pool(z)], dim=1)
        x = torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1)
        return self.dequant(self.fc(x))


@pytest.mark.parametrize("engine", ENGINES)
def test_static_quantized_cnn(engine):
    shape = (2, 3, 19, 17)
    model = quantized(ConvNet(), engine, shape, fuse=[["conv1", "relu1"]])
    mod = compare(model, torch.randn(*shape), out_scale=model.fc.scale)
    text = mod.astext()
    for op in ("qnn.quantize", "qnn.conv2d", "qnn.requantize", "qnn.add", "qnn.concatenate",
               "qnn.dense", "qnn.dequantize"):
        assert op in text, op


def test_weights_per_channel_keep_their_scales():
    if "onednn" not in ENGINES:
        pytest.skip("no onednn engine in this torch")
    model = quantized(ConvNet(), "onednn", (1, 3, 8, 8))
    assert model.conv2.weight().qscheme() == torch.per_channel_affine
    mod = compare(model, torch.randn(1, 3, 8, 8), out_scale=model.fc.scale)
    assert "axis=0" in mod.astext()


class Functional(nn.Module):
    """quantize_per_tensor / quantize_per_channel / dequantize written out, quantized::mul and
    int_repr, q_scale and q_zero_point."""

    def forward(self, x):
        q = torch.quantize_per_tensor(x, 0.05, 120, torch.quint8)
        c = torch.quantize_per_channel(x, torch.tensor([0.02, 0.04, 0.08]),
                                       torch.tensor([0, 3, -2]), 1, torch.qint8)
        m = torch.ops.quantized.mul(q, q, 0.1, 10)
        r = torch.relu(q)  # a float op on a quantized tensor: it keeps q's scale
        return (m.dequantize(), c.dequantize(), q.int_repr(), r.dequantize(),
                torch.tensor(q.q_scale()) * q.q_zero_point())


def test_quantize_dequantize_and_integer_views():
    torch.backends.quantized.engine = ENGINES[0]
    x = torch.randn(2, 3, 5) * 3
    traced = torch.jit.trace(Functional(), x)
    mod, params = import_module(traced, [x])
    got = run_anvil(mod, params, [x])
    want = [w.numpy() for w in Functional()(x)]
    steps = [0.1, np.array([0.02, 0.04, 0.08]).reshape(1, 3, 1), 1, 0.05, 0]
    for g, w, s in zip(got, want, steps):
        assert g.shape == w.shape and g.dtype == w.dtype
        assert np.all(np.abs(g.astype(np.float64) - w) <= np.asarray(s) * 1.001 + 1e-6)


class FixedOutputs(nn.Module):
    """sigmoid, hardsigmoid and tanh of a quantized tensor, with PyTorch's fixed output scales."""

    def forward(self, x):
        q = torch.quantize_per_tensor(x, 0.05, 100, torch.quint8)
        return (torch.sigmoid(q).int_repr(), torch.tanh(q).int_repr(),
                torch.nn.functional.hardsigmoid(q).int_repr())


def test_fixed_output_scales():
    torch.backends.quantized.engine = ENGINES[0]
    x = torch.randn(2, 3, 5) * 3
    traced = torch.jit.trace(FixedOutputs(), x)
    mod, params = import_module(traced, [x])
    got = run_anvil(mod, params, [x])
    for g, w in zip(got, FixedOutputs()(x)):
        w = w.numpy()
        assert g.dtype == w.dtype and np.abs(g.astype(int) - w.astype(int)).max() <= 1


class PerChannelSlice(nn.Module):
    def forward(self, x):
        c = torch.quantize_per_channel(x, torch.tensor([0.02, 0.04, 0.08]),
                                       torch.tensor([0, 3, -2]), 1, torch.qint8)
        return c[:, 1:].dequantize()


def test_ops_on_per_channel_tensors_are_refused():
    x = torch.randn(2, 3, 5)
    with pytest.raises(anvil.UserError, match="quantized per channel is not supported"):
        import_module(torch.jit.trace(PerChannelSlice(), x), [x])


class LinearRelu(nn.Module):
    def __init__(self):
        super().__init__()
        self.quant = tq.QuantStub()
        self.fc = nn.Linear(12, 9)
        self.relu = nn.ReLU()
        self.dequant = tq.DeQuantStub()

    def forward(self, x):
        q = self.relu(self.fc(self.quant(x)))
        if q.is_quantized:  # (calibration runs in floats)
            q = torch.ops.quantized.mul_relu(q, q, 0.02, 3)
        return self.dequant(q)


@pytest.mark.parametrize("engine", ENGINES)
def test_linear_relu_and_mul_relu(engine):
    # quantized::linear_relu (fused by fuse_modules) and quantized::mul_relu.
    model = quantized(LinearRelu(), engine, (4, 12), fuse=[["fc", "relu"]])
    x = torch.randn(4, 12)
    traced = torch.jit.trace(model, x)
    kinds = {n.kind() for n in traced.inlined_graph.nodes()}
    assert {"quantized::linear_relu", "quantized::mul_relu"} <= kinds
    compare(model, x, out_scale=0.02)


class Dynamic(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(12, 20)
        self.fc2 = nn.Linear(20, 5)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


@pytest.mark.parametrize("engine", ENGINES)
def test_dynamic_quantized_linear(engine):
    torch.backends.quantized.engine = engine
    torch.manual_seed(1)
    model = tq.quantize_dynamic(Dynamic().eval(), {nn.Linear}, dtype=torch.qint8)
    x = torch.randn(3, 7, 12)
    traced = torch.jit.trace(model, x)
    mod, params = import_module(traced, [x])
    assert "qnn.dense" in mod.astext()
    got, = run_anvil(mod, params, [x])
    with torch.no_grad():
        want = model(x).numpy()
    # Run-time input scales: each dense layer's error is a few input steps of the accumulator.
    assert np.abs(got - want).max() <= 0.02 * np.abs(want).max() + 1e-3


def test_quantized_errors():
    torch.backends.quantized.engine = ENGINES[0]

    class PerChannelActivation(nn.Module):
        def forward(self, x):
            q = torch.quantize_per_channel(x, torch.tensor([0.1, 0.2]), torch.tensor([0, 0]), 0,
                                           torch.quint8)
            return torch.ops.quantized.add(q, q, 0.1, 0).dequantize()

    # Scripted, not traced: PyTorch itself refuses these when they run.
    x = torch.randn(2, 3)
    with pytest.raises(anvil.UserError, match="quantized per channel"):
        import_module(torch.jit.script(PerChannelActivation()), [x])

    class BadZeroPoint(nn.Module):
        def forward(self, x):
            return torch.quantize_per_tensor(x, 0.1, 300, torch.quint8).dequantize()

    with pytest.raises(anvil.UserError, match="zero point in \\[0, 255\\]"):
        import_module(torch.jit.script(BadZeroPoint()), [x])

    class NotQuantized(nn.Module):
        def forward(self, x):
            return torch.ops.quantized.add(x, x, 0.1, 0)

    with pytest.raises(anvil.UserError, match="operand 0 must be a quantized tensor"):
        import_module(torch.jit.script(NotQuantized()), [x])

    # The tensor_qparams form (FX graph mode): one value each, the zero point an integer.
    class TensorParams(nn.Module):
        def __init__(self, scale, zero_point):
            super().__init__()
            self.register_buffer("scale", scale)
            self.register_buffer("zero_point", zero_point)

        def forward(self, x):
            return torch.quantize_per_tensor(x, self.scale, self.zero_point,
                                             torch.quint8).dequantize()

    # Scripted, so that PyTorch never runs them.
    two = TensorParams(torch.tensor([0.1, 0.2]), torch.tensor(3))
    with pytest.raises(anvil.UserError,
                       match="the scale of a per-tensor quantization must be one value, got 2"):
        import_module(torch.jit.script(two), [x])
    fractional = TensorParams(torch.tensor(0.1), torch.tensor(2.5))
    with pytest.raises(anvil.UserError, match="the zero point must be an integer, got 2.5"):
        import_module(torch.jit.script(fractional), [x])


class OneConv(nn.Module):
    def __init__(self):
        super().__init__()
        self.quant = tq.QuantStub()
        self.conv = nn.Conv2d(3, 4, 3)
        self.dequant = tq.DeQuantStub()

    def forward(self, x):
        return self.dequant(self.conv(self.quant(x)))


def edited_conv(edit):
    """A quantized convolution's description with its packed parameters edited by `edit`; the
    error importing it."""
    model = quantized(OneConv(), ENGINES[0], (1, 3, 6, 6))
    x = torch.randn(1, 3, 6, 6)
    description, tensors = describe(torch.jit.trace(model, x))
    conv = nodes_of_kind(description, "quantized::conv2d")[0]
    edit(constant_of(description, conv["inputs"][1])["value"]["tuple"], tensors)
    with pytest.raises(anvil.UserError) as e:
        import_description(description, tensors, [x])
    return str(e.value)


def test_quantized_layer_errors():
    def transposed(items, tensors):
        items[6] = {"bool": True}

    assert "quantized transposed convolutions are not supported" in edited_conv(transposed)

    def scales_of_another_axis(items, tensors):
        items[0]["quantized"] = {"scales": [0.1, 0.2], "zero_points": [0, 0], "axis": 0}

    assert "has 2 scales along axis 0" in edited_conv(scales_of_another_axis)

    def zero_point_out_of_range(items, tensors):
        items[0]["quantized"]["zero_points"] = [200]

    assert "zero point 200, outside the range of int8" in edited_conv(zero_point_out_of_range)

    def negative_scale(items, tensors):
        items[0]["quantized"]["scales"] = [-0.5]

    assert "a scale must be a positive finite number" in edited_conv(negative_scale)

    def not_packed(items, tensors):
        del items[0]["quantized"]

    assert "must be the layer's packed parameters" in edited_conv(not_packed)

    def transposed_unknown(items, tensors):
        items[6] = {"int": 1}

    assert "do not say whether the convolution is transposed" in edited_conv(transposed_unknown)

    def more_zero_points(items, tensors):
        items[0]["quantized"] = {"scales": [0.1], "zero_points": [0, 0], "axis": -1}

    assert "as many scales as zero points" in edited_conv(more_zero_points)

    def axis_beyond_rank(items, tensors):
        items[0]["quantized"]["axis"] = 5

    assert "has 4 dimensions, its scales run along axis 5" in edited_conv(axis_beyond_rank)

    def float_weight(items, tensors):
        name = items[0]["tensor"]
        tensors[name] = tensors[name].astype("float32")
        items[0]["dtype"] = "float32"

    assert "holds float32 integers" in edited_conv(float_weight)

    def one_stride(items, tensors):
        items[2] = {"list": [{"int": 1}]}

    assert "the strides must have two values" in edited_conv(one_stride)

    def flat_weight(items, tensors):
        name = items[0]["tensor"]
        tensors[name] = tensors[name].reshape(4, 27)

    assert "the weight must be 4-D" in edited_conv(flat_weight)

    def weight_along_axis_1(items, tensors):
        items[0]["quantized"] = {"scales": [0.1, 0.2, 0.1], "zero_points": [0, 0, 0], "axis": 1}

    assert "quantized along axis 1" in edited_conv(weight_along_axis_1)

    def quantized_bias(items, tensors):
        items[1] = dict(items[0])

    assert "the layer's bias must be a float tensor" in edited_conv(quantized_bias)


def test_quantized_operand_errors():
    class FloatDtype(nn.Module):
        def forward(self, x):
            return torch.quantize_per_tensor(x, 0.1, 0, torch.float).dequantize()

    x = torch.randn(2, 3)
    with pytest.raises(anvil.UserError, match="quantization to the ScalarType 6 is not supported"):
        import_module(torch.jit.script(FloatDtype()), [x])

    class BadOutputScale(nn.Module):
        def forward(self, x):
            q = torch.quantize_per_tensor(x, 0.1, 0, torch.quint8)
            return torch.ops.quantized.add(q, q, -1.0, 0).dequantize()

    with pytest.raises(anvil.UserError, match="output scale -1 and zero point 0 do not quantize"):
        import_module(torch.jit.script(BadOutputScale()), [x])

    class IntReprOfFloat(nn.Module):
        def forward(self, x):
            return x.int_repr()

    with pytest.raises(anvil.UserError, match="operand 0 must be a quantized tensor"):
        import_module(torch.jit.script(IntReprOfFloat()), [x])

    class NegativeChannelScale(nn.Module):
        def forward(self, x):
            return torch.quantize_per_channel(x, torch.tensor([0.1, -0.2, 0.1]),
                                              torch.zeros(3, dtype=torch.long), 1,
                                              torch.qint8).dequantize()

    with pytest.raises(anvil.UserError, match="the scale -0.2 is not positive"):
        import_module(torch.jit.script(NegativeChannelScale()), [x])

    class ChannelZeroPointOutOfRange(nn.Module):
        def forward(self, x):
            return torch.quantize_per_channel(x, torch.tensor([0.1, 0.2, 0.1]),
                                              torch.tensor([0, 200, 0]), 1,
                                              torch.qint8).dequantize()

    with pytest.raises(anvil.UserError, match="the zero point 200 is outside the range of int8"):
        import_module(torch.jit.script(ChannelZeroPointOutOfRange()), [x])

    class ChannelScalesFromInput(nn.Module):
        def forward(self, x, s):
            return torch.quantize_per_channel(x, s, torch.zeros(3, dtype=torch.long), 1,
                                              torch.qint8).dequantize()

    with pytest.raises(anvil.UserError, match="the scales must be a constant"):
        import_module(torch.jit.script(ChannelScalesFromInput()), [x, torch.ones(3)])


class FxNet(nn.Module):
    """A plain float model (no stubs, no FloatFunctional): FX graph mode quantization rewrites
    it, residual add, hardswish and the classifier included."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, stride=2, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 16, 3, padding=1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = torch.relu(self.bn1(self.conv1(x)))
        x = x + torch.relu(self.conv2(x))
        x = nn.functional.hardswish(x)
        x = torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1)
        return self.fc(x)


@pytest.mark.parametrize("engine", ENGINES)
def test_fx_graph_mode_quantization(engine):
    """torch.ao.quantization.quantize_fx: prepare_fx, calibration, convert_fx, then TorchScript."""
    from torch.ao.quantization import quantize_fx
    torch.backends.quantized.engine = engine
    torch.manual_seed(0)
    model = FxNet().eval()
    x = torch.randn(2, 3, 16, 16)
    qconfig_mapping = tq.get_default_qconfig_mapping(qconfig_backend(engine))
    prepared = quantize_fx.prepare_fx(model, qconfig_mapping, example_inputs=(x,))
    with torch.no_grad():
        for _ in range(8):
            prepared(torch.randn(2, 3, 16, 16))
    quantized_model = quantize_fx.convert_fx(prepared)
    text = compare(quantized_model, x, out_scale=fx_output_scale(quantized_model)).astext()
    assert "qnn.conv2d" in text


def fx_output_scale(model):
    """The scale of the quantize before the FX model's final dequantize (its last linear's)."""
    return float(model.fc.scale)


@pytest.mark.parametrize("engine", ENGINES)
def test_quantization_aware_training(engine):
    """Eager-mode QAT: fused conv-bn-relu with fake quantization, a few training steps, convert."""
    torch.backends.quantized.engine = engine
    torch.manual_seed(0)
    model = ConvNet()
    model.train()
    tq.fuse_modules_qat(model, [["conv1", "relu1"]], inplace=True)
    model.qconfig = tq.get_default_qat_qconfig(qconfig_backend(engine))
    tq.prepare_qat(model, inplace=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(4):
        optimizer.zero_grad()
        loss = model(torch.randn(4, 3, 16, 16)).square().mean()
        loss.backward()
        optimizer.step()
    model.eval()
    tq.convert(model, inplace=True)
    text = compare(model, torch.randn(2, 3, 16, 16), out_scale=float(model.fc.scale)).astext()
    assert "qnn.conv2d" in text


@pytest.mark.parametrize("op", ["hardswish", "sigmoid"])
def test_quantized_hardswish_and_sigmoid_ops(op):
    torch.backends.quantized.engine = ENGINES[0]

    class Unary(nn.Module):
        def forward(self, x):
            q = torch.quantize_per_tensor(x, 0.05, 128, torch.quint8)
            f = getattr(torch.ops.quantized, op)
            return f(q, 1.0 / 256 if op == "sigmoid" else 0.03, 0 if op == "sigmoid" else 100)\
                .dequantize()

    x = torch.randn(2, 3, 7, 5) * 3
    mod = compare(Unary(), x, out_scale=1.0 / 256 if op == "sigmoid" else 0.03)
    assert f"qnn.{op}" in mod.astext()
