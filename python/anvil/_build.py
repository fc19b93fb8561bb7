"""anvil.build / anvil.lower: from a graph module or a tensor-expression schedule to code."""
from . import _anvil
from ._context import PassContext
from .runtime import Module, GraphFactoryModule


class Device:
    """A device; only the CPU exists (anvil.cpu(0))."""

    def __init__(self, device_type="cpu", index=0):
        self.device_type = device_type
        self.index = index

    def __repr__(self):
        return f"{self.device_type}({self.index})"


def cpu(index=0):
    """The host CPU."""
    return Device("cpu", index)


def _target_str(target):
    if target is None:
        return "llvm -mcpu=native"
    return str(target)


def lower(schedule, args, name="main", target=None, simple_mode=False):
    """The loop IR of a schedule after the lowering pipeline; print() it to read it."""
    ctx = PassContext.current()
    return _anvil.lower(schedule, list(args), name, "" if target is None else str(target),
                        ctx.opt_level, ctx.disabled_pass)


def build(mod, args=None, target=None, name="main", params=None):
    """Compiles a graph IRModule or a tensor-expression schedule.

    build(mod, target=..., params=...) -> GraphFactoryModule (export_library, ["default"](dev),
    anvil.runtime.VirtualMachine(lib)); `params` (name -> array) are bound to main's parameters
    of those names as constants.
    build(schedule, [A, B, C], target=...) -> Module, callable as f(a, b, c).
    Options come from the enclosing `with anvil.PassContext(...)`.
    """
    ctx = PassContext.current()
    if isinstance(mod, _anvil.Schedule):
        if args is None:
            raise _anvil.UserError("build(schedule, args): the tensor arguments are missing")
        m = _anvil.build_te(mod, list(args), _target_str(target), name, ctx.opt_level,
                            ctx.disabled_pass)
        return Module(m, entry=name)
    if isinstance(mod, _anvil.IRModule):
        if params:
            # Weights given apart from the module are bound to main's parameters of those names.
            mod = _anvil.bind_params(mod, "main", dict(params))
        compiled = _anvil.compile_model(mod, _target_str(target), ctx.opt_level, ctx.disabled_pass)
        return GraphFactoryModule(compiled)
    raise _anvil.UserError(f"build: expected an IRModule or a Schedule, got {type(mod).__name__}")
