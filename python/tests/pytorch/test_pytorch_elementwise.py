"""The PyTorch importer's elementwise ops: unary math, binary arithmetic and comparisons with
PyTorch's type promotion (integer, bool and float tensors and Python numbers), logical and
bitwise ops, where, clamp, lerp, addcmul/addcdiv; and arithmetic on numbers known at import
time (size arithmetic, scripted and traced). Against PyTorch eager, traced and scripted."""
import math

import numpy as np
import pytest
import torch
import torch.nn as nn

import anvil
from pt_check import check_module, import_module, run_anvil


def data(*shape, seed=0, lo=-3.0, hi=3.0):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(*shape, generator=g) * (hi - lo) + lo


def ints(*shape, seed=0, lo=-9, hi=10, dtype=torch.int64):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(lo, hi, shape, generator=g).to(dtype)


def check_types(module, inputs, modes=("trace", "script")):
    """check_module, and every output's element type equal to eager's."""
    module = module.eval()
    with torch.no_grad():
        expected = module(*inputs)
    expected = list(expected) if isinstance(expected, (tuple, list)) else [expected]
    for mode in modes:
        scripted = (torch.jit.trace(module, tuple(inputs)) if mode == "trace"
                    else torch.jit.script(module))
        mod, params = import_module(scripted, inputs)
        actual = run_anvil(mod, params, inputs)
        for k, (a, e) in enumerate(zip(actual, expected)):
            want = str(e.dtype).replace("torch.", "")
            assert str(a.dtype) == want, f"{mode} output {k}: {a.dtype}, expected {want}"
    check_module(module, inputs, modes)


class Lambda(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *x):
        return self.fn(*x)


# ---- unary math -----------------------------------------------------------------------------

class Unary(nn.Module):
    def forward(self, x, p):
        return [
            torch.abs(x), x.abs(), -x, torch.neg(x), torch.sign(x), torch.sgn(x), torch.exp(x),
            torch.expm1(x), torch.exp2(x), torch.log(p), torch.log2(p), torch.log10(p),
            torch.log1p(p), torch.sqrt(p), torch.rsqrt(p), torch.reciprocal(x), torch.sin(x),
            torch.cos(x), torch.tan(x * 0.4), torch.asin(x / 4), torch.acos(x / 4),
            torch.atan(x), torch.sinh(x), torch.cosh(x), torch.tanh(x), torch.asinh(x),
            torch.acosh(p + 1), torch.atanh(x / 4), torch.floor(x), torch.ceil(x),
            torch.round(x), torch.trunc(x), torch.fix(x), torch.frac(x), torch.erf(x),
            torch.erfc(x), torch.square(x), torch.positive(x), torch.sigmoid(x),
            torch.round(x, decimals=1), torch.round(x * 100, decimals=-1), x.exp().log(),
        ]


def test_unary_math():
    x = data(4, 6)
    x[0, :4] = torch.tensor([2.5, -2.5, 0.5, -0.5])  # rounding ties go to even
    check_module(Unary(), [x, data(4, 6, seed=1, lo=0.1, hi=5)])


def test_unary_math_of_integer_tensors():
    class M(nn.Module):
        def forward(self, i):
            return (torch.sqrt(i.abs()), torch.exp(i), torch.floor(i), torch.ceil(i),
                    torch.round(i), torch.trunc(i), torch.abs(i), -i, torch.sign(i),
                    torch.square(i), torch.reciprocal(i), torch.sin(i), torch.sigmoid(i),
                    torch.sign(i > 0), torch.square(i > 0))

    check_types(M(), [ints(3, 5, lo=1)])


def test_nan_and_inf_tests():
    x = torch.tensor([0.0, -1.5, float("nan"), float("inf"), float("-inf"), 3.0])

    class M(nn.Module):
        def forward(self, x, i):
            return (torch.isnan(x), torch.isinf(x), torch.isfinite(x), torch.isposinf(x),
                    torch.isneginf(x), torch.isnan(i), torch.isinf(i), torch.isfinite(i))

    check_types(M(), [x, ints(6)])


# ---- binary arithmetic ----------------------------------------------------------------------

