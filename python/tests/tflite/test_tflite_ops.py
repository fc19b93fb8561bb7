"""The TFLite importer's converters, operator by operator, on models tflite_writer.py writes:
float32 ones within 1e-5 of the TFLite runtime (litert.py), int8, uint8 and int16 (16x8) ones
bit for bit (imported with rounding="XNNPACK", as the runtime's CPU kernels compute: XNNPACK's
where its delegate takes the operator, TFLite's elsewhere). Where the runtime's kernels differ
from TFLite's reference ones (rounding="TFLITE"), those are held to their arithmetic in NumPy.
The unary operators are test_tflite_activations.py's, the LSTMs test_tflite_lstm.py's and
test_tflite_integer_lstm.py's.

Several cases put a convolution first, so that the operator under test meets a tensor the
importer holds channels first (tflite_context.h) and must map its axes."""
import numpy as np
import pytest

import anvil
from anvil import frontend

import litert
import tflite_writer as W
from op_models import (DTYPES, INT_RANGE, RNG, Model, check, conv_first, conv_options,
                       multiply_by_quantized_multiplier, quantize_multiplier, run_tflite)


# ---- products ----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("padding,stride,dilation,activation", [
    (W.SAME, 1, 1, W.NONE), (W.VALID, 2, 1, W.RELU_ACT), (W.SAME, 2, 1, W.RELU6_ACT),
    (W.SAME, 1, 2, W.RELU_N1_TO_1_ACT)])
