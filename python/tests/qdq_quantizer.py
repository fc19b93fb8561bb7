"""A small static post-training quantizer for the tests and benchmarks: a float ONNX model in,
its QDQ form out (QuantizeLinear / DequantizeLinear around the float ops, as ONNX Runtime's
quantizer writes it):

- activations: uint8, per tensor, asymmetric over the range seen on the calibration inputs;
- Conv weights: int8, per output channel (or per tensor), symmetric; Gemm / MatMul weights
  int8 per tensor; biases int32 at scale input_scale * weight_scale; with reduce_range the
  weights keep to 7 bits, as ONNX Runtime's quantizer does for CPUs without VNNI (whose int8
  kernels add pairs of products in saturating int16);
- a Conv, Gemm or Add followed by its only consumer Relu / Clip is quantized after it;
- a BatchNormalization after a Conv is folded into the Conv's weights and bias first.

The calibration ranges come from running the float model with Anvil (every tensor to quantize
made an output)."""
import numpy as np
import onnx
from onnx import helper, numpy_helper

import anvil
from anvil import frontend

# Ops whose float inputs get a QuantizeLinear / DequantizeLinear pair, and the input indices of
# weights (quantized int8 constants) and biases (int32) for the products.
QUANTIZED_OPS = {"Conv", "Gemm", "MatMul", "Add", "MaxPool", "AveragePool",
                 "GlobalAveragePool", "Concat", "Flatten", "Reshape", "Relu", "Clip", "Pad"}
WEIGHT_INPUT = {"Conv": 1, "Gemm": 1, "MatMul": 1}
BIAS_INPUT = {"Conv": 2, "Gemm": 2}


def _ranges(model, names, inputs):
    """{tensor name: (min, max)} over the calibration inputs (name -> array dicts)."""
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    known = {o.name for o in probe.graph.output}
    for n in names:
        if n not in known:
            probe.graph.output.append(helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT,
                                                                    None))
    mod, params = frontend.from_onnx(probe)
    with anvil.PassContext(opt_level=3):
        lib = anvil.build(mod, target="llvm", params=params)
    m = anvil.runtime.GraphModule(lib["default"](anvil.cpu()))
    out_names = [o.name for o in probe.graph.output]
    lo = {n: np.inf for n in names}
    hi = {n: -np.inf for n in names}
    for feed in inputs:
        m.run(**feed)
        for i, n in enumerate(out_names):
            if n in lo:
                v = m.get_output(i).numpy()
                lo[n] = min(lo[n], float(v.min()))
                hi[n] = max(hi[n], float(v.max()))
    return {n: (lo[n], hi[n]) for n in names}


def _activation_params(lo, hi):
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = np.float32((hi - lo) / 255.0 if hi > lo else 1.0)
    zero_point = np.uint8(np.clip(np.round(-lo / scale), 0, 255))
    return scale, zero_point


def _weight(w, per_channel, reduce_range=False):
    """(int8 weights, float32 scales) of symmetric quantization, per axis 0 or per tensor, in
    [-127, 127] or with reduce_range in [-63, 63]."""
    bound = 63.0 if reduce_range else 127.0
    if per_channel:
        m = np.abs(w.reshape(w.shape[0], -1)).max(axis=1)
    else:
        m = np.array([np.abs(w).max()])
    scales = np.where(m > 0, m / bound, 1.0).astype(np.float32)
    s = scales.reshape((-1,) + (1,) * (w.ndim - 1)) if per_channel else scales[0]
    return np.clip(np.round(w / s), -bound, bound).astype(np.int8), scales


def fold_batch_norms(model):
    """`model` with each BatchNormalization that is a Conv's only consumer folded into it."""
    graph = model.graph
    inits = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    producer = {o: n for n in graph.node for o in n.output}
    uses = {}
    for n in graph.node:
        for i in n.input:
            uses[i] = uses.get(i, 0) + 1
    drop, replaced = set(), {}
    for bn in graph.node:
        if bn.op_type != "BatchNormalization":
            continue
        conv = producer.get(bn.input[0])
        if (conv is None or conv.op_type != "Conv"
                or uses[bn.input[0]] != 1 or conv.input[1] not in inits
                or not all(i in inits for i in bn.input[1:5])):
            continue
        eps = next((a.f for a in bn.attribute if a.name == "epsilon"), 1e-5)
        gamma, beta, mean, var = (inits[i].astype(np.float64) for i in bn.input[1:5])
        k = gamma / np.sqrt(var + eps)
        w = inits[conv.input[1]].astype(np.float64)
        b = inits[conv.input[2]].astype(np.float64) if len(conv.input) > 2 else 0.0
        replaced[conv.input[1]] = (w * k.reshape(-1, 1, 1, 1)).astype(np.float32)
        bias_name = conv.input[1] + "_folded_bias"
        replaced[bias_name] = ((b - mean) * k + beta).astype(np.float32)
        new_inputs = [conv.input[0], conv.input[1], bias_name]
        del conv.input[:]
        conv.input.extend(new_inputs)
        conv.output[0] = bn.output[0]
        drop.add(id(bn))
    nodes = [n for n in graph.node if id(n) not in drop]
    del graph.node[:]
    graph.node.extend(nodes)
    kept = [i for i in graph.initializer if i.name not in replaced]
    del graph.initializer[:]
    graph.initializer.extend(kept + [numpy_helper.from_array(v, k) for k, v in replaced.items()])
    return model


