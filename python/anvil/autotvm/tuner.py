"""Tuners (TVM's autotvm.tuner): XGBTuner, GATuner, RandomTuner, GridSearchTuner.

    tuner = autotvm.tuner.XGBTuner(task)
    tuner.tune(n_trial=200, measure_option=autotvm.measure_option(number=5),
               early_stopping=50,
               callbacks=[autotvm.callback.progress_bar(200),
                          autotvm.callback.log_to_file("records.json")])

The search itself is the C++ tuners' (src/tune/tuner.h). A model task (extract_from_program) is
tuned by the C++ tuning loop (driver/tune_model.h) without the GIL; a template task (task.create)
by the loop below, which runs the Python template for each proposed configuration. Either way
the default configuration is measured first: its outputs are the reference every other
candidate must reproduce (a wrong answer is a failed trial), and its cost the baseline.
"""
import os
import tempfile
import time
import warnings

from .. import _anvil
from .._candidates import CandidateMeasurer
from .callback import log_to_file
from .measure import MeasureInput, MeasureResult, measure_option as _default_measure_option
from .measure import MeasureOption
from .space import ConfigEntity
from .task import Task

_at = _anvil.autotvm
_INF = float("inf")


class Tuner:
    """A tuner of one task. kind: "xgb", "ga", "random" or "grid" (UserError otherwise);
    seed makes the search reproducible. After tune(): best_config (knob name -> value),
    best_cost (seconds), best_flops (0 when the task does not know its flop count)."""

    def __init__(self, task, kind, seed=1):
        if not isinstance(task, Task):
            raise _anvil.UserError(f"a tuner tunes an autotvm Task, not {type(task).__name__}")
        if not isinstance(seed, int) or seed < 0:
            raise _anvil.UserError(f"tuner seed must be a non-negative integer, not {seed!r}")
        _at.make_tuner(kind, task.config_space, seed)  # rejects an unknown kind, naming the known
        self.task = task
        self.kind = kind
        self.seed = seed
        self.best_config = None
        self.best_cost = _INF

    @property
    def best_flops(self):
        """Floating-point operations per second of the best configuration (0 when unknown)."""
        if not self.task.flop or self.best_cost == _INF:
            return 0.0
        return self.task.flop / self.best_cost

    def tune(self, n_trial, measure_option=None, early_stopping=None, callbacks=(),
             batch_size=8, cache_dir=None):
        """Measures up to n_trial configurations (fewer when the space runs out, or after
        early_stopping trials without improvement), calling each callback(tuner, inputs,
        results) after every batch. cache_dir: a model task's tuning cache (none by default);
        a workload with a record there is not tuned again."""
        if not isinstance(n_trial, int) or isinstance(n_trial, bool) or n_trial < 1:
            raise _anvil.UserError(f"tune: n_trial must be a positive integer, not {n_trial!r}")
        if early_stopping is not None and (not isinstance(early_stopping, int)
                                           or early_stopping < 1):
            raise _anvil.UserError("tune: early_stopping must be None or a positive integer, not "
                                   f"{early_stopping!r}")
        if not isinstance(batch_size, int) or batch_size < 1:
            raise _anvil.UserError(f"tune: batch_size must be a positive integer, not "
                                   f"{batch_size!r}")
        option = measure_option if measure_option is not None else _default_measure_option()
        if not isinstance(option, MeasureOption):
            raise _anvil.UserError("tune: measure_option must come from autotvm.measure_option()")
        callbacks = list(callbacks or ())
        for cb in callbacks:
            if not callable(cb):
                raise _anvil.UserError(f"tune: callback {cb!r} is not callable")
        if self.task.kind == "model":
            self._tune_model(n_trial, option, early_stopping or 0, callbacks, batch_size,
                             cache_dir)
        else:
            if cache_dir is not None:
                raise _anvil.UserError("tune: cache_dir applies to model tasks, not templates")
            _TemplateSession(self, option, callbacks).run(n_trial, early_stopping or 0,
                                                          batch_size)

    def _report(self, records, callbacks):
        """Updates the best and calls the callbacks with one batch of records."""
        if not records:
            return
        inputs, results = [], []
        for record in records:
            inputs.append(MeasureInput(self.task.target, self.task, dict(record.config)))
            results.append(MeasureResult(record))
            if record.ok() and record.mean_cost() < self.best_cost:
                self.best_cost = record.mean_cost()
                self.best_config = dict(record.config)
        for cb in callbacks:
            cb(self, inputs, results)

    def _tune_model(self, n_trial, option, early_stopping, callbacks, batch_size, cache_dir):
        task = self.task
        logs = [cb for cb in callbacks if isinstance(cb, log_to_file)]
        # The C++ loop writes (and resumes from) the first log file; the rest of the callbacks,
        # the other log files included, see each batch as it is read back from it.
        others = [cb for cb in callbacks if not logs or cb is not logs[0]]
        with tempfile.TemporaryDirectory(prefix="anvil-autotvm-") as work:
            path = logs[0].path if logs else os.path.join(work, "records.json")
            tail = _RecordTail(path, task)

            def on_progress(progress):
                self._report(tail.read_new(), others)

            opt_level, disabled, checked = task._pipeline
            summary = _at.tune_tasks(
                [task._model_task], task.target, self.kind, n_trial, early_stopping,
                option.builder.n_parallel, batch_size, option._cpp(), path,
                "" if cache_dir is None else os.fspath(cache_dir), self.seed, opt_level,
                disabled, checked, on_progress, search="template", cost_model="",
                build_timeout=float(option.builder.timeout))
            self._report(tail.read_new(), others)  # a record taken from the cache
        for problem in summary.warnings:
            warnings.warn(problem, stacklevel=3)


