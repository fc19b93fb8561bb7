"""Writes the network of a QDQ ONNX CNN (python/tests/qdq_quantizer.py's output: Conv, Clip,
Add, GlobalAveragePool, Flatten, Gemm between QuantizeLinear/DequantizeLinear pairs) as an int8
TFLite model: the same layers, weights and quantization, in TFLite's layout, as TFLite's
converter writes such a network.

- Activations: the QDQ model's uint8 ones become int8 with the zero point less 128 (the same
  real values); weights stay int8 per output channel, biases int32.
- Conv → CONV_2D (DEPTHWISE_CONV_2D when it has a group per channel), a following Clip(0, 6)
  fused as RELU6; ONNX's symmetric padding becomes SAME where TFLite's SAME pads alike, else a
  PAD (with the zero point) before a VALID convolution, as TFLite's converter writes PyTorch
  models.
- Add → ADD; GlobalAveragePool → MEAN over H and W keeping them (requantized to the
  QDQ model's scale, as TFLite's converter writes it); Flatten → RESHAPE; Gemm →
  FULLY_CONNECTED.
- The model takes the float NHWC image and QUANTIZEs it; it DEQUANTIZEs the last layer.

    /usr/bin/python3 bench/models/tflite_from_qdq.py QDQ.onnx OUT.tflite
"""
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python", "tests", "tflite"))
import tflite_writer as W  # noqa: E402


