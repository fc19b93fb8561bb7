"""The PyTorch importer's tensor creation and casts (convert_create.cpp) and padding
(convert_pad.cpp), traced and scripted, against PyTorch eager. Creation ops whose operands are
all constants are folded by TorchScript's constant propagation before the importer sees them, so
the sizes here mostly come from the input."""
from typing import List

import pytest
import torch
import torch.nn.functional as F

import anvil
from pt_cases import check_symbolic, module1, module2
from pt_check import check_module, import_module


def x34():
    torch.manual_seed(0)
    return torch.randn(3, 4)


# ---- fills ----------------------------------------------------------------------------------

def fills(x):
    n = x.size(0)
    return (torch.zeros(n, 2), torch.ones([n, x.size(1)], dtype=torch.int32),
            torch.full((n, 3), 7), torch.full((2, n), 0.5), torch.empty(n, 0).shape[1] + x,
            torch.full((n,), 1, dtype=torch.bool), torch.zeros(n, dtype=torch.float16).float())


def fills_like(x):
    return (torch.zeros_like(x), torch.ones_like(x, dtype=torch.int64), torch.full_like(x, 3),
            torch.full_like(x, 2.5, dtype=torch.float64), torch.empty_like(x).shape[0] + x)


def fills_new(x):
    n = x.size(0)
    return (x.new_zeros(n, 2), x.new_ones([2, n]), x.new_full([n], 4.0),
            x.new_zeros([n], dtype=torch.int32), x.new_empty(n).shape[0] + x)


def fills_in_place(x):
    y = torch.empty(x.size(0), 4)
    y.fill_(2.0)
    z = torch.empty_like(x)
    z.zero_()
    w = torch.empty(x.size(0), 4)
    w.copy_(x * 3)
    v = torch.zeros(x.size(0), 4, dtype=torch.int64)
    v.copy_(x)
    return y, z, w, v


@pytest.mark.parametrize("fn", [fills, fills_like, fills_new, fills_in_place])
def test_fills(fn):
    check_module(module1(fn), [x34()])


def test_fills_of_a_symbolic_size():
    sets = [[torch.randn(n, 4)] for n in (3, 6)]
    check_symbolic(module1(fills_new), sets, shapes=[("n", 4)])
    check_symbolic(module1(fills_like), sets, shapes=[("n", 4)])


def random(x):
    return torch.rand_like(x)


def test_random_tensors_are_an_error():
    x = x34()
    with pytest.raises(anvil.UserError, match="random numbers are not supported"):
        import_module(torch.jit.script(module1(random)), [x])


# ---- ranges ---------------------------------------------------------------------------------

def ranges(x):
    n = x.size(1)
    return (torch.arange(n), torch.arange(1, n), torch.arange(0, n, 2), torch.arange(n, 0, -1),
            torch.arange(n, dtype=torch.float32), torch.arange(2, n + 5, 3, dtype=torch.int32),
            torch.arange(n) * 0.5 + x)


def float_ranges(x):
    return torch.arange(0.0, 1.0, 0.1) + x.sum(), torch.arange(-1, 1.5, 0.25)


def runtime_ranges(x):
    n = int(x.abs().sum().ceil())
    return torch.arange(n), torch.arange(1, n, 3)


def eyes(x):
    n = x.size(0)
    return torch.eye(n), torch.eye(n, x.size(1), dtype=torch.int64), torch.eye(x.size(1), n)


@pytest.mark.parametrize("fn", [ranges, float_ranges, eyes, runtime_ranges])
def test_ranges(fn):
    check_module(module1(fn), [x34()])


def test_ranges_of_a_symbolic_size():
    sets = [[torch.randn(3, n)] for n in (4, 7)]
    check_symbolic(module1(ranges), sets, shapes=[(3, "m")])
    check_symbolic(module1(eyes), sets, shapes=[(3, "m")])


def test_linspace_logspace():
    class M(torch.nn.Module):
        def forward(self, x):
            a = torch.linspace(-1.0, 2.0, 7) + x.sum()
            b = torch.logspace(0.0, 2.0, 5, base=2.0) + x.sum()
            return a, b, torch.linspace(0, 10, 6, dtype=torch.int64)

    check_module(M(), [x34()])


# ---- tensors from lists ---------------------------------------------------------------------

def tensors(x):
    n = x.size(0)
    s = x.sum()
    return (torch.tensor([n, 2 * n, 3]), torch.tensor([[1.5, n], [n, 0.0]]),
            torch.tensor(n), torch.tensor([n], dtype=torch.float32), torch.tensor([float(s), 1.0]),
            torch.as_tensor(x, dtype=torch.float64), torch.scalar_tensor(n))


def test_tensors_from_lists():
    check_module(module1(tensors), [x34()], modes=("script",))


def test_tensors_from_lists_of_a_symbolic_size():
    sets = [[torch.randn(n, 4)] for n in (3, 5)]
    check_symbolic(module1(tensors), sets, shapes=[("n", 4)], modes=("script",))


