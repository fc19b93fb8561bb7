"""ApplyHistoryBest: compile with the best records of auto-scheduler logs (TVM's
auto_scheduler.ApplyHistoryBest)::

    with auto_scheduler.ApplyHistoryBest("records.json"):
        with anvil.transform.PassContext(opt_level=3,
                                         config={"relay.backend.use_auto_scheduler": True}):
            lib = anvil.build(mod, target="llvm", params=params)

It is autotvm.apply_history_best on its own stack of `with` blocks: inside, anvil.build replays
the program of each kernel whose best record (per workload and target) is an auto-scheduler
one, and schedules by the knob values of one whose best is a template record. The innermost
block of each kind applies, both together when nested (a workload in both: the faster record
wins). PassContext config "relay.backend.use_auto_scheduler": False leaves this kind's blocks
out of builds (TVM's meaning); without the key, or True, they apply.
"""
from .. import _anvil
from ..autotvm import dispatcher as _autotvm_dispatcher

_as = _anvil.auto_scheduler


class ApplyHistoryBest(_autotvm_dispatcher.ApplyHistoryBest):
    """The best record per (workload, target) of one records file or a list of them, applied
    inside a `with` block. UserError when a file does not exist; unreadable lines are
    warnings. n_lines and include_compatible (TVM's) are UserErrors unless left at their
    defaults."""

    def __init__(self, records, n_lines=None, include_compatible=False):
        if n_lines is not None:
            raise _anvil.UserError("ApplyHistoryBest: n_lines is not supported (every line of "
                                   "the files is read)")
        if include_compatible:
            raise _anvil.UserError("ApplyHistoryBest: include_compatible is not supported (a "
                                   "record applies to its own workload key only)")
        super().__init__(records)

    def __repr__(self):
        return f"auto_scheduler.ApplyHistoryBest({self.paths}, {len(self.best)} workloads)"


def current():
    """The innermost active auto_scheduler.ApplyHistoryBest, or None."""
    return ApplyHistoryBest.innermost()


def records_in_force(use_auto_scheduler=True):
    """The records a build applies: the innermost autotvm.apply_history_best's and (unless
    use_auto_scheduler is False) the innermost auto_scheduler.ApplyHistoryBest's, merged, the
    faster winning per workload; None when neither is active."""
    parts = [_autotvm_dispatcher.current()]
    if use_auto_scheduler:
        parts.append(current())
    parts = [p.best for p in parts if p is not None]
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else _as.merge_best_records(parts)
