"""ONNX's quantized operators with constant weights, scales and zero points (as quantization
tools write them): QLinearConv, ConvInteger, QLinearMatMul and MatMulInteger import as the QNN
ops (qnn.conv2d, qnn.dense, qnn.requantize) and run on the integer kernels, exactly as ONNX's
definition computes them (integer sums, the float32 scale ratio applied in float64, round half
to even, saturate); forms the QNN ops cannot state (scales given at run time) still import, as
exact float64 compositions."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import anvil
from anvil import frontend

RNG = np.random.default_rng(11)
NP = {"uint8": np.uint8, "int8": np.int8}
ONNX_TYPE = {np.dtype(np.uint8): TensorProto.UINT8, np.dtype(np.int8): TensorProto.INT8,
             np.dtype(np.int32): TensorProto.INT32, np.dtype(np.float32): TensorProto.FLOAT}


def q(shape, dtype):
    info = np.iinfo(NP[dtype])
    return RNG.integers(info.min, info.max + 1, size=shape).astype(NP[dtype])


def model(op, x, inits, out_type, attrs=None, inputs_as_graph_inputs=()):
    """One `op` node on graph input "x" and the named initializers (None: an empty input);
    those in inputs_as_graph_inputs are graph inputs instead (fed at run time)."""
    names = ["x"] + [name for name, _ in inits]
    node = helper.make_node(op, [n if v is not None else "" for n, v in zip(names, [x] + [
        v for _, v in inits])], ["y"], **(attrs or {}))
    graph_inputs = [helper.make_tensor_value_info("x", ONNX_TYPE[x.dtype], x.shape)]
    initializers = []
    for name, v in inits:
        if v is None:
            continue
        if name in inputs_as_graph_inputs:
            graph_inputs.append(helper.make_tensor_value_info(name, ONNX_TYPE[v.dtype], v.shape))
        else:
            initializers.append(numpy_helper.from_array(v, name))
    out = helper.make_tensor_value_info("y", out_type, None)
    g = helper.make_graph([node], op.lower(), graph_inputs, [out], initializers)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def run(m, feeds):
    mod, params = frontend.from_onnx(m)
    lib = anvil.build(mod, target="llvm", params=params)
    g = anvil.runtime.GraphModule(lib["default"](anvil.cpu()))
    g.run(**feeds)
    return str(mod), g.get_output(0).numpy()


def conv_ref(x, w, pads, strides, group):
    """Exact integer convolution (float64 of int values) NCHW x OIHW."""
    x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    kh, kw = w.shape[2:]
    win = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(2, 3))
    win = win[:, :, ::strides[0], ::strides[1]]
    cg, og = w.shape[1], w.shape[0] // group
    outs = [np.einsum("nchwij,ocij->nohw", win[:, g * cg:(g + 1) * cg],
                      w[g * og:(g + 1) * og].astype(np.float64)) for g in range(group)]
    return np.concatenate(outs, axis=1)


def requantize_ref(acc, ratio, y_zp, dtype):
    info = np.iinfo(NP[dtype])
    return np.clip(np.rint(acc * ratio.astype(np.float64)) + float(y_zp), info.min,
                   info.max).astype(NP[dtype])


CONV_CASES = [  # (x shape, w shape, pads, strides, group)
    ((1, 6, 9, 11), (10, 6, 3, 3), [1, 1, 1, 1], [1, 1], 1),
    ((2, 5, 8, 7), (16, 5, 3, 3), [0, 1, 2, 1], [2, 1], 1),
    ((1, 8, 7, 7), (8, 1, 3, 3), [1, 1, 1, 1], [1, 1], 8),
]


@pytest.mark.parametrize("case", CONV_CASES)
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("x_type", ["uint8", "int8"])
def test_qlinearconv_is_qnn_and_exact(case, per_channel, x_type):
    xs, ws, pads, strides, group = case
    x, w = q(xs, x_type), q(ws, "int8")
    o = ws[0]
    x_scale, y_scale = np.float32(0.05), np.float32(0.9)
    w_scale = (RNG.uniform(0.002, 0.02, o) if per_channel else np.array(0.01)).astype(np.float32)
    x_zp = np.array(7 if x_type == "uint8" else -3, NP[x_type])
    w_zp = np.zeros(o if per_channel else (), np.int8)
    y_zp = np.array(120, np.uint8)
    bias = RNG.integers(-2000, 2000, o).astype(np.int32)
    m = model("QLinearConv", x, [("xs", np.array(x_scale)), ("xz", x_zp), ("w", w),
                                 ("ws", w_scale), ("wz", w_zp), ("ys", np.array(y_scale)),
                                 ("yz", y_zp), ("b", bias)],
              TensorProto.UINT8, {"pads": pads, "strides": strides, "group": group})
    text, y = run(m, {"x": x})
    assert "qnn.conv2d" in text and "qnn.requantize" in text
    acc = conv_ref(x.astype(np.int64) - int(x_zp), w.astype(np.int64) - w_zp.reshape(-1, 1, 1, 1)
                   if per_channel else w.astype(np.int64) - int(w_zp), pads, strides, group)
    acc += bias.reshape(1, -1, 1, 1)
    ratio = (x_scale * w_scale / y_scale).astype(np.float32).reshape(1, -1, 1, 1)
    np.testing.assert_array_equal(y, requantize_ref(acc, ratio, y_zp, "uint8"))


def test_qlinearconv_1d():
    x, w = q((1, 4, 13), "uint8"), q((6, 4, 3), "int8")
    m = model("QLinearConv", x, [("xs", np.array(0.1, np.float32)), ("xz", np.array(3, np.uint8)),
                                 ("w", w), ("ws", np.array(0.02, np.float32)),
                                 ("wz", np.array(0, np.int8)), ("ys", np.array(1.5, np.float32)),
                                 ("yz", np.array(-5, np.int8))],
              TensorProto.INT8, {"pads": [1, 1]})
    text, y = run(m, {"x": x})
    assert "qnn.conv2d" in text
    acc = conv_ref((x.astype(np.int64) - 3)[:, :, None, :], w.astype(np.int64)[:, :, None, :],
                   [0, 1, 0, 1], [1, 1], 1)[:, :, 0, :]
    ratio = np.float32(np.float32(0.1) * np.float32(0.02) / np.float32(1.5))
    np.testing.assert_array_equal(y, requantize_ref(acc, np.array(ratio), -5, "int8"))


@pytest.mark.parametrize("with_zero_points", [False, True])
@pytest.mark.parametrize("types", [("uint8", "int8"), ("uint8", "uint8"), ("int8", "int8")])
def test_convinteger_is_qnn_and_exact(with_zero_points, types):
    x, w = q((1, 5, 8, 9), types[0]), q((12, 5, 3, 3), types[1])
    x_zp = np.array(5, NP[types[0]])
    w_zp = q((12,), types[1])  # per output channel
    inits = [("w", w), ("xz", x_zp if with_zero_points else None),
             ("wz", w_zp if with_zero_points else None)]
    m = model("ConvInteger", x, inits, TensorProto.INT32, {"pads": [1, 0, 1, 2]})
    text, y = run(m, {"x": x})
    assert "qnn.conv2d" in text
    xc = x.astype(np.int64) - (int(x_zp) if with_zero_points else 0)
    wc = w.astype(np.int64) - (w_zp.reshape(-1, 1, 1, 1) if with_zero_points else 0)
    assert y.dtype == np.int32
    np.testing.assert_array_equal(y, conv_ref(xc, wc, [1, 0, 1, 2], [1, 1], 1))


@pytest.mark.parametrize("a_shape", [(5, 16), (2, 3, 16)])
@pytest.mark.parametrize("per_column", [False, True])
def test_qlinearmatmul_and_matmulinteger_are_qnn_and_exact(a_shape, per_column):
    a, b = q(a_shape, "uint8"), q((16, 9), "int8")
    a_zp = np.array(100, np.uint8)
    b_zp = (q((9,), "int8") if per_column else np.array(-2, np.int8))
    acc = (a.astype(np.int64) - 100) @ (b.astype(np.int64) - b_zp.astype(np.int64))
    m = model("MatMulInteger", a, [("b", b), ("az", a_zp), ("bz", b_zp)], TensorProto.INT32)
    text, y = run(m, {"x": a})
    assert "qnn.dense" in text
    np.testing.assert_array_equal(y, acc)
    b_scale = (RNG.uniform(0.01, 0.03, 9) if per_column else np.array(0.02)).astype(np.float32)
    m = model("QLinearMatMul", a, [("as", np.array(0.03, np.float32)), ("az", a_zp), ("b", b),
                                   ("bs", b_scale), ("bz", b_zp),
                                   ("ys", np.array(0.7, np.float32)),
                                   ("yz", np.array(-10, np.int8))], TensorProto.INT8)
    text, y = run(m, {"x": a})
    assert "qnn.dense" in text and "qnn.requantize" in text
    ratio = (np.float32(0.03) * b_scale / np.float32(0.7)).astype(np.float32)
    np.testing.assert_array_equal(y, requantize_ref(acc, ratio, -10, "int8"))


def test_scales_given_at_run_time_still_import_exactly():
    """A scale fed as a graph input cannot be a QNN operand (requantize needs constants): the
    node is the float64 composition, with the same results."""
    x, w = q((1, 3, 6, 6), "uint8"), q((4, 3, 3, 3), "int8")
    ys = np.array(0.5, np.float32)
    m = model("QLinearConv", x, [("xs", np.array(0.1, np.float32)), ("xz", np.array(9, np.uint8)),
                                 ("w", w), ("ws", np.array(0.05, np.float32)),
                                 ("wz", np.array(0, np.int8)), ("ys", ys),
                                 ("yz", np.array(3, np.uint8))],
              TensorProto.UINT8, {"pads": [1, 1, 1, 1]}, inputs_as_graph_inputs=("ys",))
    text, y = run(m, {"x": x, "ys": ys})
    assert "qnn.conv2d" not in text
    acc = conv_ref(x.astype(np.int64) - 9, w.astype(np.int64), [1, 1, 1, 1], [1, 1], 1)
    ratio = np.float32(np.float32(0.1) * np.float32(0.05) / np.float32(0.5))
    np.testing.assert_array_equal(y, requantize_ref(acc, np.array(ratio), 3, "uint8"))


# ---- ONNX Runtime's quantized contrib ops (domain com.microsoft) ------------------------------

def build_contrib(op, node_inputs, feeds, inits, attrs=None):
    node = helper.make_node(op, node_inputs, ["y"], domain="com.microsoft", **(attrs or {}))
    graph_inputs = [helper.make_tensor_value_info(n, ONNX_TYPE[v.dtype], v.shape)
                    for n, v in feeds.items()]
    g = helper.make_graph([node], op.lower(), graph_inputs,
                          [helper.make_tensor_value_info("y", TensorProto.UINT8, None)],
                          [numpy_helper.from_array(v, n) for n, v in inits.items()])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                               helper.make_opsetid("com.microsoft", 1)])


def dequantize_ref(x, scale, zp):
    """In float32, as ONNX Runtime computes."""
    return (x.astype(np.float32) - np.float32(zp)) * np.float32(scale)


def quantize_ref(real, scale, zp):
    real = np.asarray(real, np.float32)
    return np.clip(np.rint(real / np.float32(scale)) + zp, 0, 255).astype(np.uint8)


def assert_within_one_step(got, want, exact_fraction=0.99):
    """Every element within one quantization step; `exact_fraction` of them equal (the float
    forms; the integer forms fake_quantization_to_integer makes round twice)."""
    diff = np.abs(got.astype(np.int64) - want.astype(np.int64))
    assert diff.max() <= 1, diff.max()
    assert np.mean(diff == 0) >= exact_fraction


def scalars(**kw):
    return {k: np.array(v, np.float32 if isinstance(v, float) else np.uint8) for k, v in kw.items()}


@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
def test_qlinear_add_and_mul(op):
    a, b = q((2, 8, 5, 5), "uint8"), q((1, 8, 1, 5), "uint8")  # broadcasting
    # Scales whose ratios are not simple fractions: no result lies on a rounding tie, where
    # float32 arithmetic in another order (a fused multiply-add) may round the other way.
    inits = scalars(sa=0.0517, za=128, sb=0.0213, zb=10,
                    sc=0.0831 if op == "QLinearAdd" else 0.307, zc=100)
    m = build_contrib(op, ["a", "sa", "za", "b", "sb", "zb", "sc", "zc"], {"a": a, "b": b}, inits)
    text, y = run(m, {"a": a, "b": b})
    assert "qnn.dequantize" in text and "qnn.quantize" in text
    ra, rb = dequantize_ref(a, 0.0517, 128), dequantize_ref(b, 0.0213, 10)
    real = ra + rb if op == "QLinearAdd" else ra * rb
    assert_within_one_step(y, quantize_ref(real, inits["sc"], 100))


def test_qlinear_concat_global_average_pool_sigmoid_leaky_relu():
    x1, x2 = q((1, 3, 4, 6), "uint8"), q((1, 5, 4, 6), "uint8")
    inits = scalars(sy=0.1, zy=20, s1=0.05, z1=100, s2=0.2, z2=3)
    m = build_contrib("QLinearConcat", ["sy", "zy", "x1", "s1", "z1", "x2", "s2", "z2"],
                      {"x1": x1, "x2": x2}, inits, {"axis": 1})
    _, y = run(m, {"x1": x1, "x2": x2})
    real = np.concatenate([dequantize_ref(x1, 0.05, 100), dequantize_ref(x2, 0.2, 3)], axis=1)
    assert_within_one_step(y, quantize_ref(real, inits["sy"], 20), exact_fraction=0.9)

    x = q((2, 16, 7, 7), "uint8")
    inits = scalars(sx=0.04, zx=60, sy=0.02, zy=5)
    for channels_last in (0, 1):
        m = build_contrib("QLinearGlobalAveragePool", ["x", "sx", "zx", "sy", "zy"], {"x": x},
                          inits, {"channels_last": channels_last})
        _, y = run(m, {"x": x})
        axes = (1, 2) if channels_last else (2, 3)
        real = dequantize_ref(x, 0.04, 60).astype(np.float64).mean(axis=axes, keepdims=True)
        assert_within_one_step(y, quantize_ref(real, inits["sy"], 5), exact_fraction=0.9)

    inits = scalars(sx=0.05, zx=128, sy=1 / 256, zy=0)
    m = build_contrib("QLinearSigmoid", ["x", "sx", "zx", "sy", "zy"], {"x": x}, inits)
    _, y = run(m, {"x": x})
    real = 1 / (1 + np.exp(-dequantize_ref(x, 0.05, 128).astype(np.float64)))
    assert_within_one_step(y, quantize_ref(real, inits["sy"], 0))

    inits = scalars(sx=0.05, zx=128, sy=0.04, zy=100)
    m = build_contrib("QLinearLeakyRelu", ["x", "sx", "zx", "sy", "zy"], {"x": x}, inits,
                      {"alpha": 0.2})
    _, y = run(m, {"x": x})
    r = dequantize_ref(x, 0.05, 128)
    assert_within_one_step(y, quantize_ref(np.where(r > 0, r, 0.2 * r), inits["sy"], 100))


def test_contrib_op_errors_name_the_node():
    x = q((1, 4, 3, 3), "uint8")
    inits = scalars(sx=0.05, zx=1, sy=0.1, zy=2)
    inits["sx"] = np.array([0.05, 0.06], np.float32)  # per channel: not these ops' form
    m = build_contrib("QLinearSigmoid", ["x", "sx", "zx", "sy", "zy"], {"x": x}, inits)
    with pytest.raises(anvil.UserError, match=r"QLinearSigmoid.*input 1 \(scale\) must hold one "
                                              r"value \(per-tensor quantization\)"):
        frontend.from_onnx(m)
    # The same op type in the default domain is no ONNX op.
    m.graph.node[0].domain = ""
    with pytest.raises(anvil.UserError, match="QLinearSigmoid is an op of domain 'com.microsoft'"):
        frontend.from_onnx(m)


def test_contrib_output_without_zero_point_has_the_input_type():
    """ONNX Runtime's type T: an int8 QLinearSigmoid without Y_zero_point returns int8."""
    x = q((1, 4, 3, 3), "int8")
    node = helper.make_node("QLinearSigmoid", ["x", "sx", "zx", "sy"], ["y"],
                            domain="com.microsoft")
    g = helper.make_graph(
        [node], "s", [helper.make_tensor_value_info("x", TensorProto.INT8, x.shape)],
        [helper.make_tensor_value_info("y", TensorProto.INT8, None)],
        [numpy_helper.from_array(np.array(0.05, np.float32), "sx"),
         numpy_helper.from_array(np.array(-3, np.int8), "zx"),
         numpy_helper.from_array(np.array(1 / 256, np.float32), "sy")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                            helper.make_opsetid("com.microsoft", 1)])
    _, y = run(m, {"x": x})
    assert y.dtype == np.int8
    real = 1 / (1 + np.exp(-dequantize_ref(x, 0.05, -3).astype(np.float64)))
    want = np.clip(np.rint(real.astype(np.float32) / np.float32(1 / 256)), -128, 127)
    assert np.abs(y.astype(np.int64) - want).max() <= 1


def test_a_zero_channel_scale_keeps_the_float64_composition():
    """A per-channel weight scale of 0 (an all-zero channel) is no requantization ratio: the
    node computes as ONNX defines it, in the float64 composition."""
    x, w = q((1, 3, 5, 5), "uint8"), q((4, 3, 3, 3), "int8")
    w_scale = np.array([0.01, 0.0, 0.02, 0.03], np.float32)
    m = model("QLinearConv", x, [("xs", np.array(0.1, np.float32)), ("xz", np.array(9, np.uint8)),
                                 ("w", w), ("ws", w_scale), ("wz", np.zeros(4, np.int8)),
                                 ("ys", np.array(0.5, np.float32)),
                                 ("yz", np.array(3, np.uint8))], TensorProto.UINT8)
    text, y = run(m, {"x": x})
    assert "qnn.conv2d" not in text
    acc = conv_ref(x.astype(np.int64) - 9, w.astype(np.int64), [0, 0, 0, 0], [1, 1], 1)
    ratio = (np.float32(0.1) * w_scale / np.float32(0.5)).astype(np.float32).reshape(1, -1, 1, 1)
    np.testing.assert_array_equal(y, requantize_ref(acc, ratio, 3, "uint8"))