# ---- casts ----------------------------------------------------------------------------------

def casts(x, y):
    return (x.float(), x.long(), x.int(), x.half().float(), x.double(), x.to(torch.bool),
            x.to(y), x.to(torch.float64), x.to("cpu", torch.int64), x.to(dtype=torch.int16),
            x.type_as(y), x.to(x.device), (x * 10).to(torch.uint8), (x * 10).to(torch.int8))


def test_casts():
    check_module(module2(casts), [x34() * 3, torch.tensor([1, 2], dtype=torch.int32)])


def test_cast_by_type_traced():
    class M(torch.nn.Module):
        def forward(self, x):
            return x.type(torch.int32), x.bool(), x.to(torch.device("cpu"))

    check_module(M(), [x34() * 3], modes=("trace",))


# ---- padding --------------------------------------------------------------------------------

def pads(x):
    y = x[0]
    return (F.pad(x, [1, 2]), F.pad(x, [1, 1, 2, 0], value=3.0), F.pad(x, [-1, 1]),
            F.pad(x, [0, 0, 1, 1, 2, 0], value=-1.0), F.pad(y, [1, 2], mode="reflect"),
            F.pad(y, [2, 1], mode="replicate"), F.pad(y, [1, 2], mode="circular"))


def pads_2d(x):
    return (F.pad(x, [1, 2, 2, 1], mode="reflect"), F.pad(x, [1, 2, 2, 1], mode="replicate"),
            F.pad(x, [1, 0, 2, 1], mode="circular"), F.pad(x, [1, 0, 0, 1], value=0.5))


def pads_3d(x):
    z = x.unsqueeze(0)
    return (F.pad(z, [1, 1, 1, 1, 1, 1], mode="replicate"), F.pad(z, [1, 0, 0, 1, 1, 0]),
            F.pad(z, [1, 0, 2, 1, 1, 1], mode="reflect"), F.pad(z, [1, 0, 2, 1, 1, 1], mode="circular"))


@pytest.mark.parametrize("fn", [pads, pads_2d, pads_3d])
def test_pads(fn):
    check_module(module1(fn), [torch.randn(2, 3, 4, 5)])


def test_pad_ops_by_their_own_names_traced():
    # Older TorchScript files and direct calls use the per-mode ops instead of aten::pad.
    class M(torch.nn.Module):
        def forward(self, x):
            return (torch._C._nn.reflection_pad2d(x, [1, 2, 2, 1]),
                    torch._C._nn.replication_pad2d(x, [0, 1, 2, 0]),
                    torch._C._nn.reflection_pad1d(x[0], [2, 1]),
                    torch._C._nn.replication_pad1d(x[0], [1, 3]),
                    torch._C._nn.replication_pad3d(x.unsqueeze(0), [1, 1, 1, 1, 1, 1]),
                    torch.constant_pad_nd(x, [1, 1, 0, 2], 1.5),
                    torch.ops.aten._pad_circular(x, [1, 1, 2, 0]))

    check_module(M(), [torch.randn(2, 3, 4, 5)], modes=("trace",))


def test_pads_of_a_symbolic_size():
    sets = [[torch.randn(n, 3, 4, 5)] for n in (2, 3)]
    check_symbolic(module1(pads_2d), sets, shapes=[("n", 3, 4, 5)])


def symbolic_pad(x):
    n = x.size(0)
    return F.pad(x, [n, 0])


def test_pad_by_a_symbolic_size():
    sets = [[torch.randn(n, 4)] for n in (2, 3)]
    check_symbolic(module1(symbolic_pad), sets, shapes=[("n", 4)])


def reflect_too_far(x):
    return F.pad(x, [4, 0], mode="reflect")


def test_reflection_padding_must_be_less_than_the_dimension():
    x = torch.randn(1, 2, 4)
    with pytest.raises(anvil.UserError, match="must be less than the size 4"):
        import_module(torch.jit.script(module1(reflect_too_far)), [x])


def eye_negative(x):
    return torch.eye(x.size(0) - 5)


def linspace_huge(x):
    return torch.linspace(0.0, 1.0, x.size(0) * 33554432)


def test_creation_errors():
    x = x34()
    with pytest.raises(anvil.UserError, match="eye: the sizes must be non-negative, got -2"):
        import_module(torch.jit.script(module1(eye_negative)), [x])
    with pytest.raises(anvil.UserError, match="steps are too many"):
        import_module(torch.jit.script(module1(linspace_huge)), [x])


def runtime_sizes(x):
    n = int(x.abs().sum().ceil())
    k = int((x > 0).sum())
    return (torch.zeros(n, 2), torch.full([2, n], 1.5), x.new_ones(k), x.reshape(k, -1),
            x.view(-1, int(x.size(1))))


def test_sizes_computed_at_run_time():
    check_module(module1(runtime_sizes), [torch.tensor([[1.5, -2.0], [-0.5, 1.0]])])
