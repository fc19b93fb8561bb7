"""The PyTorch importer's bitwise ops and shifts on integer tensors (int8, int32, int64, uint8;
bool tensors take the logical ops): &, |, ^, ~, <<, >> and their aten::bitwise_* forms, with
broadcasting, Python numbers on either side, PyTorch's type promotion and the traced in-place
forms, against eager PyTorch, traced and scripted. Shifts by amounts outside [0, bits) are
undefined in PyTorch 1.13 on CPU; Anvil shifts every bit out there (numpy's and PyTorch 2's
values), checked against that reference. Also the errors for float and bool operands."""
import numpy as np
import pytest
import torch
import torch.nn as nn

import anvil
from pt_check import check_module, import_module, run_anvil

INT_TYPES = [torch.int8, torch.uint8, torch.int32, torch.int64]


def ints(*shape, seed=0, dtype=torch.int64):
    """Values over the whole range of `dtype` (as far as int64 randint reaches)."""
    g = torch.Generator().manual_seed(seed)
    info = torch.iinfo(dtype)
    lo, hi = max(info.min, -2 ** 62), min(info.max, 2 ** 62)
    return torch.randint(lo, hi, shape, generator=g, dtype=torch.int64).to(dtype)


def amounts(*shape, bits, seed=0, dtype=torch.int64):
    """Shift amounts in [0, bits), where PyTorch defines the result."""
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, bits, shape, generator=g).to(dtype)


def check_types(module, inputs, modes=("trace", "script")):
    """check_module, and every output's element type equal to eager's."""
    module = module.eval()
    with torch.no_grad():
        expected = module(*inputs)
    expected = expected if isinstance(expected, (list, tuple)) else [expected]
    for mode in modes:
        scripted = torch.jit.trace(module, tuple(inputs)) if mode == "trace" else \
            torch.jit.script(module)
        mod, params = import_module(scripted, inputs)
        got = run_anvil(mod, params, inputs)
        for k, (g, e) in enumerate(zip(got, expected)):
            assert str(g.dtype) == str(e.dtype).replace("torch.", ""), \
                f"{mode} output {k}: {g.dtype}, expected {e.dtype}"
    check_module(module, inputs, modes=modes)


class Logic(nn.Module):
    def forward(self, a, b):
        return [
            a & b, a | b, a ^ b, ~a, torch.bitwise_and(a, b), torch.bitwise_or(a, b),
            torch.bitwise_xor(a, b), torch.bitwise_not(b), a & 5, a ^ 3, b | -2,
        ]


@pytest.mark.parametrize("dtype", INT_TYPES + [torch.bool])
def test_and_or_xor_not_broadcast(dtype):
    if dtype == torch.bool:
        a, b = ints(3, 1, 5) > 0, ints(4, 1, seed=1) > 0
    else:
        a, b = ints(3, 1, 5, dtype=dtype), ints(4, 1, seed=1, dtype=dtype)
    check_types(Logic(), [a, b])


class Shifts(nn.Module):
    def forward(self, x, n, m):
        return [
            x << n, x >> n, torch.bitwise_left_shift(x, n), torch.bitwise_right_shift(x, n),
            x << 3, x >> 2, x >> m, torch.bitwise_left_shift(x, 1), torch.bitwise_right_shift(x, 5),
        ]


@pytest.mark.parametrize("dtype", INT_TYPES)
def test_shifts_in_range(dtype):
    """Right shifts of negative values are arithmetic (sign-filling), of uint8 logical; left
    shifts wrap around."""
    bits = torch.iinfo(dtype).bits
    x = ints(4, 6, dtype=dtype)
    x[0, :3] = torch.tensor([-1, -128, 1] if dtype != torch.uint8 else [255, 128, 1])
    check_types(Shifts(), [x, amounts(4, 6, bits=bits, seed=1, dtype=dtype),
                           amounts(6, bits=bits, seed=2, dtype=dtype)])


def shifted(left, x, n, bits, signed):
    """The documented value: amounts outside [0, bits) shift every bit out."""
    if n < 0 or n >= bits:
        return -1 if (not left and signed and x < 0) else 0
    if not left:
        return x >> n  # Python's >> is arithmetic
    v = (x << n) % 2 ** bits
    return v - 2 ** bits if signed and v >= 2 ** (bits - 1) else v


class ShiftPair(nn.Module):
    def forward(self, x, n):
        return x << n, x >> n


