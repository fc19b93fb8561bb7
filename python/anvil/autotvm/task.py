"""Tuning tasks (TVM's autotvm.task): the kernels of a model (extract_from_program) or a Python
template instance (create).

    tasks = autotvm.task.extract_from_program(mod, params=params, target="llvm")
    task = autotvm.task.create("tutorial/matmul", args=(512, 512, 512, "float32"), target="llvm")
    print(task.config_space)
"""
from .. import _anvil
from .._context import PassContext
from ..target import Target
from . import dispatcher as _dispatcher
from . import template as _template
from .space import ConfigEntity

_at = _anvil.autotvm


def _target_text(target):
    if target is None:
        current = Target.current()
        return current.text if current is not None else _anvil.canonical_target("llvm")
    return _anvil.canonical_target(str(target))


class Task:
    """One tuning task.

    name: the kernel's or the template's name; workload: the workload key its records carry;
    target: the complete target string; config_space: its knobs (len() is the number of
    configurations); weight: calls per run of the model (1 for a template); args: a template's
    arguments; flop: a template's cfg.add_flop total (0 when it declares none).
    """

    def __init__(self, name, workload, target, config_space, weight=1, args=(), flop=0,
                 model_task=None, template=None, pipeline=None):
        self.name = name
        self.workload = workload
        self.target = target
        self.config_space = config_space
        self.weight = weight
        self.args = tuple(args)
        self.flop = flop
        self._model_task = model_task
        self._template = template
        self._pipeline = pipeline or (3, [], False)

    @property
    def algorithm(self):
        """Whether the task chooses a convolution's algorithm rather than a kernel's schedule."""
        return self._model_task is not None and self._model_task.algorithm

    @property
    def layout(self):
        """Whether the task chooses the channel block of a blocked layout rather than a kernel's
        schedule."""
        return self._model_task is not None and self._model_task.layout

    @property
    def kind(self):
        """"model" (a fused kernel of a model) or "template" (a Python template)."""
        return "model" if self._model_task is not None else "template"

    def instantiate(self, config):
        """A template task's (schedule, tensors) with `config` (a ConfigEntity)."""
        if self._template is None:
            raise _anvil.UserError(f"task {self.name}: only template tasks are instantiated in "
                                   "Python")
        return self._template.instantiate(self.args, config)

    def __repr__(self):
        return (f"Task(name={self.name}, args={self.args}, weight={self.weight}, "
                f"space={len(self.config_space)}, target={self.target!r})")


def _pipeline():
    ctx = PassContext.current()
    return ctx.opt_level, list(ctx.disabled_pass), ctx.checked


def create(task_name, args, target=None, target_host=None):
    """The task of template `task_name` with `args`; its space is what the template declares
    with the default configuration."""
    if target_host is not None:
        raise _anvil.UserError("task.create: target_host is not supported (host kernels only)")
    entry = _template.lookup(task_name)
    args = tuple(args)
    workload = _template.workload_key(task_name, args)
    cfg = ConfigEntity()
    entry.instantiate(args, cfg)
    return Task(task_name, workload, _target_text(target), cfg.space, args=args, flop=cfg.flop,
                template=entry, pipeline=_pipeline())


def extract_from_program(mod, params=None, target=None, target_host=None):
    """The tunable tasks of a graph module, in the order the model first calls them: first its
    layout tasks (one per channel count whose blocked layout has a choice of channel block, knob
    "block": 0 unblocked, or 8, 16, 32 where they divide it; task.layout is True), then its
    algorithm tasks (one per distinct 3x3 stride-1 convolution with a constant weight, knob
    "algorithm": 0 direct, 2 Winograd F(2,3), 4 F(4,3); and one per distinct convolution the
    layout leaves unblocked, knob "weight_block": 0 direct, or the output-channel block of its
    packed weight; task.algorithm is True), then one Task
    per distinct fused kernel, its weight the calls per run. The algorithms and kernels are
    those of the layouts and algorithms chosen by the enclosing apply_history_best (the defaults
    without one), and a layout or algorithm task with a record there is not listed again: as
    anvil tune does, tune the layout tasks, extract again inside apply_history_best(log) and
    tune the algorithm tasks, then once more for the kernels. `params` are bound
    as anvil.build binds them, and the graph passes run with the enclosing PassContext's options
    (build with the same ones for the records to apply). Kernels without knobs or with symbolic
    dimensions are not tasks."""
    if target_host is not None:
        raise _anvil.UserError("extract_from_program: target_host is not supported")
    if not isinstance(mod, _anvil.IRModule):
        raise _anvil.UserError("extract_from_program: expected a graph IRModule, not "
                               f"{type(mod).__name__}")
    if params:
        mod = _anvil.bind_params(mod, "main", dict(params))
    target = _target_text(target)
    pipeline = _pipeline()
    opt_level, disabled, checked = pipeline
    history = _dispatcher.current()
    records = history.best if history is not None else None
    tasks = []
    for extract in (_at.extract_layout_tasks, _at.extract_algorithm_tasks):
        for t in extract(mod, target, opt_level, disabled, checked, records):
            if t.tunable and (records is None or records.find(t.workload, target) is None):
                tasks.append(Task(t.name, t.workload, target, t.space, weight=t.weight,
                                  model_task=t, pipeline=pipeline))
    for t in _at.extract_tasks(mod, target, opt_level, disabled, checked, records):
        if not t.tunable:
            continue
        tasks.append(Task(t.name, t.workload, target, t.space, weight=t.weight, model_task=t,
                          pipeline=pipeline))
    return tasks
