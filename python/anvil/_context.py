"""PassContext: the options of the compiler pipelines, set for a `with` block."""
import threading

_state = threading.local()


class PassContext:
    """Options for every build inside the `with` block.

    opt_level: graph passes above this level are skipped (0 to 3).
    disabled_pass: names of graph or loop-IR passes to skip (see anvil.transform.pass_names()).
    """

    def __init__(self, opt_level=3, disabled_pass=None, config=None):
        self.opt_level = int(opt_level)
        self.disabled_pass = [str(p) for p in (disabled_pass or [])]
        self.config = dict(config or {})

    def __enter__(self):
        stack = getattr(_state, "stack", None)
        if stack is None:
            stack = _state.stack = []
        stack.append(self)
        return self

    def __exit__(self, *exc):
        _state.stack.pop()
        return False

    @staticmethod
    def current():
        """The innermost active PassContext, or the defaults."""
        stack = getattr(_state, "stack", None)
        return stack[-1] if stack else PassContext()

    def __repr__(self):
        return f"PassContext(opt_level={self.opt_level}, disabled_pass={self.disabled_pass})"
