"""Graph IR from Python: text round trip, single passes."""
import numpy as np
import pytest

import anvil

TEXT = """def @main(%x: Tensor[(1, 4), float32]) -> Tensor[(1, 4), float32] {
  %0 = nn.relu(%x) /* ty=Tensor[(1, 4), float32] */;
  %1 = exp(%0) /* ty=Tensor[(1, 4), float32] */;
  %1
}
"""


def test_parse_print_round_trip():
    mod = anvil.parse(TEXT)
    assert anvil.parse(mod.astext()).astext() == mod.astext()
    assert "nn.relu(%x)" in str(mod)


def test_single_pass_and_sequential():
    mod = anvil.parse(TEXT)
    fused = anvil.transform.fuse_ops()(mod)
    assert "primitive=1" in fused.astext()
    seq = anvil.transform.Sequential([anvil.transform.fold_constants(),
                                      anvil.transform.fuse_ops()])
    assert "primitive=1" in seq(mod).astext()
    assert "fold_constants" in anvil.transform.pass_names()


def test_one_pass_runs_alone(source_dir):
    # MobileNetV2: fold_constants alone folds and nothing else happens (no fusion, no packing);
    # the four-pass sequence of a BYOC flow must be able to rely on that.
    path = source_dir / "models" / "mobilenet_v2" / "model.onnx"
    mod, _ = anvil.frontend.from_onnx(str(path), shape={"input": (1, 3, 224, 224)})
    folded = anvil.transform.fold_constants()(mod)
    text = str(folded)
    assert "primitive=1" not in text
    assert text.count("nn.conv2d(") == str(mod).count("nn.conv2d(") == 52
    assert "nn.conv2d_packed" not in text and "layout_transform" not in text
    fused = anvil.transform.fuse_ops()(folded)
    assert "primitive=1" in str(fused)


def test_pass_in_a_target_context(monkeypatch):
    mod = anvil.parse(TEXT)
    # The enclosing target reaches the pass runner, which parses it into the pass's context (a
    # bad one is refused there).
    seen = []
    original = anvil._anvil.run_graph_pass

    def spy(m, name, opt_level, target):
        seen.append(target)
        return original(m, name, opt_level, target)

    monkeypatch.setattr(anvil._anvil, "run_graph_pass", spy)
    aarch64 = anvil.target.Target("llvm -mtriple=aarch64-linux-gnu")
    with aarch64:
        assert "primitive=1" in str(anvil.transform.fuse_ops()(mod))
    assert seen == [str(aarch64)]
    with pytest.raises(anvil.UserError, match="nosuchcpu"):
        original(mod, "fuse_ops", 3, "llvm -mcpu=nosuchcpu")
    with pytest.raises(anvil.UserError, match="unknown graph pass 'fold_constant'"):
        anvil.transform.Pass("fold_constant")(mod)


def test_build_parsed_module_and_run():
    mod = anvil.parse(TEXT)
    m = anvil.runtime.GraphModule(anvil.build(mod, target="llvm")["default"](anvil.cpu(0)))
    x = np.array([[-1, 0, 1, 2]], dtype="float32")
    m.set_input("x", x)
    m.run()
    np.testing.assert_allclose(m.get_output(0).numpy(), np.exp(np.maximum(x, 0)), rtol=1e-5)


def test_build_expressions_in_python():
    from anvil import graph

    x = graph.var("x", shape=(1, 3, 8, 8))
    w = np.random.rand(4, 3, 3, 3).astype("float32")
    y = graph.op.nn.relu(graph.op.nn.conv2d(x, graph.const(w), padding=[1, 1, 1, 1]))
    z = y * 2.0 + 1.0
    assert z.checked_type == "Tensor[(1, 4, 8, 8), float32]"
    mod = graph.IRModule.from_expr(graph.function([x], z))
    assert "nn.conv2d(%x, meta[Constant][0], padding=[1, 1, 1, 1])" in str(mod)
    folded = anvil.transform.fold_constants()(mod)
    assert anvil.parse(folded.astext()).astext() == folded.astext()

    m = anvil.runtime.GraphModule(anvil.build(mod, target="llvm")["default"](anvil.cpu()))
    xv = np.random.rand(1, 3, 8, 8).astype("float32")
    m.run(x=xv)
    # Reference: direct convolution with NumPy.
    pad = np.pad(xv, ((0, 0), (0, 0), (1, 1), (1, 1)))
    ref = np.zeros((1, 4, 8, 8), "float32")
    for i in range(8):
        for j in range(8):
            ref[0, :, i, j] = np.tensordot(w, pad[0, :, i:i + 3, j:j + 3], axes=3)
    np.testing.assert_allclose(m.get_output(0).numpy(), np.maximum(ref, 0) * 2 + 1, rtol=1e-4,
                               atol=1e-4)


def test_graph_op_errors():
    from anvil import graph

    x = graph.var("x", shape=(2, 3))
    with pytest.raises(anvil.UserError, match="no attribute 'bogus'"):
        graph.op.nn.conv2d(x, x, bogus=1)
    with pytest.raises(anvil.UserError):
        graph.op.add(x, graph.var("y", shape=(4, 5)))
    with pytest.raises(AttributeError):
        graph.op.nn.no_such_op
