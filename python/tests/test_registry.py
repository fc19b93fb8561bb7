"""The global function registry: Python <-> C++ calls."""
import numpy as np
import pytest

import anvil


def test_python_function_callable_through_registry():
    @anvil.register_func("test.add", override=True)
    def add(a, b):
        return a + b

    f = anvil.get_global_func("test.add")
    assert f(2, 3) == 5
    assert f(1.5, 2.0) == 3.5
    assert "test.add" in anvil.list_global_func_names()


def test_cpp_functions_from_python():
    echo = anvil.get_global_func("testing.echo")
    assert echo(7) == 7
    assert echo("text") == "text"
    assert echo(2.5) == 2.5
    t = echo(anvil.nd.array(np.arange(4, dtype="float32")))
    np.testing.assert_array_equal(t.numpy(), np.arange(4))
    assert anvil.get_global_func("no.such.func", allow_missing=True) is None
    with pytest.raises(anvil.UserError, match="no.such.func"):
        anvil.get_global_func("no.such.func")


def test_runtime_thread_pool_functions():
    # Registered by the runtime bindings, so C code and the VM can call them too.
    num_threads = anvil.get_global_func("runtime.num_threads")
    set_num_threads = anvil.get_global_func("runtime.set_num_threads")
    default = anvil.get_global_func("runtime.default_num_threads")()
    names = anvil.list_global_func_names()
    assert {"runtime.num_threads", "runtime.set_num_threads",
            "runtime.default_num_threads"} <= set(names)
    before = num_threads()
    assert before >= 1 and default >= 1
    try:
        assert set_num_threads(1) == 1 and num_threads() == 1
        assert set_num_threads(3) == 3 and num_threads() == 3
        # A parallel kernel still computes the right result on the resized pool.
        from anvil import te
        A = te.placeholder((64,), name="A")
        B = te.compute((64,), lambda i: A[i] * 2.0, name="B")
        s = te.create_schedule(B)
        s[B].parallel(B.op.axis[0])
        f = anvil.build(s, [A, B], target="llvm")
        b = anvil.nd.empty((64,))
        f(anvil.nd.array(np.arange(64, dtype="float32")), b)
        np.testing.assert_array_equal(b.numpy(), np.arange(64) * 2)
        assert set_num_threads(0) == default  # 0: back to the default
        with pytest.raises(anvil.UserError, match="not a thread count"):
            set_num_threads(-2)
        with pytest.raises(anvil.UserError, match="int"):
            set_num_threads("four")
    finally:
        set_num_threads(before)
    assert num_threads() == before


def test_cpp_calls_python_with_tensors():
    seen = {}

    @anvil.register_func("test.scale", override=True)
    def scale(x, factor):
        seen["shape"] = x.shape
        x.numpy()[:] *= factor  # the tensor is the caller's memory
        return "done"

    call = anvil.get_global_func("testing.call")
    a = anvil.nd.array(np.ones(3, dtype="float32"))
    assert call(anvil.get_global_func("test.scale"), a, 4) == "done"
    np.testing.assert_array_equal(a.numpy(), [4, 4, 4])
    assert seen["shape"] == (3,)
    # A plain Python callable passes as a function too.
    assert call(lambda x, y: x * y, 6, 7) == 42


def test_python_exception_becomes_user_error():
    @anvil.register_func("test.fail", override=True)
    def fail():
        raise ValueError("broken on purpose")

    with pytest.raises(anvil.UserError, match="broken on purpose"):
        anvil.get_global_func("testing.call")(anvil.get_global_func("test.fail"))


def test_duplicate_registration_is_an_error():
    anvil.register_func("test.once", lambda: 1, override=True)
    with pytest.raises(anvil.UserError):
        anvil.register_func("test.once", lambda: 2)


def test_compiled_kernel_calls_python_and_reports_its_exception():
    seen = {}

    @anvil.register_func("test.kernel_hook", override=True)
    def hook(x, scale):
        seen["shape"], seen["scale"] = x.shape, scale
        if scale < 0:
            raise ValueError("negative scale")
        x.numpy()[:] *= scale  # the kernel's own buffer

    mod = anvil.parse("""
def @main(%x: Tensor[(2, 3), float32], %s: Tensor[(), float32]) -> Tensor[(2, 3), float32] {
  call_tir(@scaled, (%x, %s), Tensor[(2, 3), float32])
}

prim_func scaled(X: float32[2, 3], S: float32[], Y: float32[2, 3]) {
  for i in [0, 6) { Y[i] = X[i] + 1.0f }
  call_packed("test.kernel_hook", Y, S[0])
}
""")
    vm = anvil.runtime.VirtualMachine(anvil.build(mod, target="llvm"))
    x = np.arange(6, dtype="float32").reshape(2, 3)
    y = vm["main"](x, np.array(2.0, dtype="float32"))
    np.testing.assert_array_equal(y.numpy(), (x + 1) * 2)
    assert seen == {"shape": (2, 3), "scale": 2.0}
    with pytest.raises(anvil.UserError,
                       match=r'scaled: call_packed\("test.kernel_hook"\) failed: .*negative scale'):
        vm["main"](x, np.array(-1.0, dtype="float32"))
