"""Model importers."""
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