def test_conv2d(dtype, padding, stride, dilation, activation):
    m = Model(dtype)
    x = m.input("x", [1, 9, 9, 3])
    out_hw = (9 + stride - 1) // stride if padding == W.SAME else (9 - 2 * dilation - 1) // stride + 1
    y = m.act("y", [1, out_hw, out_hw, 4], scale=0.1)
    k = m.weights("k", [4, 3, 3, 3])
    b = m.bias("b", 4, 0.05, k)
    m.w.op(W.CONV_2D, [x, k, b], [y], W.Conv2DOptions,
           conv_options(padding, stride, activation, dilation))
    check(m.build([y]), [a for _, a in m.inputs], exact=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("multiplier,stride", [(1, 1), (2, 2)])
def test_depthwise_conv2d(dtype, multiplier, stride):
    m = Model(dtype)
    x = m.input("x", [1, 8, 8, 3])
    c = 3 * multiplier
    k = m.weights("k", [1, 3, 3, c], per_channel_axis=3)
    b = m.bias("b", c, 0.05, k)
    hw = (8 + stride - 1) // stride
    y = m.act("y", [1, hw, hw, c], scale=0.1)
    m.w.op(W.DEPTHWISE_CONV_2D, [x, k, b], [y], W.DepthwiseConv2DOptions,
           [(0, "b", W.SAME), (1, "i", stride), (2, "i", stride), (3, "i", multiplier),
            (4, "b", W.RELU_ACT)])
    check(m.build([y]), [a for _, a in m.inputs], exact=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("keep_num_dims", [False, True])
def test_fully_connected(dtype, keep_num_dims):
    m = Model(dtype)
    x = m.input("x", [2, 3, 8])
    k = m.weights("k", [5, 8])
    b = m.bias("b", 5, 0.05, k)
    y = m.act("y", [2, 3, 5] if keep_num_dims else [6, 5], scale=0.1)
    m.w.op(W.FULLY_CONNECTED, [x, k, b], [y], W.FullyConnectedOptions,
           [(0, "b", W.RELU_ACT), (2, "B", keep_num_dims)])
    check(m.build([y]), [a for _, a in m.inputs], exact=True)


def test_16x8_fully_connected_takes_int32_biases_with_xnnpack_rounding():
    """The runtime's 16x8 FULLY_CONNECTED rescale multiplies the sum by a 31-bit multiplier in
    int64: a bias past int32's range is refused there (the reference rescale takes it)."""
    m = Model("int16")
    x = m.input("x", [1, 4])
    k = m.weights("k", [2, 4])
    scales = np.float32(0.05 / 256) * m.scales[k]
    b = m.const("b", np.array([2**33, 0]), "int64", scale=scales,
                zero_point=np.zeros(2, np.int64))
    y = m.act("y", [1, 2], scale=0.1)
    m.w.op(W.FULLY_CONNECTED, [x, k, b], [y], W.FullyConnectedOptions, [(0, "b", W.NONE)])
    model = m.build([y])
    with pytest.raises(anvil.UserError, match="holds 8589934592, past int32's range, which the "
                                              "16x8 rescale of rounding=\"XNNPACK\""):
        frontend.from_tflite(model, rounding="XNNPACK")
    frontend.from_tflite(model, rounding="TFLITE")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("padding,stride", [(W.SAME, 2), (W.VALID, 2), (W.SAME, 1)])
def test_transpose_conv(dtype, padding, stride):
    m = Model(dtype)
    x = m.input("x", [1, 5, 5, 3])
    out_hw = 5 * stride if padding == W.SAME else (5 - 1) * stride + 3
    shape = m.const("shape", np.array([1, out_hw, out_hw, 4]), "int32")
    k = m.weights("k", [4, 3, 3, 3])
    b = m.bias("b", 4, 0.05, k)
    y = m.act("y", [1, out_hw, out_hw, 4], scale=0.1)
    m.w.op(67, [shape, k, x, b], [y], 49, [(0, "b", padding), (1, "i", stride), (2, "i", stride)],
           version=3)
    check(m.build([y]), [a for _, a in m.inputs], exact=True)


@pytest.mark.parametrize("dtype", ["float32", "int8", "int16"])
@pytest.mark.parametrize("adj_x,adj_y", [(False, False), (True, False), (False, True)])
def test_batch_matmul(dtype, adj_x, adj_y):
    """int16 operands (TFLite's int64 sums) include the extremes: -32768 * -32768 summed over the
    depth passes int32."""
    m = Model(dtype)
    x = m.input("x", [2, 4, 3] if adj_x else [2, 3, 4])
    yv = m.input("y", [1, 5, 4] if adj_y else [1, 4, 5], scale=0.04, zero_point=0)
    out = m.act("out", [2, 3, 5], scale=0.2 if dtype != "int16" else 2000.0)
    m.w.op(126, [x, yv], [out], 101, [(0, "B", adj_x), (1, "B", adj_y)])
    inputs = [a for _, a in m.inputs]
    if dtype == "int16":
        inputs[0][0], inputs[1][0] = -32768, -32768
    check(m.build([out]), inputs, exact=True)


def int16_batch_matmul_model(y_dtype="int16", zero_points=(0, 0, 0), depth=4):
    w = W.ModelWriter()
    x = w.tensor("x", [2, 3, depth], "int16", scale=1e-3, zero_point=zero_points[0])
    y = w.tensor("y", [depth, 5], y_dtype, scale=1e-3, zero_point=zero_points[1])
    out = w.tensor("out", [2, 3, 5], "int16", scale=0.5, zero_point=zero_points[2])
    w.op(126, [x, y], [out], 101, [(0, "B", False), (1, "B", False)])
    return w.build([x, y], [out])


@pytest.mark.parametrize("model,message", [
    (lambda: int16_batch_matmul_model("int8"), "needs an int16 second operand and result"),
    (lambda: int16_batch_matmul_model(zero_points=(0, 3, 0)), "operand 1 must have the zero "
     "point 0"),
    (lambda: int16_batch_matmul_model(zero_points=(0, 0, -1)), "the result must have the zero "
     "point 0"),
    (lambda: int16_batch_matmul_model(depth=200000), "summing 200000 products can reach 2\\^47"),
], ids=["int8_operand", "operand_zero_point", "result_zero_point", "depth"])
def test_int16_batch_matmul_refusals(model, message):
    with pytest.raises(anvil.UserError, match="operator 0.*" + message):
        frontend.from_tflite(model())


# Scales whose product rounds differently in float and in double: TFLite's multiplier for the
# whole product (GetQuantizedConvolutionMultipler) takes the float one.
SCALE_TRIPLE = (0.00545385479927063, 9.253517782781273e-05, 0.010541151277720928)


@pytest.mark.parametrize("op", ["batch_matmul", "fully_connected"])
def test_int16_product_scale_rounds_in_float(op):
    """An int16 BATCH_MATMUL and a per-tensor 16x8 FULLY_CONNECTED whose ratio's scale product
    rounds differently in float than in double: bit for bit against the runtime (about a third of
    these outputs would be a step off with the double product)."""
    sx, sy, so = SCALE_TRIPLE
    w = W.ModelWriter()
    x = w.tensor("x", [8, 64], "int16", scale=sx, zero_point=0)
    out = w.tensor("out", [8, 16], "int16", scale=so, zero_point=0)
    xv = RNG.integers(-8000, 8001, [8, 64]).astype(np.int16)
    if op == "batch_matmul":
        y = w.tensor("y", [64, 16], "int16", scale=sy, zero_point=0)
        w.op(126, [x, y], [out], 101, [(0, "B", False), (1, "B", False)])
        inputs = [xv, RNG.integers(-8000, 8001, [64, 16]).astype(np.int16)]
        model = w.build([x, y], [out])
    else:
        y = w.tensor("y", [16, 64], "int8", data=RNG.integers(-127, 128, [16, 64]), scale=sy * 64,
                     zero_point=0)
        w.op(W.FULLY_CONNECTED, [x, y], [out], W.FullyConnectedOptions, [(0, "b", W.NONE)])
        inputs = [xv]
        model = w.build([x], [out])
    check(model, inputs, exact=True)


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
@pytest.mark.parametrize("op", ["conv", "fully_connected", "add", "sub", "mul", "max_pool",
                                "average_pool", "relu6"])
def test_relu6_bound_at_a_tie(dtype, op):
    """RELU6 (fused, or the operator) on a result of scale 0.48, where 6 / 0.48 is 12.5: the
    runtime's XNNPACK kernels (products, ADD, SUB, MUL, MAX_POOL_2D) round the bound half to even
    (12), TFLite's kernels (AVERAGE_POOL_2D, RELU6) half away from zero (13); bit for bit."""
    zp = 0 if dtype == "int8" else 128
    lo, hi = INT_RANGE[dtype]
    w = W.ModelWriter()
    relu6 = 3
    if op in ("conv", "fully_connected"):
        shape = [1, 4, 4, 8] if op == "conv" else [4, 8]
        x = w.tensor("x", shape, dtype, scale=0.5, zero_point=zp)
        wshape = [8, 1, 1, 8] if op == "conv" else [8, 8]
        if dtype == "int8":
            k = w.tensor("k", wshape, "int8", data=RNG.integers(0, 3, wshape),
                         scale=np.full(8, 0.5, np.float32), zero_point=np.zeros(8, np.int64),
                         axis=0)
        else:
            k = w.tensor("k", wshape, "uint8", data=RNG.integers(128, 131, wshape), scale=0.5,
                         zero_point=128)
        if dtype == "int8":  # per channel, as the weights
            b = w.tensor("b", [8], "int32", data=np.zeros(8, np.int64),
                         scale=np.full(8, 0.25, np.float32), zero_point=np.zeros(8, np.int64))
        else:
            b = w.tensor("b", [8], "int32", data=np.zeros(8, np.int64), scale=0.25, zero_point=0)
        y = w.tensor("y", shape, dtype, scale=0.48, zero_point=zp)
        if op == "conv":
            w.op(W.CONV_2D, [x, k, b], [y], W.Conv2DOptions, conv_options(activation=relu6))
        else:
            w.op(W.FULLY_CONNECTED, [x, k, b], [y], W.FullyConnectedOptions, [(0, "b", relu6)])
        inputs = [RNG.integers(zp, zp + 40, shape).astype(dtype)]
        model = w.build([x], [y])
    elif op in ("add", "sub", "mul"):
        a = w.tensor("a", [64], dtype, scale=0.5, zero_point=zp)
        c = w.tensor("c", [64], dtype, scale=0.5, zero_point=zp)
        y = w.tensor("y", [64], dtype, scale=0.48, zero_point=zp)
        code, options = {"add": (W.ADD, W.AddOptions), "sub": (W.SUB, W.SubOptions),
                         "mul": (W.MUL, W.MulOptions)}[op]
        w.op(code, [a, c], [y], options, [(0, "b", relu6)])
        av = RNG.integers(zp, hi + 1, 64).astype(dtype)
        cv = (RNG.integers(lo, zp + 1, 64) if op == "sub" else RNG.integers(zp, hi + 1, 64))
        inputs = [av, cv.astype(dtype)]
        model = w.build([a, c], [y])
    elif op == "relu6":
        x = w.tensor("x", [256], dtype, scale=0.48, zero_point=zp)
        y = w.tensor("y", [256], dtype, scale=0.48, zero_point=zp)
        w.op(W.RELU6, [x], [y])
        inputs = [np.arange(lo, hi + 1).astype(dtype)]
        model = w.build([x], [y])
    else:
        x = w.tensor("x", [1, 4, 4, 8], dtype, scale=0.48, zero_point=zp)
        y = w.tensor("y", [1, 2, 2, 8], dtype, scale=0.48, zero_point=zp)
        w.op(W.MAX_POOL_2D if op == "max_pool" else W.AVERAGE_POOL_2D, [x], [y], W.Pool2DOptions,
             [(0, "b", W.VALID), (1, "i", 2), (2, "i", 2), (3, "i", 2), (4, "i", 2), (5, "b", relu6)])
        inputs = [RNG.integers(zp, hi + 1, [1, 4, 4, 8]).astype(dtype)]
        model = w.build([x], [y])
    check(model, inputs, exact=True)
    # The bound is reached, so the test tells the roundings apart.
    want = zp + (13 if op in ("average_pool", "relu6") else 12)
    assert run_tflite(model, inputs, rounding="XNNPACK").max() == want


# ---- elementwise -------------------------------------------------------------------------------

BINARY = [(W.ADD, W.AddOptions), (W.SUB, W.SubOptions), (W.MUL, W.MulOptions),
          (W.MAXIMUM, W.MaximumMinimumOptions), (W.MINIMUM, W.MaximumMinimumOptions)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op,options", BINARY, ids=["add", "sub", "mul", "max", "min"])
@pytest.mark.parametrize("after_conv", [False, True])
def test_binary(dtype, op, options, after_conv):
    m = Model(dtype)
    extremum = op in (W.MAXIMUM, W.MINIMUM)
    # MAXIMUM / MINIMUM take operands quantized as their result.
    scale_b, zp_b = (0.1, None) if extremum else (0.07, 5)
    if after_conv:
        a = conv_first(m, m.input("x", [1, 6, 6, 2]), 2, 4, 6)
        b = m.input("b", [4], scale=scale_b, zero_point=zp_b)  # broadcast along the channels
    else:
        a = m.input("a", [2, 3, 4], scale=0.1)
        b = m.input("b", [3, 1], scale=scale_b, zero_point=zp_b)
    shape = [1, 6, 6, 4] if after_conv else [2, 3, 4]
    y = m.act("y", shape, scale=0.1 if extremum else 0.15)
    opts = [] if extremum else [(0, "b", W.RELU_ACT if op == W.ADD else W.NONE)]
    m.w.op(op, [a, b], [y], options, opts)
    check(m.build([y]), [a for _, a in m.inputs], exact=True)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16"])
def test_quantized_mul_over_scale_ratios(dtype):
    """MUL bit for bit over random zero points and ratios input1_scale * input2_scale /
    output_scale from 2^-17 to 2^9, with each fused activation: 8-bit ones inside [2^-16, 2^8) are
    XNNPACK's (the runtime's delegate), the rest TFLite's kernel. int16 ratios stay below 1:
    above, TFLite's int32 shift of a product past 2^30 overflows (the portable kernel wraps, the
    NEON one saturates, as Anvil does)."""
    lo, hi = INT_RANGE[dtype]
    runs, got = [], []
    for k, log2_ratio in enumerate(np.linspace(-17, 9 if dtype != "int16" else -0.5, 14)):
        w = W.ModelWriter()
        zps = [0, 0, 0] if dtype == "int16" else [int(v) for v in RNG.integers(lo, hi + 1, 3)]
        sa, sb = RNG.uniform(0.01, 0.2, 2)
        so = sa * sb / 2.0**log2_ratio
        shape = [2, 3, 64]
        a = w.tensor("a", shape, dtype, scale=sa, zero_point=zps[0])
        b = w.tensor("b", [64], dtype, scale=sb, zero_point=zps[1])
        y = w.tensor("y", shape, dtype, scale=so, zero_point=zps[2])
        w.op(W.MUL, [a, b], [y], W.MulOptions, [(0, "b", [W.NONE, W.RELU_ACT, 3][k % 3])])
        inputs = [RNG.integers(lo, hi + 1, shape).astype(dtype),
                  RNG.integers(lo, hi + 1, [64]).astype(dtype)]
        model = w.build([a, b], [y])
        runs.append((model, inputs))
        got.append(run_tflite(model, inputs, rounding="XNNPACK"))
    for (model, _), g, (want,) in zip(runs, got, litert.run(runs)):
        np.testing.assert_array_equal(g, want)


def div_model(dtype, activation, zp_a, zp_b, zp_y, a_shape=(2, 3, 4), b_shape=(3, 1)):
    w = W.ModelWriter()
    a = w.tensor("a", list(a_shape), dtype, scale=0.1, zero_point=zp_a)
    b = w.tensor("b", list(b_shape), dtype, scale=0.02, zero_point=zp_b)
    y = w.tensor("y", list(a_shape), dtype, scale=0.2, zero_point=zp_y)
    w.op(W.DIV, [a, b], [y], W.DivOptions, [(0, "b", activation)])
    return w.build([a, b], [y])


@pytest.mark.parametrize("activation", [W.NONE, W.RELU_ACT])
def test_quantized_div(activation):
    """Every quotient of two uint8 values bit for bit against the runtime (TFLite's fixed-point
    kernel, including what it computes for dividends near 0, past its shifts' defined range);
    int8 DIV (TFLite Micro's, the same arithmetic on the differences from the zero points, which
    the runtime refuses) against the runtime's uint8 DIV of the same numbers shifted by 128. The
    divisors avoid their zero point, which TFLite leaves undefined, and the integer 0, which the
    runtime refuses."""
    divisors = np.array([v for v in range(1, 256) if v != 130])
    av = np.repeat(np.arange(256)[:, None], divisors.size, 1)
    bv = divisors[None, :]
    shape = (256, divisors.size)
    model = div_model("uint8", activation, 125, 130, 120, a_shape=shape, b_shape=bv.shape)
    inputs = [av.astype(np.uint8), bv.astype(np.uint8)]
    check(model, inputs, exact=True)
    want = litert.run([(model, inputs)])[0][0].astype(np.int64)
    got = run_tflite(div_model("int8", activation, -3, 2, -8, a_shape=shape, b_shape=bv.shape),
                     [(av - 128).astype(np.int8), (bv - 128).astype(np.int8)])
    np.testing.assert_array_equal(got.astype(np.int64) + 128, want)


def test_quantized_div_after_conv():
    m = Model("uint8")
    a = conv_first(m, m.input("x", [1, 5, 5, 2]), 2, 3, 5)
    b = m.input("b", [3], scale=0.02, zero_point=130)
    y = m.act("y", [1, 5, 5, 3], scale=0.2)
    m.w.op(W.DIV, [a, b], [y], W.DivOptions, [(0, "b", W.NONE)])
    bv = m.inputs[-1][1]
    bv[(bv == 130) | (bv == 0)] = 139
    check(m.build([y]), [v for _, v in m.inputs], exact=True)


def test_quantized_div_by_its_zero_point():
    """A divisor at its zero point (undefined in TFLite) gives the activation range's bound of
    the dividend's sign, the output zero point for a zero dividend."""
    model = div_model("int8", W.NONE, 0, 5, 3, a_shape=(3,), b_shape=(3,))
    got = run_tflite(model, [np.array([7, -7, 0], np.int8), np.array([5, 5, 5], np.int8)])
    np.testing.assert_array_equal(got, [127, -128, 3])


@pytest.mark.parametrize("op,options", BINARY[:2], ids=["add", "sub"])
@pytest.mark.parametrize("scales", [(2**-10, 2**-12, 2**-10), (2**-13, 2**-11, 2**-11),
                                    (2**-11, 2**-11, 2**-11), (0.001, 0.0007, 0.0015)],
                         ids=["second_shifted", "first_shifted", "none_shifted", "general"])
@pytest.mark.parametrize("activation", [W.NONE, W.RELU_ACT])
def test_int16_sum_with_power_of_two_scales(op, options, scales, activation):
    """int16 ADD and SUB with pot_scale_int16 (the option's default): TFLite's fixed-point path
    when every scale is a power of two, its general one otherwise; bit for bit. (TFLite's
    power-of-two kernel does not broadcast: test_int16_power_of_two_sum_broadcasts holds Anvil's
    broadcasting to the same arithmetic in NumPy.)"""
    w = W.ModelWriter()
    a = w.tensor("a", [2, 3, 4], "int16", scale=scales[0], zero_point=0)
    b = w.tensor("b", [2, 3, 4], "int16", scale=scales[1], zero_point=0)
    y = w.tensor("y", [2, 3, 4], "int16", scale=scales[2], zero_point=0)
    w.op(op, [a, b], [y], options, [(0, "b", activation), (1, "B", True)])
    inputs = [RNG.integers(-32768, 32768, [2, 3, 4]).astype(np.int16) for _ in range(2)]
    inputs[0][0, 0, :2] = [-32768, 32767]
    check(w.build([a, b], [y]), inputs, exact=True)


@pytest.mark.parametrize("op", [W.ADD, W.SUB], ids=["add", "sub"])
@pytest.mark.parametrize("shifted_first", [False, True])
def test_int16_power_of_two_sum_broadcasts(op, shifted_first):
    """A power-of-two int16 ADD / SUB whose operands broadcast (TFLite's own kernel takes equal
    shapes only), in NumPy: the operand of the smaller scale divided by 2^2 rounding half away
    from zero, then the int16 sum or difference, saturated."""
    w = W.ModelWriter()
    big = w.tensor("big", [2, 3, 4], "int16", scale=2.0**-10, zero_point=0)
    small = w.tensor("small", [3, 1], "int16", scale=2.0**-12, zero_point=0)
    y = w.tensor("y", [2, 3, 4], "int16", scale=2.0**-10, zero_point=0)
    operands = [small, big] if shifted_first else [big, small]
    w.op(op, operands, [y], W.AddOptions if op == W.ADD else W.SubOptions, [(0, "b", W.NONE)])
    bv = RNG.integers(-32768, 32768, [2, 3, 4]).astype(np.int16)
    sv = np.array([[-32768], [-6], [32767]], np.int16)
    inputs = [sv, bv] if shifted_first else [bv, sv]
    mod, params = frontend.from_tflite(w.build(operands, [y]))
    got = anvil.runtime.VirtualMachine(anvil.build(mod, target="llvm", params=params))[
        "main"](*inputs).numpy()
    s64 = sv.astype(np.int64)
    divided = np.sign(s64) * ((np.abs(s64) + 2) >> 2)  # halves away from zero
    a, b = (divided, bv.astype(np.int64)) if shifted_first else (bv.astype(np.int64), divided)
    want = np.clip(a + b if op == W.ADD else a - b, -32768, 32767)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("src,dst", [("float32", "int32"), ("int32", "float32"),
                                     ("uint8", "float32"), ("int32", "int16")])
def test_cast(src, dst):
    m = Model()
    x = m.w.tensor("x", [3, 4], src)
    values = RNG.uniform(-50, 50, (3, 4)) if src == "float32" else RNG.integers(0, 200, (3, 4))
    m.inputs.append((x, values.astype(src)))
    y = m.w.tensor("y", [3, 4], dst)
    m.w.op(53, [x], [y])
    check(m.build([y]), [a for _, a in m.inputs], exact=True)


def test_div_float():
    m = Model()
    a, b = m.input("a", [2, 5]), m.input("b", [5])
    y = m.act("y", [2, 5])
    m.w.op(W.DIV, [a, b], [y], W.DivOptions, [(0, "b", W.NONE)])
    check(m.build([y]), [m.inputs[0][1], m.inputs[1][1] + 3.0], exact=True)


# ---- pools and reductions ------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", [W.AVERAGE_POOL_2D, W.MAX_POOL_2D], ids=["avg", "max"])
@pytest.mark.parametrize("padding", [W.SAME, W.VALID])
def test_pool(dtype, op, padding):
    m = Model(dtype)
    x = m.input("x", [1, 7, 7, 3], scale=0.1)
    hw = 4 if padding == W.SAME else 3
    y = m.act("y", [1, hw, hw, 3], scale=0.1)
    m.w.op(op, [x], [y], W.Pool2DOptions,
           [(0, "b", padding), (1, "i", 2), (2, "i", 2), (3, "i", 3), (4, "i", 3)])
    check(m.build([y]), [a for _, a in m.inputs], exact=True)


@pytest.mark.parametrize("op", [W.MEAN, W.SUM], ids=["mean", "sum"])
@pytest.mark.parametrize("axes,keep_dims", [([1, 2], False), ([3], False), ([1, 2], True),
                                            ([2], False)])
def test_reduce_after_conv(op, axes, keep_dims):
    m = Model()
    c = conv_first(m, m.input("x", [1, 4, 4, 2]), 2, 3, 4)
    shape = [1, 4, 4, 3]
    out = [1 if d in axes else n for d, n in enumerate(shape)] if keep_dims else \
        [n for d, n in enumerate(shape) if d not in axes]
    a = m.const("axes", np.array(axes), "int32")
    y = m.act("y", out)
    m.w.op(op, [c, a], [y], W.ReducerOptions, [(0, "B", keep_dims)])
    check(m.build([y]), [a for _, a in m.inputs], exact=True)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16"])
@pytest.mark.parametrize("op", [W.MEAN, W.SUM], ids=["mean", "sum"])
@pytest.mark.parametrize("axes,keep_dims", [([1, 2], True), ([1, 2], False), ([3], False),
                                            ([2], True)])
def test_quantized_reduce_after_conv(dtype, op, axes, keep_dims):
    m = Model(dtype)
    c = conv_first(m, m.input("x", [1, 4, 4, 2]), 2, 3, 4)
    shape = [1, 4, 4, 3]
    out = [1 if d in axes else n for d, n in enumerate(shape)] if keep_dims else \
        [n for d, n in enumerate(shape) if d not in axes]
    a = m.const("axes", np.array(axes), "int32")
    y = m.act("y", out, scale=0.07 if op == W.MEAN else 0.3)
    m.w.op(op, [c, a], [y], W.ReducerOptions, [(0, "B", keep_dims)])
    check(m.build([y]), [a for _, a in m.inputs], exact=True)


def test_quantized_mean_of_the_reference_kernels():
    """MEAN over H and W with keep_dims, rounding="TFLITE": TFLite's reference kernel (the
    runtime above runs XNNPACK's), in NumPy."""
    m = Model("int8")
    x = m.input("x", [1, 5, 6, 7], scale=0.05, zero_point=-3)
    y = m.act("y", [1, 1, 1, 7], scale=0.03, zero_point=4)
    m.w.op(W.MEAN, [x, m.const("axes", np.array([1, 2]), "int32")], [y], W.ReducerOptions,
           [(0, "B", True)])
    xv = m.inputs[0][1]
    mod, params = frontend.from_tflite(m.build([y]))
    got = anvil.runtime.VirtualMachine(anvil.build(mod, target="llvm", params=params))["main"](
        xv).numpy()
    acc = (xv.astype(np.int64) + 3).sum(axis=(1, 2), keepdims=True)
    acc = multiply_by_quantized_multiplier(acc, np.float64(np.float32(0.05)) /
                                           np.float64(np.float32(0.03)))
    n = 30
    acc = np.where(acc > 0, (acc + n // 2) // n, -((-acc + n // 2) // n))
    want = np.clip(acc + 4, -128, 127).astype(np.int8)
    np.testing.assert_array_equal(got, want)


# ---- moving elements ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["int8", "int16"])
@pytest.mark.parametrize("op", [W.MEAN, W.SUM], ids=["mean", "sum"])
def test_quantized_mean_or_sum_of_the_reference_kernels(dtype, op):
    """MEAN / SUM over one axis, rounding="TFLITE": TFLite's reference QuantizedMeanOrSum (TFLite
    Micro's), in NumPy: the sum less count * zero point, times input_scale / output_scale in
    fixed point, for MEAN with the count folded into the multiplier by an integer division."""
    m = Model(dtype)
    x = m.input("x", [2, 7, 3], scale=0.05)
    y = m.act("y", [2, 3], scale=0.03 if op == W.MEAN else 0.2, zero_point=4)
    m.w.op(op, [x, m.const("axes", np.array([1]), "int32")], [y], W.ReducerOptions,
           [(0, "B", False)])
    xv = m.inputs[0][1]
    mod, params = frontend.from_tflite(m.build([y]))
    got = anvil.runtime.VirtualMachine(anvil.build(mod, target="llvm", params=params))["main"](
        xv).numpy()
    div = 256 if dtype == "int16" else 1
    zi, zo = (0, 0) if dtype == "int16" else (-3, 4)
    si = np.float64(np.float32(0.05 / div))
    so = np.float64(np.float32((0.03 if op == W.MEAN else 0.2) / div))
    mult, shift = quantize_multiplier(si / so)
    n = 7
    if op == W.MEAN:
        k = min(n.bit_length() - 1, 32, 31 + shift)
        mult, shift = (mult << k) // n, shift - k
    acc = xv.astype(np.int64).sum(axis=1) - zi * n
    lo, hi = INT_RANGE[dtype]
    want = np.clip(multiply_by_quantized_multiplier(acc, None, (mult, shift)) + zo, lo, hi)
    np.testing.assert_array_equal(got, want.astype(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_reshape_squeeze_expand_transpose(dtype):
    m = Model(dtype)
    x = m.input("x", [1, 4, 1, 6])
    r = m.act("r", [4, 6])
    m.w.op(W.RESHAPE, [x, m.const("shape", np.array([4, -1]), "int32")], [r])
    e = m.act("e", [4, 1, 6])
    m.w.op(W.EXPAND_DIMS, [r, m.const("axis", np.array(-2), "int32")], [e])
    t = m.act("t", [6, 4, 1])
    m.w.op(W.TRANSPOSE, [e, m.const("perm", np.array([2, 0, 1]), "int32")], [t])
    s = m.act("s", [6, 4])
    m.w.op(W.SQUEEZE, [t], [s], W.SqueezeOptions, [(0, "iv", [2])])
    check(m.build([s]), [a for _, a in m.inputs], exact=True)


@pytest.mark.parametrize("dtype", DTYPES)
def test_reshape_by_its_options(dtype):
    """Without a shape operand RESHAPE takes the options' new_shape; a legacy [0] means a scalar
    (TFLite's reshape kernel)."""
    m = Model(dtype)
    x = m.input("x", [1, 4, 1, 6])
    r = m.act("r", [3, 8])
    m.w.op(W.RESHAPE, [x], [r], W.ReshapeOptions, [(0, "iv", [3, -1])])
    one = m.input("one", [1, 1])
    s = m.act("s", [])
    m.w.op(W.RESHAPE, [one], [s], W.ReshapeOptions, [(0, "iv", [0])])
    check(m.build([r, s]), [a for _, a in m.inputs], exact=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [3, -1, 1])
def test_concatenation_after_conv(dtype, axis):
    m = Model(dtype)
    x = m.input("x", [1, 4, 4, 2])
    a = conv_first(m, x, 2, 3, 4, "a")
    b = conv_first(m, x, 2, 3, 4, "b")
    shape = [1, 4, 4, 6] if axis in (3, -1) else [1, 8, 4, 3]
    y = m.act("y", shape, scale=0.1)
    m.w.op(W.CONCATENATION, [a, b], [y], W.ConcatenationOptions, [(0, "i", axis)])
    check(m.build([y]), [a for _, a in m.inputs], exact=True)


def test_concatenation_rescales_uint8():
    m = Model("uint8")
    a = m.input("a", [2, 3], scale=0.05, zero_point=100)
    b = m.input("b", [2, 4], scale=0.11, zero_point=140)
    y = m.act("y", [2, 7], scale=0.08, zero_point=128)
    m.w.op(W.CONCATENATION, [a, b], [y], W.ConcatenationOptions, [(0, "i", 1)])
    check(m.build([y]), [a for _, a in m.inputs], exact=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("v2", [False, True])
def test_pad_after_conv(dtype, v2):
    m = Model(dtype)
    c = conv_first(m, m.input("x", [1, 3, 3, 2]), 2, 2, 3)
    pads = m.const("pads", np.array([[0, 0], [1, 2], [2, 0], [0, 1]]), "int32")
    y = m.act("y", [1, 6, 5, 3], scale=0.1)
    inputs = [c, pads]
    if v2:
        zp = {"int8": -3, "uint8": 125, "int16": 0}.get(dtype)
        value = m.const("v", np.array([0.5], np.float32)) if dtype == "float32" else \
            m.const("v", np.array([7]), dtype, scale=0.1 / (256 if dtype == "int16" else 1),
                    zero_point=zp)
        inputs.append(value)
    m.w.op(W.PADV2 if v2 else W.PAD, inputs, [y], W.PadV2Options if v2 else W.PadOptions)
    check(m.build([y]), [a for _, a in m.inputs], exact=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("begin,end,strides,begin_mask,end_mask,shrink", [
    ([0, 1, 0, 0], [1, 4, 5, 3], [1, 1, 2, 1], 0, 0, 0),
    ([0, -2, 0, 1], [1, 0, 5, 0], [1, -1, 1, 1], 0, 0b1000, 0),
    ([0, 1, 0, 0], [1, 2, 5, 3], [1, 1, 1, 1], 0b0101, 0b0101, 0b0010),
    ([0, 0, 4, 0], [1, 4, 0, 3], [1, 1, -2, 1], 0, 0, 0)])
def test_strided_slice(dtype, begin, end, strides, begin_mask, end_mask, shrink):
    m = Model(dtype)
    x = m.input("x", [1, 4, 5, 3])
    ref = np.zeros([1, 4, 5, 3])
    index = []
    for d in range(4):
        if (shrink >> d) & 1:
            index.append(begin[d])
            continue
        b = None if (begin_mask >> d) & 1 else begin[d]
        e = None if (end_mask >> d) & 1 else end[d]
        index.append(slice(b, e, strides[d]))
    shape = list(ref[tuple(index)].shape)
    y = m.act("y", shape)
    consts = [m.const(n, np.array(v), "int32") for n, v in
              (("begin", begin), ("end", end), ("strides", strides))]
    m.w.op(45, [x] + consts, [y], 32, [(0, "i", begin_mask), (1, "i", end_mask),
                                       (4, "i", shrink)])
    check(m.build([y]), [a for _, a in m.inputs], exact=True)


@pytest.mark.parametrize("dtype", DTYPES)
def test_slice_gather_split(dtype):
    m = Model(dtype)
    x = m.input("x", [3, 6, 4])
    s = m.act("s", [2, 6, 3])
    m.w.op(65, [x, m.const("begin", np.array([1, 0, 1]), "int32"),
                m.const("size", np.array([-1, -1, 3]), "int32")], [s])
    g = m.act("g", [2, 3, 3])
    m.w.op(36, [s, m.const("idx", np.array([5, 0, 2]), "int32")], [g], 23, [(0, "i", 1)])
    parts = [m.act(f"p{k}", [2, 1, 3]) for k in range(3)]
    m.w.op(49, [m.const("axis", np.array(1), "int32"), g], parts, 35, [(0, "i", 3)])
    check(m.build(parts), [a for _, a in m.inputs], exact=True)


@pytest.mark.parametrize("dtype", ["float32", "int8"])
def test_split_after_conv(dtype):
    m = Model(dtype)
    c = conv_first(m, m.input("x", [1, 4, 4, 2]), 2, 4, 4)
    parts = [m.act(f"p{k}", [1, 4, 4, 2], scale=0.1) for k in range(2)]
    m.w.op(49, [m.const("axis", np.array(3), "int32"), c], parts, 35, [(0, "i", 2)])
    check(m.build(parts), [a for _, a in m.inputs], exact=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bilinear", [True, False])
@pytest.mark.parametrize("align_corners,half_pixel", [(False, False), (True, False), (False, True)])
@pytest.mark.parametrize("in_hw,out_hw", [((4, 5), (7, 9)), ((9, 7), (4, 3)), ((5, 1), (1, 6))],
                         ids=["grow", "shrink", "single"])
def test_resize(dtype, bilinear, align_corners, half_pixel, in_hw, out_hw):
    """Bit for bit: 8-bit bilinear resizes as XNNPACK's kernel (the runtime's delegate)."""
    m = Model(dtype)
    x = m.input("x", [1, *in_hw, 2])
    y = m.act("y", [1, *out_hw, 2])
    size = m.const("size", np.array(out_hw), "int32")
    fields = [(2, "B", align_corners), (3, "B", half_pixel)] if bilinear else \
        [(0, "B", align_corners), (1, "B", half_pixel)]
    m.w.op(23 if bilinear else 97, [x, size], [y], 15 if bilinear else 74, fields)
    check(m.build([y]), [a for _, a in m.inputs], exact=True)


def test_resize_refuses_an_empty_input():
    m = Model("int8")
    x = m.input("x", [1, 0, 5, 2])
    y = m.act("y", [1, 7, 9, 2])
    size = m.const("size", np.array([7, 9]), "int32")
    m.w.op(23, [x, size], [y], 15, [(2, "B", False), (3, "B", True)])
    with pytest.raises(anvil.UserError, match="operator 0.*the input's height and width must be "
                       "positive, got 0 and 5"):
        frontend.from_tflite(m.build([y]))


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16"])
def test_quantized_bilinear_resize_refuses_requantizing(dtype):
    m = Model(dtype)
    x = m.input("x", [1, 4, 5, 2])
    y = m.act("y", [1, 7, 9, 2], scale=0.07)
    size = m.const("size", np.array([7, 9]), "int32")
    m.w.op(23, [x, size], [y], 15, [(2, "B", False), (3, "B", True)])
    with pytest.raises(anvil.UserError, match="operator 0.*bilinear resize keeps its input's "
                       "quantization"):
        frontend.from_tflite(m.build([y]))



def integer_bilinear_reference(x, out_h, out_w, align_corners, half_pixel):
    """TFLite's ResizeBilinearInteger (its reference kernel of int8 and int16) of x [N, H, W, C]
    in NumPy: positions in 10-bit fixed point, rounding half away from zero."""
    def sampling(size_in, size_out):
        scale = ((1 << 10) * size_in + size_out // 2) // size_out
        if align_corners and size_out > 1:
            scale = ((1 << 10) * (size_in - 1) + (size_out - 1) // 2) // (size_out - 1)
        pos = np.arange(size_out) * scale + ((scale // 2 - 512) if half_pixel else 0)
        lower = np.maximum(np.trunc(pos / 1024).astype(np.int64), 0)
        upper = np.minimum(np.trunc((pos + 1023) / 1024).astype(np.int64), size_in - 1)
        return lower, upper, pos - 1024 * lower
    y0, y1, wy = sampling(x.shape[1], out_h)
    x0, x1, wx = sampling(x.shape[2], out_w)
    v = x.astype(np.int64)
    wy, wx = wy[None, :, None, None], wx[None, None, :, None]
    s = (v[:, y0][:, :, x0] * (1024 - wy) * (1024 - wx) + v[:, y1][:, :, x0] * wy * (1024 - wx) +
         v[:, y0][:, :, x1] * (1024 - wy) * wx + v[:, y1][:, :, x1] * wy * wx)
    return (np.sign(s) * ((np.abs(s) + (1 << 19)) >> 20)).astype(x.dtype)


@pytest.mark.parametrize("align_corners,half_pixel", [(False, False), (True, False), (False, True)])
def test_int8_bilinear_of_the_reference_kernel(align_corners, half_pixel):
    """int8 RESIZE_BILINEAR with rounding="TFLITE": TFLite's integer kernel, bit for bit."""
    m = Model("int8")
    x = m.input("x", [1, 4, 5, 2])
    y = m.act("y", [1, 7, 9, 2])
    size = m.const("size", np.array([7, 9]), "int32")
    m.w.op(23, [x, size], [y], 15, [(2, "B", align_corners), (3, "B", half_pixel)])
    mod, params = frontend.from_tflite(m.build([y]), rounding="TFLITE")
    xv = m.inputs[0][1]
    got = anvil.runtime.VirtualMachine(anvil.build(mod, target="llvm", params=params))[
        "main"](xv).numpy()
    np.testing.assert_array_equal(got, integer_bilinear_reference(xv, 7, 9, align_corners,
                                                                  half_pixel))


def uint8_bilinear_reference(x, out_h, out_w, align_corners, half_pixel):
    """TFLite's reference ResizeBilinear<uint8_t> of x [N, H, W, C] in NumPy float32: positions
    and weights in float, v00 (1 - dy)(1 - dx) + v10 dy (1 - dx) + v01 (1 - dy) dx + v11 dy dx
    + 0.5 rounded in that order, truncated."""
    f = np.float32

    def sampling(size_in, size_out):
        scale = f(size_in) / f(size_out)
        if align_corners and size_out > 1:
            scale = f(size_in - 1) / f(size_out - 1)
        o = np.arange(size_out).astype(f)
        pos = (o + f(0.5)) * scale - f(0.5) if half_pixel else o * scale
        lower = np.maximum(np.floor(pos).astype(np.int64), 0)
        upper = np.minimum(np.ceil(pos).astype(np.int64), size_in - 1)
        d = (pos - lower.astype(f)).astype(f)
        return lower, upper, (f(1) - d).astype(f), d
    y0, y1, wy0, wy1 = sampling(x.shape[1], out_h)
    x0, x1, wx0, wx1 = sampling(x.shape[2], out_w)
    v = x.astype(f)
    wy0, wy1 = wy0[None, :, None, None], wy1[None, :, None, None]
    wx0, wx1 = wx0[None, None, :, None], wx1[None, None, :, None]
    s = v[:, y0][:, :, x0] * wy0 * wx0 + v[:, y1][:, :, x0] * wy1 * wx0
    s = s + v[:, y0][:, :, x1] * wy0 * wx1
    s = s + v[:, y1][:, :, x1] * wy1 * wx1 + f(0.5)
    return s.astype(np.uint8)


@pytest.mark.parametrize("align_corners,half_pixel", [(False, False), (True, False), (False, True)])
@pytest.mark.parametrize("in_hw,out_hw", [((4, 5), (7, 9)), ((9, 7), (4, 3)), ((3, 3), (10, 10))])
def test_uint8_bilinear_of_the_reference_kernel(align_corners, half_pixel, in_hw, out_hw):
    """uint8 RESIZE_BILINEAR with rounding="TFLITE": TFLite's reference kernel in float, bit for
    bit (also held, off-tree, to that kernel compiled from source)."""
    m = Model("uint8")
    x = m.input("x", [2, *in_hw, 3])
    y = m.act("y", [2, *out_hw, 3])
    size = m.const("size", np.array(out_hw), "int32")
    m.w.op(23, [x, size], [y], 15, [(2, "B", align_corners), (3, "B", half_pixel)])
    xv = m.inputs[0][1]
    got = run_tflite(m.build([y]), [xv])
    np.testing.assert_array_equal(got, uint8_bilinear_reference(xv, *out_hw, align_corners,
                                                                half_pixel))
