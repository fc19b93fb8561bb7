"""Integer division of the PyTorch importer's models by 0 and of INT_MIN by -1: PyTorch raises
for a zero divisor (and PyTorch 1.13's CPU kernels die of SIGFPE on INT_MIN // -1); an Anvil
kernel never traps and gives numpy's values instead: x // 0, x % 0, fmod(x, 0) and their trunc
and floor forms are 0, INT_MIN // -1 wraps to INT_MIN and INT_MIN % -1 is 0. The elements
without a special divisor are compared with eager PyTorch."""
import numpy as np
import pytest
import torch
import torch.nn as nn

from pt_check import import_module, run_anvil


class IntDivision(nn.Module):
    def forward(self, i, j):
        return [
            i // j, torch.floor_divide(i, j), torch.div(i, j, rounding_mode="trunc"),
            torch.div(i, j, rounding_mode="floor"), i % j, torch.remainder(i, j), torch.fmod(i, j),
        ]


def wrap(v, bits):
    return (v + 2 ** (bits - 1)) % 2 ** bits - 2 ** (bits - 1)


def trunc_div(a, b):
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def documented(kind, a, b, bits):
    """The documented value of one element, from Python integers."""
    if b == 0:
        return 0
    if kind == "floor":
        return wrap(a // b, bits)  # INT_MIN // -1 wraps to INT_MIN
    if kind == "trunc":
        return wrap(trunc_div(a, b), bits)
    if kind == "floor_mod":
        return a % b  # Python's % is floored
    return a - b * trunc_div(a, b)


# The kind of each output of IntDivision.
KINDS = ["floor", "floor", "trunc", "floor", "floor_mod", "floor_mod", "trunc_mod"]


def expected(a, b, dtype):
    bits = torch.iinfo(dtype).bits
    pairs = list(zip(a.flatten().tolist(), b.flatten().tolist()))
    np_dtype = str(dtype).replace("torch.", "")
    return [np.array([documented(kind, x, y, bits) for x, y in pairs], np_dtype).reshape(a.shape)
            for kind in KINDS]


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
@pytest.mark.parametrize("mode", ["trace", "script"])
def test_division_by_zero_and_int_min_by_minus_one(dtype, mode):
    lo, hi = torch.iinfo(dtype).min, torch.iinfo(dtype).max
    a = torch.tensor([[7, -7, 0, lo, lo, hi, -9, 9, lo + 1, 13]], dtype=dtype).repeat(3, 1)
    b = torch.tensor([[0, 0, 0, -1, 0, -1, 4, -4, -1, 5]] * 3, dtype=dtype)
    b[1] = torch.tensor([3, -3, 2, 1, 2, 0, -1, -1, 7, 0], dtype=dtype)
    b[2] = torch.tensor([lo, lo, lo, lo, hi, hi, -2, 2, 0, -1], dtype=dtype)
    module = IntDivision().eval()
    # Tracing runs the module: on divisors PyTorch accepts.
    traced_on = (a, torch.ones_like(b))
    scripted = torch.jit.trace(module, traced_on) if mode == "trace" else torch.jit.script(module)
    mod, params = import_module(scripted, [a, b])
    got = run_anvil(mod, params, [a, b])
    want = expected(a, b, dtype)
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype, f"output {k}: {g.dtype}, expected {w.dtype}"
        np.testing.assert_array_equal(g, w, err_msg=f"{mode} {dtype} output {k}")
    # Where PyTorch itself computes (no zero divisor, no INT_MIN / -1), it agrees.
    ordinary = (b != 0) & ~((a == lo) & (b == -1))
    for k, (g, e) in enumerate(zip(got, module(a.where(ordinary, torch.ones_like(a)),
                                               b.where(ordinary, torch.ones_like(b))))):
        mask = ordinary.numpy()
        np.testing.assert_array_equal(g[mask], e.numpy()[mask], err_msg=f"eager output {k}")


def test_numpy_agrees_on_the_special_values():
    """The values chosen are numpy's (which warns): the reference above is numpy's on them."""
    a = np.array([7, -7, 0, np.iinfo(np.int32).min], np.int32)
    b = np.array([0, 0, 0, -1], np.int32)
    with np.errstate(divide="ignore", over="ignore"):
        np.testing.assert_array_equal(a // b, [0, 0, 0, np.iinfo(np.int32).min])
        np.testing.assert_array_equal(a % b, [0, 0, 0, 0])
        np.testing.assert_array_equal(np.fmod(a, b), [0, 0, 0, 0])
