"""The runtime: modules, packed functions, the graph executor and the VM."""
import os
import statistics
import tempfile
import time

from . import _anvil
from .rpc import RemoteGraphExecutor as _RemoteGraphExecutor

PackedFunc = _anvil.PackedFunc
GraphExecutor = _anvil.GraphExecutor
_VM = _anvil.VirtualMachine


class Module:
    """Compiled code: a JIT-built kernel module (anvil.build of a schedule) or a loaded library.

    f(a, b, c) calls the entry function; f["name"] gets any function; for a model library,
    lib["default"](dev) makes its graph executor.
    """

    def __init__(self, module, entry=None, path=None):
        self.module = module
        self.entry = entry
        self.path = path

    def __getitem__(self, name):
        f = self.module.get_function(name)
        if f is not None:
            return f
        if name == "default" and self.path is not None:
            path = self.path
            return lambda dev=None: GraphExecutor.load(path)
        raise _anvil.UserError(
            f"module has no function '{name}'; it has {', '.join(self.module.function_names)}")

    def get_function(self, name):
        """The function called `name` (same as module[name])."""
        return self[name]

    def __call__(self, *args):
        if self.entry is None:
            raise _anvil.UserError("this module has no entry function; use module['name']")
        return self[self.entry](*args)

    def get_source(self, fmt="ll"):
        """The module's text: "ll" (optimized LLVM IR) or "asm" (target assembly)."""
        return self.module.get_source(fmt)

    def export_library(self, path, cc=""):
        """Writes a shared library loadable with anvil.runtime.load_module."""
        self.module.export_library(os.fspath(path), cc)

    @property
    def type_key(self):
        """What kind of module this is: "llvm" (built in this process) or "shared_library"."""
        return self.module.type_key


class GraphFactoryModule:
    """A compiled model (anvil.build of a graph module): export it, or run it in place."""

    def __init__(self, compiled):
        self.compiled = compiled
        self._tmp = None

    def export_library(self, path, executor="auto"):
        """Writes one shared library with the kernels, the executor's plan or program and the
        weights. executor: "graph", "vm" or "auto" (the graph executor whenever the model is
        static)."""
        return self.compiled.export_library(os.fspath(path), executor)

    def _exported(self, executor):
        """A library of this model for `executor`, written once into a temporary directory."""
        if self._tmp is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="anvil_")
        path = os.path.join(self._tmp.name, f"model_{executor}.so")
        if not os.path.exists(path):
            self.compiled.export_library(path, executor)
        return path

    def __getitem__(self, name):
        if name != "default":
            return self.compiled.kernels.get_function(name)
        self._exported("graph")  # a model only the VM can run is refused here
        # The factory holds self, so the temporary library outlives the call that loads it.
        return lambda dev=None, lib=self: GraphExecutor.load(lib._exported("graph"))

    def get_source(self, fmt="ll"):
        """The kernels' text: "ll" (optimized LLVM IR) or "asm" (target assembly)."""
        return self.compiled.kernels.get_source(fmt)

    @property
    def ir(self):
        """The compiled graph module: main calling kernels, with their loop IR."""
        return self.compiled.module

    @property
    def tuning(self):
        """How each kernel was scheduled: dicts of kernel, workload, calls, tunable, applied (a
        tuning record chose its configuration), program (an auto-scheduler record's program was
        replayed), record_cost and note."""
        return self.compiled.tuning


def load_module(path):
    """Loads a library written by export_library."""
    path = os.fspath(path)
    return Module(_anvil.load_module(path), path=path)


class BenchmarkResult:
    """Timings of repeated runs, in milliseconds."""

    def __init__(self, times_ms):
        self.results = list(times_ms)
        self.median = statistics.median(self.results)
        self.mean = statistics.fmean(self.results)
        self.std = statistics.pstdev(self.results)
        self.min = min(self.results)
        self.max = max(self.results)

    def __str__(self):
        return ("Execution time summary:\n"
                f" {'mean (ms)':>10} {'median (ms)':>12} {'max (ms)':>10} {'min (ms)':>10} "
                f"{'std (ms)':>10}\n"
                f" {self.mean:10.4f} {self.median:12.4f} {self.max:10.4f} {self.min:10.4f} "
                f"{self.std:10.4f}")

    __repr__ = __str__


