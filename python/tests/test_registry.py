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
