"""How programs are built and measured (TVM's auto_scheduler.LocalBuilder, LocalRunner).

Every program compiles in a fresh child process (anvil-build) and runs in another
(anvil-measure), so a crash or a hang costs one trial; its outputs are compared with the default schedule's. Remote measurement (RPCRunner,
LocalRPCMeasureContext) does not exist here: constructing one is a UserError, so a script
written for it fails at once rather than measuring somewhere it did not ask for.
"""
import os

from .. import _anvil

_at = _anvil.autotvm


def _positive_int(owner, name, value, minimum=1):
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise _anvil.UserError(f"{owner}: {name} must be an integer >= {minimum}, not {value!r}")
    return value


def _positive_number(owner, name, value):
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
        raise _anvil.UserError(f"{owner}: {name} must be a positive number, not {value!r}")
    return value


class LocalBuilder:
    """Builds programs on this machine: each is lowered in this process and compiled in a child
    process (anvil-build) that is killed after `timeout` seconds (a build_timeout trial). A
    model's tasks build n_parallel candidates at once (default: one per core); build_func must
    be "default"."""

    def __init__(self, timeout=15, n_parallel=None, build_func="default"):
        self.timeout = _positive_number("LocalBuilder", "timeout", timeout)
        self.n_parallel = (os.cpu_count() or 1) if n_parallel is None else _positive_int(
            "LocalBuilder", "n_parallel", n_parallel)
        if build_func != "default":
            raise _anvil.UserError(f"LocalBuilder: build_func {build_func!r} is not supported "
                                   "(only \"default\": host libraries)")

    def __repr__(self):
        return f"LocalBuilder(timeout={self.timeout}, n_parallel={self.n_parallel})"


class LocalRunner:
    """Measures each program in a child process on this machine: `repeat` measurements, each
    the mean of `number` runs (number grown until one lasts min_repeat_ms), the CPU caches
    flushed before each when enable_cpu_cache_flush; killed after `timeout` seconds.
    cooldown_interval must be 0 and device 0 (the host CPU)."""

    def __init__(self, timeout=10, number=3, repeat=1, min_repeat_ms=100, cooldown_interval=0.0,
                 enable_cpu_cache_flush=False, device=0):
        self.timeout = _positive_number("LocalRunner", "timeout", timeout)
        self.number = _positive_int("LocalRunner", "number", number)
        self.repeat = _positive_int("LocalRunner", "repeat", repeat)
        self.min_repeat_ms = _positive_int("LocalRunner", "min_repeat_ms", min_repeat_ms, 0)
        if cooldown_interval:
            raise _anvil.UserError(f"LocalRunner: cooldown_interval={cooldown_interval!r} is not "
                                   "supported (measurements follow each other without a pause)")
        if device != 0:
            raise _anvil.UserError(f"LocalRunner: device={device!r} is not supported (only the "
                                   "host CPU, device 0)")
        self.enable_cpu_cache_flush = bool(enable_cpu_cache_flush)

    def _cpp(self):
        return _at.MeasureOption(number=self.number, repeat=self.repeat,
                                 min_repeat_ms=self.min_repeat_ms,
                                 flush_cache=self.enable_cpu_cache_flush,
                                 timeout_s=float(self.timeout))

    def __repr__(self):
        return (f"LocalRunner(number={self.number}, repeat={self.repeat}, "
                f"min_repeat_ms={self.min_repeat_ms}, timeout={self.timeout}, "
                f"enable_cpu_cache_flush={self.enable_cpu_cache_flush})")


class RPCRunner:
    """TVM's measurement on a remote device: not supported (a UserError when made)."""

    def __init__(self, *args, **kwargs):
        raise _anvil.UserError("auto_scheduler.RPCRunner: measuring on a remote device is not "
                               "supported; use auto_scheduler.LocalRunner")


class LocalRPCMeasureContext:
    """TVM's local RPC measurement (GPU tuning): not supported (a UserError when made)."""

    def __init__(self, *args, **kwargs):
        raise _anvil.UserError("auto_scheduler.LocalRPCMeasureContext: RPC measurement is not "
                               "supported; use auto_scheduler.LocalRunner")
