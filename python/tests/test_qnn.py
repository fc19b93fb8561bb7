"""The QNN dialect against NumPy integer references: every op at odd shapes, per-tensor and
per-channel, through canonicalize_qnn and the kernels it lowers to."""
import base64
import math

import numpy as np
import pytest

import anvil
from anvil import graph
from anvil.graph.dataflow_pattern import (DFPatternCallback, is_constant, is_op, rewrite,
                                          wildcard)

qnn = graph.op.qnn
RNG = np.random.default_rng(7)
RANGES = {"uint8": (0, 255), "int8": (-128, 127), "int16": (-32768, 32767),
          "int32": (-2**31, 2**31 - 1)}


def run(params, outputs, inputs):
    """Builds main(params) -> outputs and runs it on `inputs` (name -> array)."""
    body = outputs[0] if len(outputs) == 1 else graph.tuple_(outputs)
    mod = graph.IRModule.from_expr(graph.function(params, body))
    m = anvil.runtime.GraphModule(anvil.build(mod, target="llvm")["default"](anvil.cpu()))
    m.run(**inputs)
    return [m.get_output(i).numpy() for i in range(len(outputs))]


def random_q(shape, dtype):
    lo, hi = RANGES[dtype]
    return RNG.integers(lo, hi + 1, size=shape).astype(dtype)


def along(p, rank, axis):
    """A per-axis parameter shaped to broadcast against a tensor of `rank` along `axis`."""
    p = np.asarray(p)
    if p.ndim == 0 or p.size == 1:
        return p.reshape(())
    axis = axis % rank
    return p.reshape((p.size,) + (1,) * (rank - axis - 1))


# ---- references -----------------------------------------------------------------------------

def fixed_point(ratio):
    """TFLite's QuantizeMultiplier: ratio = m * 2^(shift - 31), m in [2^30, 2^31)."""
    sig, exp = math.frexp(ratio)
    m = math.floor(sig * 2**31 + 0.5)
    if m == 2**31:
        m //= 2
        exp += 1
    if exp < -31:
        return 0, 0
    return m, exp