class _RecordTail:
    """The records a tuning loop appends to a file, read back batch by batch."""

    def __init__(self, path, task):
        self.path = path
        self.task = task
        self.offset = os.path.getsize(path) if os.path.exists(path) else 0

    def read_new(self):
        if not os.path.exists(self.path):
            return []
        with open(self.path, "rb") as f:
            f.seek(self.offset)
            data = f.read()
        end = data.rfind(b"\n")
        if end < 0:
            return []
        self.offset += end + 1
        records = []
        for line in data[:end].decode("utf-8", "replace").splitlines():
            if not line.strip():
                continue
            record, why = _at.record_from_line(line)
            if record is None:
                warnings.warn(f"{self.path}: {why}; line skipped", stacklevel=4)
            elif record.workload == self.task.workload:
                records.append(record)
        return records


class _TemplateSession:
    """The tuning loop of a template task: instantiate, build, measure in a child, check."""

    def __init__(self, tuner, option, callbacks):
        self.tuner = tuner
        self.task = tuner.task
        self.option = option._cpp()
        self.build_timeout = float(option.builder.timeout)
        self.callbacks = callbacks
        self.measurer = None  # made with the run's work directory

    @property
    def reference_ok(self):
        """Whether the default configuration ran: its outputs are the reference."""
        return self.measurer.reference_ok

    def run(self, n_trial, early_stopping, batch_size):
        space = self.task.config_space
        search = _at.make_tuner(self.tuner.kind, space, self.tuner.seed)
        resumed = self._resume(search)
        trials, since_best, best = 0, 0, self.tuner.best_cost
        with tempfile.TemporaryDirectory(prefix="anvil-autotvm-") as work:
            self.measurer = CandidateMeasurer(self.task.target, self.task._pipeline,
                                              self.option, self.build_timeout, self.tuner.seed,
                                              work)
            if resumed and search.has_next():
                # The default's outputs are the reference of every candidate: measured again
                # for them alone (not a trial, not a record).
                default = {k.name: k.default for k in space.knobs}
                first = self._measure(default)
                if not self.reference_ok:
                    warnings.warn(f"tuning {self.task.name}: the default configuration failed "
                                  f"({first.error}: {first.message}); without its outputs no "
                                  "candidate can be checked, so tuning stops", stacklevel=3)
                    return
            while trials < n_trial and search.has_next():
                # The default comes alone first: it is the reference.
                n = min(batch_size, n_trial - trials) if self.reference_ok else 1
                configs = search.next_batch(n)
                if not configs:
                    break
                records = [self._measure(_at.config_values(space, c)) for c in configs]
                costs = [r.mean_cost() if r.ok() else _INF for r in records]
                search.update(configs, costs)
                trials += len(configs)
                self.tuner._report(records, self.callbacks)
                if not self.reference_ok:
                    warnings.warn(f"tuning {self.task.name}: the default configuration failed "
                                  f"({records[0].error}: {records[0].message}); without its "
                                  "outputs no candidate can be checked, so tuning stops",
                                  stacklevel=4)
                    return
                for cost in costs:
                    if cost < best:
                        best, since_best = cost, 0
                    else:
                        since_best += 1
                if early_stopping and since_best >= early_stopping:
                    return

    def _resume(self, search):
        """Tells the search what the first log_to_file's file already holds of this task (an
        interrupted or earlier run), so that no configuration is measured twice; the best of
        them becomes the tuner's best. Returns how many configurations it found."""
        logs = [cb for cb in self.callbacks if isinstance(cb, log_to_file)]
        if not logs or not os.path.exists(logs[0].path):
            return 0
        records, problems = _at.load_records(logs[0].path)
        for problem in problems:
            warnings.warn(problem, stacklevel=4)
        space = self.task.config_space
        found = {}  # configuration -> its best record, a success over a failure
        for record in records:
            if record.workload != self.task.workload or record.target != self.task.target:
                continue
            if record.search != "template":
                continue  # an auto-scheduler program: no configuration of this space
            choice = _at.config_of_values(space, dict(record.config))
            if choice is None:
                continue  # made for another space of this workload
            key = tuple(choice)
            old = found.get(key)
            if old is None or (record.ok() and (not old[1].ok()
                                                or record.mean_cost() < old[1].mean_cost())):
                found[key] = (choice, record)
        if not found:
            return 0
        configs = [choice for choice, _ in found.values()]
        costs = [r.mean_cost() if r.ok() else _INF for _, r in found.values()]
        search.update(configs, costs)
        for _, record in found.values():
            if record.ok() and record.mean_cost() < self.tuner.best_cost:
                self.tuner.best_cost = record.mean_cost()
                self.tuner.best_config = dict(record.config)
        return len(found)

    def _measure(self, values):
        task = self.task
        record = _at.TuningRecord()
        record.workload = task.workload
        record.target = task.target
        record.config = values
        record.timestamp = time.time()
        try:
            sch, tensors = task.instantiate(ConfigEntity(values))
        except Exception as e:  # a configuration the template cannot schedule
            record.error = "compile"
            record.message = f"{type(e).__name__}: {e}"
            return record
        return self.measurer.measure(record, sch, tensors, what="template")


class XGBTuner(Tuner):
    """A gradient-boosted cost model ranks unmeasured configurations; the best predicted are
    measured next."""

    def __init__(self, task, seed=1):
        super().__init__(task, "xgb", seed)


class GATuner(Tuner):
    """A genetic algorithm over the knobs' choices."""

    def __init__(self, task, seed=1):
        super().__init__(task, "ga", seed)


class RandomTuner(Tuner):
    """Configurations in random order, never one twice."""

    def __init__(self, task, seed=1):
        super().__init__(task, "random", seed)


class GridSearchTuner(Tuner):
    """Configurations in order, the default first."""

    def __init__(self, task, seed=1):
        super().__init__(task, "grid", seed)
