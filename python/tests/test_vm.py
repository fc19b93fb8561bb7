"""The VM from Python: the Relax tutorial's MLP written as module text (loop-IR kernels, library
functions registered from Python, a mix), weights bound with bind_params; a model with a
symbolic batch compiled once and run at several sizes; run-time shape errors."""
import os
import re

import numpy as np
import pytest

import anvil
from anvil import frontend

MODELS = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "models")

KERNELS = """
prim_func linear(X: float32[n, k], W: float32[m, k], B: float32[m], Z: float32[n, m]) {
  for i in [0, n) {
    for j in [0, m) {
      Z[i, j] = B[j]
      for r in [0, k) { Z[i, j] = Z[i, j] + X[i, r] * W[j, r] }
    }
  }
}

prim_func relu(X: float32[n, m], Y: float32[n, m]) {
  for i in [0, n) {
    for j in [0, m) { Y[i, j] = max(X[i, j], 0.0f) }
  }
}

prim_func linear_via_env(X: float32[n, k], W: float32[m, k], B: float32[m], Z: float32[n, m]) {
  call_packed("env.linear", X, W, B, Z)
}
"""


def mlp_text(linear0, relu, linear1):
    """main: linear -> relu -> linear, each call's head given (up to its callee)."""
    return f"""
def @main(%x: Tensor[(n, 16), float32], %w0: Tensor[(32, 16), float32],
          %b0: Tensor[(32,), float32], %w1: Tensor[(8, 32), float32],
          %b1: Tensor[(8,), float32]) -> Tensor[(n, 8), float32] {{
  dataflow {{
    %lv0 = {linear0}, (%x, %w0, %b0), Tensor[(n, 32), float32]);
    %lv1 = {relu}, (%lv0,), Tensor[(n, 32), float32]);
    %gv = {linear1}, (%lv1, %w1, %b1), Tensor[(n, 8), float32]);
    output %gv;
  }}
  %gv
}}
""" + KERNELS


TIR_LINEAR, TIR_RELU = "call_tir(@linear", "call_tir(@relu"
# A compiled kernel whose body calls the Python function registered as env.linear.
TIR_LINEAR_VIA_ENV = "call_tir(@linear_via_env"
PACKED_LINEAR, PACKED_RELU = 'call_packed("env.linear"', 'call_packed("env.relu"'


@pytest.fixture(scope="module")
def env_functions():
    calls = {"linear": 0, "relu": 0}

    @anvil.register_func("env.linear", override=True)
    def linear(x, w, b, out):  # destination-passing: the VM allocates `out`
        calls["linear"] += 1
        out.numpy()[:] = x.numpy() @ w.numpy().T + b.numpy()

    @anvil.register_func("env.relu", override=True)
    def relu(x, out):
        calls["relu"] += 1
        np.maximum(x.numpy(), 0, out=out.numpy())

    return calls


def mlp_params():
    rng = np.random.default_rng(0)
    shapes = {"w0": (32, 16), "b0": (32,), "w1": (8, 32), "b1": (8,)}
    return {k: rng.uniform(-1, 1, s).astype("float32") for k, s in shapes.items()}


def mlp_reference(x, p):
    h = np.maximum(x @ p["w0"].T + p["b0"], 0)
    return h @ p["w1"].T + p["b1"]


@pytest.mark.parametrize("calls", [
    (TIR_LINEAR, TIR_RELU, TIR_LINEAR),
    (PACKED_LINEAR, PACKED_RELU, PACKED_LINEAR),
    (PACKED_LINEAR, TIR_RELU, TIR_LINEAR),
    (TIR_LINEAR_VIA_ENV, TIR_RELU, TIR_LINEAR_VIA_ENV),
], ids=["tir", "packed", "mixed", "kernel_calls_python"])
def test_hand_written_mlp_runs_on_the_vm(env_functions, calls):
    mod = anvil.parse(mlp_text(*calls))
    params = mlp_params()
    mod = anvil.transform.bind_params("main", params)(mod)
    assert "%w0" not in str(mod)
    before = dict(env_functions)
    vm = anvil.runtime.VirtualMachine(anvil.build(mod, target="llvm"))
    for n in (1, 3, 8):
        x = np.random.default_rng(n).uniform(-1, 1, (n, 16)).astype("float32")
        y = vm["main"](x)
        np.testing.assert_allclose(y.numpy(), mlp_reference(x, params), rtol=1e-4, atol=1e-5)
    packed = sum(c.startswith("call_packed") or "via_env" in c for c in calls)
    assert sum(env_functions.values()) - sum(before.values()) == 3 * packed


def test_build_binds_params_given_apart_from_the_module(env_functions):
    params = mlp_params()
    lib = anvil.build(anvil.parse(mlp_text(TIR_LINEAR, TIR_RELU, TIR_LINEAR)), target="llvm",
                      params=params)
    x = np.ones((2, 16), dtype="float32")
    y = anvil.runtime.VirtualMachine(lib)["main"](x)
    np.testing.assert_allclose(y.numpy(), mlp_reference(x, params), rtol=1e-4, atol=1e-5)


def test_symbolic_batch_model_compiles_once_and_runs_at_every_size(tmp_path):
    model = os.path.join(MODELS, "cnn_dynamic_batch")
    mod, _ = frontend.from_onnx(os.path.join(model, "model.onnx"))
    assert "(n, 3, 32, 32)" in str(mod)
    lib = anvil.build(mod, target="llvm")
    path = tmp_path / "cnn.so"
    lib.export_library(path)  # auto: the VM, since the batch is symbolic
    vm = anvil.runtime.VirtualMachine(anvil.runtime.load_module(path))
    for k in range(3):
        data = os.path.join(model, f"test_data_set_{k}")
        x = anvil.frontend.read_tensor_pb(os.path.join(data, "input_0.pb"))
        want = anvil.frontend.read_tensor_pb(os.path.join(data, "output_0.pb"))
        got = vm["main"](x).numpy()
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4)


