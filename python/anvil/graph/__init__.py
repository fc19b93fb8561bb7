"""The graph IR from Python: build expressions, make modules, parse and print text.

    x = graph.var("x", shape=(1, 3, 8, 8))
    w = graph.const(np.ones((4, 3, 3, 3), "float32"))
    y = graph.op.nn.relu(graph.op.nn.conv2d(x, w, padding=[1, 1, 1, 1]))
    mod = graph.IRModule.from_expr(graph.function([x], y))

anvil.graph.dataflow_pattern is the dataflow pattern language (is_op, wildcard, rewrite,
partition, DFPatternCallback).
"""
from .. import _anvil
from . import op
from . import dataflow_pattern

IRModule = _anvil.IRModule
Expr = _anvil.Expr


def var(name, shape=(), dtype="float32"):
    """A graph variable (a function parameter) of tensor type shape x dtype."""
    return _anvil.graph_var(name, [int(d) for d in shape], str(dtype))


def const(value):
    """A constant from a NumPy array or a number (a Python float becomes float32)."""
    return _anvil.graph_const(value)


def tuple_(fields):
    """A tuple of graph expressions (TVM's relay.Tuple); index it with t[i]."""
    return _anvil.graph_tuple(list(fields))


def function(params, body):
    """A function of `params` (graph.var values) returning `body`."""
    return _anvil.graph_function(list(params), body)


def _from_expr(func):
    """A module whose main is `func` (a graph.function)."""
    return _anvil.graph_module_from_expr(func)


IRModule.from_expr = staticmethod(_from_expr)


def parse(text):
    """Parses the graph IR's text form (mod.astext()) into an IRModule."""
    return _anvil.parse_module(text)
