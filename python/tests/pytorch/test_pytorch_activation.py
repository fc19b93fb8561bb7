"""The PyTorch importer's activations and softmax: every torch.nn activation module, their
functional and in-place forms, against PyTorch eager, traced and scripted."""
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import anvil
from pt_check import check_module, import_module


def ramp(*shape, lo=-6.0, hi=6.0):
    """Values from lo to hi in the shape, exact thresholds included (0, +-0.5, +-1, 6 ...)."""
    n = 1
    for s in shape:
        n *= s
    return torch.linspace(lo, hi, n).reshape(shape)


X = ramp(2, 3, 5, 8)  # 240 values, step ~0.05: both sides of every threshold

MODULES = [
    nn.ReLU(), nn.ReLU6(), nn.LeakyReLU(), nn.LeakyReLU(0.2), nn.PReLU(), nn.PReLU(3, 0.3),
    nn.RReLU(), nn.RReLU(0.1, 0.5), nn.ELU(), nn.ELU(alpha=0.5), nn.SELU(), nn.CELU(),
    nn.CELU(alpha=2.0), nn.GELU(), nn.GELU(approximate="tanh"), nn.SiLU(), nn.Mish(),
    nn.Hardswish(), nn.Hardsigmoid(), nn.Hardtanh(), nn.Hardtanh(-2.0, 3.0), nn.Sigmoid(),
    nn.Tanh(), nn.Softplus(), nn.Softplus(beta=2.0, threshold=4.0), nn.Softsign(),
    nn.Softshrink(), nn.Softshrink(1.5), nn.Hardshrink(), nn.Hardshrink(1.0), nn.Tanhshrink(),
    nn.LogSigmoid(), nn.GLU(), nn.GLU(dim=0), nn.Softmin(dim=1), nn.Softmax(dim=1),
    nn.Softmax(dim=-1), nn.LogSoftmax(dim=1), nn.LogSoftmax(dim=-1), nn.Softmax2d(),
]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: repr(m))
def test_activation_module(module):
    torch.manual_seed(0)
    if isinstance(module, nn.PReLU):
        with torch.no_grad():
            module.weight.copy_(torch.rand(module.weight.shape) * 0.5)
    check_module(module, [X])


def test_threshold_traced():
    # TorchScript 1.13 cannot script nn.Threshold (its forward is typed with float thresholds
    # that script rejects), so it is traced only.
    check_module(nn.Threshold(0.5, 20.0), [X], modes=("trace",))
    check_module(nn.Threshold(-1.0, -3.0), [X], modes=("trace",))


def test_exact_thresholds():
    # Values exactly on each threshold: PyTorch's comparisons are strict.
    x = torch.tensor([-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 6.0, 20.0, 21.0])

    class M(nn.Module):
        def forward(self, x):
            return (F.hardshrink(x, 0.5), F.softshrink(x, 0.5), F.threshold(x, 1.0, -7.0),
                    F.hardtanh(x, -1.0, 1.0), F.relu6(x), F.softplus(x), F.softplus(x, 1.0, 1.0))

    check_module(M(), [x], modes=("trace",))


class Functional(nn.Module):
    def forward(self, x):
        return [
            F.relu(x), torch.relu(x), x.relu(), F.relu6(x), F.elu(x, 0.7), F.selu(x), F.celu(x, 0.5),
            F.leaky_relu(x, 0.3), F.gelu(x), F.gelu(x, approximate="tanh"), F.silu(x), F.mish(x),
            F.hardswish(x), F.hardsigmoid(x), F.hardtanh(x, -0.5, 0.5), torch.sigmoid(x),
            x.sigmoid(), torch.tanh(x), F.softplus(x, 0.5, 3.0), F.softsign(x),
            F.softshrink(x, 0.3), F.hardshrink(x, 0.3), F.tanhshrink(x), F.logsigmoid(x),
            F.glu(x, -1), F.rrelu(x, 0.2, 0.4, training=False),
        ]


def test_functional_forms():
    check_module(Functional(), [X])


