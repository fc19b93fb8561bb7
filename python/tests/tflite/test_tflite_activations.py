"""The TFLite importer's unary converters (RELUs, LEAKY_RELU, HARD_SWISH, PRELU, LOGISTIC, TANH,
SOFTMAX, QUANTIZE, DEQUANTIZE) against the TFLite runtime, as test_tflite_ops.py's: float32
within 1e-5, quantized ones bit for bit (rounding="XNNPACK", the runtime's kernels); where the
runtime's kernels differ from TFLite Micro's (rounding="TFLITE"), those are held to Micro's
arithmetic in NumPy or to goldens of its compiled kernels."""
import numpy as np
import pytest

import anvil
from anvil import frontend

import litert
import tflite_writer as W
from op_models import (DTYPES, INT_RANGE, RNG, Model, check, conv_first,
                       multiply_by_quantized_multiplier, run_tflite)


def hard_swish_model(dtype, in_scale, in_zp, out_scale, out_zp):
    w = W.ModelWriter()
    x = w.tensor("x", [256], dtype, scale=in_scale, zero_point=in_zp)
    y = w.tensor("y", [256], dtype, scale=out_scale, zero_point=out_zp)
    w.op(117, [x], [y])
    return w.build([x], [y])


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_quantized_hard_swish(dtype):
    """Every 8-bit input's HARD_SWISH bit for bit against the runtime (TFLite's 16-bit fixed-point
    kernel), over random scales and zero points and extreme ratios: an output scale hundreds of
    times the input's (the kernel's rounding shift past 15 bits), tiny and large input scales
    (its relu-ish rescale shifting right and left), and an output scale just above input / 128."""
    lo, hi = INT_RANGE[dtype]
    shift = 0 if dtype == "int8" else 128
    cases = [(0.02, 0, 12.0, 0), (0.02, 5, 40.0, 3), (1e-6, 0, 1e-6, 0), (3.0, 0, 2.0, 0),
             (40.0, 10, 30.0, -5), (0.5, 0, 0.5 / 127, 0), (2e-7, 0, 1e-3, 0),
             (0.02, 0, 6.0, 100)]
    for _ in range(12):
        in_scale = RNG.uniform(0.005, 0.5)
        cases.append((in_scale, int(RNG.integers(-128, 128)), in_scale * RNG.uniform(0.2, 3.0),
                      int(RNG.integers(-128, 128))))
    xs = np.arange(lo, hi + 1).astype(dtype)
    runs, got = [], []
    for in_scale, in_zp, out_scale, out_zp in cases:
        model = hard_swish_model(dtype, in_scale, in_zp + shift, out_scale, out_zp + shift)
        runs.append((model, [xs]))
        got.append(run_tflite(model, [xs]))
    for case, g, (w,) in zip(cases, got, litert.run(runs)):
        np.testing.assert_array_equal(g, w, err_msg=str(case))


def test_quantized_hard_swish_refuses_a_fine_output_scale():
    with pytest.raises(anvil.UserError, match="operator 0.*HARD_SWISH needs an output scale above "
                       "the input scale / 128"):
        frontend.from_tflite(hard_swish_model("int8", 0.5, 0, 0.5 / 130, 0))


UNARY = {"relu": (W.RELU, 0, []), "relu6": (W.RELU6, 0, []), "relu_n1_to_1": (W.RELU_N1_TO_1, 0, []),
         "logistic": (W.LOGISTIC, 0, []), "tanh": (W.TANH, 0, []),
         "leaky_relu": (98, 75, [(0, "f", 0.2)]), "hard_swish": (117, 0, [])}
# TFLite defines no int16 RELU_N1_TO_1 or HARD_SWISH (its runtime returns garbage for them).
UNARY_CASES = [(d, name) for d in DTYPES for name in UNARY
               if not (d == "int16" and name in ("relu_n1_to_1", "hard_swish"))]


