"""Compilation targets (TVM's tvm.target.Target), usable as a context::

    with anvil.target.Target("llvm -mcpu=skylake-avx512"):
        lib = anvil.build(mod)          # builds for the enclosing target
"""

from . import _anvil
from ._scope import Scope

class Target(Scope):
    """A target string, resolved to its complete spelling ("llvm" becomes the host's triple,
    CPU and features); UserError naming the bad part of a wrong one. Inside ``with target:``
    anvil.build without a target, and autotvm templates, use it."""

    def __init__(self, target):
        text = target.text if isinstance(target, Target) else str(target)
        self.text = _anvil.canonical_target(text)

    @property
    def kind(self):
        """"llvm", "c" or "cuda"."""
        return self.text.split()[0]

    def __str__(self):
        return self.text

    def __repr__(self):
        return f"Target({self.text!r})"

    def __eq__(self, other):
        return isinstance(other, Target) and other.text == self.text

    def __hash__(self):
        return hash(self.text)

    @staticmethod
    def current(allow_none=True):
        """The innermost target of the enclosing ``with Target(...)`` blocks; None (or a
        UserError when allow_none is False) outside any."""
        target = Target.innermost()
        if target is not None:
            return target
        if not allow_none:
            raise _anvil.UserError("no target is set: use `with anvil.target.Target(...)`")
        return None
