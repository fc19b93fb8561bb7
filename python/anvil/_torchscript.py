"""Reads a TorchScript module into Anvil's TorchScript graph description.

This is the only place that touches PyTorch: it needs `torch` and nothing of Anvil, so the CLI
runs it as a script (`python3 _torchscript.py model.pt OUT_DIR`) and `anvil.frontend.from_pytorch`
imports it. The C++ importer (src/frontend/pytorch/) converts the description; the format is
documented in src/frontend/pytorch/torchscript_graph.h.

What happens to the module here, and why:
- The forward graph is copied (the user's module is not changed) and every call inlined, so one
  flat graph (with If/Loop blocks) remains.
- `prim::GetAttr` chains from `self` are evaluated against the module: tensors become constants
  named by their PyTorch names (`layer1.0.conv1.weight`), other attributes (strides, flags)
  constants of their values, and `training` False (inference, as after eval()). This is what
  `torch.jit.freeze` does, minus its constant pooling, which would merge equal tensors under one
  name.
- Constant propagation then folds what the attributes decide (`if self.training`, `bias is None`),
  and remove_mutation makes in-place ops (`relu_`, `add_`) functional where that is safe.
- The scale and zero point tensors that `aten::quantize_per_tensor` reads (FX graph mode
  quantization keeps them as module buffers) are written as plain constants, not as module
  tensors: the importer needs their values to know the quantized tensor's parameters.
"""
import json
import linecache
import math
import re
import sys

import torch

FORMAT = "anvil.torchscript-graph"
VERSION = 1

_DTYPES = {
    torch.float32: "float32", torch.float64: "float64", torch.float16: "float16",
    torch.bfloat16: "bfloat16", torch.int64: "int64", torch.int32: "int32",
    torch.int16: "int16", torch.int8: "int8", torch.uint8: "uint8", torch.bool: "bool",
}


class ReadError(Exception):
    """The module cannot be described (not a TorchScript module, an attribute of an unknown kind)."""


def _dtype_name(dtype):
    if dtype not in _DTYPES:
        raise ReadError(f"tensors of element type {dtype} are not supported")
    return _DTYPES[dtype]


def _type(t):
    kind = t.kind()
    if kind == "TensorType":
        out = {"kind": "tensor"}
        st = t.scalarType()
        if st is not None:
            # TorchScript's ScalarType names; one Anvil has no type for stays unnamed here and
            # is refused where a tensor of it is used.
            out["dtype"] = _SCALAR_TYPE_NAMES.get(st, st.lower())
        sizes = t.sizes() if hasattr(t, "sizes") else None
        if sizes is not None:
            out["shape"] = list(sizes)
        return out
    simple = {"IntType": "int", "FloatType": "float", "BoolType": "bool", "StringType": "str",
              "NoneType": "none", "DeviceObjType": "device", "NumberType": "number"}
    if kind in simple:
        return {"kind": simple[kind]}
    if kind == "ListType":
        return {"kind": "list", "elem": _type(t.getElementType())}
    if kind == "OptionalType":
        return {"kind": "optional", "elem": _type(t.getElementType())}
    if kind == "TupleType":
        return {"kind": "tuple", "elems": [_type(e) for e in t.elements()]}
    return {"kind": "other", "str": str(t)}


_TRACE_FRAME = re.compile(r"^(.*)\((\d+)\): (.*)$")
_SCRIPT_HEADER = re.compile(r'^\s*File "(.*)", line (\d+)')


def _source(node):
    """The Python line TorchScript recorded for the node: "file:line: text", or ""."""
    try:
        text = node.sourceRange()
    except RuntimeError:
        return ""
    lines = text.splitlines()
    frames = [m for m in (_TRACE_FRAME.match(l) for l in lines) if m]
    if frames:
        # A traced node records a stack; the first frame outside torch's own modules is the
        # model's line (torchvision's resnet.py, the user's script).
        user = [f for f in frames if "/torch/" not in f.group(1)] or frames
        f = user[0]
        # The frame names the function; the line of code says more, when the file is at hand.
        code = linecache.getline(f.group(1), int(f.group(2))).strip()
        return f"{f.group(1)}:{f.group(2)}: {code or f.group(3)}"
    for i, line in enumerate(lines):
        m = _SCRIPT_HEADER.match(line)
        if m:
            code = ""
            for j in range(i + 1, len(lines)):
                if "<--- HERE" in lines[j] and j > i + 1:
                    code = lines[j - 1].strip()
                    break
            return f"{m.group(1)}:{m.group(2)}: {code}".rstrip(": ")
    return ""