def quantize_qdq(model, calibration, per_channel=True, reduce_range=False):
    """The QDQ form of `model` (an onnx.ModelProto, opset >= 13) calibrated on `calibration`
    (a list of {input name: array}); `reduce_range`: 7-bit weights."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    model = onnx.shape_inference.infer_shapes(fold_batch_norms(copy))
    graph = model.graph
    inits = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    consumers = {}
    for n in graph.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)

    def fused_into_activation(name):
        """A product's output whose only consumer is a Relu / Clip: quantized after it."""
        users = consumers.get(name, [])
        return len(users) == 1 and users[0].op_type in ("Relu", "Clip")

    # The float activations to quantize: every input of a quantized op that is not a weight.
    activations = []
    for n in graph.node:
        if n.op_type not in QUANTIZED_OPS:
            continue
        for k, i in enumerate(n.input):
            if not i or i in inits or k in (WEIGHT_INPUT.get(n.op_type), BIAS_INPUT.get(n.op_type)):
                continue
            if n.op_type in ("Reshape", "Pad", "Clip") and k >= 1:
                continue
            if fused_into_activation(i) and n.op_type in ("Relu", "Clip"):
                continue
            if i not in activations:
                activations.append(i)
    # Outputs of quantized ops feeding the graph's outputs keep a QDQ pair too.
    for o in graph.output:
        if o.name not in activations:
            activations.append(o.name)
    ranges = _ranges(model, activations, calibration)
    params = {n: _activation_params(*ranges[n]) for n in activations}

    new_inits, nodes = [], []

    def const(name, value):
        new_inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def qdq(name):
        """QuantizeLinear -> DequantizeLinear of activation `name`; the dequantized name."""
        s, z = params[name]
        const(name + "_scale", s)
        const(name + "_zero_point", z)
        nodes.append(helper.make_node("QuantizeLinear", [name, name + "_scale",
                                                         name + "_zero_point"], [name + "_q"]))
        nodes.append(helper.make_node("DequantizeLinear", [name + "_q", name + "_scale",
                                                           name + "_zero_point"], [name + "_dq"]))
        return name + "_dq"

    renamed = {}
    for i in graph.input:
        if i.name in params:
            renamed[i.name] = qdq(i.name)
    for n in graph.node:
        inputs = list(n.input)
        if n.op_type in QUANTIZED_OPS:
            for k, i in enumerate(inputs):
                if i in renamed and i in params:
                    inputs[k] = renamed[i]
            wk = WEIGHT_INPUT.get(n.op_type)
            trans_b = any(a.name == "transB" and a.i for a in n.attribute)
            if wk is not None and len(inputs) > wk and inputs[wk] in inits:
                w = inits[inputs[wk]].astype(np.float32)
                channel = n.op_type == "Conv" and per_channel
                if n.op_type in ("MatMul",) or (n.op_type == "Gemm" and not trans_b):
                    channel = False
                wq, ws = _weight(w, channel, reduce_range)
                name = inputs[wk]
                const(name + "_q", wq)
                const(name + "_scale", ws if channel else ws[0])
                const(name + "_zero_point", np.zeros(ws.shape if channel else (), np.int8))
                nodes.append(helper.make_node(
                    "DequantizeLinear", [name + "_q", name + "_scale", name + "_zero_point"],
                    [name + "_dq"], axis=0))
                inputs[wk] = name + "_dq"
                bk = BIAS_INPUT.get(n.op_type)
                if bk is not None and len(inputs) > bk and inputs[bk] in inits:
                    x_scale = params[n.input[0]][0]
                    bs = (np.float32(x_scale) * ws).astype(np.float32)
                    b = inits[inputs[bk]].astype(np.float32)
                    bq = np.round(b / bs).astype(np.int32)
                    bname = inputs[bk]
                    const(bname + "_q", bq)
                    const(bname + "_scale", bs if channel else bs[0])
                    nodes.append(helper.make_node(
                        "DequantizeLinear", [bname + "_q", bname + "_scale"], [bname + "_dq"],
                        axis=0))
                    inputs[bk] = bname + "_dq"
        new = helper.make_node(n.op_type, inputs, list(n.output), name=n.name, domain=n.domain)
        new.attribute.extend(n.attribute)
        nodes.append(new)
        for o in n.output:
            if o in params:
                renamed[o] = qdq(o)
    outputs = []
    for o in graph.output:
        out = helper.make_tensor_value_info(renamed.get(o.name, o.name), o.type.tensor_type.elem_type,
                                            None)
        outputs.append(out)
    kept = [i for i in graph.initializer if any(i.name in n.input for n in nodes)]
    g = helper.make_graph(nodes, graph.name + "_qdq", list(graph.input), outputs,
                          kept + new_inits)
    q = helper.make_model(g, opset_imports=list(model.opset_import))
    q.ir_version = model.ir_version
    return q
