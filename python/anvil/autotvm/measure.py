"""How candidates are built and measured (TVM's autotvm.measure_option, LocalBuilder,
LocalRunner), and what a tuner reports to its callbacks (MeasureInput, MeasureResult).

Every candidate compiles in a fresh child process (anvil-build) and runs in another
(anvil-measure), so a crash or a hang costs one trial, never the tuning session: a build is
killed after the builder's `timeout` seconds, a run after the runner's.
"""
from .. import _anvil

_at = _anvil.autotvm


def _positive_int(owner, name, value, minimum=1):
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise _anvil.UserError(f"{owner}: {name} must be an integer >= {minimum}, not {value!r}")
    return value


class LocalBuilder:
    """Builds candidates on this machine: each is lowered in this process and compiled in a
    child process (anvil-build) that is killed after `timeout` seconds (a BUILD_TIMEOUT
    trial). n_parallel: candidates of a model task built at once (default 1)."""

    def __init__(self, timeout=10, n_parallel=None):
        if not isinstance(timeout, (int, float)) or timeout <= 0:
            raise _anvil.UserError(f"LocalBuilder: timeout must be positive, not {timeout!r}")
        self.timeout = timeout
        self.n_parallel = 1 if n_parallel is None else _positive_int("LocalBuilder",
                                                                     "n_parallel", n_parallel)


class LocalRunner:
    """Measures each candidate in a child process on this machine: `repeat` measurements, each
    the mean of `number` runs (number grown until one measurement lasts min_repeat_ms), the CPU
    caches flushed before each when enable_cpu_cache_flush; killed after `timeout` seconds."""

    def __init__(self, timeout=10, number=4, repeat=3, min_repeat_ms=0,
                 enable_cpu_cache_flush=False):
        _positive_int("LocalRunner", "number", number)
        _positive_int("LocalRunner", "repeat", repeat)
        _positive_int("LocalRunner", "min_repeat_ms", min_repeat_ms, minimum=0)
        if not isinstance(timeout, (int, float)) or timeout <= 0:
            raise _anvil.UserError(f"LocalRunner: timeout must be positive, not {timeout!r}")
        self.timeout = timeout
        self.number = number
        self.repeat = repeat
        self.min_repeat_ms = min_repeat_ms
        self.enable_cpu_cache_flush = bool(enable_cpu_cache_flush)


class MeasureOption:
    """What measure_option returns: a builder and a runner."""

    def __init__(self, builder, runner):
        self.builder = builder
        self.runner = runner

    def _cpp(self):
        r = self.runner
        return _at.MeasureOption(number=r.number, repeat=r.repeat, min_repeat_ms=r.min_repeat_ms,
                                 flush_cache=r.enable_cpu_cache_flush, timeout_s=float(r.timeout))

    def __repr__(self):
        r = self.runner
        return (f"measure_option(number={r.number}, repeat={r.repeat}, "
                f"min_repeat_ms={r.min_repeat_ms}, timeout={r.timeout}, "
                f"enable_cpu_cache_flush={r.enable_cpu_cache_flush}, "
                f"build timeout={self.builder.timeout}, n_parallel={self.builder.n_parallel})")


def measure_option(builder=None, runner=None, number=1, repeat=3, min_repeat_ms=0, timeout=10,
                   enable_cpu_cache_flush=False):
    """How to build and measure candidates: builder (LocalBuilder() or "local") and runner
    (LocalRunner(...) or "local"); without a runner, the keyword arguments make one."""
    if builder is None or builder == "local":
        builder = LocalBuilder()
    if not isinstance(builder, LocalBuilder):
        raise _anvil.UserError("measure_option: builder must be autotvm.LocalBuilder(...) or "
                               f"'local', not {builder!r}")
    if runner is None or runner == "local":
        runner = LocalRunner(timeout=timeout, number=number, repeat=repeat,
                             min_repeat_ms=min_repeat_ms,
                             enable_cpu_cache_flush=enable_cpu_cache_flush)
    if not isinstance(runner, LocalRunner):
        raise _anvil.UserError("measure_option: runner must be autotvm.LocalRunner(...) or "
                               f"'local', not {runner!r}")
    return MeasureOption(builder, runner)


class MeasureErrorNo:
    """TVM's error numbers of MeasureResult.error_no."""
    NO_ERROR = 0
    INSTANTIATION_ERROR = 1
    COMPILE_HOST = 2
    COMPILE_DEVICE = 3
    RUNTIME_DEVICE = 4
    WRONG_ANSWER = 5
    BUILD_TIMEOUT = 6
    RUN_TIMEOUT = 7
    UNKNOWN_ERROR = 8


_ERROR_NO = {
    "none": MeasureErrorNo.NO_ERROR,
    "compile": MeasureErrorNo.COMPILE_HOST,
    "runtime": MeasureErrorNo.RUNTIME_DEVICE,
    "wrong_answer": MeasureErrorNo.WRONG_ANSWER,
    "timeout": MeasureErrorNo.RUN_TIMEOUT,
    "build_timeout": MeasureErrorNo.BUILD_TIMEOUT,
}


class MeasureInput:
    """One measured candidate: the target, the task and the configuration (knob name ->
    value)."""

    def __init__(self, target, task, config):
        self.target = target
        self.task = task
        self.config = config

    def __repr__(self):
        return f"MeasureInput({self.task.name}, {self.config})"


class MeasureResult:
    """Its measurement: costs (seconds per run, one per repeat; empty on error), error_no
    (MeasureErrorNo), error ("none", "compile", ...), error_msg, timestamp, and the record."""

    def __init__(self, record):
        self.record = record
        self.costs = list(record.costs)
        self.error = record.error
        self.error_no = _ERROR_NO[record.error]
        self.error_msg = record.message
        self.timestamp = record.timestamp

    def __repr__(self):
        return f"MeasureResult(costs={self.costs}, error={self.error})"
