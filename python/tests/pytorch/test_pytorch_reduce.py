"""The PyTorch importer's reductions: sum, mean, prod, amax/amin, max/min, argmax/argmin,
all/any, std/var, norms, logsumexp, count_nonzero, cumsum; dim as int, list or None, keepdim,
dtype=; against PyTorch eager, traced and scripted."""
import numpy as np
import pytest
import torch
import torch.nn as nn

import anvil
from pt_check import check_module, import_module, run_anvil


def data(*shape, seed=0):
    torch.manual_seed(seed)
    return torch.randn(*shape)


class Lambda(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


class SumMeanProd(nn.Module):
    def forward(self, x):
        return (x.sum(), torch.sum(x, 1), x.sum(dim=(0, 2)), x.sum(-1, keepdim=True),
                x.sum([1, 2], True), x.sum(dtype=torch.float64), x.sum(0, dtype=torch.float64),
                x.mean(), x.mean(1), x.mean((0, -1), keepdim=True), x.mean(dtype=torch.float64),
                x.prod(), x.prod(1), x.prod(-1, keepdim=True), x.prod(dtype=torch.float64))


def test_sum_mean_prod():
    check_module(SumMeanProd(), [data(3, 4, 5)])


def test_sum_of_integers_and_bools_is_int64():
    class M(nn.Module):
        def forward(self, i, b):
            return (i.sum(), i.sum(1), i.prod(0), b.sum(), b.sum(0, keepdim=True),
                    i.sum(dtype=torch.float32), torch.cumsum(i, 1), torch.cumsum(b, 0),
                    i.to(torch.int32).sum(), i.mean(1, dtype=torch.float32))

    i = torch.arange(-6, 6).reshape(3, 4)
    check_module(M(), [i, i > 0])


def test_dim_none_and_empty_list():
    class M(nn.Module):
        def forward(self, x):
            return x.sum(dim=None), torch.mean(x, dim=None, keepdim=True), torch.amax(x, [])

    check_module(M(), [data(2, 3)], modes=("script",))


class MaxMin(nn.Module):
    def forward(self, x, y):
        v, i = x.max(1)
        w, j = torch.min(x, dim=-1, keepdim=True)
        return (x.max(), x.min(), v, i, w, j, torch.max(x, y), torch.min(x, y), x.max(0)[1],
                torch.amax(x, 1), torch.amin(x, (0, 1)), torch.amax(x, -1, keepdim=True))


def test_max_min_overloads():
    check_module(MaxMin(), [data(3, 4, 5), data(3, 4, 5, seed=1)])


def test_max_indices_take_the_first_of_ties():
    x = torch.tensor([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, -1.0, 2.0]])
    check_module(Lambda(lambda x: (x.max(1), x.min(1), x.argmax(1), x.argmin(0))), [x],
                 modes=("trace",))


def test_max_of_bools_and_integers():
    class M(nn.Module):
        def forward(self, x):
            b = x > 2
            return b.max(), b.max(0)[0], b.amin(1), x.max(1)[0], x.min(), x.amax(0)

    check_module(M(), [torch.tensor([[1, 5, 3], [4, 0, -2]])])


class ArgMaxMin(nn.Module):
    def forward(self, x):
        return (x.argmax(), x.argmin(), x.argmax(1), torch.argmin(x, -1, keepdim=True),
                torch.argmax(x, dim=0, keepdim=False), torch.argmax(x, keepdim=True))


def test_argmax_argmin():
    check_module(ArgMaxMin(), [data(3, 4, 5)])


class AllAny(nn.Module):
    def forward(self, x):
        b = x > 0
        return (b.all(), b.any(), b.all(1), b.any(0, keepdim=True), x.all(), x.any(1),
                torch.all(x != 0, 2), (x > 5).any())


def test_all_any():
    x = data(3, 4, 5)
    x[0, 0, 0] = 0
    check_module(AllAny(), [x])


def test_all_any_of_uint8_are_uint8():
    x = torch.tensor([[0, 1, 2], [3, 4, 5]], dtype=torch.uint8)
    check_module(Lambda(lambda x: (x.all(), x.any(1))), [x], modes=("trace",))


class VarStd(nn.Module):
    def forward(self, x):
        return (x.var(), x.std(), x.var(unbiased=False), x.std(1), x.var([0, 2], keepdim=True),
                x.std(-1, unbiased=False, keepdim=True), torch.var(x, 1, correction=0),
                torch.std(x, dim=(1, 2), correction=2), torch.var_mean(x, 1),
                torch.std_mean(x, dim=[0, 1], keepdim=True), torch.var_mean(x, unbiased=False))


def test_var_std():
    check_module(VarStd(), [data(3, 4, 5)])


