"""What a tuning run may spend and how it measures (TVM's auto_scheduler.TuningOptions)."""
import os

from .. import _anvil
from .measure import LocalBuilder, LocalRunner
from .measure_record import RecordToFile

_as = _anvil.auto_scheduler


def _count(name, value, minimum):
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise _anvil.UserError(f"TuningOptions: {name} must be an integer >= {minimum}, not "
                               f"{value!r}")
    return value


class TuningOptions:
    """num_measure_trials: programs measured in all (over every task of a TaskScheduler);
    early_stopping: per task, trials without improvement before it stops (None: never);
    num_measures_per_round: programs proposed and measured per batch; verbose: 0 silent, 1
    progress, 2 every batch of a TE task too; builder, runner: "local" or LocalBuilder(...),
    LocalRunner(...); measure_callbacks: RecordToFile(...) objects (the first one's file is
    also resumed from); cost_model: the starting cost model — None for the one shipped with
    Anvil (auto_scheduler.default_cost_model_path(); none when it has none), "none" or False
    for none (learn from this run alone), or the path of a saved model."""

    def __init__(self, num_measure_trials=0, early_stopping=None, num_measures_per_round=64,
                 verbose=1, builder="local", runner="local", measure_callbacks=None,
                 cost_model=None):
        self.num_measure_trials = _count("num_measure_trials", num_measure_trials, 0)
        if early_stopping is not None:
            _count("early_stopping", early_stopping, 1)
        self.early_stopping = early_stopping
        self.num_measures_per_round = _count("num_measures_per_round", num_measures_per_round,
                                             1)
        self.verbose = _count("verbose", verbose, 0)
        if builder == "local":
            builder = LocalBuilder()
        if not isinstance(builder, LocalBuilder):
            raise _anvil.UserError("TuningOptions: builder must be \"local\" or "
                                   f"auto_scheduler.LocalBuilder(...), not {builder!r}")
        if runner == "local":
            runner = LocalRunner()
        if not isinstance(runner, LocalRunner):
            raise _anvil.UserError("TuningOptions: runner must be \"local\" or "
                                   f"auto_scheduler.LocalRunner(...), not {runner!r}")
        self.builder = builder
        self.runner = runner
        self.measure_callbacks = list(measure_callbacks or [])
        for cb in self.measure_callbacks:
            if not isinstance(cb, RecordToFile):
                raise _anvil.UserError(f"TuningOptions: measure_callbacks takes "
                                       f"auto_scheduler.RecordToFile(...) objects, not {cb!r}")
        self.cost_model = self._cost_model_path(cost_model)

    @staticmethod
    def _cost_model_path(cost_model):
        """The saved model to start from, "" for none."""
        if cost_model is None:
            return _as.default_cost_model_path()
        if cost_model is False or cost_model == "none":
            return ""
        if not isinstance(cost_model, (str, os.PathLike)):
            raise _anvil.UserError("TuningOptions: cost_model must be None, \"none\" or the path "
                                   f"of a saved model, not {cost_model!r}")
        path = os.fspath(cost_model)
        if not os.path.isfile(path):
            raise _anvil.UserError(f"TuningOptions: cost model file '{path}' does not exist "
                                   "(cost_model=None uses the shipped one, \"none\" none)")
        return path

    @property
    def record_files(self):
        """The files of the RecordToFile callbacks, in order."""
        return [cb.filename for cb in self.measure_callbacks]

    def __repr__(self):
        return (f"TuningOptions(num_measure_trials={self.num_measure_trials}, "
                f"early_stopping={self.early_stopping}, "
                f"num_measures_per_round={self.num_measures_per_round}, "
                f"runner={self.runner!r}, records={self.record_files}, "
                f"cost_model={self.cost_model!r})")
