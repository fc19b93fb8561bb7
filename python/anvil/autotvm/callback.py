"""Tuning callbacks (TVM's autotvm.callback): called after every measured batch as
callback(tuner, inputs, results) with lists of MeasureInput and MeasureResult."""
import os
import sys
import time

from .. import _anvil

_at = _anvil.autotvm


class log_to_file:  # noqa: N801 (TVM's name)
    """Appends every measurement to a records file (JSON lines, anvil.autotvm.record), flushed
    line by line. A tuner resumes from the first log_to_file's file (a model task's tuner also
    writes it itself): configurations of the task already recorded there are not measured again."""

    def __init__(self, file_out):
        self.path = os.fspath(file_out)
        self._writer = None

    def __call__(self, tuner, inputs, results):
        if self._writer is None:
            self._writer = _at.RecordWriter(self.path)
        for result in results:
            self._writer.append(result.record)

    def __repr__(self):
        return f"log_to_file({self.path!r})"


def progress_bar(total, prefix="", si_prefix="G"):
    """Prints the best so far and the progress on one line, e.g.
    ``[Task  1/ 3]  Current/Best:   12.30/  14.10 GFLOPS | Progress: (8/20) | 1.52 s``
    (in GFLOPS when the task knows its flop count, in milliseconds otherwise)."""
    scale = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}.get(si_prefix)
    if scale is None:
        raise _anvil.UserError(f"progress_bar: unknown si_prefix {si_prefix!r}")
    state = {"count": 0, "start": time.time()}

    def _callback(tuner, inputs, results):
        state["count"] += len(results)
        costs = [sum(r.costs) / len(r.costs) for r in results if r.error == "none" and r.costs]
        current = min(costs) if costs else float("inf")
        best = tuner.best_cost
        flop = tuner.task.flop
        if flop:
            cur = flop / current / scale if costs else 0.0
            top = flop / best / scale if best < float("inf") else 0.0
            text = f"Current/Best: {cur:7.2f}/{top:7.2f} {si_prefix}FLOPS"
        else:
            cur = current * 1e3 if costs else float("nan")
            top = best * 1e3 if best < float("inf") else float("nan")
            text = f"Current/Best: {cur:8.4f}/{top:8.4f} ms"
        sys.stdout.write(f"\r{prefix} {text} | Progress: ({state['count']}/{total}) | "
                         f"{time.time() - state['start']:.2f} s")
        if state["count"] >= total:
            sys.stdout.write("\n")
        sys.stdout.flush()

    return _callback