class Norms(nn.Module):
    def forward(self, x):
        inf = float("inf")
        return (x.norm(), torch.norm(x, p=2, dim=1),
                torch.norm(x, float("inf"), dim=(1, 2), keepdim=True), torch.norm(x, 2, -1),
                torch.norm(x, p=3, dim=0), torch.norm(x, "fro"), torch.norm(x, "fro", dim=(1, 2)),
                torch.linalg.vector_norm(x), torch.linalg.vector_norm(x, 1, dim=1),
                torch.linalg.vector_norm(x, inf, dim=(0, 2), keepdim=True),
                torch.linalg.vector_norm(x, -inf, dim=-1), torch.linalg.vector_norm(x, 0, dim=1),
                torch.linalg.vector_norm(x, 0.5), torch.linalg.norm(x), torch.linalg.norm(x, dim=1),
                torch.linalg.norm(x, 3, dim=2), torch.linalg.norm(x, "fro", dim=(0, 1)),
                torch.norm(x, 2, dim=1, dtype=torch.float64))


def test_norms():
    x = data(3, 4, 5)
    x[1, 1, :2] = 0
    check_module(Norms(), [x])


def test_norms_of_whole_tensors_traced():
    # Scripted, torch.norm(x, p) builds its dims with a loop over range(x.dim()): that is the
    # control-flow converters' part; traced, it is one aten::norm over every axis.
    class M(nn.Module):
        def forward(self, x):
            return (torch.norm(x, 1), torch.norm(x, float("inf")), torch.norm(x, 3.0),
                    torch.norm(x, 1, dtype=torch.float64))

    check_module(M(), [data(3, 4)], modes=("trace",))


def test_normalize_uses_norm():
    check_module(Lambda(lambda x: nn.functional.normalize(x, dim=1)), [data(4, 6)],
                 modes=("trace",))


class LogSumExp(nn.Module):
    def forward(self, x):
        return (torch.logsumexp(x, 1), x.logsumexp((0, 2), keepdim=True), x.logsumexp(-1),
                torch.logsumexp(x * 100, dim=[0, 1, 2]))


def test_logsumexp():
    check_module(LogSumExp(), [data(3, 4, 5)])


def test_logsumexp_of_minus_infinity_rows():
    x = torch.tensor([[float("-inf"), float("-inf")], [1.0, float("-inf")], [2.0, 3.0]])
    m = Lambda(lambda x: torch.logsumexp(x, 1))
    mod, params = import_module(torch.jit.trace(m, x), [x])
    np.testing.assert_allclose(run_anvil(mod, params, [x])[0], m(x).numpy(), rtol=1e-6)


def test_logsumexp_of_integers_is_float():
    check_module(Lambda(lambda x: torch.logsumexp(x, 1)), [torch.arange(6).reshape(2, 3)],
                 modes=("trace",))


class CountCumsum(nn.Module):
    def forward(self, x):
        return (torch.count_nonzero(x), torch.count_nonzero(x, 1), torch.count_nonzero(x, (0, 2)),
                torch.cumsum(x, 1), x.cumsum(-1), torch.cumsum(x, 0, dtype=torch.float64))


def test_count_nonzero_and_cumsum():
    x = torch.relu(data(3, 4, 5))
    check_module(CountCumsum(), [x])


def test_reductions_of_a_0d_tensor():
    class M(nn.Module):
        def forward(self, x):
            s = x.sum()
            return s.sum(0), s.max(0)[0], s.max(-1)[1], s.argmax(0), s.mean(), s.amax()

    check_module(M(), [data(2, 3)])


def test_reductions_with_symbolic_batch():
    class M(nn.Module):
        def forward(self, x):
            return x.sum(0), x.mean(0), x.var(0), x.std(), x.max(1)[1], x.logsumexp(0)

    check_module(M(), [data(5, 3)], shapes=[("n", 3)])


def test_number_list_reductions():
    class M(nn.Module):
        def forward(self, x):
            n = sum([x.size(0), x.size(1)])
            ok = all([x.size(0) > 1, x.size(1) > 1])
            some = any([x.size(0) > 10, x.size(1) > 10])
            return x * n + float(ok) + float(some)

    check_module(M(), [data(2, 3)], modes=("script",))


def test_errors():
    def fails(fn, x, match, mode="trace"):
        m = Lambda(fn)
        scripted = torch.jit.trace(m, x) if mode == "trace" else torch.jit.script(m)
        with pytest.raises(anvil.UserError, match=match):
            import_module(scripted, [x])

    i = torch.arange(6).reshape(2, 3)
    with pytest.raises(anvil.UserError, match="mean of a int64 tensor"):
        import_module(torch.jit.script(MeanOf()), [i])
    with pytest.raises(anvil.UserError, match="dim 3 is out of range"):
        import_module(torch.jit.script(SumOver3()), [data(2, 3)])
    fails(lambda x: torch.linalg.norm(x, 2), data(2, 3), "matrix norms of order 2")
    fails(lambda x: torch.cumprod(x, 1), data(2, 3), "aten::cumprod")
    fails(lambda x: torch.median(x), data(2, 3), "aten::median")


class SumOver3(nn.Module):
    def forward(self, x):
        return x.sum(3)


class MeanOf(nn.Module):
    def forward(self, x):
        return x.mean()
