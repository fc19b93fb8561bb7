"""Tensor-expression workloads (TVM's @auto_scheduler.register_workload)::

    @auto_scheduler.register_workload
    def matmul_add(N, L, M, dtype):
        ...
        return [A, B, C, out]          # the kernel's arguments: inputs, then outputs

A workload is a registered function and its arguments; calling the function gives the
computation. Its key names both, versioned like the keys of model kernels, so that its records
apply exactly to that function called with those arguments.
"""
from .. import _anvil
from ..autotvm.template import check_key_arg

_at = _anvil.autotvm
_WORKLOADS = {}  # name -> function


def register_workload(func_name, f=None, override=False):
    """Registers a function returning [input tensors..., output tensors...] under its name, or
    under `func_name`: @register_workload, @register_workload("name"), or
    register_workload("name", f). Registering another function under a name taken is a
    UserError unless override."""
    if callable(func_name) and f is None:
        f, func_name = func_name, getattr(func_name, "__name__", None)
    if not isinstance(func_name, str) or not func_name:
        raise _anvil.UserError("register_workload: the name must be a non-empty string, not "
                               f"{func_name!r}")

    def register(func):
        if not callable(func):
            raise _anvil.UserError(f"register_workload({func_name!r}): expected a function, not "
                                   f"{type(func).__name__}")
        old = _WORKLOADS.get(func_name)
        if old is not None and old is not func and not override:
            raise _anvil.UserError(f"register_workload: {func_name!r} is registered already; "
                                   "pass override=True to replace it")
        _WORKLOADS[func_name] = func
        return func

    return register(f) if f is not None else register


def name_of(func):
    """The registered name of `func` (a registered function or its name); UserError saying how
    to register it otherwise."""
    if isinstance(func, str):
        if func not in _WORKLOADS:
            known = ", ".join(sorted(_WORKLOADS)) or "none"
            raise _anvil.UserError(f"no workload is registered as {func!r} (registered: {known})"
                                   "; decorate its function with @auto_scheduler.register_workload")
        return func
    for name, registered in _WORKLOADS.items():
        if registered is func:
            return name
    raise _anvil.UserError(f"function {getattr(func, '__name__', func)!r} is not a registered "
                           "workload; decorate it with @auto_scheduler.register_workload")


def workload_key(name, args):
    """The key of workload `name` called with `args` (what its records carry)."""
    for a in args:
        check_key_arg(name, a, "workload")
    return f"{_at.WORKLOAD_KEY_VERSION} | te {name}(" + ", ".join(map(repr, args)) + ")"


def instantiate(name, args):
    """Calls the workload: (tensors as returned, input placeholders, computed outputs)."""
    result = _WORKLOADS[name](*args)
    try:
        tensors = list(result)
    except TypeError:
        tensors = None
    if not tensors or not all(isinstance(t, _anvil.Tensor) for t in tensors):
        raise _anvil.UserError(f"workload {name!r} must return a list of tensors (its inputs, "
                               f"then its outputs), not {result!r}")
    inputs = [t for t in tensors if _anvil.auto_scheduler.is_placeholder(t)]
    outputs = [t for t in tensors if not _anvil.auto_scheduler.is_placeholder(t)]
    if not outputs:
        raise _anvil.UserError(f"workload {name!r} returns no computed tensor (te.compute): "
                               "nothing to schedule")
    return tensors, inputs, outputs