class _Writer:
    def __init__(self, names_by_tensor, packed_params, module_values, plain_constants=()):
        self.tensors = {}
        self._plain_constants = set(plain_constants)  # value ids never written as module tensors
        self._names_by_tensor = names_by_tensor
        self._used = set()
        self._packed_params = packed_params  # written as constant tuples
        self._module_values = module_values  # the module and its submodules: not written

    def _tensor_name(self, t, hint, plain=False):
        key = (t.data_ptr(), tuple(t.shape), t.dtype) if t.numel() else None
        own = None if plain else self._names_by_tensor.get(key)
        name = own or hint or "constant"
        base, k = name, 1
        while name in self._used:
            name = f"{base}.{k}"
            k += 1
        self._used.add(name)
        return name, own is not None

    def tensor(self, t, hint="", plain=False):
        """{"tensor": name, "dtype": ..., "param": whether it is one of the module's own (never
        when `plain`)}; a quantized tensor is its integers with "quantized": {"scales",
        "zero_points", "axis"} (axis -1: one scale for the whole tensor)."""
        t = t.detach()
        name, own = self._tensor_name(t, hint, plain)
        quantized = None
        if t.is_quantized:
            quantized = _quantization(t)
            t = t.int_repr()
        dtype = _dtype_name(t.dtype)
        data = t.cpu().contiguous()
        if t.dtype == torch.bfloat16:  # NumPy has no bfloat16: its float32 values, cast back
            data = data.float()
        self.tensors[name] = data.numpy()
        out = {"tensor": name, "dtype": dtype, "param": own}
        if quantized:
            out["quantized"] = quantized
        return out

    def value(self, v, hint="", plain=False):
        if v is None:
            return {"none": True}
        if isinstance(v, bool):
            return {"bool": v}
        if isinstance(v, int):
            return {"int": v}
        if isinstance(v, float):
            return {"float": v if math.isfinite(v) else repr(v)}
        if isinstance(v, str):
            return {"str": v}
        if isinstance(v, torch.Tensor):
            return self.tensor(v, hint, plain)
        if isinstance(v, torch.device):
            return {"device": str(v)}
        if isinstance(v, torch.dtype):
            if v not in _SCALAR_TYPE_CODES:
                raise ReadError(f"the dtype {v} is not supported")
            return {"int": _SCALAR_TYPE_CODES[v]}
        if isinstance(v, list):
            return {"list": [self.value(x, hint) for x in v]}
        if isinstance(v, tuple):
            return {"tuple": [self.value(x, hint) for x in v]}
        raise ReadError(f"a constant of Python type {type(v).__name__} is not supported")

    def _packed_constant(self, n):
        """A packed-parameters object as a constant tuple (weight, bias, geometry...)."""
        layer, packed = self._packed_params[n.output().unique()]
        items = [self.tensor(packed[0], layer + ".weight"), self.value(packed[1], layer + ".bias")]
        items += [self.value(v) for v in packed[2:]]
        o = n.output()
        return {"kind": "prim::Constant", "inputs": [],
                "outputs": [{"id": o.unique(), "name": o.debugName(),
                             "type": {"kind": "other", "str": "packed parameters"}}],
                "value": {"tuple": items}}

    def block(self, block, inputs):
        nodes = []
        for n in block.nodes():
            if n.kind() == "prim::GetAttr" and n.output().unique() in self._module_values:
                continue  # a submodule whose packed parameters are read below
            if n.kind() == "prim::GetAttr" and n.output().unique() in self._packed_params:
                nodes.append(self._packed_constant(n))
                continue
            out = {"kind": n.kind(), "inputs": [i.unique() for i in n.inputs()],
                   "outputs": [{"id": o.unique(), "name": o.debugName(), "type": _type(o.type())}
                               for o in n.outputs()]}
            source = _source(n)
            if source:
                out["source"] = source
            if n.kind() == "prim::Constant":
                o = n.output()
                out["value"] = self.value(o.toIValue(), o.debugName(),
                                          o.unique() in self._plain_constants)
            elif n.kind() in ("prim::GetAttr", "prim::SetAttr", "prim::CallMethod"):
                out["attribute"] = n.s("name")
            blocks = list(n.blocks())
            if blocks:
                out["blocks"] = [self.block(b, list(b.inputs())) for b in blocks]
            nodes.append(out)
        return {"inputs": [{"id": v.unique(), "name": v.debugName(), "type": _type(v.type())}
                           for v in inputs],
                "nodes": nodes,
                "outputs": [v.unique() for v in block.outputs()]}


