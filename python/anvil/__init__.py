"""Anvil: a deep-learning compiler. The workflows TVM users know::

    import anvil, numpy as np
    from anvil import frontend, te, graph

    mod, params = frontend.from_onnx("model.onnx", shape={"input": (1, 3, 224, 224)})
    with anvil.PassContext(opt_level=3):
        lib = anvil.build(mod, target="llvm -mcpu=native", params=params)
    lib.export_library("model.so")
    m = anvil.runtime.GraphModule(anvil.runtime.load_module("model.so")["default"](anvil.cpu(0)))
"""
import os as _os
import sys as _sys

# Exported model libraries and JIT-compiled kernels resolve the runtime's C API (anvil_*) in the
# process, so the runtime library must be loaded with global symbols.
_flags = _sys.getdlopenflags()
_sys.setdlopenflags(_os.RTLD_NOW | _os.RTLD_GLOBAL)
try:
    from . import _anvil
finally:
    _sys.setdlopenflags(_flags)

from ._anvil import AnvilError, UserError, InternalError
from ._context import PassContext
from ._build import build, lower, cpu, Device
from ._registry import register_func, get_global_func, list_global_func_names
from . import nd, runtime, frontend, te, graph, transform, target, autotvm, auto_scheduler, rpc
from .graph import parse

__all__ = [
    "AnvilError", "UserError", "InternalError", "PassContext", "build", "lower", "cpu", "Device",
    "register_func", "get_global_func", "list_global_func_names", "parse", "nd", "runtime",
    "frontend", "te", "graph", "transform", "target", "autotvm", "auto_scheduler", "rpc",
]