class InPlace(nn.Module):
    def forward(self, x):
        a = x.clone()
        F.relu(a, inplace=True)
        b = x * 2
        b.sigmoid_()
        c = x + 1
        F.hardtanh(c, -0.5, 0.5, inplace=True)
        d = x - 1
        F.leaky_relu(d, 0.1, inplace=True)
        e = x * 3
        F.elu(e, inplace=True)
        f = x + 0.5
        F.silu(f, inplace=True)
        g = x - 0.5
        F.hardswish(g, inplace=True)
        h = x * 0.5
        h.tanh_()
        return a, b, c, d, e, f, g, h


def test_in_place_forms():
    check_module(InPlace(), [X])


def test_elu_scale_and_input_scale():
    class M(nn.Module):
        def forward(self, x):
            return torch.ops.aten.elu(x, 0.8, 1.5, 2.0), torch.ops.aten.elu(x, 1.2, 0.5, 1.0)

    check_module(M(), [X])


def test_prelu_on_low_rank_inputs():
    torch.manual_seed(1)
    check_module(nn.PReLU(), [ramp(7)])
    check_module(nn.PReLU(4, 0.1), [ramp(3, 4)])


def test_relu_and_hardtanh_of_integer_tensors():
    class M(nn.Module):
        def forward(self, x):
            return F.relu(x), F.hardtanh(x, -2.0, 3.0), torch.sigmoid(x)

    check_module(M(), [torch.arange(-5, 5).reshape(2, 5)])


class SoftmaxOverloads(nn.Module):
    def forward(self, x):
        return (F.softmax(x, dim=0), F.softmax(x, 1), x.softmax(-1), torch.softmax(x, 2),
                F.log_softmax(x, dim=1), x.log_softmax(-1), F.softmin(x, dim=2),
                F.softmax(x, dim=1, dtype=torch.float64), torch.log_softmax(x, 0, torch.float64))


def test_softmax_overloads():
    torch.manual_seed(0)
    check_module(SoftmaxOverloads(), [torch.randn(3, 4, 5) * 4])


def test_traced_internal_softmax():
    class M(nn.Module):
        def forward(self, x):
            return torch._softmax(x, 1, False), torch._log_softmax(x, -1, False)

    check_module(M(), [torch.randn(2, 6)], modes=("trace",))


def test_softmax_with_symbolic_batch():
    torch.manual_seed(0)
    check_module(nn.Sequential(nn.Softmax(dim=-1)), [torch.randn(3, 7)],
                 shapes=[("n", 7)])


def test_glu_with_symbolic_dimension():
    check_module(nn.GLU(dim=0), [ramp(6, 3)], modes=("script",), shapes=[("n", 3)])


def test_errors():
    class Gelu(nn.Module):
        def forward(self, x):
            return F.gelu(x)

    x = torch.arange(6)
    with pytest.raises(anvil.UserError, match="aten::gelu of a int64 tensor"):
        import_module(torch.jit.trace(Gelu(), torch.randn(2, 3)), [x])

    class Glu(nn.Module):
        def forward(self, x):
            return F.glu(x, 1)

    with pytest.raises(anvil.UserError, match="size 5 is odd"):
        import_module(torch.jit.script(Glu()), [torch.randn(2, 5)])

    class Softmax(nn.Module):
        def forward(self, x):
            return F.softmax(x, dim=1)

    with pytest.raises(anvil.UserError, match="int64 tensor is not supported"):
        import_module(torch.jit.script(Softmax()), [torch.arange(6).reshape(2, 3)])
    with pytest.raises(anvil.UserError, match="dim 3 is out of range"):
        import_module(torch.jit.script(nn.Softmax(dim=3)), [torch.randn(2, 3)])

    class Rrelu(nn.Module):
        def forward(self, x):
            return F.rrelu(x, training=True)

    with pytest.raises(anvil.UserError, match="training mode"):
        import_module(torch.jit.script(Rrelu()), [torch.randn(2, 3)])
