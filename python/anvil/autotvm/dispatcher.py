"""apply_history_best: compile with the best tuning records (TVM's autotvm.apply_history_best).

    with autotvm.apply_history_best("records.json"):
        lib = anvil.build(mod, target="llvm", params=params)   # tuned kernels
        s, args = matmul(64, 64, 64, "float32")                # a template's best config

Inside the block, anvil.build of a graph module schedules every kernel whose workload has a
successful record for the target with the record's knob values (the lowest mean cost wins), and
a template called directly runs with its workload's best configuration. Lines of a records file
that are not records are skipped with a warning naming the file and the line.
"""
import os
import warnings

from .. import _anvil
from .._scope import Scope

_at = _anvil.autotvm
def _paths(records):
    if isinstance(records, (str, bytes, os.PathLike)):
        return [os.fsdecode(records)]
    try:
        paths = [os.fsdecode(p) for p in records]
    except TypeError:
        raise _anvil.UserError("apply_history_best: expected a records file or a list of them, "
                               f"not {type(records).__name__}") from None
    if not paths:
        raise _anvil.UserError("apply_history_best: no records file given")
    return paths


class ApplyHistoryBest(Scope):
    """The best record per (workload, target) of one or more records files, applied inside a
    `with` block. UserError when a file does not exist; unreadable lines are warnings."""

    def __init__(self, records):
        self.paths = _paths(records)
        self.best, problems = _at.load_best_records(self.paths)
        for problem in problems:
            warnings.warn(problem, stacklevel=3)

    def query(self, target, workload):
        """The best record of `workload` on `target`, or None."""
        return self.best.find(workload, _anvil.canonical_target(str(target)))

    def __len__(self):
        return len(self.best)

    def __repr__(self):
        return f"ApplyHistoryBest({self.paths}, {len(self.best)} workloads)"


def apply_history_best(records):
    """A context applying the best records of `records` (a path or a list of paths)."""
    return ApplyHistoryBest(records)


def current():
    """The innermost active ApplyHistoryBest, or None."""
    return ApplyHistoryBest.innermost()
