"""Tuning several tasks under one budget (TVM's auto_scheduler.TaskScheduler)::

    tuner = auto_scheduler.TaskScheduler(tasks, task_weights)
    tuner.tune(auto_scheduler.TuningOptions(
        num_measure_trials=200, runner=auto_scheduler.LocalRunner(repeat=10),
        measure_callbacks=[auto_scheduler.RecordToFile("records.json")]))

A model's tasks are tuned together by the C++ tuning loop (driver/tune_model.h, search
"auto"), whose scheduler gives each batch to the task whose improvement would shorten the model
most (Ansor's gradient rule); the first trial of each is its default schedule. Tasks of TE
workloads are tuned one after the other by te_tuning, each with an equal share of what the
model's tasks leave (a share proportional to their number). The first RecordToFile's file is
written and resumed from; load_log_file's records of these tasks are copied into it first.
"""
import copy
import os
import sys
import tempfile
import time
import warnings

from .. import _anvil
from .measure_record import RecordToFile
from .search_task import SearchTask
from .te_tuning import TETuning
from .tuning_options import TuningOptions

_at = _anvil.autotvm
_as = _anvil.auto_scheduler
_INF = float("inf")


class TaskSchedulerCallback:
    """Called by TaskScheduler.tune after every measured batch: post_tune(scheduler, task_id),
    task_id the task the batch measured (-1 when unknown)."""

    def post_tune(self, task_scheduler, task_id):
        """Called after each batch."""


class PrintTableInfo(TaskSchedulerCallback):
    """Prints every task's best latency and trials after each batch (when verbose >= 1)."""

    def post_tune(self, task_scheduler, task_id):
        """Prints the table."""
        if task_scheduler.verbose >= 1:
            sys.stdout.write(task_scheduler.table() + "\n")
            sys.stdout.flush()


class LogEstimatedLatency(TaskSchedulerCallback):
    """Appends "ElapsedTime(s)  EstimatedLatency(ms)  Trials" (tab-separated) to log_file after
    each batch: the tuning curve."""

    def __init__(self, log_file):
        self.log_file = os.fspath(log_file)

    def post_tune(self, task_scheduler, task_id):
        """Appends one line."""
        with open(self.log_file, "a", encoding="utf-8") as f:
            f.write(f"ElapsedTime(s)\t{time.time() - task_scheduler.tic:.0f}\t"
                    f"EstimatedLatency(ms)\t{task_scheduler.estimated_latency() * 1e3:.3f}\t"
                    f"Trials\t{task_scheduler.ct}\n")


def _weight(w):
    if isinstance(w, float) and w.is_integer():
        w = int(w)
    if not isinstance(w, int) or isinstance(w, bool) or w < 1:
        raise _anvil.UserError(f"TaskScheduler: a task weight must be a positive integer (calls "
                               f"per run), not {w!r}")
    return w


