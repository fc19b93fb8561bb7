"""The checked mode from Python: PassContext(config={"tir.instrument_bound_checkers": True})."""
import numpy as np
import pytest

import anvil
from anvil import te

SHIFT = """
def @main(%x: Tensor[(4, 16), float32]) -> Tensor[(4, 16), float32] {
  call_tir(@shift, (%x,), Tensor[(4, 16), float32])
}

prim_func shift(X: float32[4, 16], Y: float32[4, 16]) {
  for i in [0, 64) { Y[i] = X[i + 1] }
}
"""


def test_out_of_bounds_kernel_raises_naming_kernel_buffer_and_index():
    with anvil.PassContext(config={"tir.instrument_bound_checkers": True}):
        lib = anvil.build(anvil.parse(SHIFT), target="llvm")
    x = np.arange(64, dtype="float32").reshape(4, 16)
    message = r"kernel shift: buffer 'X' index 64 out of bounds \[0, 64\) \(load\)"
    with pytest.raises(anvil.UserError, match=message):
        anvil.runtime.VirtualMachine(lib)["main"](x)
    module = anvil.runtime.GraphModule(lib["default"](anvil.cpu()))
    module.set_input("x", x)
    with pytest.raises(anvil.UserError, match=message):
        module.run()


def test_checked_schedule_computes_the_same():
    A = te.placeholder((37,), name="A")
    B = te.compute((37,), lambda i: A[i] * 2.0, name="B")
    s = te.create_schedule(B)
    outer, inner = s[B].split(B.op.axis[0], factor=8)
    s[B].vectorize(inner)
    with anvil.PassContext(config={"tir.instrument_bound_checkers": True}):
        f = anvil.build(s, [A, B], target="llvm")
    a = np.arange(37, dtype="float32")
    b = anvil.nd.array(np.zeros(37, dtype="float32"))
    f(anvil.nd.array(a), b)
    np.testing.assert_array_equal(b.numpy(), a * 2)


def test_unknown_or_ill_typed_config_is_refused():
    with pytest.raises(anvil.UserError, match="unknown config key 'tir.instrument_bound_checker'"):
        anvil.PassContext(config={"tir.instrument_bound_checker": True})
    with pytest.raises(anvil.UserError, match="must be True or False"):
        anvil.PassContext(config={"tir.instrument_bound_checkers": "yes"})