class Arith(nn.Module):
    def forward(self, x, y):
        return [
            x + y, x + 2, 3.5 + x, torch.add(x, y, alpha=2), x - y, x - 1.5, 2 - x,
            torch.sub(x, y, alpha=0.5), torch.rsub(x, y), torch.rsub(x, 2.0, alpha=3), x * y,
            x * -2, x / y, x / 4, 1 / x, torch.true_divide(x, y), x // y, x // 0.7,
            torch.floor_divide(x, y), torch.div(x, y, rounding_mode="trunc"),
            torch.div(x, y, rounding_mode="floor"), torch.div(x, 0.3, rounding_mode="trunc"),
            x % y, x % 1.3, torch.remainder(x, -0.8), torch.fmod(x, y), torch.fmod(x, 1.1),
            torch.minimum(x, y), torch.maximum(x, y), torch.max(x, y), torch.min(x, y),
            x.max(y), x.min(y),
        ]


def test_binary_arithmetic_of_float_tensors():
    check_module(Arith(), [data(4, 5), data(4, 5, seed=1, lo=0.5, hi=2) * torch.tensor([1.0, -1.0] * 10).reshape(4, 5)])


def test_broadcasting():
    check_module(Lambda(lambda x, y: (x + y, x * y, x < y, torch.maximum(x, y))),
                 [data(3, 1, 5), data(4, 1)], modes=("trace",))


class IntArith(nn.Module):
    def forward(self, i, j):
        return [
            i + j, i - j, i * j, i / j, i // j, torch.div(i, j, rounding_mode="trunc"),
            torch.div(i, j, rounding_mode="floor"), i % j, torch.fmod(i, j), i % 4, i // -3,
            torch.fmod(i, 3), i + 1, i * 2, i - 3, i / 2, torch.maximum(i, j), torch.minimum(i, j),
            torch.add(i, j, alpha=3),
        ]


def test_binary_arithmetic_of_integer_tensors():
    j = ints(4, 5, seed=1, lo=1, hi=6) * torch.tensor([1, -1] * 10).reshape(4, 5)
    check_types(IntArith(), [ints(4, 5), j])


class Pow(nn.Module):
    def forward(self, x, p, i):
        return [
            x ** 2, x ** 3, x ** 0.5 if False else p ** 0.5, x ** -1, x ** 1, x ** 0, p ** 1.7,
            2 ** x, 2.5 ** x, p ** x, torch.pow(x, 2), torch.pow(p, x), i ** 2, i ** 3, i ** 0,
            2 ** i.abs(), i.abs() ** 1.5, i.abs() ** i.abs().clamp(max=4), x ** i.abs(), 2.0 ** i,
        ]


def test_pow():
    check_types(Pow(), [data(3, 4), data(3, 4, seed=1, lo=0.5, hi=2), ints(3, 4, lo=-4, hi=5)])


# ---- type promotion -------------------------------------------------------------------------

class Promotion(nn.Module):
    def forward(self, i64, i32, b, u8, f32, f64):
        return [
            i64 / (i64.abs() + 1), i32 + 1.5, i32 * 2, i32 + i64, i32 + i64.sum(), i32 + f64.sum(),
            b + b, b * b, b + 1, b * 2.5, b < b, b & b, b | b, b ^ b, b == 1,
            u8 + i32, u8 + 1, f32 + f64, f32 + f64.sum(), f32 * i64, i64 < 2.5, i64 == i32,
            b / (b | ~b), i32 // 2, i32 % 3, torch.maximum(i32, f32), torch.minimum(b, b), i64 ** 2,
            i32 - 1.0, f32 + i64.sum(), u8 * 2, u8 / 2, (f64 > 0) + 1,
        ]


def test_promotion_follows_pytorch():
    i64 = ints(3, 4)
    inputs = [i64, ints(3, 4, seed=1, dtype=torch.int32), i64 > 0,
              ints(3, 4, seed=2, lo=0, hi=200, dtype=torch.uint8), data(3, 4),
              data(3, 4, seed=3).double()]
    check_types(Promotion(), inputs)


class Comparisons(nn.Module):
    def forward(self, x, y, i):
        return [x == y, x != y, x < y, x <= y, x > y, x >= y, x > 0, x <= 0.5, i == 2, i > 1.5,
                torch.eq(x, y), torch.ne(i, 0), torch.lt(i, i.flip(0)), torch.ge(x, 0),
                torch.gt(i, 0.5), torch.le(x, y)]