def _quantization(t):
    """The scales, zero points and axis of a quantized tensor (affine schemes only)."""
    scheme = t.qscheme()
    if scheme == torch.per_tensor_affine:
        return {"scales": [float(t.q_scale())], "zero_points": [int(t.q_zero_point())],
                "axis": -1}
    if scheme in (torch.per_channel_affine, torch.per_channel_affine_float_qparams):
        if scheme == torch.per_channel_affine_float_qparams:
            raise ReadError("quantized tensors with float zero points (embedding bags) are not "
                            "supported")
        return {"scales": [float(v) for v in t.q_per_channel_scales()],
                "zero_points": [int(v) for v in t.q_per_channel_zero_points()],
                "axis": int(t.q_per_channel_axis())}
    raise ReadError(f"quantized tensors of scheme {scheme} are not supported")


# The packed weights of quantized convolutions and linear layers (TorchScript classes that hold
# prepacked weights for one engine), by the methods they have.
def _packed_params(value):
    """The constants a packed-parameters object stands for: (weight, bias, stride, padding,
    dilation, groups, transposed, output_padding) for a convolution, (weight, bias) for a linear
    layer; None for other objects."""
    if not isinstance(value, torch.ScriptObject):
        return None
    methods = set(value._method_names())
    if "unpack" not in methods:
        return None
    unpacked = value.unpack()
    if not isinstance(unpacked, tuple) or len(unpacked) != 2:
        raise ReadError("packed parameters other than a convolution's or a linear layer's "
                        "(weight, bias) are not supported")
    weight, bias = unpacked
    if {"stride", "padding", "dilation", "groups"} <= methods:
        return (weight, bias, list(value.stride()), list(value.padding()),
                list(value.dilation()), int(value.groups()), bool(value.transpose()),
                list(value.output_padding()))
    return (weight, bias)


# TorchScript's ScalarType names (TensorType.scalarType()) → dtype names.
_SCALAR_TYPE_NAMES = {
    "Float": "float32", "Double": "float64", "Half": "float16", "BFloat16": "bfloat16",
    "Long": "int64", "Int": "int32", "Short": "int16", "Char": "int8", "Byte": "uint8",
    "Bool": "bool", "QUInt8": "uint8", "QInt8": "int8", "QInt32": "int32",
}

# c10::ScalarType codes, the ints TorchScript passes for `dtype=` arguments.
_SCALAR_TYPE_CODES = {
    torch.uint8: 0, torch.int8: 1, torch.int16: 2, torch.int32: 3, torch.int64: 4,
    torch.float16: 5, torch.float32: 6, torch.float64: 7, torch.bool: 11, torch.bfloat16: 15,
}


