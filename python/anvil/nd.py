"""Tensors: anvil.nd.NDArray, a 64-byte aligned row-major CPU tensor, and NumPy interop."""
import numpy as _np

from . import _anvil

NDArray = _anvil.NDArray


def array(source, device=None):
    """An NDArray holding `source` (a NumPy array or anything numpy.asarray accepts).

    Zero copy when the array is C-contiguous, writable and its data is 64-byte aligned: the
    NDArray then shares (and keeps alive) the array's memory. NumPy arrays are usually only
    16-byte aligned, so most are copied into a new aligned tensor; use anvil.nd.aligned_empty
    to make arrays that are shared. With a remote device (remote.cpu(0), anvil.rpc) the result
    is a copy on that device, an anvil.rpc.RemoteNDArray.
    """
    if device is not None and hasattr(device, "session"):  # a remote device (anvil.rpc)
        return device.session.array(source.numpy() if isinstance(source, NDArray) else source)
    if isinstance(source, NDArray):
        return source
    return _anvil.ndarray_from_numpy(_np.asarray(source))[0]


def empty(shape, dtype="float32", device=None):
    """A new uninitialised aligned tensor (on a remote device when given one)."""
    if device is not None and hasattr(device, "session"):
        return device.session.empty(shape, dtype)
    return _anvil.ndarray_empty([int(d) for d in shape], str(_np.dtype(dtype)))


def from_dlpack(obj):
    """An NDArray from a DLPack producer (an object with __dlpack__, or a capsule).

    Zero copy when the tensor is on the CPU, compact and 64-byte aligned; otherwise a copy."""
    return _anvil.from_dlpack(obj)


def aligned_empty(shape, dtype="float32"):
    """A NumPy array whose data is 64-byte aligned, so anvil.nd.array shares it."""
    dtype = _np.dtype(dtype)
    n = int(_np.prod(shape)) * dtype.itemsize
    raw = _np.empty(n + 64, dtype=_np.uint8)
    offset = (-raw.ctypes.data) % 64
    return raw[offset:offset + n].view(dtype).reshape(shape)


def is_shared(a, array_):
    """Whether NDArray `a` shares its memory with NumPy array `array_`."""
    return a.data_ptr == array_.ctypes.data