def test_comparisons():
    x = data(4, 5)
    y = x.clone()
    y[::2] = data(2, 5, seed=1)
    check_types(Comparisons(), [x, y, ints(4, 5, lo=0, hi=4)])


class Logical(nn.Module):
    def forward(self, a, b, i, x):
        return [
            a & b, a | b, a ^ b, ~a, torch.bitwise_and(a, b), torch.bitwise_or(a, b),
            torch.bitwise_xor(a, b), torch.bitwise_not(a), torch.logical_and(a, b),
            torch.logical_or(i, x), torch.logical_xor(i, b), torch.logical_not(i),
            torch.logical_not(x), ~i, torch.bitwise_not(i.to(torch.uint8)),
            torch.bitwise_not(i.to(torch.int32)),
        ]


def test_in_place_bitwise_ops_of_bools():
    class M(nn.Module):
        def forward(self, a, b):
            c = a.clone()
            c &= b
            d = a.clone()
            d |= b
            e = a.clone()
            e ^= b
            return c, d, e

    check_module(M(), [ints(3, 4) > 0, ints(3, 4, seed=1) > 0])


def test_device_comparison():
    class M(nn.Module):
        def forward(self, x, y):
            return x * float(x.device == y.device) + float(x.device != y.device)

    check_module(M(), [data(2, 3), data(2, 3)], modes=("script",))


def test_logical_and_bitwise_ops():
    a = ints(3, 4) > 0
    b = ints(3, 4, seed=1) > 0
    x = data(3, 4).round()
    check_types(Logical(), [a, b, ints(3, 4, seed=2, lo=-2, hi=3), x])


# ---- where, clamp, lerp, addcmul/addcdiv ----------------------------------------------------

class WhereClamp(nn.Module):
    def forward(self, x, y, i):
        c = x > 0
        return [
            torch.where(c, x, y), torch.where(c, x, 0.0), torch.where(c, 1.0, y),
            torch.where(c, 1.0, -1.0), torch.where(c, i, 0), torch.where(c, i, x),
            torch.where(i > 0, i, 2.5), x.where(c, y),
            torch.clamp(x, -0.5, 0.5), torch.clamp(x, min=-0.5), torch.clamp(x, max=0.5),
            torch.clip(x, -1, 1), x.clamp(y, y + 1), torch.clamp(x, min=y), torch.clamp(x, max=y),
            torch.clamp_min(x, 0.2), torch.clamp_max(x, 0.2), x.clamp(1.0, -1.0),
            torch.clamp(i, -2, 3), torch.clamp(i, min=0.5), torch.clamp(i, max=x),
            torch.lerp(x, y, 0.3), torch.lerp(x, y, 0.7), torch.lerp(x, y, torch.sigmoid(y)),
            torch.addcmul(x, y, x), torch.addcmul(x, y, y, value=0.5),
            torch.addcdiv(x, y, y.abs() + 1), torch.addcdiv(x, x, y.abs() + 1, value=-2),
            torch.addcmul(i, i, i, value=2),
        ]


def test_where_clamp_lerp_addc():
    check_types(WhereClamp(), [data(4, 5), data(4, 5, seed=1), ints(4, 5, lo=-4, hi=5)])


def test_in_place_arithmetic():
    class M(nn.Module):
        def forward(self, x, y):
            a = x.clone()
            a += y
            a *= 2
            a -= 1
            a /= 3
            b = x.clone()
            b.clamp_(-0.5, 0.5)
            b.abs_()
            b.pow_(2)
            c = x.clone()
            c.sqrt_()
            c.neg_()
            return a, b, c

    check_module(M(), [data(3, 4, lo=0, hi=2), data(3, 4, seed=1)])


# ---- numbers known at import time -----------------------------------------------------------

class SizeMath(nn.Module):
    def forward(self, x):
        h = x.size(2)
        a = h // 2
        b = math.ceil(h / 3)
        c = int(h * 0.5)
        d = max(a, b) + min(h, 3) - abs(-a)
        e = math.floor(h / 4) + h % 3 + (-h) + int(2 ** a) + int(math.sqrt(h))
        f = int(round(h / 5.0)) + int(math.exp(0.0)) + int(math.log(float(h)))
        g = h > 3 and h < 100 or a == 2
        if g:
            f = f + 1
        n = a + b + c + d + e + f
        return x.reshape(x.size(0), -1)[:, :n] * float(h) / 3.0 + math.fmod(h, 2.5)