@pytest.mark.parametrize("dtype,name", UNARY_CASES)
def test_unary(dtype, name):
    op, options, fields = UNARY[name]
    m = Model(dtype)
    x = m.input("x", [1, 4, 4, 3], scale=0.05)
    scale, zp = 0.04, None
    if dtype != "float32" and op == W.LOGISTIC:
        scale, zp = 1 / 256, -128 if dtype == "int8" else 0  # TFLite's fixed output quantization
    if dtype != "float32" and op == W.TANH:
        scale, zp = 1 / 128, 0 if dtype == "int8" else 128
    if dtype == "int16" and op in (W.LOGISTIC, W.TANH):
        scale = 256 / 32768  # Q0.15 (act() divides an int16 scale by 256)
    y = m.act("y", [1, 4, 4, 3], scale=scale, zero_point=zp)
    m.w.op(op, [x], [y], options, fields)
    model = m.build([y])
    check(model, [a for _, a in m.inputs], exact=True)
    if dtype != "float32" and op in (W.RELU, W.RELU6, W.RELU_N1_TO_1):
        # rounding="TFLITE" (TFLite Micro's kernels, as the runtime's here): the operand rescaled
        # in fixed point by the ratio of the scales divided in float, then clamped.
        xv = m.inputs[0][1]
        lo, hi = INT_RANGE[dtype]
        zp_in = {"int8": -3, "uint8": 125, "int16": 0}[dtype]
        zp_out = zp if zp is not None else zp_in
        if dtype == "int16":
            scale = scale / 256  # as act() quantized y
        ratio = np.float32(0.05 / (256 if dtype == "int16" else 1)) / np.float32(scale)
        v = multiply_by_quantized_multiplier(xv.astype(np.int64) - zp_in, float(ratio)) + zp_out
        bounds = {W.RELU: (0, None), W.RELU6: (0, 6), W.RELU_N1_TO_1: (-1, 1)}[op]
        q = lambda r: zp_out + int(np.round(np.float32(r) / np.float32(scale)))  # noqa: E731
        act_lo = max(lo, q(bounds[0]))
        act_hi = hi if bounds[1] is None else min(hi, q(bounds[1]))
        want = np.clip(v, act_lo, act_hi).astype(dtype)
        mod, params = frontend.from_tflite(model)
        got = anvil.runtime.VirtualMachine(anvil.build(mod, target="llvm", params=params))[
            "main"](xv).numpy()
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16"])
def test_quantized_leaky_relu(dtype):
    """Every 8-bit input (a spread of int16 ones) bit for bit against the runtime, over random
    scales, zero points and slopes, including slopes whose rescale XNNPACK does not take
    (below 2^-8: TFLite's kernel)."""
    lo, hi = INT_RANGE[dtype]
    xs = (np.arange(lo, hi + 1) if dtype != "int16" else np.linspace(lo, hi, 4096)).astype(dtype)
    runs, got = [], []
    for alpha in [0.2, 0.01, 0.5, 1.5, 0.003, 0.1, 0.0, 0.004]:
        w = W.ModelWriter()
        in_scale = RNG.uniform(0.01, 0.2) / (256 if dtype == "int16" else 1)
        zps = [0, 0] if dtype == "int16" else [int(v) for v in RNG.integers(lo, hi + 1, 2)]
        x = w.tensor("x", [xs.size], dtype, scale=in_scale, zero_point=zps[0])
        y = w.tensor("y", [xs.size], dtype, scale=in_scale * RNG.uniform(0.3, 3),
                     zero_point=zps[1])
        w.op(98, [x], [y], 75, [(0, "f", alpha)])
        model = w.build([x], [y])
        runs.append((model, [xs]))
        got.append(run_tflite(model, [xs], rounding="XNNPACK"))
    for g, (want,) in zip(got, litert.run(runs)):
        np.testing.assert_array_equal(g, want)


