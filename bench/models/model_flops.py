#!/usr/bin/python3
"""Counts the floating-point operations of one inference of an ONNX model, from its graph:

    /usr/bin/python3 model_flops.py MODEL.onnx [--by-op]

The rule (the conventional one, e.g. torchvision's "GFLOPS" are its MACs; ours are 2 x MACs):
- Conv, ConvTranspose, Gemm, MatMul: 2 per multiply-accumulate, plus 1 per output for a bias;
- MaxPool, AveragePool, LpPool: 1 per window element of every output;
- GlobalAveragePool, GlobalMaxPool, Reduce*: 1 per input element;
- ops that only move or reshape data (Reshape, Flatten, Transpose, Concat, Slice, Gather, Pad,
  Constant, Shape, Cast, ...): 0;
- every other op (BatchNormalization, Relu, Clip, Add, Softmax, ...): 1 per output element.
Shapes come from ONNX shape inference, so the model must have static shapes. It counts the model
as written, before any compiler folds batch norms or pads weight blocks: the same work for every
system the harness compares, which makes their GFLOP/s comparable. (`anvil run --profile` counts
what Anvil's kernels execute instead; the two agree within a few percent on the CNNs here.)
"""
import argparse
import math
import sys
from collections import Counter

import onnx
from onnx import shape_inference

MOVES_DATA = {
    "Constant", "ConstantOfShape", "Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze",
    "Transpose", "Concat", "Split", "Slice", "Gather", "GatherElements", "GatherND", "Shape",
    "Size", "Cast", "CastLike", "Expand", "Pad", "Dropout", "Tile", "DepthToSpace",
    "SpaceToDepth", "Range",
}
MAC_OPS = {"Conv", "ConvTranspose", "Gemm", "MatMul"}
WINDOW_OPS = {"MaxPool", "AveragePool", "LpPool"}


def shapes_of(model):
    """name -> list of dims (ints) for every value with a fully known shape."""
    inferred = shape_inference.infer_shapes(model)
    g = inferred.graph
    shapes = {t.name: list(t.dims) for t in g.initializer}
    for v in list(g.input) + list(g.value_info) + list(g.output):
        dims = v.type.tensor_type.shape.dim
        if all(d.HasField("dim_value") for d in dims):
            shapes[v.name] = [d.dim_value for d in dims]
    return shapes


def attribute(node, name, default=None):
    for a in node.attribute:
        if a.name == name:
            return onnx.helper.get_attribute_value(a)
    return default


def node_flops(node, shapes):
    op = node.op_type
    if op in MOVES_DATA:
        return 0
    out = shapes.get(node.output[0]) if node.output else None
    if out is None:
        raise ValueError(f"node '{node.name}' ({op}): its output shape is unknown (symbolic?)")
    out_elems = math.prod(out)
    has_bias = len(node.input) > 2 and node.input[2] != ""
    if op == "Conv":
        w = shapes[node.input[1]]  # [M, C/group, k...]
        return 2 * out_elems * math.prod(w[1:]) + (out_elems if has_bias else 0)
    if op == "ConvTranspose":
        x, w = shapes[node.input[0]], shapes[node.input[1]]  # w: [C, M/group, k...]
        return 2 * math.prod(x) * math.prod(w[1:]) + (out_elems if has_bias else 0)
    if op == "Gemm":
        a = shapes[node.input[0]]
        k = a[0] if attribute(node, "transA", 0) else a[1]
        return 2 * out_elems * k + (out_elems if has_bias else 0)
    if op == "MatMul":
        a = shapes[node.input[0]]
        return 2 * out_elems * a[-1]
    if op in WINDOW_OPS:
        return out_elems * math.prod(attribute(node, "kernel_shape"))
    if op.startswith("Global") or op.startswith("Reduce"):
        return math.prod(shapes[node.input[0]])
    return out_elems


def model_flops(path, by_op=None):
    """Total FLOPs of one inference; adds per-op-type totals to `by_op` (a Counter) if given."""
    model = onnx.load(path)
    shapes = shapes_of(model)
    total = 0
    for node in model.graph.node:
        n = node_flops(node, shapes)
        total += n
        if by_op is not None:
            by_op[node.op_type] += n
    return total


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("model")
    p.add_argument("--by-op", action="store_true", help="also print the total per op type")
    a = p.parse_args()
    by_op = Counter()
    total = model_flops(a.model, by_op)
    print(f"flops={total} gflop={total / 1e9:.4f}")
    if a.by_op:
        for op, n in by_op.most_common():
            print(f"  {op:<24}{n / 1e6:>12.2f} MFLOP")


if __name__ == "__main__":
    sys.exit(main())
