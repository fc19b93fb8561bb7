"""Graph ops by name: graph.op.add(a, b), graph.op.nn.conv2d(x, w, strides=[2, 2]).

Positional arguments are operands (expressions, NumPy arrays or numbers, which become constants;
a list is a tuple, for concatenate); keyword arguments set the op's attributes by name.
"""
from .. import _anvil

_NAMES = set(_anvil.graph_op_names())


class _Namespace:
    def __init__(self, prefix):
        self._prefix = prefix

    def __getattr__(self, name):
        full = self._prefix + name
        if full in _NAMES:
            def call(*args, **attrs):
                return _anvil.graph_call(full, args, attrs)

            call.__name__ = name
            call.__doc__ = f"The graph op '{full}'."
            return call
        if any(n.startswith(full + ".") for n in _NAMES):
            return _Namespace(full + ".")
        raise AttributeError(f"there is no graph op '{full}'")

    def __dir__(self):
        return sorted({n[len(self._prefix):].split(".")[0] for n in _NAMES
                       if n.startswith(self._prefix)})


_root = _Namespace("")


def __getattr__(name):
    return getattr(_root, name)


def list_ops():
    """The names of every op."""
    return sorted(_NAMES)