@pytest.mark.parametrize("dtype", INT_TYPES)
@pytest.mark.parametrize("mode", ["trace", "script"])
def test_shifts_out_of_range(dtype, mode):
    info = torch.iinfo(dtype)
    bits, signed = info.bits, info.min < 0
    values = [1, 5, info.max, info.min, -1 if signed else 200, 37]
    ns = list(range(-2 if signed else 0, bits + 3)) + ([-100, 100] if signed else [100, 255])
    x = torch.tensor(values, dtype=dtype).reshape(-1, 1)
    n = torch.tensor(ns, dtype=dtype)
    module = ShiftPair().eval()
    # Tracing runs the module: on amounts PyTorch defines.
    scripted = (torch.jit.trace(module, (x, n.clamp(0, bits - 1))) if mode == "trace"
                else torch.jit.script(module))
    mod, params = import_module(scripted, [x, n])
    left, right = run_anvil(mod, params, [x, n])
    np_dtype = str(dtype).replace("torch.", "")
    for got, is_left in ((left, True), (right, False)):
        want = np.array([[shifted(is_left, v, k, bits, signed) for k in ns] for v in values],
                        np_dtype)
        np.testing.assert_array_equal(got, want, err_msg=f"{'left' if is_left else 'right'}")


class Promotion(nn.Module):
    def forward(self, i8, u8, i32, i64, b):
        return [
            i8 & i64, u8 | i8, i32 ^ i64, b & i32, u8 ^ b, i8 << (i64 & 7), i32 >> i8, u8 << 1,
            i8 & 7, b | b, ~b, i64 >> 3,
        ]


def test_type_promotion_follows_pytorch():
    inputs = [ints(3, 4, dtype=torch.int8), ints(3, 4, seed=1, dtype=torch.uint8),
              ints(3, 4, seed=2, dtype=torch.int32), ints(3, 4, seed=3), ints(3, 4, seed=4) > 0]
    # Shift amounts within every width involved.
    inputs[0] = inputs[0] & 7
    check_types(Promotion(), inputs)


def test_number_and_tensor_operand_orders():
    class M(nn.Module):
        def forward(self, x):
            return [torch.bitwise_left_shift(3, x), torch.bitwise_and(12, x),
                    torch.bitwise_right_shift(-300, x), torch.bitwise_xor(5, x)]

    class Operators(nn.Module):
        def forward(self, x):
            return [5 ^ x, 7 | x, 12 & x, 1 << x, 1000 >> x]

    x = amounts(2, 5, bits=16, dtype=torch.int32)
    check_types(M(), [x])
    # Scripted, `5 ^ x` is int's ^ (the tensor converted to an int): traced only.
    check_types(Operators(), [x], modes=("trace",))


def test_in_place_forms():
    class M(nn.Module):
        def forward(self, a, b):
            c = a.clone()
            c &= b
            d = a.clone()
            d |= b
            e = a.clone()
            e ^= b
            f = a.clone()
            f <<= 2
            g = a.clone()
            g >>= 1
            h = a.clone()
            h.bitwise_not_()
            k = a.clone()
            k.bitwise_left_shift_(b & 15)
            return c, d, e, f, g, h, k

    check_module(M(), [ints(3, 4, dtype=torch.int32), ints(3, 4, seed=1, dtype=torch.int32)])


def test_shifts_of_sizes_scripted_and_traced():
    """Ints known at import time shift as int64 numbers: the reshape needs the value."""
    class M(nn.Module):
        def forward(self, x):
            half = x.size(1) >> 1
            return x.reshape(x.size(0) << 1, half), (x.size(0) << 3) ^ 5 | 2 & 3

    x = torch.arange(24.0).reshape(3, 8)
    check_module(M(), [x])


def test_negative_shift_count_of_numbers_is_an_error():
    class M(nn.Module):
        def forward(self, x):
            return x * (x.size(0) << -1)

    with pytest.raises(anvil.UserError, match="negative shift count -1"):
        import_module(torch.jit.script(M()), [torch.ones(3)])


def test_errors_for_float_and_bool_operands():
    class FloatAnd(nn.Module):
        def forward(self, x, y):
            return x & y

    class BoolShift(nn.Module):
        def forward(self, x, y):
            return x << y

    x = torch.ones(2, 3)
    with pytest.raises(anvil.UserError, match="bitwise and/or/xor of float32 tensors is not "
                                              "supported"):
        import_module(torch.jit.script(FloatAnd()), [x, x])
    with pytest.raises(anvil.UserError, match="shifts of float32 tensors are not supported"):
        import_module(torch.jit.script(BoolShift()), [x, x])
    b = x > 0
    with pytest.raises(anvil.UserError, match="shifts of bool tensors are not supported"):
        import_module(torch.jit.script(BoolShift()), [b, b])
