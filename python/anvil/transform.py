"""Graph passes, one at a time: anvil.transform.fold_constants()(mod)."""
from . import _anvil
from ._context import PassContext
from .target import Target


class Pass:
    """One graph pass; call it on an IRModule. It runs alone (no other pass runs with it), at
    the enclosing PassContext's opt_level, for the enclosing ``with Target(...)`` (the host
    outside any)."""

    def __init__(self, name):
        self.name = name

    def __call__(self, mod):
        target = Target.current()
        return _anvil.run_graph_pass(mod, self.name, PassContext.current().opt_level,
                                     str(target) if target is not None else "")

    def __repr__(self):
        return f"Pass({self.name})"


class Sequential(Pass):
    """Runs passes in order."""

    def __init__(self, passes):
        super().__init__("sequential")
        self.passes = list(passes)

    def __call__(self, mod):
        for p in self.passes:
            mod = p(mod)
        return mod


class BindParams(Pass):
    """Binds weights as constants: the parameters of `func_name` named in `params` (name ->
    NumPy array or NDArray) become constants of the module (TVM Relax's BindParams)."""

    def __init__(self, func_name, params):
        super().__init__("bind_params")
        self.func_name = func_name
        self.params = dict(params)

    def __call__(self, mod):
        return _anvil.bind_params(mod, self.func_name, self.params)


def bind_params(func_name, params):
    """anvil.transform.bind_params("main", params)(mod): see BindParams."""
    return BindParams(func_name, params)


def pass_names():
    """The graph passes (each once, in the recommended order), then the loop-IR passes."""
    return _anvil.graph_pass_names() + _anvil.tir_pass_names()


def _make(name):
    def factory():
        return Pass(name)

    factory.__name__ = name
    factory.__doc__ = f"The graph pass '{name}'."
    return factory


for _name in _anvil.graph_pass_names():
    globals()[_name] = _make(_name)
