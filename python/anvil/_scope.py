"""`with` blocks that make an object current on this thread (PassContext, Target,
autotvm.apply_history_best): each class keeps its own thread-local stack of entered objects."""
import threading


class Scope:
    """Base of a context manager whose innermost entered instance is ``cls.innermost()``.

    A subclass gets its own stack on first use; entering pushes, exiting pops."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._scope_state = threading.local()

    def __enter__(self):
        stack = getattr(self._scope_state, "stack", None)
        if stack is None:
            stack = self._scope_state.stack = []
        stack.append(self)
        return self

    def __exit__(self, *exc):
        self._scope_state.stack.pop()
        return False

    @classmethod
    def innermost(cls):
        """The innermost entered instance on this thread, or None."""
        stack = getattr(cls._scope_state, "stack", None)
        return stack[-1] if stack else None