@pytest.mark.parametrize("dtype", ["float32", "int8"])
def test_prelu(dtype):
    m = Model(dtype)
    x = conv_first(m, m.input("x", [1, 5, 5, 2]), 2, 3, 5)
    alpha = m.const("alpha", np.array([[[0.1, 0.2, 0.3]]], np.float32)) if dtype == "float32" \
        else m.const("alpha", np.array([[[30, 60, 90]]]), "int8", scale=0.004, zero_point=4)
    y = m.act("y", [1, 5, 5, 3], scale=0.08)
    m.w.op(54, [x, alpha], [y])
    check(m.build([y]), [a for _, a in m.inputs], exact=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("beta", [1.0, 0.5])
def test_softmax(dtype, beta):
    m = Model(dtype)
    x = m.input("x", [3, 10], scale=0.1)
    # TFLite's fixed output quantization: 1/256 (int8, uint8), Q0.15 (int16: act() divides by 256).
    y = m.act("y", [3, 10], scale=256 / 32768 if dtype == "int16" else 1 / 256,
              zero_point=-128 if dtype == "int8" else 0)
    m.w.op(W.SOFTMAX, [x], [y], W.SoftmaxOptions, [(0, "f", beta)])
    check(m.build([y]), [a for _, a in m.inputs], exact=True)


@pytest.mark.parametrize("beta", [1.0, 0.5])
def test_int8_softmax_with_an_int16_result(beta):
    """int8 in, int16 out (TFLite's scale 2^-16, zero point -32768): bit for bit."""
    m = Model("int8")
    x = m.input("x", [8, 10], scale=0.1)
    y = m.w.tensor("y", [8, 10], "int16", scale=1 / 65536, zero_point=-32768)
    m.w.op(W.SOFTMAX, [x], [y], W.SoftmaxOptions, [(0, "f", beta)])
    check(m.build([y]), [a for _, a in m.inputs], exact=True)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16"])
def test_quantize_and_dequantize(dtype):
    m = Model("float32")
    x = m.input("x", [2, 7])
    lo = {"int8": -3, "uint8": 120, "int16": 0}[dtype]
    div = 256 if dtype == "int16" else 1  # int16: symmetric, finer
    q = m.w.tensor("q", [2, 7], dtype, scale=0.03 / div, zero_point=lo)
    r = m.w.tensor("r", [2, 7], dtype, scale=0.05 / div,
                   zero_point=lo + 2 if lo else 0)  # requantized
    f = m.w.tensor("f", [2, 7])
    m.w.op(W.QUANTIZE, [x], [q])
    m.w.op(W.QUANTIZE, [q], [r])
    m.w.op(W.DEQUANTIZE, [r], [f])
    check(m.build([q, r, f]), [a for _, a in m.inputs], exact=True)


# TFLite Micro's int8 LOGISTIC ("l") and TANH ("t") on every int8 input -128..127, as hex bytes,
# from its reference_integer_ops kernels compiled with gemmlowp: (input scale, zero point, op).
MICRO_INT8_GOLDENS = {
    (0.05, -3, "l"): (
        "8081818181818181818181818181818181818181818181828282828282828282"
        "828383838383838384848484848585858586868686878788888889898a8a8b8b"
        "8c8c8d8d8e8f8f909192939394959697989a9b9c9d9fa0a1a3a4a6a8a9abadaf"
        "b1b3b5b7b9bbbec0c2c5c7cacdcfd2d5d8dbdee1e4e7eaedf0f3f6fafd000306"
        "0a0d101316191c1f2225282b2e313336393b3e40424547494b4d4f5153555758"
        "5a5c5d5f60616364656668696a6b6c6d6d6e6f70717172737374747575767677"
        "7778787879797a7a7a7a7b7b7b7b7c7c7c7c7c7d7d7d7d7d7d7d7e7e7e7e7e7e"
        "7e7e7e7e7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f"),
    (0.05, -3, "t"): (
        "8080808080808080808080808080808080808080808080808080808080808080"
        "8080808080808080808080808080808080808080808080808080808080808081"
        "81818181818181818181828282828283838383848485858686878888898a8b8c"
        "8d8f90929395979a9c9fa1a4a8abafb3b7bbc0c5cacfd5dbe1e7edf3fa00060d"
        "13191f252b31363b4045494d5155585c5f616466696b6d6e7071737475767778"
        "78797a7a7b7b7c7c7d7d7d7d7e7e7e7e7e7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f"
        "7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f"
        "7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f"),
    (0.0123, 17, "l"): (
        "a5a5a6a6a6a7a7a8a8a8a9a9aaaaabababacacadadaeaeafafb0b0b1b1b2b2b3"
        "b3b4b4b5b5b6b6b7b7b8b8b9b9bababbbcbcbdbdbebebfc0c0c1c1c2c3c3c4c4"
        "c5c6c6c7c8c8c9c9cacbcbcccdcdcecfcfd0d1d1d2d3d3d4d5d6d6d7d8d8d9da"
        "dbdbdcdddddedfe0e0e1e2e3e3e4e5e6e6e7e8e9e9eaebececedeeeff0f0f1f2"
        "f3f3f4f5f6f7f7f8f9fafafbfcfdfefeff000102020304050606070809090a0b"
        "0c0d0d0e0f101011121314141516171718191a1a1b1c1d1d1e1f202021222323"
        "24252526272828292a2a2b2c2d2d2e2f2f303131323333343535363737383839"
        "3a3a3b3c3c3d3d3e3f3f4040414242434344444546464747484849494a4a4b4b"),
    (0.0123, 17, "t"): (
        "878787888888888889898989898a8a8a8a8b8b8b8b8c8c8c8c8d8d8d8e8e8e8f"
        "8f8f909090919192929293939494959596969797989899999a9a9b9c9c9d9d9e"
        "9f9fa0a1a1a2a3a4a4a5a6a7a8a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9ba"
        "bbbcbdbec0c1c2c3c4c6c7c8c9cbcccdcfd0d1d3d4d6d7d8dadbdddee0e1e3e4"
        "e6e7e9eaecedeff0f2f3f5f7f8fafbfdfe000203050608090b0d0e1011131416"
        "17191a1c1d1f202223252628292a2c2d2f30313334353738393a3c3d3e3f4042"
        "434445464748494a4b4c4d4e4f50515253545556575858595a5b5c5c5d5e5f5f"
        "60616162636364646566666767686869696a6a6b6b6c6c6d6d6e6e6e6f6f7070"),
    (0.5, 0, "l"): (
        "8080808080808080808080808080808080808080808080808080808080808080"
        "8080808080808080808080808080808080808080808080808080808080808080"
        "8080808080808080808080808080808080808080808080808080808080808080"
        "80808080808080808080808080808080808080808181828385888c939fafc5e1"
        "001f3b51616d74787b7d7e7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f"
        "7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f"
        "7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f"
        "7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f"),
    (0.5, 0, "t"): (
        "8080808080808080808080808080808080808080808080808080808080808080"
        "8080808080808080808080808080808080808080808080808080808080808080"
        "8080808080808080808080808080808080808080808080808080808080808080"
        "80808080808080808080808080808080808080808080808080808182858c9fc5"
        "003b61747b7e7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f"
        "7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f"
        "7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f"
        "7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f"),
    (0.003, -100, "l"): (
        "fbfbfbfbfbfcfcfcfcfcfdfdfdfdfdfefefefefefeffffffffff000000000001"
        "0101010102020202020203030303030404040404050505050506060606060707"
        "07070707080808080809090909090a0a0a0a0a0b0b0b0b0b0b0c0c0c0c0c0d0d"
        "0d0d0d0e0e0e0e0e0f0f0f0f0f0f101010101011111111111212121212121313"
        "1313131414141414151515151515161616161617171717171818181818181919"
        "1919191a1a1a1a1a1a1b1b1b1b1b1c1c1c1c1c1d1d1d1d1d1d1e1e1e1e1e1f1f"
        "1f1f1f1f20202020202021212121212222222222222323232323242424242424"
        "25252525252526262626262727272727272828282828282929292929292a2a2a"),
    (0.003, -100, "t"): (
        "f5f6f6f6f7f7f8f8f8f9f9f9fafafbfbfbfcfcfdfdfdfefefeffff0000000101"
        "0202020303030404050505060607070708080809090a0a0a0b0b0b0c0c0d0d0d"
        "0e0e0f0f0f101010111112121213131314141515151616161717181818191919"
        "1a1a1a1b1b1c1c1c1d1d1d1e1e1f1f1f20202021212122222223232424242525"
        "252626262727272828282929292a2a2a2b2b2c2c2c2d2d2d2e2e2e2f2f2f3030"
        "3031313132323232333333343434353535363636373737383838393939393a3a"
        "3a3b3b3b3c3c3c3c3d3d3d3e3e3e3f3f3f3f4040404141414142424243434343"
        "444444444545454646464647474747484848484949494a4a4a4a4b4b4b4b4c4c"),
    (8.0, 5, "l"): (
        "8080808080808080808080808080808080808080808080808080808080808080"
        "8080808080808080808080808080808080808080808080808080808080808080"
        "8080808080808080808080808080808080808080808080808080808080808080"
        "8080808080808080808080808080808080808080808080808080808080808080"
        "8080808080807f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f"
        "7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f"
        "7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f"
        "7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f"),
    (8.0, 5, "t"): (
        "8080808080808080808080808080808080808080808080808080808080808080"
        "8080808080808080808080808080808080808080808080808080808080808080"
        "8080808080808080808080808080808080808080808080808080808080808080"
        "8080808080808080808080808080808080808080808080808080808080808080"
        "8080808080807f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f"
        "7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f"
        "7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f"
        "7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f"),
    (0.00000095367431640625, 0, "l"): (
        "0000000000000000000000000000000000000000000000000000000000000000"
        "0000000000000000000000000000000000000000000000000000000000000000"
        "0000000000000000000000000000000000000000000000000000000000000000"
        "0000000000000000000000000000000000000000000000000000000000000000"
        "0000000000000000000000000000000000000000000000000000000000000000"
        "0000000000000000000000000000000000000000000000000000000000000000"
        "0000000000000000000000000000000000000000000000000000000000000000"
        "0000000000000000000000000000000000000000000000000000000000000000"),
    (0.00000095367431640625, 0, "t"): (
        "0000000000000000000000000000000000000000000000000000000000000000"
        "0000000000000000000000000000000000000000000000000000000000000000"
        "0000000000000000000000000000000000000000000000000000000000000000"
        "0000000000000000000000000000000000000000000000000000000000000000"
        "0000000000000000000000000000000000000000000000000000000000000000"
        "0000000000000000000000000000000000000000000000000000000000000000"
        "0000000000000000000000000000000000000000000000000000000000000000"
        "0000000000000000000000000000000000000000000000000000000000000000"),
    (5e-09, 3, "l"): "00" * 256,  # every result 0
    (5e-09, 3, "t"): "00" * 256,  # every result 0
}


@pytest.mark.parametrize("scale,zero_point,op", sorted(MICRO_INT8_GOLDENS))
def test_int8_logistic_and_tanh_of_tflite_micro(scale, zero_point, op):
    """rounding="TFLITE": int8 LOGISTIC and TANH are TFLite Micro's fixed-point kernels (gemmlowp's
    logistic and tanh in Q4.27), bit for bit on every input, from large input scales (most inputs
    past the kernel's radius) to tiny ones (5e-09: the kernel's rescale shifts by 0)."""
    w = W.ModelWriter()
    x = w.tensor("x", [256], "int8", scale=scale, zero_point=zero_point)
    tanh = op == "t"
    y = w.tensor("y", [256], "int8", scale=1 / 128 if tanh else 1 / 256,
                 zero_point=0 if tanh else -128)
    w.op(W.TANH if tanh else W.LOGISTIC, [x], [y])
    got = run_tflite(w.build([x], [y]), [np.arange(-128, 128).astype(np.int8)])
    want = np.frombuffer(bytes.fromhex("".join(MICRO_INT8_GOLDENS[(scale, zero_point, op)])),
                         np.int8)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("op,scale,zero_point,message", [
    (W.LOGISTIC, 1 / 128, -128, "an int8 LOGISTIC's result must have scale 1/256 and zero point "
     "-128, as TFLite's kernel; got 0.0078125 and -128"),
    (W.TANH, 1 / 128, 3, "an int8 TANH's result must have scale 1/128 and zero point 0"),
])
def test_int8_logistic_and_tanh_of_tflite_micro_refusals(op, scale, zero_point, message):
    w = W.ModelWriter()
    x = w.tensor("x", [4], "int8", scale=0.05, zero_point=0)
    y = w.tensor("y", [4], "int8", scale=scale, zero_point=zero_point)
    w.op(op, [x], [y])
    with pytest.raises(anvil.UserError, match="operator 0.*" + message):
        frontend.from_tflite(w.build([x], [y]))


def test_int8_logistic_refuses_a_tiny_input_scale():
    w = W.ModelWriter()
    x = w.tensor("x", [4], "int8", scale=2.0**-29, zero_point=0)
    y = w.tensor("y", [4], "int8", scale=1 / 256, zero_point=-128)
    w.op(W.LOGISTIC, [x], [y])
    with pytest.raises(anvil.UserError, match="too small for TFLite's int8 LOGISTIC"):
        frontend.from_tflite(w.build([x], [y]))
