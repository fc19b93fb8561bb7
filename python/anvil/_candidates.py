"""Building and measuring candidate schedules of one tensor-expression kernel: what the Python
tuning loops share (autotvm's template tasks, auto_scheduler's TE tasks).

The first candidate that runs is the reference: every later candidate must reproduce its outputs
on the same random inputs (a wrong answer is a failed trial, never a fast record). Each
candidate is lowered here, compiled in a child process (anvil-build, killed after the builder's
timeout) and run in another (anvil-measure), so a crash or a hang costs one trial.
"""
import os

from . import _anvil

_at = _anvil.autotvm


class CandidateMeasurer:
    """Builds, measures and checks candidates for one tuning run, in the directory `work`.

    target: the complete target string; pipeline: (opt_level, disabled passes, checked);
    option: an _anvil.autotvm.MeasureOption; build_timeout: seconds a build may take;
    seed: the random inputs' seed."""

    def __init__(self, target, pipeline, option, build_timeout, seed, work):
        self.target = target
        self.pipeline = pipeline
        self.option = option
        self.build_timeout = build_timeout
        self.seed = seed
        self.work = work
        self.args = None  # the kernel's arguments, from the first candidate built
        self.reference_ok = False
        self.count = 0

    def measure(self, record, sch, tensors, what="candidate"):
        """Fills `record` (its schedule, error, message and costs) with the measurement of `sch`
        over `tensors` (the kernel's arguments, inputs and outputs) and returns it. `what`
        names the candidates in the message of one whose tensors differ from the first's."""
        self.count += 1
        library = os.path.join(self.work, f"candidate_{self.count}.so")
        try:
            record.set_schedule(sch)
            args = _at.kernel_args(tensors)
            if self.args is not None and _signature(args) != _signature(self.args):
                raise _anvil.UserError(f"the {what}'s tensors differ from those of the "
                                       "reference (the first candidate)")
            opt_level, disabled, checked = self.pipeline
            kernel = _anvil.lower(sch, tensors, "tune_kernel", self.target, opt_level, disabled,
                                  checked)
        except Exception as e:  # a candidate that cannot be lowered
            record.error = "compile"
            record.message = f"{type(e).__name__}: {e}"
            return record
        built = _at.build_in_child([kernel.astext()], self.target, library, self.build_timeout)
        if built.error != "none":
            record.error = built.error
            record.message = built.message
            return record
        inputs = os.path.join(self.work, "inputs.npz")
        reference = os.path.join(self.work, "reference.npz")
        if self.args is None:
            self.args = args
            _at.write_random_inputs(args, self.seed, inputs)
        is_reference = not self.reference_ok
        outputs = reference if is_reference else library + ".outputs.npz"
        result = _at.measure_in_child(library, "tune_kernel", self.args, inputs, outputs,
                                      self.option)
        _remove(library)
        record.error = result.error
        record.message = result.message
        if result.error != "none":
            return record
        if is_reference:
            self.reference_ok = True
        else:
            same, why = _at.outputs_match(reference, outputs, 1e-3, 1e-3)
            _remove(outputs)
            if not same:
                record.error = "wrong_answer"
                record.message = why
                return record
        record.costs = result.costs
        return record


def _signature(args):
    return [(a.shape, a.dtype, a.output) for a in args]


def _remove(path):
    try:
        os.remove(path)
    except FileNotFoundError:
        pass
