"""Tuning records files (TVM's autotvm.record): one JSON object per line and measurement, with
the format version, the full workload key, the target, the knob values, the schedule's
primitives and the costs (src/tune/record.h)."""
import os
import warnings

from .. import _anvil

_at = _anvil.autotvm

TuningRecord = _at.TuningRecord


def _existing(path, what):
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise _anvil.UserError(f"{what}: records file '{path}' does not exist")
    return path


def load_from_file(filename):
    """Every record of a file, in order (TuningRecord: workload, target, config, costs, error,
    message, timestamp, mean_cost()). Lines that are not records are skipped with a warning
    naming the file and the line."""
    records, problems = _at.load_records(_existing(filename, "load_from_file"))
    for problem in problems:
        warnings.warn(problem, stacklevel=2)
    return records


def pick_best(in_file, out_file):
    """Writes the best successful record of each (workload, target) of in_file to out_file."""
    best, problems = _at.load_best_records([_existing(in_file, "pick_best")])
    for problem in problems:
        warnings.warn(problem, stacklevel=2)
    with open(os.fspath(out_file), "w", encoding="utf-8") as out:
        for record in best.records:
            out.write(record.to_line() + "\n")
