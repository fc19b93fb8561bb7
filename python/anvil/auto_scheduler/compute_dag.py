"""The computation of a search task (TVM's auto_scheduler.ComputeDAG): its input placeholders,
its outputs and the stages between, which the auto-scheduler makes sketches of."""
from .. import _anvil

_as = _anvil.auto_scheduler


class ComputeDAG:
    """The stages of a computation. `compute`: the kernel's tensors (inputs and outputs, in
    argument order; placeholders are the inputs, computed tensors the outputs). print() shows
    one stage a line, producers first: "C(i, j) += (A[i, k] * B[k, j])" for a sum."""

    def __init__(self, compute):
        tensors = list(compute) if isinstance(compute, (list, tuple)) else [compute]
        if not tensors or not all(isinstance(t, _anvil.Tensor) for t in tensors):
            raise _anvil.UserError("ComputeDAG: expected a list of tensors (te.placeholder, "
                                   "te.compute)")
        self.tensors = tensors
        self.inputs = [t for t in tensors if _as.is_placeholder(t)]
        self.outputs = [t for t in tensors if not _as.is_placeholder(t)]
        if not self.outputs:
            raise _anvil.UserError("ComputeDAG: no computed tensor among the tensors")
        self._flop_ct = None

    @property
    def flop_ct(self):
        """Floating-point operations of one run, counted on the lowered loops (-1: unknown,
        e.g. a symbolic extent)."""
        if self._flop_ct is None:
            self._flop_ct = _as.count_flops(self.inputs, self.outputs,
                                            _anvil.canonical_target("llvm"))
        return self._flop_ct

    def __str__(self):
        return _as.compute_dag_text(self.outputs)

    def __repr__(self):
        return f"ComputeDAG({', '.join(t.name for t in self.tensors)})"
