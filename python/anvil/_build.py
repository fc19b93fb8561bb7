"""anvil.build / anvil.lower: from a graph module or a tensor-expression schedule to code."""
import warnings

from . import _anvil
from ._context import PassContext
from .auto_scheduler import dispatcher as _auto_scheduler_dispatcher
from .runtime import Module, GraphFactoryModule
from .target import Target


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
    """The target to build for: the given one, else the enclosing `with Target(...)`, else the
    host."""
    if target is None:
        target = Target.current()
    if target is None:
        return "llvm -mcpu=native"
    return str(target)


def lower(schedule, args, name="main", target=None, simple_mode=False):
    """The loop IR of a schedule after the lowering pipeline; print() it to read it."""
    ctx = PassContext.current()
    return _anvil.lower(schedule, list(args), name, "" if target is None else str(target),
                        ctx.opt_level, ctx.disabled_pass, ctx.checked)


def _shape_buckets(buckets):
    """{"n": [1, 8, 32]} checked for its types (the compiler checks the names and sizes)."""
    if buckets is None:
        return {}
    error = ("build: shape_buckets must map symbolic dimension names to lists of sizes, e.g. "
             "{\"n\": [1, 8, 32]}")
    if not isinstance(buckets, dict):
        raise _anvil.UserError(f"{error}, not {type(buckets).__name__}")
    out = {}
    for name, sizes in buckets.items():
        if not isinstance(name, str) or isinstance(sizes, (str, bytes)):
            raise _anvil.UserError(f"{error}; got {name!r}: {sizes!r}")
        try:
            values = list(sizes)
        except TypeError:
            raise _anvil.UserError(f"{error}; got {name!r}: {sizes!r}") from None
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            raise _anvil.UserError(f"{error}; the sizes of {name!r} are {sizes!r}")
        out[name] = values
    return out


def build(mod, args=None, target=None, name="main", params=None, shape_buckets=None):
    """Compiles a graph IRModule or a tensor-expression schedule.

    build(mod, target=..., params=...) -> GraphFactoryModule (export_library, ["default"](dev),
    anvil.runtime.VirtualMachine(lib)); `params` (name -> array) are bound to main's parameters
    of those names as constants. `shape_buckets` ({"n": [1, 8, 32]}) also compiles the kernels
    that use a symbolic dimension specialized for each of its sizes (every combination of the
    sizes of several dimensions, at most 64); the VM calls them at those sizes and the generic
    kernels at any other.
    build(schedule, [A, B, C], target=...) -> Module, callable as f(a, b, c).
    Options come from the enclosing `with anvil.PassContext(...)`; the target, when not given,
    from the enclosing `with anvil.target.Target(...)`. Inside `with
    anvil.autotvm.apply_history_best(records)` or `with
    anvil.auto_scheduler.ApplyHistoryBest(records)`, a graph module's kernels are scheduled by
    their best tuning records (lib.ir and lib.tuning say which were).
    """
    ctx = PassContext.current()
    if isinstance(mod, _anvil.Schedule):
        if shape_buckets:
            raise _anvil.UserError("build: shape_buckets applies to graph modules, not schedules")
        if args is None:
            raise _anvil.UserError("build(schedule, args): the tensor arguments are missing")
        m = _anvil.build_te(mod, list(args), _target_str(target), name, ctx.opt_level,
                            ctx.disabled_pass, ctx.checked)
        return Module(m, entry=name)
    if isinstance(mod, _anvil.IRModule):
        if params:
            # Weights given apart from the module are bound to main's parameters of those names.
            mod = _anvil.bind_params(mod, "main", dict(params))
        records = _auto_scheduler_dispatcher.records_in_force(ctx.use_auto_scheduler)
        compiled = _anvil.compile_model(mod, _target_str(target), ctx.opt_level,
                                        ctx.disabled_pass, _shape_buckets(shape_buckets),
                                        ctx.checked, records)
        for kernel in compiled.tuning:
            if kernel["note"]:
                warnings.warn(f"{kernel['kernel']}: {kernel['note']}", stacklevel=2)
        return GraphFactoryModule(compiled)
    raise _anvil.UserError(f"build: expected an IRModule or a Schedule, got {type(mod).__name__}")
