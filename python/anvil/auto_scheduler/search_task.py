"""Search tasks (TVM's auto_scheduler.SearchTask): one kernel to schedule — a registered
tensor-expression workload, or a kernel of a model (extract_tasks).

    task = auto_scheduler.SearchTask(func=matmul_add, args=(N, L, M, "float32"), target="llvm")
    print(task.compute_dag)
    task.tune(auto_scheduler.TuningOptions(num_measure_trials=10,
                                           measure_callbacks=[auto_scheduler.RecordToFile(log)]))
    sch, args = task.apply_best(log)
    func = anvil.build(sch, args, target="llvm")
"""
import os
import warnings

from .. import _anvil
from .._context import PassContext
from ..target import Target
from . import workload_registry
from .compute_dag import ComputeDAG
from .tuning_options import TuningOptions

_at = _anvil.autotvm
_as = _anvil.auto_scheduler

def target_text(target):
    """The complete spelling of `target`; the enclosing Target, else the host, when None."""
    if target is None:
        current = Target.current()
        return current.text if current is not None else _anvil.canonical_target("llvm")
    return _anvil.canonical_target(str(target))


def pipeline():
    """The enclosing PassContext's (opt_level, disabled passes, checked)."""
    ctx = PassContext.current()
    return ctx.opt_level, list(ctx.disabled_pass), ctx.checked


class SearchTask:
    """One kernel to schedule: func (a function decorated with @register_workload, or its
    name) called with args, for target.

    workload_key: the key its records carry; target: the complete target string; desc: a
    readable name; compute_dag: its computation (print it); weight: calls per run of its
    model (1 for a TE workload). compute_dag, workload_key, target_host, hardware_params,
    layout_rewrite_option and task_inputs (TVM's) are UserErrors unless left out."""

    def __init__(self, func=None, args=None, compute_dag=None, workload_key=None, target=None,
                 target_host=None, hardware_params=None, layout_rewrite_option=None,
                 task_inputs=None, task_inputs_overwrite=False, task_inputs_save_to_file=False,
                 desc=""):
        given = dict(compute_dag=compute_dag, workload_key=workload_key, target_host=target_host,
                     hardware_params=hardware_params,
                     layout_rewrite_option=layout_rewrite_option, task_inputs=task_inputs,
                     task_inputs_overwrite=task_inputs_overwrite,
                     task_inputs_save_to_file=task_inputs_save_to_file)
        # TVM's arguments that have no meaning here: each must be left at its default.
        for name, value in given.items():
            if value is not None and value is not False:
                raise _anvil.UserError(f"SearchTask: {name} is not supported (give func and "
                                       "args, and target)")
        if func is None:
            raise _anvil.UserError("SearchTask: func (a registered workload) is required")
        name = workload_registry.name_of(func)
        self.args = tuple(args or ())
        self.workload_key = workload_registry.workload_key(name, self.args)
        self.target = target_text(target)
        tensors, _, _ = workload_registry.instantiate(name, self.args)
        self.compute_dag = ComputeDAG(tensors)
        self.desc = desc or name
        self.weight = 1
        self._model_task = None
        self._pipeline = pipeline()

    @classmethod
    def _of_model(cls, model_task, target, pipeline_options, inputs, outputs):
        """The task of a model's kernel (an _anvil.autotvm.TuneTask)."""
        task = cls.__new__(cls)
        task.args = ()
        task.workload_key = model_task.workload
        task.target = target
        task.compute_dag = ComputeDAG(list(inputs) + list(outputs))
        task.desc = model_task.name
        task.weight = model_task.weight
        task._model_task = model_task
        task._pipeline = pipeline_options
        return task

    def tune(self, tuning_options, search_policy=None, adaptive_training=False):
        """Searches schedules of this task, measuring up to tuning_options.num_measure_trials
        programs (the first: the default schedule). search_policy must be None (the
        auto-scheduler's sketch search). adaptive_training (TVM: retrain the cost model less
        often as data grows) is accepted as a bool; the model here retrains after every few
        measurements either way, which its small size makes cheap."""
        if not isinstance(adaptive_training, bool):
            raise _anvil.UserError("SearchTask.tune: adaptive_training must be True or False, "
                                   f"not {adaptive_training!r}")
        if search_policy is not None:
            raise _anvil.UserError("SearchTask.tune: search_policy is not supported (the search "
                                   "is always the sketch policy)")
        if not isinstance(tuning_options, TuningOptions):
            raise _anvil.UserError("SearchTask.tune: expected auto_scheduler.TuningOptions, not "
                                   f"{type(tuning_options).__name__}")
        from .task_scheduler import TaskScheduler  # the scheduler tunes tasks of both kinds
        TaskScheduler([self]).tune(tuning_options)

    def best_record(self, log_file):
        """The best successful auto-scheduler record of this task in `log_file`, or None."""
        path = os.fspath(log_file)
        if not os.path.isfile(path):
            raise _anvil.UserError(f"records file '{path}' does not exist")
        records, problems = _at.load_records(path)
        for problem in problems:
            warnings.warn(problem, stacklevel=3)
        best = None
        for r in records:
            if (r.workload == self.workload_key and r.target == self.target
                    and r.search == "auto" and r.ok()
                    and (best is None or r.mean_cost() < best.mean_cost())):
                best = r
        return best

    def apply_best(self, log_file, include_compatible=False, layout_rewrite_option=None):
        """(schedule, tensors) of the best program in `log_file`: a fresh schedule of the
        computation with the program replayed, and the kernel's arguments to build it with.
        UserError naming the file and the workload when it has no such record."""
        if include_compatible or layout_rewrite_option is not None:
            raise _anvil.UserError("apply_best: include_compatible and layout_rewrite_option are "
                                   "not supported")
        record = self.best_record(log_file)
        if record is None:
            raise _anvil.UserError(f"apply_best: '{os.fspath(log_file)}' has no successful "
                                   f"auto-scheduler record of workload '{self.workload_key}' "
                                   f"for target '{self.target}'")
        sch = _as.record_schedule(self.compute_dag.outputs, record)
        return sch, list(self.compute_dag.tensors)

    def print_best(self, log_file, print_mode="schedule"):
        """The best program of `log_file` as text, one schedule primitive a line (TVM's
        print_best: print() it)."""
        if print_mode != "schedule":
            raise _anvil.UserError(f"print_best: print_mode {print_mode!r} is not supported "
                                   "(only \"schedule\")")
        sch, _ = self.apply_best(log_file)
        return str(sch)

    def __repr__(self):
        return (f"SearchTask({self.desc}, weight={self.weight}, target={self.target!r}, "
                f"workload_key={self.workload_key!r})")
