"""anvil.transform.ToMixedPrecision (TVM's relay.transform.ToMixedPrecision): a small CNN in
bfloat16 and float16 against a NumPy float32 reference, within half precision's error, with the
model's signature kept; missing_op_mode; the errors."""
import warnings

import numpy as np
import pytest

import anvil
from anvil import graph

op = graph.op
RNG = np.random.default_rng(3)


def conv2d(x, w, pad):
    """NCHW x OIHW, stride 1, symmetric zero padding `pad`, in float64."""
    x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    kh, kw = w.shape[2:]
    windows = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(2, 3))
    return np.einsum("nchwij,ocij->nohw", windows, w.astype(np.float64))


def weights():
    f = np.float32
    return {
        "w1": (RNG.standard_normal((24, 5, 3, 3)) * 0.3).astype(f),
        "b1": RNG.standard_normal(24).astype(f) * 0.1,
        "w2": (RNG.standard_normal((16, 24, 3, 3)) * 0.1).astype(f),
        "w3": (RNG.standard_normal((16, 24, 1, 1)) * 0.2).astype(f),
        "wd": (RNG.standard_normal((10, 16)) * 0.5).astype(f),
    }


def small_cnn(p):
    """conv-bias-relu, max pool, a residual pair of convs, average pool, dense, softmax."""
    x = graph.var("x", (1, 5, 12, 12))
    y = op.nn.relu(op.nn.bias_add(op.nn.conv2d(x, graph.const(p["w1"]), padding=[1, 1, 1, 1]),
                                  graph.const(p["b1"])))
    y = op.nn.max_pool2d(y, pool_size=[2, 2], strides=[2, 2])
    z = op.add(op.nn.conv2d(y, graph.const(p["w2"]), padding=[1, 1, 1, 1]),
               op.nn.conv2d(y, graph.const(p["w3"])))
    logits = op.nn.dense(op.reshape(op.nn.global_avg_pool2d(z), newshape=[1, 16]),
                         graph.const(p["wd"]))
    body = graph.tuple_([logits, op.nn.softmax(logits)])
    return graph.IRModule.from_expr(graph.function([x], body))


def reference(p, x):
    y = np.maximum(conv2d(x, p["w1"], 1) + p["b1"].reshape(1, -1, 1, 1), 0)
    y = y.reshape(1, 24, 6, 2, 6, 2).max(axis=(3, 5))
    z = conv2d(y, p["w2"], 1) + conv2d(y, p["w3"], 0)
    logits = z.mean(axis=(2, 3)) @ p["wd"].T.astype(np.float64)
    e = np.exp(logits - logits.max())
    return logits, e / e.sum()


def run(mod, x):
    m = anvil.runtime.GraphModule(anvil.build(mod, target="llvm")["default"](anvil.cpu()))
    m.run(x=x)
    return [m.get_output(i).numpy() for i in range(2)]


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_small_cnn_within_half_precision_of_float32(dtype):
    p = weights()
    x = RNG.standard_normal((1, 5, 12, 12)).astype(np.float32)
    mod = anvil.transform.ToMixedPrecision(dtype)(small_cnn(p))
    text = str(mod)
    assert dtype in text and 'out_dtype="float32"' in text
    logits, probs = run(mod, x)
    want_logits, want_probs = reference(p, x)
    # The signature is kept: float32 outputs.
    assert logits.dtype == np.float32 and probs.dtype == np.float32
    # bfloat16 keeps 8 significant bits, float16 11: a few roundings of each per layer.
    tolerance = 0.04 if dtype == "bfloat16" else 0.01
    scale = np.abs(want_logits).max()
    np.testing.assert_allclose(logits, want_logits, atol=tolerance * scale)
    np.testing.assert_allclose(probs, want_probs, atol=tolerance)
    assert logits.argmax() == want_logits.argmax()


def test_same_model_in_float32_is_exact_to_float32_rounding():
    """The reference itself: the float32 build agrees to float32 precision (so the tolerance
    above measures the half type, not the test)."""
    p = weights()
    x = RNG.standard_normal((1, 5, 12, 12)).astype(np.float32)
    logits, _ = run(small_cnn(p), x)
    want, _ = reference(p, x)
    np.testing.assert_allclose(logits, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())


