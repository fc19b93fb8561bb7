"""PassContext: the options of the compiler pipelines, set for a `with` block."""

from . import _anvil
from ._scope import Scope

# The config keys PassContext knows, with what each does (TVM's names where TVM has the option).
CONFIG_KEYS = {
    "tir.instrument_bound_checkers":
        "bool: the checked mode: every buffer access of the generated kernels is bounds-checked "
        "at run time, and one out of bounds fails the run with an error naming the kernel, the "
        "buffer and the index (also on when the environment sets ANVIL_CHECKED=1)",
    "relay.backend.use_auto_scheduler":
        "bool: whether builds apply the records of the enclosing "
        "auto_scheduler.ApplyHistoryBest (TVM's switch; False leaves them out, True or no key "
        "applies them; autotvm.apply_history_best applies either way)",
}

# Keys whose value is True or False.
_BOOL_KEYS = ("tir.instrument_bound_checkers", "relay.backend.use_auto_scheduler")


class PassContext(Scope):
    """Options for every build inside the `with` block.

    opt_level: graph passes above this level are skipped (0 to 3).
    disabled_pass: names of graph or loop-IR passes to skip (see anvil.transform.pass_names()).
    config: {"tir.instrument_bound_checkers": True} turns on the checked mode;
    {"relay.backend.use_auto_scheduler": False} leaves auto_scheduler.ApplyHistoryBest's records
    out of builds (see CONFIG_KEYS).
    """

    def __init__(self, opt_level=3, disabled_pass=None, config=None):
        self.opt_level = int(opt_level)
        self.disabled_pass = [str(p) for p in (disabled_pass or [])]
        self.config = dict(config or {})
        for key in self.config:
            if key not in CONFIG_KEYS:
                raise _anvil.UserError(
                    f"PassContext: unknown config key {key!r}; the known keys are "
                    + ", ".join(sorted(CONFIG_KEYS)))
        for key in _BOOL_KEYS:
            value = self.config.get(key, False)
            if not isinstance(value, bool):
                raise _anvil.UserError(
                    f"PassContext: config {key!r} must be True or False, not {value!r}")
        self.checked = self.config.get("tir.instrument_bound_checkers", False)
        self.use_auto_scheduler = self.config.get("relay.backend.use_auto_scheduler", True)

    @staticmethod
    def current():
        """The innermost active PassContext, or the defaults."""
        context = PassContext.innermost()
        return context if context is not None else PassContext()

    def __repr__(self):
        return (f"PassContext(opt_level={self.opt_level}, disabled_pass={self.disabled_pass}, "
                f"config={self.config})")
