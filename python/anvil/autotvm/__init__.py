"""Tuning kernels, in TVM's autotvm names::

    from anvil import autotvm

    tasks = autotvm.task.extract_from_program(mod, params=params, target="llvm")
    for i, task in enumerate(tasks):
        tuner = autotvm.tuner.XGBTuner(task)
        tuner.tune(n_trial=min(200, len(task.config_space)),
                   measure_option=autotvm.measure_option(
                       builder=autotvm.LocalBuilder(),
                       runner=autotvm.LocalRunner(number=5, repeat=3, min_repeat_ms=100)),
                   callbacks=[autotvm.callback.progress_bar(200, prefix=f"[Task {i + 1}]"),
                              autotvm.callback.log_to_file("records.json")])

    with autotvm.apply_history_best("records.json"):
        lib = anvil.build(mod, target="llvm", params=params)

Python templates (@autotvm.template, autotvm.get_config(), cfg.define_split / define_knob /
define_reorder / define_annotate) are tuned the same way through autotvm.task.create.
"""
from . import callback, measure, record, space, task, tuner
from .dispatcher import ApplyHistoryBest, apply_history_best
from .measure import LocalBuilder, LocalRunner, MeasureInput, MeasureResult, measure_option
from .space import ConfigEntity
from .task import Task, extract_from_program
from .template import get_config, template

__all__ = [
    "callback", "measure", "record", "space", "task", "tuner", "ApplyHistoryBest",
    "apply_history_best", "LocalBuilder", "LocalRunner", "MeasureInput", "MeasureResult",
    "measure_option", "ConfigEntity", "Task", "extract_from_program", "get_config", "template",
]