def fixed_point_multiply(x, m, s, rounding):
    """x * m * 2^(s - 31) rounded; int64 arrays; TFLITE as TFLite's reference kernels."""
    x, m, s = (np.asarray(v, np.int64) for v in (x, m, s))
    if rounding == "TFLITE":
        left, right = np.maximum(s, 0), np.maximum(-s, 0)
        a = np.clip(x << left, -2**31, 2**31 - 1)
        ab = a * m
        nudge = np.where(ab >= 0, 1 << 30, 1 - (1 << 30))
        v = ab + nudge
        high = np.where(v >= 0, v // 2**31, -((-v) // 2**31))  # truncating, as C
        mask = (np.int64(1) << right) - 1
        remainder = high & mask
        threshold = (mask >> 1) + (high < 0)
        r = (high >> right) + (remainder > threshold)
    else:
        total = 31 - s
        v = x * m
        half = np.int64(1) << (total - 1)
        if rounding == "TONEAREST":
            half = half - (v < 0)
        r = (v + half) >> total
    return np.clip(r, -2**31, 2**31 - 1)


def requantize_ref(q, in_scale, in_zp, out_scale, out_zp, axis, rounding, out_dtype):
    in_scale = np.atleast_1d(np.asarray(in_scale, np.float32)).astype(np.float64)
    pairs = [fixed_point(float(s) / float(np.float32(out_scale))) for s in in_scale]
    m = along(np.array([p[0] for p in pairs]), q.ndim, axis)
    s = along(np.array([p[1] for p in pairs]), q.ndim, axis)
    x = q.astype(np.int64) - along(in_zp, q.ndim, axis)
    y = fixed_point_multiply(x, m, s, rounding) + out_zp
    lo, hi = RANGES[out_dtype]
    return np.clip(y, lo, hi).astype(out_dtype)


def quantize_ref(x, scale, zp, axis, dtype):
    q = np.round(x / along(np.float32(scale), x.ndim, axis)) + along(zp, x.ndim, axis)
    lo, hi = RANGES[dtype]
    return np.clip(q, lo, hi).astype(dtype)


def conv2d_ref(x, w, strides, padding, dilation, groups):
    """int64 NCHW / OIHW convolution by explicit windows."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (padding[0], padding[2]), (padding[1], padding[3])))
    oh = (xp.shape[2] - dilation[0] * (kh - 1) - 1) // strides[0] + 1
    ow = (xp.shape[3] - dilation[1] * (kw - 1) - 1) // strides[1] + 1
    out = np.zeros((n, o, oh, ow), np.result_type(x, w, np.int64))
    og = o // groups
    for oc in range(o):
        g = oc // og
        for i in range(kh):
            for j in range(kw):
                rows = xp[:, g * cg:(g + 1) * cg,
                          i * dilation[0]: i * dilation[0] + strides[0] * (oh - 1) + 1: strides[0],
                          j * dilation[1]: j * dilation[1] + strides[1] * (ow - 1) + 1: strides[1]]
                out[:, oc] += np.einsum("nchw,c->nhw", rows, w[oc, :, i, j])
    return out


def conv2d_transpose_ref(x, w, strides, padding, output_padding):
    """int64 NCHW / IOHW transposed convolution (one group) by scattering each input pixel."""
    n, c, h, wd = x.shape
    _, o, kh, kw = w.shape
    full_h = (h - 1) * strides[0] + kh + output_padding[0]
    full_w = (wd - 1) * strides[1] + kw + output_padding[1]
    full = np.zeros((n, o, full_h, full_w), np.int64)
    for i in range(h):
        for j in range(wd):
            contrib = np.einsum("nc,cokl->nokl", x[:, :, i, j], w)
            rows = slice(i * strides[0], i * strides[0] + kh)
            cols = slice(j * strides[1], j * strides[1] + kw)
            full[:, :, rows, cols] += contrib
    return full[:, :, padding[0]: full_h - padding[2], padding[1]: full_w - padding[3]]


# ---- quantize, dequantize, requantize -------------------------------------------------------

@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16"])
@pytest.mark.parametrize("per_axis", [False, True])
def test_quantize_dequantize(dtype, per_axis):
    shape = (2, 5, 3, 7)
    xv = RNG.uniform(-6, 6, shape).astype(np.float32)
    lo, hi = RANGES[dtype]
    if per_axis:
        scale = RNG.uniform(0.01, 0.08, 5).astype(np.float32)
        zp = RNG.integers(max(lo, -20), min(hi, 20) + 1, 5).astype(np.int32)
    else:
        scale, zp = np.float32(0.037), np.int32(0 if lo < 0 else 117)
    x = graph.var("x", shape=shape)
    q = qnn.quantize(x, scale, zp, out_dtype=dtype, axis=1)
    d = qnn.dequantize(q, scale, zp, axis=1)
    qv, dv = run([x], [q, d], {"x": xv})
    want = quantize_ref(xv, scale, zp, 1, dtype)
    np.testing.assert_array_equal(qv, want)
    want_d = ((want.astype(np.int32) - along(zp, 4, 1)).astype(np.float32)
              * along(scale, 4, 1))
    np.testing.assert_allclose(dv, want_d, rtol=1e-6)


@pytest.mark.parametrize("rounding", ["UPWARD", "TONEAREST", "TFLITE"])
@pytest.mark.parametrize("per_axis", [False, True])
@pytest.mark.parametrize("out_dtype", ["uint8", "int8", "int32"])
def test_requantize(rounding, per_axis, out_dtype):
    shape = (3, 6, 5)
    # int32 accumulators, with exact ties of every rounding among them (multiples of 2^k).
    qv = RNG.integers(-2**20, 2**20, shape).astype(np.int32)
    qv.ravel()[::7] = (np.arange(qv.size)[::7] % 64 - 32) * 64
    in_scale = (RNG.uniform(1e-4, 2e-3, 6).astype(np.float32) if per_axis
                else np.float32(3.0517578125e-05 * 3))
    in_zp = np.int32(5)
    out_scale, out_zp = np.float32(0.0625), np.int32(-3 if out_dtype != "uint8" else 120)
    x = graph.var("x", shape=shape, dtype="int32")
    y = qnn.requantize(x, in_scale, in_zp, out_scale, out_zp, axis=1, rounding=rounding,
                       out_dtype=out_dtype)
    got, = run([x], [y], {"x": qv})
    want = requantize_ref(qv, in_scale, in_zp, out_scale, out_zp, 1, rounding, out_dtype)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("compute_dtype", ["float32", "float64"])
@pytest.mark.parametrize("per_axis", [False, True])
def test_requantize_in_float(compute_dtype, per_axis):
    # compute_dtype: (q - in_zp) * (in_scale / out_scale) in that type, rounded half to even,
    # as ONNX Runtime's and PyTorch's kernels requantize.
    ft = np.dtype(compute_dtype)
    shape = (2, 5, 7)
    qv = RNG.integers(-2**20, 2**20, shape).astype(np.int32)
    in_scale = (RNG.uniform(1e-4, 2e-3, 5).astype(np.float32) if per_axis
                else np.float32(1.7e-4))
    out_scale, out_zp = np.float32(0.0625), 17
    x = graph.var("x", shape=shape, dtype="int32")
    y = qnn.requantize(x, in_scale, 3, out_scale, out_zp, axis=1, compute_dtype=compute_dtype,
                       out_dtype="uint8")
    got, = run([x], [y], {"x": qv})
    ratio = (np.asarray(in_scale).astype(ft) / ft.type(out_scale)).astype(ft)
    want = np.round((qv - 3).astype(ft) * along(ratio, 3, 1)) + out_zp
    np.testing.assert_array_equal(got, np.clip(want, 0, 255).astype(np.uint8))
    with pytest.raises(anvil.UserError, match='compute_dtype "int8" is not one of'):
        qnn.requantize(x, in_scale, 3, out_scale, out_zp, axis=1, compute_dtype="int8")
    zero_out = qnn.requantize(x, in_scale, 3, np.float32(0), out_zp, axis=1,
                              compute_dtype=compute_dtype, out_dtype="uint8")
    with pytest.raises(anvil.UserError, match="must be positive and finite"):
        run([x], [zero_out], {"x": qv})


def test_nested_attribute_lists_are_rows_of_one_length():
    x = graph.var("x", shape=(1, 2), dtype="uint8")
    y = graph.op.nn.pad(x, pad_width=((0, 1), (2, 0)))
    assert "pad_width=[0, 1, 2, 0]" in graph.IRModule.from_expr(graph.function([x], y)).astext()
    with pytest.raises(anvil.UserError, match="must be rows of one length"):
        graph.op.nn.pad(x, pad_width=((0, 1), (2,)))


def test_requantize_scale_ratios_above_one_and_tiny():
    qv = np.arange(-300, 300, 7, dtype=np.int32).reshape(1, -1)
    x = graph.var("x", shape=qv.shape, dtype="int32")
    for ratio, rounding in [(37.25, "TFLITE"), (3.0, "UPWARD"), (1e-12, "TONEAREST")]:
        y = qnn.requantize(x, np.float32(ratio), 0, np.float32(1.0), 0, rounding=rounding,
                           out_dtype="int32")
        got, = run([x], [y], {"x": qv})
        want = requantize_ref(qv, np.float32(ratio), 0, 1.0, 0, -1, rounding, "int32")
        np.testing.assert_array_equal(got, want, err_msg=f"ratio {ratio}")


def test_fixed_point_form_of_tflite():
    # TFLite's QuantizeMultiplier(0.5) = (2^30, 0), (0.75) = (3 * 2^29, 0), (2.0) = (2^30, 2).
    assert fixed_point(0.5) == (2**30, 0)
    assert fixed_point(0.75) == (3 * 2**29, 0)
    assert fixed_point(2.0) == (2**30, 2)
    # MultiplyByQuantizedMultiplier(x, 2^30, -1) is x / 4 rounded twice, as TFLite does: the
    # doubling high multiply rounds x / 2 half away from zero, the divide by 2 rounds again
    # (5 -> 2.5 -> 3 -> 1.5 -> 2, but -5 -> -2.5 -> -2 (truncated nudge) -> -1).
    got = fixed_point_multiply(np.array([-6, -5, -2, 2, 5, 6]), 2**30, -1, "TFLITE")
    np.testing.assert_array_equal(got, [-2, -1, -1, 1, 2, 2])
    x = graph.var("x", shape=(6,), dtype="int32")
    y = graph.op.fixed_point_multiply(x, 2**30, -1, rounding="TFLITE")
    kernel, = run([x], [y], {"x": np.array([-6, -5, -2, 2, 5, 6], np.int32)})
    np.testing.assert_array_equal(kernel, got)


# ---- products -------------------------------------------------------------------------------

@pytest.mark.parametrize("case", [
    dict(groups=1, strides=(1, 1), padding=(1, 1, 1, 1), dilation=(1, 1), per_channel=True),
    dict(groups=1, strides=(2, 1), padding=(0, 2, 1, 0), dilation=(1, 2), per_channel=False),
    dict(groups=3, strides=(1, 2), padding=(2, 1, 0, 1), dilation=(1, 1), per_channel=True),
    dict(groups=6, strides=(2, 2), padding=(1, 1, 1, 1), dilation=(1, 1), per_channel=True),
])
@pytest.mark.parametrize("data_dtype", ["uint8", "int8"])
def test_conv2d(case, data_dtype):
    g = case["groups"]
    xv = random_q((2, 6, 9, 11), data_dtype)
    wv = random_q((9 if g != 6 else 6, 6 // g, 3, 3), "int8")
    o = wv.shape[0]
    x_zp = np.int32(128 if data_dtype == "uint8" else -3)
    w_zp = (RNG.integers(-4, 5, o).astype(np.int32) if case["per_channel"] else np.int32(2))
    w_scale = (RNG.uniform(0.001, 0.01, o).astype(np.float32) if case["per_channel"]
               else np.float32(0.004))
    x = graph.var("x", shape=xv.shape, dtype=data_dtype)
    y = qnn.conv2d(x, wv, x_zp, w_zp, np.float32(0.02), w_scale, strides=list(case["strides"]),
                   padding=list(case["padding"]), dilation=list(case["dilation"]), groups=g,
                   channels=o, kernel_size=[3, 3])
    got, = run([x], [y], {"x": xv})
    # Padding holds the data's zero point (the real value 0).
    p = case["padding"]
    xs = np.pad(xv.astype(np.int64), ((0, 0), (0, 0), (p[0], p[2]), (p[1], p[3])),
                constant_values=int(x_zp)) - int(x_zp)
    want = conv2d_ref(xs, wv.astype(np.int64) - along(w_zp, 4, 0), case["strides"], (0, 0, 0, 0),
                      case["dilation"], g)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, want)


def test_conv2d_requantize_relu_chain_as_pytorch_prints_it():
    # The layer of the issue: quantize, conv, bias, requantize, clip, cast.
    xv = RNG.uniform(-2, 2, (1, 3, 10, 10)).astype(np.float32)
    wf = RNG.uniform(-0.3, 0.3, (8, 3, 3, 3)).astype(np.float32)
    bf = RNG.uniform(-0.1, 0.1, 8).astype(np.float32)
    s_in, zp_in = np.float32(0.0186579), 114
    s_w, s_out = np.float32(0.00288958), np.float32(0.0150183)
    x = graph.var("input", shape=xv.shape)
    q = qnn.quantize(x, s_in, zp_in, out_dtype="uint8", axis=1)
    w = qnn.quantize(graph.const(wf), s_w, 0, out_dtype="int8", axis=0)
    c = qnn.conv2d(q, w, zp_in, 0, s_in, s_w, strides=[2, 2], padding=[1, 1, 1, 1], channels=8,
                   kernel_size=[3, 3], out_dtype="int32")
    b = qnn.quantize(graph.const(bf), np.float32(s_in * s_w), 0, out_dtype="int32", axis=0)
    acc = graph.op.nn.bias_add(c, b)
    r = qnn.requantize(acc, np.float32(s_in * s_w), 0, s_out, 0, axis=1, out_dtype="int32")
    y = graph.op.cast(graph.op.clip(r, a_min=0.0, a_max=255.0), dtype="uint8")
    got, = run([x], [y], {"input": xv})
    qx = quantize_ref(xv, s_in, zp_in, 1, "uint8").astype(np.int64)
    qw = quantize_ref(wf, s_w, 0, 0, "int8").astype(np.int64)
    qb = quantize_ref(bf, np.float32(s_in * s_w), 0, 0, "int32").astype(np.int64)
    xs = np.pad(qx, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=zp_in) - zp_in
    accv = conv2d_ref(xs, qw, (2, 2), (0, 0, 0, 0), (1, 1), 1) + qb.reshape(8, 1, 1)
    want = np.clip(requantize_ref(accv, np.float32(s_in * s_w), 0, s_out, 0, 1, "UPWARD",
                                  "int32"), 0, 255).astype(np.uint8)
    np.testing.assert_array_equal(got, want)
    # And it approximates the float layer: quantization error of a few output steps at most.
    xp = np.pad(xv.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    real = np.maximum(conv2d_ref(xp, wf.astype(np.float64), (2, 2), (0, 0, 0, 0), (1, 1), 1)
                      + bf.reshape(8, 1, 1), 0)
    assert np.abs(got - np.clip(real / s_out, 0, 255)).max() < 4


@pytest.mark.parametrize("per_channel", [False, True])
def test_conv2d_transpose(per_channel):
    xv = random_q((1, 4, 5, 6), "uint8")
    wv = random_q((4, 5, 3, 3), "int8")
    w_zp = RNG.integers(-3, 4, 5).astype(np.int32) if per_channel else np.int32(1)
    w_scale = np.full(5, 0.01, np.float32) if per_channel else np.float32(0.01)
    x = graph.var("x", shape=xv.shape, dtype="uint8")
    y = qnn.conv2d_transpose(x, wv, 100, w_zp, np.float32(0.1), w_scale, strides=[2, 2],
                             padding=[1, 0, 1, 1], output_padding=[1, 0])
    got, = run([x], [y], {"x": xv})
    want = conv2d_transpose_ref(xv.astype(np.int64) - 100,
                                wv.astype(np.int64) - along(w_zp, 4, 1), (2, 2), (1, 0, 1, 1),
                                (1, 0))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("data_dtype", ["uint8", "int8"])
def test_dense(per_channel, data_dtype):
    xv = random_q((3, 37), data_dtype)
    wv = random_q((13, 37), "int8")
    w_zp = RNG.integers(-3, 4, 13).astype(np.int32) if per_channel else np.int32(-1)
    w_scale = np.full(13, 0.02, np.float32) if per_channel else np.float32(0.02)
    x = graph.var("x", shape=xv.shape, dtype=data_dtype)
    y = qnn.dense(x, wv, 7, w_zp, np.float32(0.1), w_scale, units=13)
    got, = run([x], [y], {"x": xv})
    want = (xv.astype(np.int64) - 7) @ (wv.astype(np.int64) - along(w_zp, 2, 0)).T
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("transpose_b", [True, False])
def test_batch_matmul(transpose_b):
    av = random_q((2, 5, 19), "int8")
    bv = random_q((2, 7, 19) if transpose_b else (2, 19, 7), "int8")
    a = graph.var("a", shape=av.shape, dtype="int8")
    b = graph.var("b", shape=bv.shape, dtype="int8")
    y = qnn.batch_matmul(a, b, 3, -2, np.float32(0.1), np.float32(0.2), transpose_b=transpose_b)
    got, = run([a, b], [y], {"a": av, "b": bv})
    bm = bv.astype(np.int64) + 2
    want = (av.astype(np.int64) - 3) @ (bm.transpose(0, 2, 1) if transpose_b else bm)
    np.testing.assert_array_equal(got, want)


# ---- elementwise, concatenate, pooling, activations -----------------------------------------

def within_one_step(got, ideal, dtype):
    lo, hi = RANGES[dtype]
    want = np.clip(np.round(ideal), lo, hi)
    diff = np.abs(got.astype(np.int64) - want)
    assert diff.max() <= 1, diff.max()
    assert (diff == 0).mean() > 0.9


@pytest.mark.parametrize("op", ["add", "subtract", "mul"])
@pytest.mark.parametrize("dtype", ["uint8", "int8"])
def test_binary(op, dtype):
    lv = random_q((2, 3, 5), dtype)
    rv = random_q((3, 1), dtype)
    ls, lz, rs, rz, os_, oz = 0.05, 10, 0.03, -4, 0.07, 3
    if dtype == "uint8":
        lz, rz, oz = 130, 120, 128
    if op == "mul":
        os_ = 2.0
    lhs = graph.var("l", shape=lv.shape, dtype=dtype)
    rhs = graph.var("r", shape=rv.shape, dtype=dtype)
    y = getattr(qnn, op)(lhs, rhs, np.float32(ls), lz, np.float32(rs), rz, np.float32(os_), oz)
    got, = run([lhs, rhs], [y], {"l": lv, "r": rv})
    a = (lv.astype(np.float64) - lz) * np.float32(ls)
    b = (rv.astype(np.float64) - rz) * np.float32(rs)
    real = {"add": a + b, "subtract": a - b, "mul": a * b}[op]
    assert got.dtype == np.dtype(dtype)
    within_one_step(got, real / np.float32(os_) + oz, dtype)


def test_mul_per_channel_lhs_scale():
    lv = random_q((2, 4, 3), "int8")
    rv = random_q((3,), "int8")
    ls = np.array([0.01, 0.02, 0.03, 0.04], np.float32)
    lhs = graph.var("l", shape=lv.shape, dtype="int8")
    rhs = graph.var("r", shape=rv.shape, dtype="int8")
    y = qnn.mul(lhs, rhs, ls, 0, np.float32(0.05), 1, np.float32(0.002), -2, lhs_axis=1)
    got, = run([lhs, rhs], [y], {"l": lv, "r": rv})
    rhs_real = (rv.astype(np.float64) - 1) * np.float32(0.05)
    real = lv.astype(np.float64) * ls.reshape(4, 1) * rhs_real
    within_one_step(got, real / np.float32(0.002) - 2, "int8")


@pytest.mark.parametrize("dtype", ["int16", "int32"])
def test_mul_of_wide_operands_does_not_overflow(dtype):
    """16- and 32-bit operands less their zero points multiply past int32 (int16 ones with zero
    points far from 0): the product is exact (int16) or rounded once at 53 bits (int32), scaled
    and rounded half up."""
    lv = random_q((3, 17), dtype)
    rv = random_q((17,), dtype)
    lz, rz = (-20000, 20000) if dtype == "int16" else (-5, 7)
    lv[0, 0], rv[0] = RANGES[dtype][1], RANGES[dtype][0]  # the largest product's magnitude
    if dtype == "int32":  # products up to 2^60: float64 rounds them, the scale keeps them in range
        lv, rv = lv // 2, rv // 2
    lhs = graph.var("l", shape=lv.shape, dtype=dtype)
    rhs = graph.var("r", shape=rv.shape, dtype=dtype)
    ls, rs = np.float32(0.003), np.float32(0.0007)
    out_scale = np.float32(2.0 ** -2 if dtype == "int16" else 2.0 ** 20)
    y = qnn.mul(lhs, rhs, ls, lz, rs, rz, out_scale, 3)
    got, = run([lhs, rhs], [y], {"l": lv, "r": rv})
    product = (lv.astype(np.float64) - lz) * (rv.astype(np.float64) - rz)
    ratio = np.float64(ls) * np.float64(rs) / np.float64(out_scale)
    lo, hi = RANGES[dtype]
    want = np.clip(np.floor(product * ratio + 0.5) + 3, lo, hi)
    assert got.dtype == np.dtype(dtype)
    assert np.abs(got.astype(np.float64) - want).max() <= 1
    assert (got.astype(np.float64) == want).mean() > 0.99
    # The int32 products would have wrapped: some of these overflow it.
    assert np.abs((lv.astype(np.int64) - lz) * (rv.astype(np.int64) - rz)).max() > 2**31


def test_concatenate():
    a = random_q((1, 3, 4), "uint8")
    b = random_q((1, 5, 4), "uint8")
    c = random_q((1, 2, 4), "uint8")
    va, vb, vc = (graph.var(n, shape=v.shape, dtype="uint8") for n, v in zip("abc", (a, b, c)))
    scales = [np.float32(0.1), np.float32(0.05), np.float32(0.2)]
    zps = [128, 100, 128]
    y = qnn.concatenate([va, vb, vc], scales, zps, np.float32(0.1), 128, axis=1)
    got, = run([va, vb, vc], [y], {"a": a, "b": b, "c": c})
    want = np.concatenate([requantize_ref(v, s, z, np.float32(0.1), 128, -1, "UPWARD", "uint8")
                           for v, s, z in zip((a, b, c), scales, zps)], axis=1)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got[:, :3], a)  # same scale and zero point: unchanged


def test_avg_pool2d():
    xv = random_q((1, 3, 7, 9), "int8")
    x = graph.var("x", shape=xv.shape, dtype="int8")
    y = qnn.avg_pool2d(x, np.float32(0.05), 2, np.float32(0.04), -1, pool_size=[3, 3],
                       strides=[2, 2], padding=[1, 1, 1, 1])
    got, = run([x], [y], {"x": xv})
    real = (xv.astype(np.float64) - 2) * np.float32(0.05)
    p = np.pad(real, ((0, 0), (0, 0), (1, 1), (1, 1)))
    ones = np.pad(np.ones_like(real), ((0, 0), (0, 0), (1, 1), (1, 1)))
    oh, ow = got.shape[2:]
    pooled = np.zeros(got.shape)
    for i in range(oh):
        for j in range(ow):
            win = (slice(None), slice(None), slice(2 * i, 2 * i + 3), slice(2 * j, 2 * j + 3))
            pooled[:, :, i, j] = p[win].sum(axis=(2, 3)) / ones[win].sum(axis=(2, 3))
    within_one_step(got, pooled / np.float32(0.04) - 1, "int8")


@pytest.mark.parametrize("op", ["sigmoid", "tanh", "hardswish"])
def test_activations(op):
    xv = random_q((2, 3, 17), "uint8")
    x = graph.var("x", shape=xv.shape, dtype="uint8")
    out_zp = 0 if op == "sigmoid" else 128
    y = getattr(qnn, op)(x, np.float32(0.05), 128, np.float32(1 / 256), out_zp)
    got, = run([x], [y], {"x": xv})
    real = (xv.astype(np.float64) - 128) * np.float32(0.05)
    f = {"sigmoid": 1 / (1 + np.exp(-real)), "tanh": np.tanh(real),
         "hardswish": real * np.clip(real + 3, 0, 6) / 6}[op]
    within_one_step(got, f * 256 + (0 if op == "sigmoid" else 128), "uint8")


# ---- text and errors ------------------------------------------------------------------------

# The issue's PyTorch-quantized layer, verbatim as TVM prints it (nn.pad with the zero point,
# TVM's nested pad_width, suffixed clip bounds, dotted parameter names).
ISSUE_TEXT = """def @main(%input: Tensor[(1, 3, 9, 10), float32], %features.0.0_weight: Tensor[(32, 3, 3, 3), float32], %features.0.0_bias: Tensor[(32), float32]) {
  %0 = qnn.quantize(%input, 0.0186579f, 114, out_dtype="uint8", axis=1);
  %1 = nn.pad(%0, 114f, pad_width=[[0, 0], [0, 0], [1, 1], [1, 1]]);
  %2 = qnn.quantize(%features.0.0_weight, 0.00288958f, 0, out_dtype="int8", axis=0);
  %3 = qnn.conv2d(%1, %2, 114, 0, 0.0186579f, 0.00288958f, strides=[2, 2], padding=[0, 0, 0, 0], channels=32, kernel_size=[3, 3], out_dtype="int32");
  %4 = qnn.quantize(%features.0.0_bias, 5.39136e-05f, 0, out_dtype="int32", axis=0);
  %5 = nn.bias_add(%3, %4);
  %6 = qnn.requantize(%5, 5.39136e-05f, 0, 0.0150183f, 0, axis=1, out_dtype="int32");
  %7 = clip(%6, a_min=0f, a_max=255f);
  %8 = cast(%7, dtype="uint8");
  %8
}
"""


def test_text_round_trip():
    mod = anvil.parse(ISSUE_TEXT)
    printed = mod.astext()
    assert 'qnn.quantize(%input, 0.0186579f, 114, axis=1, out_dtype="uint8")' in printed
    assert "nn.pad(%0, 114f, pad_width=[0, 0, 0, 0, 1, 1, 1, 1])" in printed
    assert "qnn.conv2d(%1, %2, 114, 0, 0.0186579f, 0.00288958f, strides=[2, 2]" in printed
    assert "qnn.quantize(%features.0.0_weight, 0.00288958f, 0, axis=0)" in printed
    assert "clip(%6, a_min=0.0, a_max=255.0)" in printed
    assert anvil.parse(printed).astext() == printed
    lowered = anvil.transform.CanonicalizeOps()(mod).astext()
    assert "qnn." not in lowered and "fixed_point_multiply" in lowered
    assert anvil.transform.canonicalize_qnn()(mod).astext() == lowered


def test_issue_layer_runs_against_the_integer_reference():
    mod = anvil.parse(ISSUE_TEXT)
    xv = RNG.uniform(-2, 2, (1, 3, 9, 10)).astype(np.float32)
    wf = RNG.uniform(-0.3, 0.3, (32, 3, 3, 3)).astype(np.float32)
    bf = RNG.uniform(-0.1, 0.1, 32).astype(np.float32)
    m = anvil.runtime.GraphModule(anvil.build(mod, target="llvm")["default"](anvil.cpu()))
    m.set_input("features.0.0_weight", wf)
    m.set_input("features.0.0_bias", bf)
    m.run(input=xv)
    got = m.get_output(0).numpy()
    s_in, s_w, s_b, s_out = (np.float32(v) for v in (0.0186579, 0.00288958, 5.39136e-05,
                                                      0.0150183))
    qx = quantize_ref(xv, s_in, 114, 1, "uint8").astype(np.int64)
    qw = quantize_ref(wf, s_w, 0, 0, "int8").astype(np.int64)
    qb = quantize_ref(bf, s_b, 0, 0, "int32").astype(np.int64)
    xs = np.pad(qx, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=114) - 114
    acc = conv2d_ref(xs, qw, (2, 2), (0, 0, 0, 0), (1, 1), 1) + qb.reshape(32, 1, 1)
    want = np.clip(requantize_ref(acc, s_b, 0, s_out, 0, 1, "UPWARD", "int32"), 0, 255)
    assert got.dtype == np.uint8 and got.shape == (1, 32, 5, 5)
    np.testing.assert_array_equal(got, want.astype(np.uint8))


def test_requantize_needs_constant_scales():
    x = graph.var("x", shape=(4,), dtype="int32")
    s = graph.var("s", shape=(), dtype="float32")
    y = qnn.requantize(x, s, 0, np.float32(0.5), 0)
    mod = graph.IRModule.from_expr(graph.function([x, s], y))
    with pytest.raises(anvil.UserError, match="qnn.requantize: the input scale must be a constant"):
        anvil.build(mod, target="llvm")


def test_type_errors():
    x = graph.var("x", shape=(2, 3), dtype="float32")
    with pytest.raises(anvil.UserError, match="qnn.dequantize: the input must be int8, uint8, "
                                              "int16 or int32, got float32"):
        qnn.dequantize(x, np.float32(0.1), 0)
    q = graph.var("q", shape=(2, 3), dtype="int8")
    with pytest.raises(anvil.UserError, match="the zero point must be int32, got int64"):
        qnn.dequantize(q, np.float32(0.1), np.int64(0))
    with pytest.raises(anvil.UserError, match="the scale has 2 values, but axis 1 of the data "
                                              "has length 3"):
        qnn.dequantize(q, np.array([0.1, 0.2], np.float32), 0, axis=1)
    with pytest.raises(anvil.UserError, match='rounding "NEAREST" is not one of'):
        qnn.requantize(q, np.float32(0.1), 0, np.float32(0.2), 0, rounding="NEAREST")


def test_quantized_constant_weights_fold_to_int8():
    x = graph.var("x", shape=(2, 4), dtype="uint8")
    wf = np.linspace(-1, 1, 12, dtype="float32").reshape(3, 4)
    w = qnn.quantize(graph.const(wf), np.float32(0.01), 0, out_dtype="int8")
    y = qnn.dense(x, w, 3, 0, np.float32(0.1), np.float32(0.01))
    folded = anvil.transform.fold_constants()(graph.IRModule.from_expr(graph.function([x], y)))
    text = folded.astext()
    assert "qnn.quantize" not in text and "qnn.dense(%x, meta[Constant][0], 3, 0" in text
    assert "meta[Constant][0]: Tensor[(3, 4), int8]" in text


class QnnQuantizeConstFold(DFPatternCallback):
    """The fold of the issue, in Python: a constant qnn.quantize becomes its value."""

    def __init__(self):
        super().__init__()
        self.pattern = is_op("qnn.quantize")(is_constant(), is_constant(), is_constant())

    def callback(self, pre, post, node_map):
        closed = graph.IRModule.from_expr(graph.function([], post))
        m = anvil.runtime.GraphModule(anvil.build(closed, target="llvm")["default"](anvil.cpu()))
        m.run()
        return graph.const(m.get_output(0).numpy())


def test_quantize_constant_fold_written_as_a_pattern_callback():
    x = graph.var("x", shape=(1, 4), dtype="uint8")
    wf = np.array([[0.5, -0.5, 0.05, 0.0], [1.0, -1.0, 0.15, -0.1]], np.float32)
    w = qnn.quantize(graph.const(wf), np.float32(0.05), 0, out_dtype="int8")
    func = graph.function([x], qnn.dense(x, w, 128, 0, np.float32(0.1), np.float32(0.05)))
    folded = rewrite(QnnQuantizeConstFold(), func)
    text = folded.astext()
    assert "qnn.quantize" not in text and "Tensor[(2, 4), int8]" in text
    # The C++ pass does the same, in the pipeline before canonicalize_qnn.
    mod = graph.IRModule.from_expr(func)
    assert "qnn.quantize" not in anvil.transform.fold_qnn_quantize()(mod).astext()
    # The folded function computes what the original does.
    xv = RNG.integers(0, 256, (1, 4)).astype(np.uint8)
    results = []
    for f in (func, folded):
        m = anvil.runtime.GraphModule(
            anvil.build(graph.IRModule.from_expr(f), target="llvm")["default"](anvil.cpu()))
        m.run(x=xv)
        results.append(m.get_output(0).numpy())
    want = (xv.astype(np.int64) - 128) @ quantize_ref(wf, np.float32(0.05), 0, -1, "int8").T
    np.testing.assert_array_equal(results[0], want)
    np.testing.assert_array_equal(results[1], want)


def test_quantize_to_int32_saturates():
    # INT32_MAX is no float32: the values clip below 2^31, not to INT32_MIN through an overflow.
    xv = np.array([1e30, -1e30, np.inf, -np.inf, 3.0, -3.0], np.float32)
    x = graph.var("x", shape=xv.shape)
    got, = run([x], [qnn.quantize(x, np.float32(0.5), 0, out_dtype="int32")], {"x": xv})
    np.testing.assert_array_equal(got, [2147483520, -2**31, 2147483520, -2**31, 6, -6])


@pytest.mark.parametrize("rounding", ["UPWARD", "TONEAREST"])
def test_one_step_roundings_are_the_exact_rational_ones(rounding):
    # Against exact rational arithmetic (not a transcription of the kernel's formula): x * m *
    # 2^(shift - 31) rounded half up, or half away from zero; ties made on purpose.
    from fractions import Fraction
    n = 2000
    xs = RNG.integers(-2**31, 2**31, n).astype(np.int32)
    ms = RNG.integers(2**30, 2**31, n).astype(np.int32)
    ss = RNG.integers(-31, 31, n).astype(np.int32)
    xs[::5] = (RNG.integers(-1000, 1000, xs[::5].size) * 2**RNG.integers(0, 10, xs[::5].size))
    ms[::5] = 2**30
    x = graph.var("x", shape=(n,), dtype="int32")
    m = graph.var("m", shape=(n,), dtype="int32")
    s = graph.var("s", shape=(n,), dtype="int32")
    got, = run([x, m, s], [graph.op.fixed_point_multiply(x, m, s, rounding=rounding)],
               {"x": xs, "m": ms, "s": ss})
    for xi, mi, si, gi in zip(xs.tolist(), ms.tolist(), ss.tolist(), got.tolist()):
        v = Fraction(xi * mi) * Fraction(2) ** (si - 31)
        if rounding == "UPWARD":
            want = math.floor(v + Fraction(1, 2))
        else:
            want = int(math.copysign(math.floor(abs(v) + Fraction(1, 2)), v))
        want = max(-2**31, min(2**31 - 1, want))
        assert gi == want, (xi, mi, si, gi, want)


def qnn_conv_pattern():
    """The BYOC issue's pad-optional QNN convolution pattern (nn.pad takes the pad value as its
    optional second operand)."""
    pattern = is_op("nn.pad")(wildcard(), wildcard()) | wildcard()
    pattern = is_op("qnn.conv2d")(pattern, is_constant(), is_constant(), is_constant(),
                                  is_constant(), is_constant())
    pattern = is_op("nn.bias_add")(pattern, is_constant())
    pattern = is_op("qnn.requantize")(pattern, is_constant(), is_constant(), is_constant(),
                                      is_constant())
    return pattern


def test_qnn_conv_pattern_partitions_layers_with_and_without_pad():
    x = graph.var("x", shape=(1, 3, 8, 8), dtype="uint8")
    w0 = random_q((4, 3, 3, 3), "int8")
    w1 = random_q((4, 4, 3, 3), "int8")
    bias = np.zeros(4, np.int32)
    padded = graph.op.nn.pad(x, 114.0, pad_width=((0, 0), (0, 0), (1, 1), (1, 1)))
    c0 = qnn.conv2d(padded, w0, 114, 0, np.float32(0.02), np.float32(0.003), channels=4)
    r0 = qnn.requantize(graph.op.nn.bias_add(c0, bias), np.float32(6e-5), 0, np.float32(0.015),
                        0, axis=1, out_dtype="uint8")
    c1 = qnn.conv2d(r0, w1, 0, 0, np.float32(0.015), np.float32(0.003), padding=[1, 1, 1, 1])
    r1 = qnn.requantize(graph.op.nn.bias_add(c1, bias), np.float32(4.5e-5), 0, np.float32(0.015),
                        0, axis=1, out_dtype="uint8")
    out = qnn_conv_pattern().partition(r1, {"Composite": "dnnl.qnn.conv2d"})
    text = out.astext()
    assert text.count('Composite="dnnl.qnn.conv2d"') == 2, text
    assert 'PartitionedFromPattern="nn.pad_qnn.conv2d_nn.bias_add_qnn.requantize_"' in text, text
    assert 'PartitionedFromPattern="qnn.conv2d_nn.bias_add_qnn.requantize_"' in text, text
    # The partitioned layers compute what the layers do (composites nothing offloads are inlined).
    xv = random_q((1, 3, 8, 8), "uint8")
    want, = run([x], [r1], {"x": xv})
    got, = run([x], [out], {"x": xv})
    np.testing.assert_array_equal(got, want)