def convert(qdq):
    g = qdq.graph
    inits = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    for n in g.node:
        if n.op_type == "Constant":
            inits[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)
    producer = {o: n for n in g.node for o in n.output}
    consumers = {}
    for n in g.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    w = W.ModelWriter()
    tensors = {}  # ONNX quantized value (a QuantizeLinear's output) → (TFLite tensor, NHWC shape)

    def quant_of(q_name):
        """Scale and int8 zero point of a QuantizeLinear output."""
        q = producer[q_name]
        scale = float(inits[q.input[1]])
        zp = inits[q.input[2]]
        shift = 128 if zp.dtype == np.uint8 else 0
        return scale, int(zp) - shift

    def dq_source(name):
        """The QuantizeLinear output a DequantizeLinear output reads."""
        return producer[name].input[0]

    def weights(name):
        dq = producer[name]
        return (inits[dq.input[0]], np.atleast_1d(inits[dq.input[1]]).astype(np.float32))

    def act_tensor(q_name, shape):
        if q_name not in tensors:
            scale, zp = quant_of(q_name)
            tensors[q_name] = (w.tensor(q_name, shape, "int8", scale=scale, zero_point=zp), shape)
        return tensors[q_name]

    def output_q(n):
        """The QuantizeLinear after node n (through a Clip); and whether a Clip(0, 6) is there."""
        nxt = consumers[n.output[0]][0]
        relu6 = False
        if nxt.op_type == "Clip":
            lo, hi = float(inits[nxt.input[1]]), float(inits[nxt.input[2]])
            if (lo, hi) != (0.0, 6.0):
                raise ValueError(f"Clip({lo}, {hi}) is not ReLU6")
            relu6 = True
            nxt = consumers[nxt.output[0]][0]
        assert nxt.op_type == "QuantizeLinear", nxt.op_type
        return nxt.output[0], relu6

    # The float input, quantized.
    (inp,) = [i for i in g.input if i.name not in inits]
    n_, c_, h_, w_ = [d.dim_value for d in inp.type.tensor_type.shape.dim]
    x_float = w.tensor("input", [n_, h_, w_, c_])
    first_q = consumers[inp.name][0]
    x, _ = act_tensor(first_q.output[0], [n_, h_, w_, c_])
    w.op(W.QUANTIZE, [x_float], [x])
    final = None
    for n in g.node:
        if n.op_type == "Conv":
            src, (shape) = tensors[dq_source(n.input[0])]
            kernel, kscale = weights(n.input[1])
            bias, _ = weights(n.input[2])
            attrs = {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}
            group, (kh, kw) = attrs.get("group", 1), attrs["kernel_shape"]
            stride = attrs.get("strides", [1, 1])[0]
            pads = attrs.get("pads", [0, 0, 0, 0])
            o = kernel.shape[0]
            q_name, relu6 = output_q(n)
            h = (shape[1] + pads[0] + pads[2] - kh) // stride + 1
            same = (h == (shape[1] + stride - 1) // stride and pads[0] == pads[2] and
                    ((h - 1) * stride + kh - shape[1]) // 2 == pads[0] and
                    (h - 1) * stride + kh - shape[1] == pads[0] + pads[2])
            if any(pads) and not same:
                _, zp = quant_of(dq_source(n.input[0]))
                padded_shape = [shape[0], shape[1] + pads[0] + pads[2],
                                shape[2] + pads[1] + pads[3], shape[3]]
                padded = w.tensor(q_name + "_pad_in", padded_shape, "int8",
                                  scale=quant_of(dq_source(n.input[0]))[0], zero_point=zp)
                paddings = w.tensor(q_name + "_pads", [4, 2], "int32",
                                    data=[[0, 0], [pads[0], pads[2]], [pads[1], pads[3]], [0, 0]])
                w.op(W.PAD, [src, paddings], [padded])
                src, padding = padded, W.VALID
            else:
                padding = W.SAME if any(pads) else W.VALID
            out, _ = act_tensor(q_name, [shape[0], h, h, o])
            b = w.tensor(n.input[2] + "_i32", [o], "int32", data=bias.astype(np.int32),
                         scale=(np.float32(quant_of(dq_source(n.input[0]))[0]) * kscale),
                         zero_point=np.zeros(o, np.int64))
            act = W.RELU6_ACT if relu6 else W.NONE
            if group == 1:
                k = w.tensor(n.input[1] + "_ohwi", [o, kh, kw, kernel.shape[1]], "int8",
                             data=kernel.transpose(0, 2, 3, 1), scale=kscale,
                             zero_point=np.zeros(o, np.int64), axis=0)
                w.op(W.CONV_2D, [src, k, b], [out], W.Conv2DOptions,
                     [(0, "b", padding), (1, "i", stride), (2, "i", stride), (3, "b", act)])
            else:
                assert group == o == shape[3], "only depthwise grouped convolutions"
                k = w.tensor(n.input[1] + "_1hwc", [1, kh, kw, o], "int8",
                             data=kernel.transpose(1, 2, 3, 0), scale=kscale,
                             zero_point=np.zeros(o, np.int64), axis=3)
                w.op(W.DEPTHWISE_CONV_2D, [src, k, b], [out], W.DepthwiseConv2DOptions,
                     [(0, "b", padding), (1, "i", stride), (2, "i", stride), (3, "i", 1),
                      (4, "b", act)])
        elif n.op_type == "Add":
            a, shape = tensors[dq_source(n.input[0])]
            bb, _ = tensors[dq_source(n.input[1])]
            q_name, relu6 = output_q(n)
            out, _ = act_tensor(q_name, shape)
            w.op(W.ADD, [a, bb], [out], W.AddOptions,
                 [(0, "b", W.RELU6_ACT if relu6 else W.NONE)])
        elif n.op_type == "GlobalAveragePool":
            src, shape = tensors[dq_source(n.input[0])]
            q_name, _ = output_q(n)
            out, _ = act_tensor(q_name, [shape[0], 1, 1, shape[3]])
            axes = w.tensor(q_name + "_axes", [2], "int32", data=[1, 2])
            w.op(W.MEAN, [src, axes], [out], W.ReducerOptions, [(0, "B", True)])
        elif n.op_type == "Flatten":
            src, shape = tensors[dq_source(n.input[0])]
            q_name, _ = output_q(n)
            flat = [shape[0], int(np.prod(shape[1:]))]
            scale, zp = w._tensors[src][4][0][0], w._tensors[src][4][1][0]
            out = w.tensor(q_name, flat, "int8", scale=scale, zero_point=zp)
            tensors[q_name] = (out, flat)
            new_shape = w.tensor(q_name + "_shape", [2], "int32", data=flat)
            w.op(W.RESHAPE, [src, new_shape], [out])
        elif n.op_type == "Gemm":
            src, shape = tensors[dq_source(n.input[0])]
            kernel, kscale = weights(n.input[1])
            bias, _ = weights(n.input[2])
            attrs = {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}
            if not attrs.get("transB", 0):
                kernel = kernel.T
            q_name, _ = output_q(n)
            out, _ = act_tensor(q_name, [shape[0], kernel.shape[0]])
            in_scale = w._tensors[src][4][0][0]
            k = w.tensor(n.input[1] + "_w", list(kernel.shape), "int8", data=kernel,
                         scale=float(kscale[0]), zero_point=0)
            b = w.tensor(n.input[2] + "_i32", [kernel.shape[0]], "int32",
                         data=bias.astype(np.int32), scale=float(in_scale * kscale[0]),
                         zero_point=0)
            w.op(W.FULLY_CONNECTED, [src, k, b], [out], W.FullyConnectedOptions, [])
            final = (out, [shape[0], kernel.shape[0]])
        elif n.op_type not in ("QuantizeLinear", "DequantizeLinear", "Clip", "Constant"):
            raise ValueError(f"{n.op_type} is not converted")
    y = w.tensor("output", final[1])
    w.op(W.DEQUANTIZE, [final[0]], [y])
    return w.build([x_float], [y])


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: tflite_from_qdq.py QDQ.onnx OUT.tflite")
    with open(sys.argv[2], "wb") as f:
        f.write(convert(onnx.load(sys.argv[1])))