def missing_op_module():
    x = graph.var("x", (4, 4))
    return graph.IRModule.from_expr(graph.function([x], op.trilu(op.nn.relu(x), graph.const(0))))


def test_missing_op_mode_raises_warns_or_stays_silent():
    mod = missing_op_module()
    with pytest.raises(anvil.UserError, match="stay float32: trilu"):
        anvil.transform.ToMixedPrecision("bfloat16", missing_op_mode=0)(mod)
    with pytest.warns(UserWarning, match="not in the mixed precision table.*trilu"):
        anvil.transform.ToMixedPrecision("bfloat16")(mod)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = anvil.transform.ToMixedPrecision("bfloat16", missing_op_mode=2)(mod)
    # The relu reads the float32 input (a follower stays float32), trilu is missing: nothing
    # changes, and the model computes as before.
    assert "bfloat16" not in str(out)
    x = RNG.standard_normal((4, 4)).astype(np.float32)
    m = anvil.runtime.GraphModule(anvil.build(out, target="llvm")["default"](anvil.cpu()))
    m.run(x=x)
    np.testing.assert_array_equal(m.get_output(0).numpy(), np.triu(np.maximum(x, 0)))


def test_the_pass_by_its_graph_pass_name_defaults_to_bfloat16():
    mod = anvil.transform.to_mixed_precision()(small_cnn(weights()))
    assert "bfloat16" in str(mod)


def test_errors_name_the_argument():
    mod = small_cnn(weights())
    with pytest.raises(anvil.UserError, match='mixed_precision_type must be "bfloat16" or '
                                              '"float16", got "int8"'):
        anvil.transform.ToMixedPrecision("int8")(mod)
    with pytest.raises(anvil.UserError, match="missing_op_mode must be 0, 1 or 2, not 3"):
        anvil.transform.ToMixedPrecision("bfloat16", missing_op_mode=3)


def test_matrix_products_and_transposed_convolutions_sum_in_float32():
    """The other products of the table: nn.batch_matmul, nn.matmul and nn.conv2d_transpose take
    bfloat16 operands and sum in float32, against NumPy."""
    a = RNG.standard_normal((2, 5, 24)).astype(np.float32)
    b = (RNG.standard_normal((2, 24, 7)) * 0.3).astype(np.float32)
    m2 = (RNG.standard_normal((7, 3)) * 0.3).astype(np.float32)
    x = RNG.standard_normal((1, 6, 5, 4)).astype(np.float32)
    w = (RNG.standard_normal((6, 3, 3, 2)) * 0.3).astype(np.float32)  # [C, O, KH, KW]
    va, vx = graph.var("a", a.shape), graph.var("x", x.shape)
    bm = op.nn.batch_matmul(va, graph.const(b))
    mm = op.nn.matmul(bm, graph.const(m2))
    ct = op.nn.conv2d_transpose(vx, graph.const(w))
    mod = graph.IRModule.from_expr(graph.function([va, vx], graph.tuple_([mm, ct])))
    mod = anvil.transform.ToMixedPrecision("bfloat16")(mod)
    text = str(mod)
    for name in ("nn.batch_matmul", "nn.matmul", "nn.conv2d_transpose"):
        line = next(x for x in text.splitlines() if name + "(" in x)
        assert 'out_dtype="float32"' in line and "bfloat16" in text, line
    m = anvil.runtime.GraphModule(anvil.build(mod, target="llvm")["default"](anvil.cpu()))
    m.run(a=a, x=x)
    got_mm, got_ct = m.get_output(0).numpy(), m.get_output(1).numpy()
    want_mm = (a.astype(np.float64) @ b) @ m2
    want_ct = np.zeros((1, 3, 7, 5))
    for p in range(3):
        for q in range(2):
            want_ct[:, :, p:p + 5, q:q + 4] += np.einsum("nchw,co->nohw", x, w[:, :, p, q])
    for got, want in ((got_mm, want_mm), (got_ct, want_ct)):
        assert got.dtype == np.float32 and got.shape == want.shape
        np.testing.assert_allclose(got, want, atol=0.03 * np.abs(want).max())
