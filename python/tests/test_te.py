"""Tensor expressions and schedules from Python: build, run, compare with NumPy."""
import platform

import numpy as np
import pytest

import anvil
from anvil import te


def matmul(n, m, k_extent):
    A = te.placeholder((n, k_extent), name="A")
    B = te.placeholder((k_extent, m), name="B")
    k = te.reduce_axis((0, k_extent), name="k")
    C = te.compute((n, m), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return A, B, C, k


def run_matmul(s, A, B, C, n, m, k_extent):
    f = anvil.build(s, [A, B, C], target="llvm")
    a = np.random.rand(n, k_extent).astype("float32")
    b = np.random.rand(k_extent, m).astype("float32")
    c = anvil.nd.array(np.zeros((n, m), dtype="float32"))
    f(anvil.nd.array(a), anvil.nd.array(b), c)
    np.testing.assert_allclose(c.numpy(), a @ b, rtol=1e-4, atol=1e-4)
    return f


def test_default_schedule_matches_numpy():
    A, B, C, _ = matmul(33, 17, 29)
    s = te.create_schedule(C.op)
    run_matmul(s, A, B, C, 33, 17, 29)


def test_tiled_vectorized_parallel_matmul():
    n = 128
    A, B, C, k = matmul(n, n, n)
    s = te.create_schedule(C.op)
    io, jo, ii, ji = s[C].tile(C.op.axis[0], C.op.axis[1], 32, 32)
    ko, ki = s[C].split(k, factor=4)
    s[C].reorder(io, jo, ko, ki, ii, ji)
    s[C].unroll(ki)
    s[C].vectorize(ji)
    s[C].parallel(io)
    text = str(anvil.lower(s, [A, B, C]))
    assert "prim_func main(A: float32[128, 128]" in text
    assert "parallel" in text and "ramp(" in text
    f = run_matmul(s, A, B, C, n, n, n)
    asm = f.get_source("asm")
    assert "main" in asm
    if platform.machine() in ("x86_64", "AMD64"):
        assert "ymm" in asm or "xmm" in asm  # the vectorized loop uses SIMD registers
    assert "define" in f.get_source("ll")


def test_fuse_split_nparts_and_cache_write():
    n = 64
    A, B, C, k = matmul(n, n, n)
    s = te.create_schedule(C)
    CC = s.cache_write(C, "local")
    io, jo, ii, ji = s[C].tile(C.op.axis[0], C.op.axis[1], 8, 8)
    fused = s[C].fuse(io, jo)
    s[C].parallel(fused)
    s[CC].compute_at(s[C], fused)
    outer, inner = s[CC].split(s[CC].op.axis[1], nparts=1)
    assert isinstance(outer, te.IterVar) and inner.name
    run_matmul(s, A, B, C, n, n, n)


def test_compute_inline_and_math():
    n = 100
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] * 2.0 + 1, name="B")
    C = te.compute((n,), lambda i: te.exp(B[i]), name="C")
    s = te.create_schedule(C.op)
    s[B].compute_inline()
    f = anvil.build(s, [A, C], target="llvm")
    a = np.random.rand(n).astype("float32")
    c = anvil.nd.empty((n,), "float32")
    f(anvil.nd.array(a), c)
    np.testing.assert_allclose(c.numpy(), np.exp(a * 2 + 1), rtol=1e-5)


def test_cache_read_and_reductions():
    n, m = 16, 32
    A = te.placeholder((n, m), name="A")
    k = te.reduce_axis((0, m), name="k")
    Mx = te.compute((n,), lambda i: te.max(A[i, k], axis=k), name="Mx")
    s = te.create_schedule(Mx.op)
    AA = s.cache_read(A, "local", [Mx])
    s[AA].compute_at(s[Mx], s[Mx].op.axis[0])
    f = anvil.build(s, [A, Mx], target="llvm")
    a = np.random.rand(n, m).astype("float32")
    out = anvil.nd.empty((n,))
    f(anvil.nd.array(a), out)
    np.testing.assert_allclose(out.numpy(), a.max(axis=1))


def test_min_reduction_with_where():
    n, m = 12, 20
    A = te.placeholder((n, m), name="A")
    k = te.reduce_axis((0, m), name="k")
    Mn = te.compute((n,), lambda i: te.min(A[i, k], axis=k), name="Mn")
    # Only the even columns: te.min's `where` masks the reduction.
    k2 = te.reduce_axis((0, m), name="k2")
    Me = te.compute((n,), lambda i: te.min(A[i, k2], axis=k2, where=k2 % 2 < 1), name="Me")
    s = te.create_schedule([Mn, Me])
    f = anvil.build(s, [A, Mn, Me], target="llvm")
    a = np.random.uniform(-10, 10, (n, m)).astype("float32")
    mn, me = anvil.nd.empty((n,)), anvil.nd.empty((n,))
    f(anvil.nd.array(a), mn, me)
    np.testing.assert_array_equal(mn.numpy(), a.min(axis=1))
    np.testing.assert_array_equal(me.numpy(), a[:, ::2].min(axis=1))


def test_split_with_factor_and_compute_inline():
    n = 100  # not a multiple of the factor: the split leaves a partial last tile
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: te.maximum(A[i], 0.0), name="B")
    C = te.compute((n,), lambda i: te.sqrt(B[i]) + 1.0, name="C")
    s = te.create_schedule(C)
    s[B].compute_inline()
    outer, inner = s[C].split(C.op.axis[0], factor=8)
    assert [a.name for a in s[C].leaf_iter_vars] == [outer.name, inner.name]
    s[C].vectorize(inner)
    text = str(anvil.lower(s, [A, C]))
    assert "B[" not in text  # inlined: no buffer for B
    f = anvil.build(s, [A, C], target="llvm")
    a = np.random.uniform(-1, 4, n).astype("float32")
    c = anvil.nd.empty((n,))
    f(anvil.nd.array(a), c)
    np.testing.assert_allclose(c.numpy(), np.sqrt(np.maximum(a, 0)) + 1, rtol=1e-6)


def test_numpy_arguments_are_written_back():
    n = 10
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] + 1.0, name="B")
    f = anvil.build(te.create_schedule(B), [A, B], target="llvm")
    a = np.arange(n, dtype="float32")
    b = np.zeros(n, dtype="float32")  # usually unaligned: copied in and written back
    f(a, b)
    np.testing.assert_array_equal(b, a + 1)


def test_placeholder_shape_and_axis_names():
    A = te.placeholder((3, 4), dtype="int32", name="A")
    assert A.shape == (3, 4) and A.dtype == "int32" and A.name == "A"
    C = te.compute((3, 4), lambda row, col: A[row, col] * 2, name="C")
    assert [a.name for a in C.op.axis] == ["row", "col"]
    assert "row" in str(anvil.lower(te.create_schedule(C), [A, C]))