class GraphModule:
    """Runs a compiled model: set_input, run, get_output (TVM's graph_executor.GraphModule).

    Threads: run_with(inputs) -> outputs is safe to call from many threads at once on one
    GraphModule (each call runs in a workspace of its own and releases the GIL; the weights are
    shared). set_input / run / get_output serve one thread at a time: used from several threads
    they raise anvil.UserError (an input set by another thread, another thread's outputs still
    held, ...) rather than return another thread's results.
    """

    def __init__(self, executor):
        if not isinstance(executor, (GraphExecutor, _RemoteGraphExecutor)):
            raise _anvil.UserError("GraphModule expects lib['default'](dev)")
        self.executor = executor

    @property
    def module(self):
        """The executor as TVM's GraphModule.module: module.time_evaluator("run", dev, number,
        repeat, min_repeat_ms)() times run() (on a remote device: there, without the network)."""
        return self.executor if isinstance(self.executor, _RemoteGraphExecutor) else _LocalTimer(self)

    def set_input(self, key=None, value=None, **params):
        """Copies a NumPy array or NDArray into an input (by name or index)."""
        if key is not None:
            self.executor.set_input(key, value)
        for k, v in params.items():
            self.executor.set_input(k, v)

    def run(self, **inputs):
        """Runs the model once; keyword arguments set inputs by name first."""
        if inputs:
            self.set_input(**inputs)
        self.executor.run()

    def run_with(self, *inputs, **named):
        """Runs the model on the given inputs and returns a list of fresh output NDArrays.

        Inputs go by position (one NumPy array or NDArray per input, in order), as one list or
        tuple, as one dict {name: array}, or by name as keyword arguments. Nothing is kept
        between calls, so any number of threads may call it at once on one GraphModule.
        """
        if len(inputs) == 1 and isinstance(inputs[0], dict) and not named:
            named = inputs[0]
            inputs = ()
        elif len(inputs) == 1 and isinstance(inputs[0], (list, tuple)):
            inputs = tuple(inputs[0])
        if named:
            if inputs:
                raise _anvil.UserError("run_with: give the inputs by position or by name, not both")
            names = [self.executor.input_name(i) for i in range(self.executor.num_inputs)]
            unknown = [k for k in named if k not in names]
            if unknown:
                raise _anvil.UserError(
                    f"run_with: the model has no input named '{unknown[0]}'; its inputs are "
                    + ", ".join(f"'{n}'" for n in names))
            missing = [(i, n) for i, n in enumerate(names) if n not in named]
            if missing:
                raise _anvil.UserError(
                    "run_with: missing " + ", ".join(f"input {i} '{n}'" for i, n in missing))
            inputs = tuple(named[n] for n in names)
        return self.executor.run_with(list(inputs))

    def get_output(self, index):
        """A view of output `index` (no copy); the next run overwrites it."""
        return self.executor.get_output(index)

    def get_input(self, key):
        """A view of an input (by name or index), no copy."""
        index = self.executor.input_index(key) if isinstance(key, str) else key
        return self.executor.get_input(index)

    def get_num_outputs(self):
        """The number of model outputs."""
        return self.executor.num_outputs

    def get_num_inputs(self):
        """The number of model inputs (weights are not inputs)."""
        return self.executor.num_inputs

    def benchmark(self, device=None, repeat=5, number=1, min_repeat_ms=0, end_to_end=False):
        """Times run(): `repeat` measurements, each the mean of `number` runs (raised until one
        measurement takes at least min_repeat_ms). Returns a BenchmarkResult in ms. A model on a
        remote device is timed there."""
        if isinstance(self.executor, _RemoteGraphExecutor):
            seconds = self.executor.time_evaluator("run", device, number, repeat, min_repeat_ms)()
            return BenchmarkResult([t * 1e3 for t in seconds.results])
        self.executor.run()  # warm up
        times = []
        for _ in range(repeat):
            n = number
            while True:
                start = time.perf_counter()
                for _ in range(n):
                    self.executor.run()
                elapsed = (time.perf_counter() - start) * 1e3
                if elapsed >= min_repeat_ms or n > 1 << 20:
                    break
                n *= 2
            times.append(elapsed / n)
        return BenchmarkResult(times)


class _LocalTimer:
    """GraphModule.module of a local model: time_evaluator as on a remote one, in seconds."""

    def __init__(self, graph_module):
        self._m = graph_module

    def time_evaluator(self, name, dev=None, number=10, repeat=1, min_repeat_ms=0):
        """A function timing run() that returns an anvil.rpc.ProfileResult in seconds."""
        if name != "run":
            raise _anvil.UserError(f"time_evaluator times 'run', not '{name}'")
        from .rpc import ProfileResult

        def evaluate(*args):
            ms = self._m.benchmark(dev, repeat=repeat, number=number, min_repeat_ms=min_repeat_ms)
            return ProfileResult([t / 1e3 for t in ms.results])

        return evaluate


class VirtualMachine:
    """Runs a model on the VM (TVM Relax's relax.VirtualMachine): shapes known only at run time,
    control flow, calls of registry functions (anvil.register_func).

        vm = anvil.runtime.VirtualMachine(lib)       # anvil.build(...) or load_module(path)
        y = vm["main"](x)                            # NumPy arrays or NDArrays in, NDArray out

    Each call runs the whole model; results are fresh NDArrays (one, or a tuple of several).
    """

    def __init__(self, lib, device=None):
        if isinstance(lib, GraphFactoryModule):
            self._lib = lib  # keeps its temporary library alive
            path = lib._exported("vm")
        elif isinstance(lib, Module) and lib.path is not None:
            path = lib.path
        elif isinstance(lib, (str, os.PathLike)):
            path = os.fspath(lib)
        else:
            raise _anvil.UserError(
                "VirtualMachine expects anvil.build(...), anvil.runtime.load_module(path) or a path")
        if not _VM.is_vm_artifact(path):
            raise _anvil.UserError(
                f"{path} holds a graph-executor plan, not a VM program; export it with "
                "export_library(path, executor=\"vm\")")
        self.vm = _VM.load(path)

    @property
    def input_names(self):
        """The names of main's inputs, in the order run takes them."""
        return self.vm.input_names

    @property
    def input_kinds(self):
        """What each input takes: "tensor", "sequence", "optional tensor" or "optional sequence"."""
        return self.vm.input_kinds

    @property
    def output_names(self):
        """The names of main's outputs, in the order run returns them."""
        return self.vm.output_names

    def run(self, *inputs):
        """Runs main on `inputs` (in order; a list of arrays for a sequence, None for an empty
        optional); returns one output or a tuple of them, each an NDArray, a list of NDArrays (a
        sequence) or None (an empty optional)."""
        outputs = self.vm.run(list(inputs))
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def __getitem__(self, name):
        if name != "main":
            raise _anvil.UserError(f"the VM runs 'main' (the model's entry), not '{name}'")
        return self.run
