"""Tensor expressions and schedules (TVM's te spelling).

    n = 1024
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    s = te.create_schedule(C.op)
    io, jo, ii, ji = s[C].tile(C.op.axis[0], C.op.axis[1], 32, 32)
"""
from . import _anvil

PrimExpr = _anvil.PrimExpr
IterVar = _anvil.IterVar
Tensor = _anvil.Tensor
Schedule = _anvil.Schedule
Stage = _anvil.Stage

placeholder = _anvil.te_placeholder
compute = _anvil.te_compute
reduce_axis = _anvil.te_reduce_axis
sum = _anvil.te_sum  # noqa: A001 (TVM's name)
max = _anvil.te_max  # noqa: A001
min = _anvil.te_min  # noqa: A001
const = _anvil.te_const
var = _anvil.te_var
if_then_else = _anvil.te_if_then_else
exp = _anvil.te_exp
log = _anvil.te_log
sqrt = _anvil.te_sqrt
rsqrt = _anvil.te_rsqrt
tanh = _anvil.te_tanh
sigmoid = _anvil.te_sigmoid
erf = _anvil.te_erf
abs = _anvil.te_abs  # noqa: A001
floor = _anvil.te_floor
ceil = _anvil.te_ceil
round = _anvil.te_round  # noqa: A001
power = _anvil.te_pow
maximum = _anvil.te_maximum
minimum = _anvil.te_minimum


def create_schedule(ops):
    """A schedule for the given output tensors (C.op is C itself here)."""
    return _anvil.te_create_schedule(ops)


def cast(value, dtype):
    """`value` (an expression or a number) converted to `dtype` ("float32", "int32", ...)."""
    return _anvil.te_cast(dtype, value)
