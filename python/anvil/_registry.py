"""The global function registry, shared by Python, C++ and compiled code."""
from . import _anvil


def register_func(name, f=None, override=False):
    """Registers a Python function under `name` (callable from C++ and compiled code).

    Use as a decorator, @anvil.register_func("env.linear"), or call register_func(name, f).
    Arguments arrive as int, float, str, None, anvil.nd.NDArray (a view valid during the call) or
    PackedFunc; the function may return any of those (or a NumPy array).
    """
    if callable(name) and f is None:
        func = name
        _anvil.register_func(func.__name__, func, override)
        return func

    def register(func):
        _anvil.register_func(name, func, override)
        return func

    return register(f) if f is not None else register


def get_global_func(name, allow_missing=False):
    """The function registered as `name`, as a callable PackedFunc.

    UserError when it is missing, unless allow_missing (then None)."""
    f = _anvil.get_global_func(name)
    if f is None and not allow_missing:
        raise _anvil.UserError(f"no global function is registered as '{name}'")
    return f


def list_global_func_names():
    """The names of every registered global function (C++ and Python), sorted."""
    return _anvil.list_global_func_names()


def remove_global_func(name):
    """Unregisters `name`; returns whether it was registered."""
    return _anvil.remove_global_func(name)