def test_scripted_size_arithmetic():
    check_module(SizeMath(), [data(2, 3, 12, 5)], modes=("script",))


def test_scripted_size_arithmetic_of_symbolic_dimensions():
    class M(nn.Module):
        def forward(self, x):
            n = x.size(0)
            half = n // 2
            quarters = math.ceil(n / 4)
            rows = max(half, 1) * 2 - n % 2 + quarters - math.floor(n / 4) - n // 4 * 0
            return x[:rows].reshape(rows // 2, -1) * (n - half)

    check_module(M(), [data(10, 3)], modes=("script",), shapes=[("n", 3)])
    check_module(M(), [data(7, 3)], modes=("script",), shapes=[("n", 3)])


def test_traced_size_arithmetic():
    class M(nn.Module):
        def forward(self, x):
            return x.view(x.size(0), x.size(1) // 2, -1) * (x.size(1) ** 0.5) + x.size(2) % 3

    check_module(M(), [data(2, 4, 3)], modes=("trace",))
    check_module(M(), [data(5, 4, 3)], modes=("trace",), shapes=[("n", 4, 3)])


def test_numbers_known_only_at_run_time():
    class M(nn.Module):
        def forward(self, x):
            s = float(x.sum())
            k = int(x.max())
            return x * (s / 4.0) + k // 2 + math.sqrt(abs(s)) + (k % 3)

    check_module(M(), [data(3, 4, lo=0, hi=5)], modes=("script",))


def test_list_arithmetic():
    class M(nn.Module):
        def forward(self, x):
            shape = [x.size(0)] + [-1] + [1] * 2
            dims = [x.size(0), x.size(1)]
            same = dims == [2, 6] and dims != [6, 2]
            return x.reshape(shape) * float(same)

    check_module(M(), [data(2, 6)], modes=("script",))


# ---- errors ---------------------------------------------------------------------------------

def fails(fn, inputs, match, mode="trace"):
    m = Lambda(fn)
    scripted = torch.jit.trace(m, tuple(inputs)) if mode == "trace" else torch.jit.script(m)
    with pytest.raises(anvil.UserError, match=match):
        import_module(scripted, inputs)


def test_errors():
    i = ints(2, 3)
    b = i > 0
    # Bitwise ops of integer tensors convert (test_pytorch_bitwise.py has them and their errors).

    class SubBool(nn.Module):
        def forward(self, a, b):
            return a - b

    with pytest.raises(anvil.UserError, match="subtraction of bool tensors"):
        import_module(torch.jit.script(SubBool()), [b, b])

    class NegBool(nn.Module):
        def forward(self, a):
            return -a

    with pytest.raises(anvil.UserError, match="aten::neg of a bool tensor"):
        import_module(torch.jit.script(NegBool()), [b])

    class IntPow(nn.Module):
        def forward(self, a):
            return a ** -2

    with pytest.raises(anvil.UserError, match="negative integer powers"):
        import_module(torch.jit.script(IntPow()), [i])

    class Frac(nn.Module):
        def forward(self, a):
            return torch.frac(a)

    with pytest.raises(anvil.UserError, match="frac of a int64 tensor"):
        import_module(torch.jit.script(Frac()), [i])

    class ZeroDivision(nn.Module):
        def forward(self, x):
            return x.reshape(-1, x.size(0) // (x.size(1) - 3))

    with pytest.raises(anvil.UserError, match="division by zero"):
        import_module(torch.jit.script(ZeroDivision()), [data(2, 3)])

    class HugeList(nn.Module):
        def forward(self, x):
            return x.reshape([x.size(0)] * 3000000)

    with pytest.raises(anvil.UserError, match="repeats a list of 1 items 3000000 times"):
        import_module(torch.jit.script(HugeList()), [data(1, 1)])

    class Clamp(nn.Module):
        def forward(self, x):
            return torch.clamp(x)

    with pytest.raises(anvil.UserError, match="at least one of min and max"):
        import_module(torch.jit.script(Clamp()), [data(2, 3)])

    class Rounding(nn.Module):
        def forward(self, x, y):
            return torch.div(x, y, rounding_mode="up")

    with pytest.raises(anvil.UserError, match="rounding_mode 'up'"):
        import_module(torch.jit.script(Rounding()), [data(2, 3), data(2, 3)])
