"""Shared by the TFLite operator tests: models of one operator written with tflite_writer.py
(Model), their comparison with the real TFLite runtime (check: litert.py), Anvil's run of a model
(run_tflite) and TFLite's fixed-point rescale in NumPy (multiply_by_quantized_multiplier)."""
import numpy as np

import anvil
from anvil import frontend

import litert
import tflite_writer as W

RNG = np.random.default_rng(25)
INT_RANGE = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767)}


class Model:
    """A model under construction: the writer, its inputs (tensor index, sample array) and the
    quantization of activations of one dtype."""

    def __init__(self, dtype="float32"):
        self.w = W.ModelWriter()
        self.dtype = dtype
        self.inputs = []
        self.scales = {}  # weights tensor → its scales

    @property
    def quantized(self):
        return self.dtype != "float32"

    def act(self, name, shape, scale=0.05, zero_point=None):
        """An activation tensor of the model's dtype (quantized when it is an integer type)."""
        if not self.quantized:
            return self.w.tensor(name, shape)
        if self.dtype == "int16":  # TFLite's 16x8 quantization is symmetric
            scale, zp = scale / 256, 0
        else:
            zp = zero_point if zero_point is not None else (-3 if self.dtype == "int8" else 125)
        return self.w.tensor(name, shape, self.dtype, scale=scale, zero_point=zp)

    def input(self, name, shape, scale=0.05, zero_point=None):
        t = self.act(name, shape, scale, zero_point)
        if self.quantized:
            lo, hi = INT_RANGE[self.dtype]
            x = RNG.integers(lo, hi + 1, shape).astype(self.dtype)
        else:
            x = RNG.standard_normal(shape).astype(np.float32)
        self.inputs.append((t, x))
        return t

    def const(self, name, values, dtype="float32", **quant):
        values = np.asarray(values)
        return self.w.tensor(name, list(values.shape), dtype, data=values, **quant)

    def weights(self, name, shape, per_channel_axis=0):
        """Weights: float, int8 per channel along `per_channel_axis` (int8 and int16 models), or
        uint8 per tensor with a zero point."""
        if not self.quantized:
            return self.const(name, RNG.standard_normal(shape).astype(np.float32) * 0.3)
        if self.dtype in ("int8", "int16"):
            channels = shape[per_channel_axis]
            scales = RNG.uniform(0.005, 0.02, channels).astype(np.float32)
            t = self.const(name, RNG.integers(-127, 128, shape), "int8", scale=scales,
                           zero_point=np.zeros(channels, np.int64), axis=per_channel_axis)
        else:
            scales = np.full(shape[per_channel_axis], 0.01, np.float32)
            t = self.const(name, RNG.integers(0, 256, shape), "uint8", scale=0.01,
                           zero_point=131)
        self.scales[t] = scales
        return t

    def bias(self, name, channels, input_scale, weights):
        """A bias quantized as TFLite requires: scale input_scale * weights_scale per channel."""
        if not self.quantized:
            return self.const(name, RNG.standard_normal(channels).astype(np.float32))
        scales = (np.float32(input_scale) * self.scales[weights]).astype(np.float32)
        if self.dtype == "uint8":
            scales = scales[:1]
        if self.dtype == "int16":  # 16x8 kernels take 64-bit biases
            return self.const(name, RNG.integers(-2000, 2000, channels) * 256, "int64",
                              scale=scales / 256, zero_point=np.zeros(scales.size, np.int64))
        return self.const(name, RNG.integers(-2000, 2000, channels), "int32", scale=scales,
                          zero_point=np.zeros(scales.size, np.int64))

    def build(self, outputs):
        return self.w.build([t for t, _ in self.inputs], outputs)


def check(model_bytes, inputs, exact, rounding="XNNPACK", atol=0):
    mod, params = frontend.from_tflite(model_bytes, rounding=rounding)
    with anvil.PassContext(opt_level=3):
        lib = anvil.build(mod, target="llvm", params=params)
    out = anvil.runtime.VirtualMachine(lib)["main"](*inputs)
    got = [o.numpy() for o in out] if isinstance(out, (tuple, list)) else [out.numpy()]
    litert.require()
    want = litert.run([(model_bytes, inputs)])[0]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, g.dtype, w.shape, w.dtype)
        if w.dtype == np.float32:
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
        elif exact:
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g.astype(np.int64), w.astype(np.int64), rtol=0,
                                       atol=max(atol, 1))


def conv_options(padding=W.SAME, stride=1, activation=W.NONE, dilation=1):
    return [(0, "b", padding), (1, "i", stride), (2, "i", stride), (3, "b", activation),
            (4, "i", dilation), (5, "i", dilation)]


def conv_first(m, x, channels_in, channels_out, hw, name="c"):
    """A 3x3 SAME convolution of x [1, hw, hw, channels_in]: its result, held channels first."""
    k = m.weights(name + "_w", [channels_out, 3, 3, channels_in])
    b = m.bias(name + "_b", channels_out, 0.05, k)
    y = m.act(name, [1, hw, hw, channels_out], scale=0.1)
    m.w.op(W.CONV_2D, [x, k, b], [y], W.Conv2DOptions, conv_options())
    return y


DTYPES = ["float32", "int8", "uint8", "int16"]


def run_tflite(model, inputs, rounding="TFLITE"):
    mod, params = frontend.from_tflite(model, rounding=rounding)
    return anvil.runtime.VirtualMachine(anvil.build(mod, target="llvm", params=params))[
        "main"](*inputs).numpy()


def quantize_multiplier(ratio):
    """TFLite's QuantizeMultiplier: (m, shift) with ratio = m * 2^(shift - 31)."""
    significand, shift = np.frexp(ratio)
    m = int(round(significand * 2**31))
    if m == 2**31:
        m, shift = m // 2, shift + 1
    return m, int(shift)


def multiply_by_quantized_multiplier(acc, ratio, fixed_point=None):
    """TFLite's MultiplyByQuantizedMultiplier of int64 values `acc` by the real `ratio` (or by the
    multiplier and shift `fixed_point`): a rounding doubling high multiply, a rounding right
    shift."""
    m, shift = fixed_point if fixed_point else quantize_multiplier(ratio)
    x = acc.astype(np.int64) * (1 << max(shift, 0))
    ab = x * m
    nudge = np.where(ab >= 0, 1 << 30, 1 - (1 << 30))
    high = np.where(ab + nudge >= 0, (ab + nudge) >> 31, -((-(ab + nudge)) >> 31))  # truncated
    right = max(-shift, 0)
    mask = (1 << right) - 1
    remainder, threshold = high & mask, (mask >> 1) + (high < 0)
    return (high >> right) + (remainder > threshold)