def test_shape_buckets_specialize_kernels_and_every_size_still_runs(tmp_path):
    model = os.path.join(MODELS, "cnn_dynamic_batch")
    mod, _ = frontend.from_onnx(os.path.join(model, "model.onnx"))
    lib = anvil.build(mod, target="llvm", shape_buckets={"n": [1, 8]})
    # Each kernel over the batch calls a variant per size; the variants are in the library.
    text = str(lib.ir)
    assert "bucket_dims=(n,)" in text and "bucket_values=[1, 8]" in text
    variants = re.findall(r'"(fused_\w+_n8)"', text)
    assert variants
    for name in variants:
        assert lib[name] is not None
    path = tmp_path / "cnn_buckets.so"
    lib.export_library(path)
    vm = anvil.runtime.VirtualMachine(anvil.runtime.load_module(path))
    for k in range(3):  # batches 1 (a bucket), 3 (none) and 8 (a bucket)
        data = os.path.join(model, f"test_data_set_{k}")
        x = anvil.frontend.read_tensor_pb(os.path.join(data, "input_0.pb"))
        want = anvil.frontend.read_tensor_pb(os.path.join(data, "output_0.pb"))
        got = vm["main"](x).numpy()
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4)


def test_bad_shape_buckets_are_user_errors():
    mod, _ = frontend.from_onnx(os.path.join(MODELS, "cnn_dynamic_batch", "model.onnx"))
    with pytest.raises(anvil.UserError, match="no symbolic dimension 'batch'.*dimensions: n"):
        anvil.build(mod, target="llvm", shape_buckets={"batch": [1]})
    with pytest.raises(anvil.UserError, match="sizes must be positive, not 0"):
        anvil.build(mod, target="llvm", shape_buckets={"n": [0, 4]})
    with pytest.raises(anvil.UserError, match="gives 4 twice"):
        anvil.build(mod, target="llvm", shape_buckets={"n": [4, 4]})
    with pytest.raises(anvil.UserError, match="shape_buckets must map symbolic dimension names"):
        anvil.build(mod, target="llvm", shape_buckets={"n": "1,8"})
    with pytest.raises(anvil.UserError, match="shape_buckets must map"):
        anvil.build(mod, target="llvm", shape_buckets={"n": [1.5]})
    with pytest.raises(anvil.UserError, match="shape_buckets must map"):
        anvil.build(mod, target="llvm", shape_buckets=[("n", [1])])


def test_wrong_input_shape_is_a_user_error():
    lib = anvil.build(anvil.parse(mlp_text(TIR_LINEAR, TIR_RELU, TIR_LINEAR)), target="llvm",
                      params=mlp_params())
    vm = anvil.runtime.VirtualMachine(lib)
    with pytest.raises(anvil.UserError, match=r"input 'x' has shape \[2, 15\], expected \[n, 16\]"):
        vm["main"](np.ones((2, 15), dtype="float32"))


def test_graph_executor_refuses_a_dynamic_model_clearly():
    lib = anvil.build(anvil.parse(mlp_text(TIR_LINEAR, TIR_RELU, TIR_LINEAR)), target="llvm",
                      params=mlp_params())
    with pytest.raises(anvil.UserError, match="use the VM"):
        lib["default"](anvil.cpu(0))


def test_bind_params_errors_name_the_parameter():
    mod = anvil.parse(mlp_text(TIR_LINEAR, TIR_RELU, TIR_LINEAR))
    with pytest.raises(anvil.UserError, match="has no parameter %w9"):
        anvil.transform.bind_params("main", {"w9": np.zeros(2, "float32")})(mod)
    with pytest.raises(anvil.UserError, match=r"parameter %b0 of @main has type"):
        anvil.transform.bind_params("main", {"b0": np.zeros(3, "float32")})(mod)


def test_string_model_takes_and_gives_numpy_str_arrays(tmp_path):
    from onnx import TensorProto, helper

    node = helper.make_node("StringNormalizer", ["x"], ["y"], name="norm",
                            case_change_action="UPPER", stopwords=["the"])
    cast = helper.make_node("Cast", ["n"], ["s"], name="fmt", to=TensorProto.STRING)
    graph = helper.make_graph(
        [node, cast], "strings",
        [helper.make_tensor_value_info("x", TensorProto.STRING, ["k"]),
         helper.make_tensor_value_info("n", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.STRING, None),
         helper.make_tensor_value_info("s", TensorProto.STRING, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    mod, _ = frontend.from_onnx(model)
    path = tmp_path / "strings.so"
    anvil.build(mod, target="llvm").export_library(path)
    vm = anvil.runtime.VirtualMachine(anvil.runtime.load_module(path))
    y, s = vm["main"](np.array(["The", "straße", "énorme"]), np.array([0.5, 1e-5], "float32"))
    assert y.numpy().tolist() == ["STRAßE", "ÉNORME"]
    assert s.numpy().tolist() == ["0.5", "1e-05"]
    with pytest.raises(anvil.UserError, match="has no DLPack form"):
        y.__dlpack__()
    with pytest.raises(anvil.UserError, match="str elements, not int"):
        vm["main"](np.array([1, "a"], dtype=object), np.zeros(2, "float32"))
