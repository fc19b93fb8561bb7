"""The tasks of a model (TVM's auto_scheduler.extract_tasks)::

    tasks, task_weights = auto_scheduler.extract_tasks(mod, params, target)
    for idx, task in enumerate(tasks):
        print(task.desc, task.workload_key)

The tasks are the model's distinct fused kernels of static shapes, as anvil.build compiles them
with the enclosing PassContext's options (build with the same ones for the records to apply)
and the layouts and algorithms chosen by the records in force (apply_history_best). Those graph
choices are autotvm tasks (autotvm.task.extract_from_program), not auto_scheduler ones.
"""
from .. import _anvil
from .._context import PassContext
from . import dispatcher
from .search_task import SearchTask, target_text

_at = _anvil.autotvm
_as = _anvil.auto_scheduler


def _module(mod):
    if isinstance(mod, _anvil.IRModule):
        return mod
    if isinstance(mod, _anvil.Expr):
        return _anvil.graph_module_from_expr(mod)  # its main function (UserError otherwise)
    raise _anvil.UserError("extract_tasks: expected a graph IRModule or its main function, not "
                           f"{type(mod).__name__}")


def extract_tasks(mod, params, target, target_host=None, hardware_params=None,
                  include_simple_tasks=False, dump_workload_to_dag_log=None, opt_level=3,
                  other_targets=None):
    """(tasks, task_weights): one SearchTask per distinct kernel of static shapes, in the order
    the model first calls them, and its calls per run. Kernels without a reduction
    (elementwise, injective) are left out unless include_simple_tasks. `params` are bound as
    anvil.build binds them. target_host, hardware_params, dump_workload_to_dag_log and
    other_targets (TVM's) are UserErrors unless left out."""
    for name, value in (("target_host", target_host), ("hardware_params", hardware_params),
                        ("dump_workload_to_dag_log", dump_workload_to_dag_log),
                        ("other_targets", other_targets)):
        if value is not None:
            raise _anvil.UserError(f"extract_tasks: {name} is not supported")
    mod = _module(mod)
    if params:
        mod = _anvil.bind_params(mod, "main", dict(params))
    target = target_text(target)
    ctx = PassContext.current()
    pipeline = (int(opt_level), list(ctx.disabled_pass), ctx.checked)
    records = dispatcher.records_in_force(ctx.use_auto_scheduler)
    tasks = []
    for t in _at.extract_tasks(mod, target, pipeline[0], pipeline[1], pipeline[2], records):
        if not t.static_shapes:
            continue  # its programs could not be measured without the sizes
        inputs, outputs = _as.task_computation(t)
        if not include_simple_tasks and not _as.has_reduction(outputs):
            continue
        tasks.append(SearchTask._of_model(t, target, pipeline, inputs, outputs))
    return tasks, [t.weight for t in tasks]
