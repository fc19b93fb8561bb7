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


def _onnx_model(node, inputs, opset):
    from onnx import TensorProto, helper
    graph = helper.make_graph(
        [node], "bad", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
        [helper.make_tensor_value_info(node.output[0], TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def test_onnx_errors_name_the_model_node():
    onnx = pytest.importorskip("onnx")
    helper = onnx.helper
    # Shapes that do not broadcast: the message names the node, its op type and the opset.
    bad_add = _onnx_model(helper.make_node("Add", ["x", "y"], ["z"], name="add_7"),
                          [("x", [2, 3]), ("y", [4, 5])], opset=13)
    with pytest.raises(anvil.UserError,
                       match=r"node 'add_7' \(Add, opset 13\): .*cannot be broadcast"):
        frontend.from_onnx(bad_add)
    # An op the importer does not know.
    unknown = _onnx_model(helper.make_node("NoSuchOp", ["x"], ["z"], name="mystery"),
                          [("x", [2, 3])], opset=11)
    with pytest.raises(anvil.UserError, match=r"node 'mystery' \(NoSuchOp, opset 11\): "
                                              r"op NoSuchOp is not supported"):
        frontend.from_onnx(unknown)
    # Serialized bytes work the same way.
    bad_matmul = _onnx_model(helper.make_node("MatMul", ["a", "b"], ["c"], name="mm"),
                             [("a", [2, 3]), ("b", [4, 5])], opset=13)
    with pytest.raises(anvil.UserError) as info:
        frontend.from_onnx(bad_matmul.SerializeToString())
    assert "node 'mm' (MatMul, opset 13)" in str(info.value)


def test_onnx_error_from_a_file_names_the_file(tmp_path):
    onnx = pytest.importorskip("onnx")
    path = tmp_path / "broken.onnx"
    onnx.save(_onnx_model(onnx.helper.make_node("NoSuchOp", ["x"], ["z"], name="n0"),
                          [("x", [1])], opset=13), str(path))
    with pytest.raises(anvil.UserError, match=r"broken.onnx: node 'n0' \(NoSuchOp, opset 13\)"):
        frontend.from_onnx(path)


def test_internal_error_from_cpp():
    # A C++ function that fails as a compiler bug does (internal_error() << ...), called through
    # the registry and the C ABI: Python sees anvil.InternalError naming the C++ location.
    boom = anvil.get_global_func("testing.raise_internal_error")
    with pytest.raises(anvil.InternalError,
                       match=r"internal error at .*runtime\.cpp:\d+: invariant broken") as info:
        boom("invariant broken")
    assert not isinstance(info.value, anvil.UserError)
    assert isinstance(info.value, anvil.AnvilError)


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
