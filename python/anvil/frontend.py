"""Model importers."""
import json
import os

from . import _anvil


def from_onnx(model, shape=None):
    """Imports an ONNX model (an onnx.ModelProto or a path) into a graph IRModule.

    shape: input name -> shape, overriding the model's declared (possibly symbolic) shapes.
    Returns (mod, params); params is empty because weights stay constants in the module, where
    constant folding sees them.
    """
    shapes = {str(k): [int(d) for d in v] for k, v in (shape or {}).items()}
    if isinstance(model, (str, os.PathLike)):
        return _anvil.from_onnx_path(os.fspath(model), shapes), {}
    if hasattr(model, "SerializeToString"):
        return _anvil.from_onnx_bytes(model.SerializeToString(), shapes, ""), {}
    if isinstance(model, (bytes, bytearray)):
        return _anvil.from_onnx_bytes(bytes(model), shapes, ""), {}
    raise _anvil.UserError(
        f"from_onnx expects an onnx.ModelProto, a path or bytes, got {type(model).__name__}")


def read_tensor_pb(path):
    """An ONNX TensorProto file (test_data_set's input_K.pb / output_K.pb) as an NDArray."""
    return _anvil.read_tensor_pb(os.fspath(path))


def _is_shape(spec):
    return isinstance(spec, (tuple, list)) and all(
        d is None or isinstance(d, (int, str)) or hasattr(d, "__index__") for d in spec)


def _input_entries(name, spec, default_dtype, usage, out):
    """Appends the entries of one input: a tensor (shape or (shape, dtype)), None, or a
    tuple/list of such specs (a group entry, then its items named name.0, name.1, ...)."""
    if spec is None:
        out.append((name, [], default_dtype, [], -2))
        return
    dtype = default_dtype
    if (isinstance(spec, (tuple, list)) and len(spec) == 2 and isinstance(spec[1], str)
            and _is_shape(spec[0])):
        spec, dtype = spec
    if not isinstance(spec, (tuple, list)):
        raise _anvil.UserError(f"{usage}; the shape of '{name}' is {spec!r}")
    if not _is_shape(spec) or (spec and all(isinstance(d, (tuple, list)) for d in spec)):
        out.append((name, [], default_dtype, [], len(spec)))
        for k, item in enumerate(spec):
            _input_entries(f"{name}.{k}", item, default_dtype, usage, out)
        return
    sizes, names = [], []
    for d in spec:
        # A symbolic dimension: -1, None or a name (the same name is the same size).
        if isinstance(d, str):
            sizes.append(-1)
            names.append(d)
        elif d is None:
            sizes.append(-1)
            names.append("")
        elif not isinstance(d, bool) and int(d) >= -1:
            sizes.append(int(d))
            names.append("")
        else:
            raise _anvil.UserError(
                f"{usage}; the shape of '{name}' has the dimension {d!r} (sizes are ints >= 0; "
                f"-1, None or a name for a symbolic size)")
    out.append((name, sizes, str(dtype), names, -1))


def _input_infos(input_infos, default_dtype):
    """[(name, spec)] → the importer's flat entries (name, dims, dtype, dim names, elements)."""
    usage = ("from_pytorch: input_infos must be a list of (name, shape) or "
             "(name, (shape, dtype)), e.g. [(\"input0\", (1, 3, 224, 224))]")
    if isinstance(input_infos, (str, bytes)) or not hasattr(input_infos, "__iter__"):
        raise _anvil.UserError(f"{usage}; got {input_infos!r}")
    out = []
    for info in input_infos:
        if not isinstance(info, (tuple, list)) or len(info) != 2 or not isinstance(info[0], str):
            raise _anvil.UserError(f"{usage}; got the item {info!r}")
        _input_entries(info[0], info[1], str(default_dtype), usage, out)
    return out


def from_pytorch(script_module, input_infos, default_dtype="float32"):
    """Imports a TorchScript module (torch.jit.trace or torch.jit.script) into a graph IRModule.

    input_infos: [(name, shape)] or [(name, (shape, dtype))], one per input of forward, in
    order; a dimension of -1, None or a name (str) is symbolic. A number input (`n: int`) is a
    0-d tensor: (name, ((), "int64")). A tuple or list input takes a list of such specs, its
    tensors then being named name.0, name.1, ...; an Optional input may be given as None.
    Returns (mod, params): main takes the inputs, then the module's tensors by their PyTorch
    names (`layer1.0.conv1.weight`); params maps those names to their values, for
    anvil.build(mod, params=params). The module itself is not changed.
    """
    try:
        from . import _torchscript
    except ImportError as e:
        raise _anvil.UserError(
            f"from_pytorch needs PyTorch (apt-get install python3-torch): {e}") from None
    infos = _input_infos(input_infos, default_dtype)
    try:
        description, tensors = _torchscript.read_module(script_module)
    except _torchscript.ReadError as e:
        raise _anvil.UserError(f"from_pytorch: {e}") from None
    origin = description.get("model", "module")
    return _anvil.from_torchscript(json.dumps(description), tensors, infos, origin)


def from_tflite(model, shape_dict=None, dtype_dict=None, rounding="TFLITE"):
    """Imports a TensorFlow Lite model (a path to a .tflite file, or its bytes) into a graph
    IRModule, as TVM's relay.frontend.from_tflite does.

    shape_dict: input name -> shape, replacing the model's (a batch size, or a dimension its
    signature leaves unknown). dtype_dict: input name -> dtype, which must be the model's.
    rounding: how quantized products (convolutions, fully connected layers, batch matmuls) and
    the int8 mean over H and W rescale their sums: "TFLITE" (fixed point, bit-exact with
    TFLite's reference kernels and TFLite Micro) or "XNNPACK" (float32, as TFLite's XNNPACK
    delegate on x86 and WebAssembly).
    Returns (mod, params); params is empty because weights stay constants in the module.
    """
    shapes = {str(k): [int(d) for d in v] for k, v in (shape_dict or {}).items()}
    dtypes = {str(k): str(v) for k, v in (dtype_dict or {}).items()}
    if isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise _anvil.UserError(f"{path}: cannot read the file ({e.strerror})") from None
        return _anvil.from_tflite_bytes(data, shapes, dtypes, rounding, path), {}
    if isinstance(model, (bytes, bytearray, memoryview)):
        return _anvil.from_tflite_bytes(bytes(model), shapes, dtypes, rounding, "<memory>"), {}
    raise _anvil.UserError(
        f"from_tflite expects a path or the model's bytes, got {type(model).__name__}")
