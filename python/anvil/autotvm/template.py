"""Tunable templates written in Python (TVM's @autotvm.template)::

    @autotvm.template("tutorial/matmul")
    def matmul(N, L, M, dtype):
        ...
        cfg = autotvm.get_config()
        cfg.define_split("tile_y", y, num_outputs=2)
        yo, yi = cfg["tile_y"].apply(s, C, y)
        ...
        return s, [A, B, C]

Calling the decorated function runs it with a configuration: the best record of its workload in
the enclosing `with autotvm.apply_history_best(...)`, else the default one (every knob at its
default, `cfg.is_fallback`). Tuning runs it with each configuration the tuner proposes.
"""
import functools
import threading
import warnings

from .. import _anvil
from ..target import Target
from . import dispatcher
from .space import ConfigEntity

_at = _anvil.autotvm
_TEMPLATES = {}
_state = threading.local()


class Template:
    """A registered template: its name and the undecorated function."""

    def __init__(self, name, func):
        self.name = name
        self.func = func

    def instantiate(self, args, cfg):
        """Runs the template with `cfg` as get_config(): (schedule, tensors)."""
        stack = _config_stack()
        stack.append(cfg)
        try:
            result = self.func(*args)
        finally:
            stack.pop()
        try:
            sch, tensors = result
            tensors = list(tensors)
        except (TypeError, ValueError):
            raise _anvil.UserError(f"template {self.name!r} must return (schedule, [tensors]), "
                                   f"not {type(result).__name__}") from None
        if not isinstance(sch, _anvil.Schedule):
            raise _anvil.UserError(f"template {self.name!r} must return a schedule first, not "
                                   f"{type(sch).__name__}")
        return sch, tensors


def _config_stack():
    stack = getattr(_state, "configs", None)
    if stack is None:
        stack = _state.configs = []
    return stack


def check_key_arg(name, value, what="template"):
    """Raises a UserError unless `value` (an argument of the `what` called `name`) can be part of
    a workload key: numbers, strings, None and tuples or lists of them. The auto-scheduler's
    registered workloads use it too."""
    if isinstance(value, (tuple, list)):
        for v in value:
            check_key_arg(name, v, what)
        return
    if value is None or isinstance(value, (bool, int, float, str)):
        return
    raise _anvil.UserError(f"{what} {name!r}: its arguments must be numbers, strings or tuples "
                           f"of them (they name the workload), not {type(value).__name__}")


def workload_key(name, args):
    """The workload of a template instance: its name and arguments, versioned like the
    workload keys of model kernels."""
    for a in args:
        check_key_arg(name, a)
    return f"{_at.WORKLOAD_KEY_VERSION} | template {name}(" + ", ".join(map(repr, args)) + ")"


def lookup(name):
    """The registered template called `name`; UserError naming the registered ones."""
    try:
        return _TEMPLATES[name]
    except KeyError:
        known = ", ".join(sorted(_TEMPLATES)) or "none"
        raise _anvil.UserError(f"no autotvm template is registered as {name!r} (registered: "
                               f"{known}); decorate it with @autotvm.template({name!r})") from None


def template(task_name, func=None):
    """Registers a template under `task_name` (a decorator, or template(name, func))."""
    if not isinstance(task_name, str) or not task_name:
        raise _anvil.UserError(f"template: the name must be a non-empty string, not {task_name!r}")

    def register(f):
        entry = Template(task_name, f)
        _TEMPLATES[task_name] = entry

        @functools.wraps(f)
        def call(*args, **kwargs):
            if kwargs:
                raise _anvil.UserError(f"template {task_name!r} takes positional arguments only "
                                       "(they name its workload)")
            cfg = _dispatch(entry, args)
            stack = _config_stack()
            stack.append(cfg)
            try:
                return f(*args)
            finally:
                stack.pop()

        call.template_name = task_name
        return call

    return register(func) if func is not None else register


def _dispatch(entry, args):
    """The configuration a direct call runs with: the applied best record, else the default."""
    context = dispatcher.current()
    if context is None:
        return ConfigEntity(is_fallback=True)
    target = Target.current() or Target("llvm")
    workload = workload_key(entry.name, args)
    record = context.query(target, workload)
    if record is None:
        warnings.warn(f"apply_history_best: no record of template {entry.name}{tuple(args)} for "
                      f"target {target}; the default configuration is used", stacklevel=3)
        return ConfigEntity(is_fallback=True)
    # A record made for another space of this template (the template changed) is not applied.
    if _at.config_of_values(_space_of(entry, args), dict(record.config)) is None:
        warnings.warn(f"apply_history_best: the record of template {entry.name}{tuple(args)} "
                      f"({_at.knob_values_str(record.config)}) does not fit its knobs any more; "
                      "the default configuration is used", stacklevel=3)
        return ConfigEntity(is_fallback=True)
    return ConfigEntity(record.config)


def _space_of(entry, args):
    cfg = ConfigEntity()
    entry.instantiate(args, cfg)
    return cfg.space


def get_config():
    """The configuration of the template being run (its `cfg`)."""
    stack = _config_stack()
    if not stack:
        raise _anvil.UserError("autotvm.get_config() is only available inside a template "
                               "(a function decorated with @autotvm.template)")
    return stack[-1]
