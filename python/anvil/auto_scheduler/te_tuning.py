"""The tuning loop of a tensor-expression task (SearchTask(func=..., args=...)): the sketch
search of tune/sketch/ over the Python computation, measured here as autotvm measures its
templates (model tasks are tuned by the C++ loop of driver/tune_model.h instead).

The first trial is the default schedule — the computation with nothing applied, an empty
program — whose outputs are the reference every program must reproduce (a wrong answer is a
failed trial) and whose cost is the baseline. Every measurement is appended to each
RecordToFile's file as a record with "search": "auto"; the first file's records of the task are
resumed from, so a program measured once is never measured again and the cost model learns
from it. The cost model is one per tune call.
"""
import os
import sys
import tempfile
import time
import warnings

from .. import _anvil
from .._candidates import CandidateMeasurer

_at = _anvil.autotvm
_as = _anvil.auto_scheduler
_INF = float("inf")


class TETuning:
    """One tune call of a TE task: run(n_trial) measures up to n_trial programs."""

    def __init__(self, task, options, seed=1):
        self.task = task
        self.options = options
        self.seed = seed
        self.writers = [_at.RecordWriter(path) for path in options.record_files]
        self.best_cost = _INF
        self.default_cost = 0.0
        self.trials = 0

    def _resume(self, search):
        """Tells the search the programs the first records file holds of this task; returns
        whether the default schedule is among them."""
        files = self.options.record_files
        if not files or not os.path.exists(files[0]):
            return False
        records, problems = _at.load_records(files[0])
        for problem in problems:
            warnings.warn(problem, stacklevel=4)
        found = {}  # program text -> its best record, a success over a failure
        for r in records:
            if (r.workload != self.task.workload_key or r.target != self.task.target
                    or r.search != "auto"):
                continue
            old = found.get(r.schedule)
            if old is None or (r.ok() and (not old.ok() or r.mean_cost() < old.mean_cost())):
                found[r.schedule] = r
        for schedule, r in list(found.items()):
            if not search.resume(r):
                del found[schedule]  # an older computation's program: not a result
            elif r.ok():
                self.best_cost = min(self.best_cost, r.mean_cost())
        default = found.get("")
        if default is not None and default.ok():
            self.default_cost = default.mean_cost()
        return default is not None

    def _record(self):
        record = _at.TuningRecord()
        record.workload = self.task.workload_key
        record.target = self.task.target
        record.search = "auto"
        record.timestamp = time.time()
        return record

    def _measure(self, program):
        """The record of one program (None: the default schedule, nothing applied)."""
        record = self._record()
        outputs = self.task.compute_dag.outputs
        try:
            sch = (_anvil.te_create_schedule(outputs) if program is None
                   else _as.program_schedule(outputs, program))
        except Exception as e:  # a program that does not apply: a rule's bug, one failed trial
            record.error = "compile"
            record.message = f"{type(e).__name__}: {e}"
            return record
        return self.measurer.measure(record, sch, self.task.compute_dag.tensors, what="program")

    def _write(self, records):
        for record in records:
            for writer in self.writers:
                writer.append(record)
            if record.ok():
                self.best_cost = min(self.best_cost, record.mean_cost())

    def run(self, n_trial):
        """Measures up to n_trial programs (fewer when the search finds no new ones, or after
        early_stopping trials without improvement). Returns the trials measured."""
        task, options = self.task, self.options
        model = _as.ProgramCostModel(self.seed)
        if options.cost_model:
            model.load_pretrained(options.cost_model)
        dag = task.compute_dag
        search = _as.EvolutionarySearch(task.workload_key, dag.inputs, dag.outputs, task.target,
                                        model, self.seed)
        default_done = self._resume(search)
        since_best = 0
        with tempfile.TemporaryDirectory(prefix="anvil-auto-scheduler-") as work:
            self.measurer = CandidateMeasurer(task.target, task._pipeline,
                                              options.runner._cpp(),
                                              float(options.builder.timeout), self.seed, work)
            # The default comes first: its outputs are the reference (measured again for them
            # alone, not a trial, when an earlier run recorded it).
            first = self._measure(None)
            if not default_done:
                self._write([first])
                self.trials += 1
                if first.ok():
                    self.default_cost = first.mean_cost()
                # The default is the empty program, which a sketch can make too (every stage
                # with simple loops and no choices taken): not to be measured again.
                search.resume(first)
            if not self.measurer.reference_ok:
                warnings.warn(f"tuning {task.desc}: the default schedule failed ({first.error}: "
                              f"{first.message}); without its outputs no program can be "
                              "checked, so tuning stops", stacklevel=4)
                return self.trials
            while self.trials < n_trial:
                n = min(options.num_measures_per_round, n_trial - self.trials)
                programs = search.next_batch(n)
                if not programs:
                    break
                best_before = self.best_cost
                records = [self._measure(p) for p in programs]
                search.update(programs, [r.mean_cost() if r.ok() else _INF for r in records])
                self._write(records)
                self.trials += len(records)
                self._report(records, n_trial)
                since_best = 0 if self.best_cost < best_before else since_best + len(records)
                if options.early_stopping and since_best >= options.early_stopping:
                    break
        return self.trials

    def _report(self, records, n_trial):
        verbose = self.options.verbose
        if not verbose:
            return
        flop = self.task.compute_dag.flop_ct
        best = self.best_cost
        speed = (f" ({flop / best / 1e9:.2f} GFLOPS)" if flop > 0 and best < _INF else "")
        failed = [r for r in records if not r.ok()]
        sys.stdout.write(f"[{self.task.desc}] trials {self.trials}/{n_trial}: best "
                         f"{best * 1e3:.4f} ms{speed}, {len(failed)} of the last "
                         f"{len(records)} failed\n")
        if verbose >= 2:
            for r in failed:
                sys.stdout.write(f"  {r.error}: {r.message.splitlines()[0] if r.message else ''}"
                                 "\n")
        sys.stdout.flush()
