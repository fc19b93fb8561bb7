"""Compiler errors arrive as anvil.UserError / anvil.InternalError, never as an abort."""
import numpy as np
import pytest

import anvil
from anvil import frontend, te


def test_error_classes():
    assert issubclass(anvil.UserError, anvil.AnvilError)
    assert issubclass(anvil.InternalError, anvil.AnvilError)
    assert issubclass(anvil.AnvilError, Exception)


def test_invalid_schedule_names_the_primitive():
    A = te.placeholder((8, 8), name="A")
    k = te.reduce_axis((0, 8), name="k")
    C = te.compute((8,), lambda i: te.sum(A[i, k], axis=k), name="C")
    s = te.create_schedule(C)
    with pytest.raises(anvil.UserError, match="vectorize on stage 'C'"):
        s[C].vectorize(C.op.axis[0])


def test_missing_model_file(tmp_path):
    with pytest.raises(anvil.UserError, match="missing.onnx"):
        frontend.from_onnx(str(tmp_path / "missing.onnx"))


def test_unknown_input_name(source_dir):
    with pytest.raises(anvil.UserError, match="nope"):
        frontend.from_onnx(str(source_dir / "models/mobilenet_v2/model.onnx"),
                           shape={"nope": (1, 3, 224, 224)})


def test_kernel_argument_mismatch():
    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i] + 1.0, name="B")
    f = anvil.build(te.create_schedule(B), [A, B], target="llvm")
    with pytest.raises(anvil.UserError, match="shape"):
        f(anvil.nd.empty((5,)), anvil.nd.empty((4,)))


def test_bad_values():
    with pytest.raises(anvil.UserError, match="dtype"):
        te.placeholder((4,), dtype="float33")
    with pytest.raises(anvil.UserError, match="pass"):
        with anvil.PassContext(disabled_pass=["no_such_pass"]):
            A = te.placeholder((4,), name="A")
            B = te.compute((4,), lambda i: A[i], name="B")
            anvil.build(te.create_schedule(B), [A, B], target="llvm")
    with pytest.raises(anvil.UserError):
        anvil.parse("def @main(%x: Tensor[(1,), float32]) { nn.nonexistent(%x) }")
    with pytest.raises(anvil.UserError, match=r"expected float32\[2\], got float32\[3\]"):
        mod = anvil.parse("def @main(%x: Tensor[(2,), float32]) { nn.relu(%x) }")
        m = anvil.runtime.GraphModule(anvil.build(mod, target="llvm")["default"](anvil.cpu()))
        m.set_input("x", np.zeros(3, "float32"))


def test_te_errors_name_the_python_line():
    A = te.placeholder((4, 4), name="A")
    with pytest.raises(anvil.UserError, match=r"test_errors.py:\d+: tensor 'A' has 2 dimensions"):
        te.compute((4,), lambda i: A[i], name="B")
    with pytest.raises(ZeroDivisionError):  # Python errors inside lambdas pass through
        te.compute((4,), lambda i: 1 / 0, name="B")
    with pytest.raises(anvil.UserError, match="expected an expression"):
        te.compute((4,), lambda i: "x", name="B")
