"""The auto-scheduler, in TVM's auto_scheduler names: schedules searched from the computation
alone (sketches, then evolutionary search under a learned cost model; src/tune/sketch/), no
template needed::

    from anvil import auto_scheduler

    tasks, task_weights = auto_scheduler.extract_tasks(mod, params, target)
    tuner = auto_scheduler.TaskScheduler(tasks, task_weights)
    tuner.tune(auto_scheduler.TuningOptions(
        num_measure_trials=200, runner=auto_scheduler.LocalRunner(repeat=10),
        measure_callbacks=[auto_scheduler.RecordToFile("records.json")]))
    with auto_scheduler.ApplyHistoryBest("records.json"):
        with anvil.transform.PassContext(opt_level=3,
                                         config={"relay.backend.use_auto_scheduler": True}):
            lib = anvil.build(mod, target=target, params=params)

Tensor-expression workloads are registered with @auto_scheduler.register_workload and tuned as
SearchTask(func=..., args=..., target=...): task.tune(options), then
sch, args = task.apply_best(log_file) and anvil.build(sch, args, target).

Records are anvil.autotvm's records with "search": "auto"; one file may hold both kinds.
"""
from . import (compute_dag, dispatcher, measure, measure_record, relay_integration, search_task,
               task_scheduler, te_tuning, tuning_options, workload_registry)
from .compute_dag import ComputeDAG
from .dispatcher import ApplyHistoryBest
from .measure import LocalBuilder, LocalRPCMeasureContext, LocalRunner, RPCRunner
from .measure_record import RecordToFile, load_records
from .relay_integration import extract_tasks
from .search_task import SearchTask
from .task_scheduler import (LogEstimatedLatency, PrintTableInfo, TaskScheduler,
                             TaskSchedulerCallback)
from .tuning_options import TuningOptions
from .workload_registry import register_workload
from .. import _anvil

default_cost_model_path = _anvil.auto_scheduler.default_cost_model_path

__all__ = [
    "compute_dag", "dispatcher", "measure", "measure_record", "relay_integration",
    "search_task", "task_scheduler", "te_tuning", "tuning_options", "workload_registry",
    "ComputeDAG", "ApplyHistoryBest", "LocalBuilder", "LocalRPCMeasureContext", "LocalRunner",
    "RPCRunner", "RecordToFile", "load_records", "extract_tasks", "SearchTask",
    "LogEstimatedLatency", "PrintTableInfo", "TaskScheduler", "TaskSchedulerCallback",
    "TuningOptions", "register_workload", "default_cost_model_path",
]