def _resolve_attributes(graph, module):
    """Replaces prim::GetAttr chains from the module input by constants (see the module doc)."""
    self_value = next(graph.inputs())
    objects = {self_value.unique(): (module._c, "")}
    packed_params = {}  # value id -> (layer path, what _packed_params returns)

    def tensor_constant(value, path, before):
        value = value.detach()
        c = graph.create("prim::Constant")
        c.t_("value", value)
        c.output().inferTypeFrom(value)
        c.insertBefore(before)
        c.output().setDebugName(path.replace(".", "_"))
        return c.output()

    def visit(block):
        for n in list(block.nodes()):
            for b in n.blocks():
                visit(b)
            if n.kind() != "prim::GetAttr" or n.input().unique() not in objects:
                continue
            obj, path = objects[n.input().unique()]
            name = n.s("name")
            path = f"{path}.{name}" if path else name
            # Imported for inference: every module's `training` reads False, as after eval()
            # (which would change the user's module). A module traced in training mode has its
            # flags baked in; its dropout is refused by the importer.
            value = False if name == "training" else obj.getattr(name)
            if isinstance(value, torch._C.ScriptModule):
                objects[n.output().unique()] = (value, path)
                continue
            packed = _packed_params(value)
            if packed is not None:
                # Left in the graph (the quantized ops' schemas want the object); the writer
                # writes the node as a constant tuple of what the object holds.
                packed_params[n.output().unique()] = (path.replace("._packed_params", ""),
                                                      packed)
                continue
            if isinstance(value, torch.Tensor):
                out = tensor_constant(value, path, n)
            elif (isinstance(value, list) and value
                  and all(isinstance(v, torch.Tensor) for v in value)):
                # A list of tensors (an RNN's _flat_weights): one constant per tensor, listed.
                items = [tensor_constant(v, f"{path}.{k}", n) for k, v in enumerate(value)]
                c = graph.create("prim::ListConstruct", items)
                c.output().setType(torch._C.ListType.ofTensors())
                c.insertBefore(n)
                out = c.output()
            else:
                with graph.insert_point_guard(n):
                    try:
                        out = graph.insertConstant(value)
                    except RuntimeError:
                        raise ReadError(f"the module attribute '{path}' (a "
                                        f"{type(value).__name__}) cannot be read") from None
            n.output().replaceAllUsesWith(out)
            n.destroy()

    visit(graph)
    # Module-typed values that are left (submodules passed around) are dropped by DCE when unused.
    torch._C._jit_pass_dce(graph)
    return packed_params, set(objects)


def _quantization_parameters(block):
    """The ids of the values `aten::quantize_per_tensor` nodes read as scale and zero point."""
    ids = set()
    for n in block.nodes():
        if n.kind() == "aten::quantize_per_tensor":
            ids.update(i.unique() for i in list(n.inputs())[1:3])
        for b in n.blocks():
            ids |= _quantization_parameters(b)
    return ids


def read_module(module):
    """(description dict, tensors {name: numpy array}) of a TorchScript module's forward."""
    if not isinstance(module, torch.jit.ScriptModule):
        raise ReadError(f"from_pytorch expects a TorchScript module (torch.jit.trace or "
                        f"torch.jit.script), got {type(module).__name__}")

    graph = module.forward.graph.copy()
    torch._C._jit_pass_inline(graph)
    packed_params, module_values = _resolve_attributes(graph, module)
    torch._C._jit_pass_constant_propagation(graph)
    torch._C._jit_pass_remove_mutation(graph)
    torch._C._jit_pass_dce(graph)

    # The module's own tensors, by identity, so that constants keep their PyTorch names.
    names = {}
    for name, t in list(module.state_dict(keep_vars=True).items()):
        if isinstance(t, torch.Tensor) and t.numel():
            names.setdefault((t.data_ptr(), tuple(t.shape), t.dtype), name)
    writer = _Writer(names, packed_params, module_values, _quantization_parameters(graph))
    inputs = list(graph.inputs())[1:]  # the first is the module itself
    description = {
        "format": FORMAT, "version": VERSION,
        "model": getattr(module, "original_name", type(module).__name__),
        "graph": writer.block(graph, inputs),
    }
    return description, writer.tensors


def main(argv):
    """python3 _torchscript.py MODEL.pt OUT_DIR: writes OUT_DIR/graph.json and tensors.npz."""
    import os

    import numpy as np

    if len(argv) != 3:
        print("usage: _torchscript.py MODEL.pt OUT_DIR", file=sys.stderr)
        return 2
    try:
        module = torch.jit.load(argv[1], map_location="cpu")
        module.eval()
        description, tensors = read_module(module)
    except (ReadError, RuntimeError, ValueError, OSError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        print(f"{argv[1]}: cannot read the TorchScript module: {first}", file=sys.stderr)
        return 1
    with open(os.path.join(argv[2], "graph.json"), "w") as f:
        json.dump(description, f)
    np.savez(os.path.join(argv[2], "tensors.npz"), **tensors)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
