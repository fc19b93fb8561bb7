"""NumPy and DLPack interop: zero copy where the memory allows it (pointer checks)."""
import numpy as np

import anvil
from anvil import te


def test_output_numpy_is_zero_copy():
    n = 16
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] * 3.0, name="B")
    f = anvil.build(te.create_schedule(B), [A, B], target="llvm")
    b = anvil.nd.empty((n,))
    f(anvil.nd.array(np.ones(n, "float32")), b)
    view = b.numpy()
    assert view.ctypes.data == b.data_ptr
    assert b.data_ptr % 64 == 0
    np.testing.assert_array_equal(view, np.full(n, 3.0, "float32"))
    view[0] = 7.0  # the same memory
    assert b.numpy()[0] == 7.0


def test_aligned_numpy_is_shared_and_unaligned_is_copied():
    x = anvil.nd.aligned_empty((4, 8), "float32")
    x[:] = np.arange(32, dtype="float32").reshape(4, 8)
    a = anvil.nd.array(x)
    assert a.data_ptr == x.ctypes.data
    x[0, 0] = 42.0
    assert a.numpy()[0, 0] == 42.0

    raw = np.zeros(33, dtype="float32")
    y = raw[1:] if raw.ctypes.data % 64 == 0 else raw[:32]
    if y.ctypes.data % 64 == 0:
        y = raw[1:]
    b = anvil.nd.array(y)
    assert b.data_ptr != y.ctypes.data and b.data_ptr % 64 == 0
    np.testing.assert_array_equal(b.numpy(), y)


def test_dlpack_round_trips_without_copies():
    a = anvil.nd.array(np.random.rand(3, 5).astype("float32"))
    y = np.from_dlpack(a)
    assert y.ctypes.data == a.data_ptr
    np.testing.assert_array_equal(y, a.numpy())

    x = anvil.nd.aligned_empty((6,), "float64")
    x[:] = 1.5
    b = anvil.nd.from_dlpack(x)
    assert b.data_ptr == x.ctypes.data and b.dtype == "float64" and b.shape == (6,)


def test_buffer_protocol_and_dtypes():
    for dtype in ["float32", "float64", "int8", "int32", "int64", "uint8", "bool"]:
        x = (np.arange(12) % 2).astype(dtype).reshape(3, 4)
        a = anvil.nd.array(x)
        assert a.shape == (3, 4)
        np.testing.assert_array_equal(np.asarray(memoryview(a)), x)
        np.testing.assert_array_equal(a.numpy(), x)


def test_copyfrom():
    a = anvil.nd.empty((2, 2), "float32")
    a.copyfrom(np.eye(2, dtype="float32"))
    np.testing.assert_array_equal(a.numpy(), np.eye(2))
