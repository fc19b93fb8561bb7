"""Records of measured programs (TVM's auto_scheduler.RecordToFile, load_records): the records
files of anvil.autotvm (one JSON object per line, src/tune/record.h), in which an
auto-scheduler record carries "search": "auto", an empty "config" and its program as
"schedule". One file may hold both kinds; applying it, the faster record of a workload wins."""
import os

from .. import _anvil
from ..autotvm import record as _autotvm_record


class RecordToFile:
    """Appends every measurement to `filename` (flushed line by line). A tuning run resumes
    from the first RecordToFile's file: programs recorded there are not measured again."""

    def __init__(self, filename):
        if not isinstance(filename, (str, bytes, os.PathLike)):
            raise _anvil.UserError("RecordToFile: expected a file name, not "
                                   f"{type(filename).__name__}")
        self.filename = os.fsdecode(filename)

    def __repr__(self):
        return f"RecordToFile({self.filename!r})"


def load_records(filename):
    """Every record of a file, in order (TuningRecord; record.search says "template" or
    "auto"); lines that are not records are skipped with a warning naming the file and line."""
    return _autotvm_record.load_from_file(filename)