class TaskScheduler:
    """Tunes `tasks` (SearchTask) weighted by task_weights (calls per run; the tasks' own
    weights when None). load_model_file: a saved cost model to start from (it replaces
    TuningOptions.cost_model); load_log_file: records of an earlier run to resume from;
    callbacks: TaskSchedulerCallback objects (default: PrintTableInfo()). strategy must be
    "gradient"; objective_func, alpha, beta, gamma and backward_window_size (TVM's) are
    UserErrors unless left at their defaults. After tune(): best_costs (seconds per task, inf
    when none succeeded) and task_cts (trials per task)."""

    def __init__(self, tasks, task_weights=None, objective_func=None, strategy="gradient",
                 load_model_file=None, load_log_file=None, alpha=0.2, beta=2, gamma=0.5,
                 backward_window_size=3, callbacks=None):
        self.tasks = list(tasks)
        if not self.tasks or not all(isinstance(t, SearchTask) for t in self.tasks):
            raise _anvil.UserError("TaskScheduler: expected a non-empty list of "
                                   "auto_scheduler.SearchTask")
        weights = [t.weight for t in self.tasks] if task_weights is None else list(task_weights)
        if len(weights) != len(self.tasks):
            raise _anvil.UserError(f"TaskScheduler: {len(weights)} weights for "
                                   f"{len(self.tasks)} tasks")
        self.task_weights = [_weight(w) for w in weights]
        if strategy != "gradient":
            raise _anvil.UserError(f"TaskScheduler: strategy {strategy!r} is not supported (only "
                                   "\"gradient\")")
        fixed = dict(objective_func=(objective_func, None), alpha=(alpha, 0.2), beta=(beta, 2),
                     gamma=(gamma, 0.5), backward_window_size=(backward_window_size, 3))
        for name, (value, default) in fixed.items():
            if value != default:
                raise _anvil.UserError(f"TaskScheduler: {name} is not supported (the C++ "
                                       "scheduler's gradient rule has its own constants)")
        for name, path in (("load_model_file", load_model_file),
                           ("load_log_file", load_log_file)):
            if path is not None and not os.path.isfile(os.fspath(path)):
                raise _anvil.UserError(f"TaskScheduler: {name} '{os.fspath(path)}' does not exist")
        self.load_model_file = None if load_model_file is None else os.fspath(load_model_file)
        self.load_log_file = None if load_log_file is None else os.fspath(load_log_file)
        self.callbacks = [PrintTableInfo()] if callbacks is None else list(callbacks)
        for cb in self.callbacks:
            if not isinstance(cb, TaskSchedulerCallback):
                raise _anvil.UserError(f"TaskScheduler: callback {cb!r} is not a "
                                       "TaskSchedulerCallback")
        self.best_costs = [_INF] * len(self.tasks)
        self.task_cts = [0] * len(self.tasks)
        self.ct = 0
        self.verbose = 1
        self.tic = time.time()

    def estimated_latency(self):
        """Sum of weight x best cost over the tasks measured so far, in seconds."""
        return sum(w * c for w, c in zip(self.task_weights, self.best_costs) if c < _INF)

    def table(self):
        """Every task's best latency and trials, as text."""
        lines = ["|  ID  | Task                                     | Latency (ms) | Weight | "
                 "Trials |"]
        for i, task in enumerate(self.tasks):
            cost = self.best_costs[i]
            latency = f"{cost * 1e3:12.4f}" if cost < _INF else f"{'-':>12}"
            lines.append(f"| {i:4d} | {task.desc[:40]:40} | {latency} | "
                         f"{self.task_weights[i]:6d} | {self.task_cts[i]:6d} |")
        lines.append(f"Estimated total latency: {self.estimated_latency() * 1e3:.3f} ms\t"
                     f"Trials: {self.ct}\tUsed time: {time.time() - self.tic:.0f} s")
        return "\n".join(lines)

    def tune(self, tune_option, search_policy="default", search_policy_params=None,
             adaptive_training=False, per_task_early_stopping=None):
        """Measures up to tune_option.num_measure_trials programs over the tasks.
        search_policy must be "default" or "sketch.xgb"; per_task_early_stopping replaces
        tune_option.early_stopping."""
        if not isinstance(tune_option, TuningOptions):
            raise _anvil.UserError("TaskScheduler.tune: expected auto_scheduler.TuningOptions, "
                                   f"not {type(tune_option).__name__}")
        if search_policy not in ("default", "sketch.xgb"):
            raise _anvil.UserError(f"TaskScheduler.tune: search_policy {search_policy!r} is not "
                                   "supported (\"default\": the sketch search, XGBoost model)")
        if search_policy_params is not None or adaptive_training:
            raise _anvil.UserError("TaskScheduler.tune: search_policy_params and "
                                   "adaptive_training are not supported")
        if tune_option.num_measure_trials < 1:
            raise _anvil.UserError("TaskScheduler.tune: TuningOptions.num_measure_trials must be "
                                   "at least 1 to tune")
        options = copy.copy(tune_option)
        if per_task_early_stopping is not None:
            if (not isinstance(per_task_early_stopping, int)
                    or isinstance(per_task_early_stopping, bool) or per_task_early_stopping < 1):
                raise _anvil.UserError("TaskScheduler.tune: per_task_early_stopping must be a "
                                       f"positive integer, not {per_task_early_stopping!r}")
            options.early_stopping = per_task_early_stopping
        if self.load_model_file is not None:
            options.cost_model = self.load_model_file
        self.verbose = options.verbose
        self.tic = time.time()
        with tempfile.TemporaryDirectory(prefix="anvil-auto-scheduler-") as work:
            if not options.measure_callbacks:
                options.measure_callbacks = [RecordToFile(os.path.join(work, "records.json"))]
            if self.load_log_file is not None:
                _copy_records(self.load_log_file, options.record_files[0], self.tasks)
            models = [i for i, t in enumerate(self.tasks) if t._model_task is not None]
            tes = [i for i, t in enumerate(self.tasks) if t._model_task is None]
            budget = options.num_measure_trials
            if models:
                # At least one trial: 0 would mean "no limit" to the C++ loop.
                self._tune_models(models, max(1, budget * len(models) // len(self.tasks)) if tes
                                  else budget, options)
            for k, i in enumerate(tes):
                share = (budget - self.ct) // (len(tes) - k)
                if share < 1:
                    break
                tuning = TETuning(self.tasks[i], options)
                self.ct += tuning.run(share)
                self.task_cts[i] = tuning.trials
                self.best_costs[i] = tuning.best_cost
                self._post_tune(i)

    def _post_tune(self, task_id):
        for cb in self.callbacks:
            cb.post_tune(self, task_id)

    def _tune_models(self, indices, trials, options):
        tasks = [self.tasks[i] for i in indices]
        target, pipeline = tasks[0].target, tasks[0]._pipeline
        if any(t.target != target or t._pipeline != pipeline for t in tasks):
            raise _anvil.UserError("TaskScheduler: a model's tasks must share one target and "
                                   "one PassContext (extract them in one call)")
        cpp_tasks = []
        for i, t in zip(indices, tasks):
            w = self.task_weights[i]
            cpp_tasks.append(t._model_task if w == t._model_task.weight
                             else _as.task_with_weight(t._model_task, w))
        files = options.record_files
        mirror = _Mirror(files[0], files[1:])
        index = {t.workload_key: i for i, t in zip(indices, tasks)}

        def on_progress(progress):
            mirror.copy_new()
            for p in progress.tasks:
                i = index[p.workload]
                self.task_cts[i] = p.trials
                self.best_costs[i] = p.best_cost if p.best_cost > 0 else _INF
            self.ct = progress.trials
            current = progress.tasks[progress.current] if progress.current >= 0 else None
            self._post_tune(index[current.workload] if current is not None else -1)

        opt_level, disabled, checked = pipeline
        summary = _at.tune_tasks(
            cpp_tasks, target, "xgb", trials, options.early_stopping or 0,
            options.builder.n_parallel, options.num_measures_per_round, options.runner._cpp(),
            files[0], "", 1, opt_level, disabled, checked, on_progress, search="auto",
            cost_model=options.cost_model, build_timeout=float(options.builder.timeout))
        mirror.copy_new()
        for problem in summary.warnings:
            warnings.warn(problem, stacklevel=4)


class _Mirror:
    """Copies the lines the C++ loop appends to the first records file into the others."""

    def __init__(self, source, others):
        self.source = source
        self.others = others
        self.offset = os.path.getsize(source) if os.path.exists(source) else 0

    def copy_new(self):
        if not self.others or not os.path.exists(self.source):
            return
        with open(self.source, "rb") as f:
            f.seek(self.offset)
            data = f.read()
        end = data.rfind(b"\n")
        if end < 0:
            return
        self.offset += end + 1
        for path in self.others:
            with open(path, "ab") as out:
                out.write(data[:end + 1])


def _copy_records(source, dest, tasks):
    """Appends source's records of `tasks` that dest lacks to dest (resumed from there)."""
    keys = {(t.workload_key, t.target) for t in tasks}
    have = set()
    if os.path.exists(dest):
        have = {r.to_line() for r in _at.load_records(dest)[0]}
    records, problems = _at.load_records(source)
    for problem in problems:
        warnings.warn(problem, stacklevel=4)
    writer = None
    for r in records:
        if (r.workload, r.target) in keys and r.to_line() not in have:
            writer = writer or _at.RecordWriter(dest)
            writer.append(r)
            have.add(r.to_line())
