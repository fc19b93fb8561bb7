"""Dataflow patterns over the graph IR, in the names of TVM's relay.dataflow_pattern.

    from anvil.graph.dataflow_pattern import is_op, wildcard, is_constant

    conv = is_op("nn.conv2d")(wildcard(), is_constant())
    pattern = is_op("nn.relu")(conv.optional(lambda c: is_op("nn.bias_add")(c, is_constant())))
    pattern.match(expr)                  # True or False
    pattern.partition(expr, {"Composite": "conv_relu"})

Rewrites are classes with a pattern and a callback, applied until nothing changes::

    class FoldScale(DFPatternCallback):
        def __init__(self):
            super().__init__()
            self.x = wildcard()
            self.pattern = is_op("multiply")(self.x, is_constant())

        def callback(self, pre, post, node_map):
            return node_map[self.x][0]    # or return post to keep the match

    out = rewrite(FoldScale(), expr)

`pre` is the matched expression as the graph had it, `post` the same with its operands already
rewritten, `node_map[p]` the list of expressions pattern p matched (rewritten forms).
"""
from .. import _anvil

DFPattern = _anvil.DFPattern


def wildcard():
    """Any expression."""
    return _anvil.dfp_wildcard()


def is_op(op_name):
    """A call of the op `op_name`; call the result with argument patterns, e.g.
    is_op("add")(x, y). UserError when there is no such op."""
    return _anvil.dfp_is_op(op_name)


def is_constant():
    """A constant."""
    return _anvil.dfp_is_constant()


def is_var(name=""):
    """A variable (of that name when one is given)."""
    return _anvil.dfp_is_var(name)


def is_expr(expr):
    """An expression structurally equal to `expr`."""
    return _anvil.dfp_is_expr(expr)


def is_tuple(fields):
    """A tuple whose fields match `fields`, in order."""
    return _anvil.dfp_is_tuple(list(fields))


def is_tuple_get_item(tuple_value, index=None):
    """Field `index` (any field when None) of a tuple matching `tuple_value`."""
    return _anvil.dfp_is_tuple_get_item(tuple_value, -1 if index is None else int(index))


def dominates(parent, path, child):
    """What `child` matches, each of whose operands is what `parent` matches or what `path`
    matches, and so on back from those; path expressions other than constants and variables
    used by nothing else; one parent. (Where the path also matches inputs, e.g.
    `path | is_var()`, a branch may end at one: looser than TVM's.)"""
    return _anvil.dfp_dominates(parent, path, child)


def has_attr(attrs, pattern=None):
    """`pattern` (a wildcard when None) with these attribute values."""
    return (wildcard() if pattern is None else pattern).has_attr(attrs)


def has_type(ttype, pattern=None):
    """`pattern` (a wildcard when None) of this type (text: "Tensor[(1, 3), float32]")."""
    return (wildcard() if pattern is None else pattern).has_type(ttype)


def has_dtype(dtype, pattern=None):
    """`pattern` (a wildcard when None) of this element type."""
    return (wildcard() if pattern is None else pattern).has_dtype(str(dtype))


def has_shape(shape, pattern=None):
    """`pattern` (a wildcard when None) of this static shape."""
    return (wildcard() if pattern is None else pattern).has_shape([int(d) for d in shape])


class DFPatternCallback:
    """A rewrite: set self.pattern, define callback(pre, post, node_map). rewrite_once: apply it
    in one walk only instead of until nothing changes. (require_type is accepted for TVM's
    signature: the graph IR is always typed.)"""

    def __init__(self, require_type=False, rewrite_once=False):
        self.pattern = None
        self.require_type = require_type
        self.rewrite_once = rewrite_once

    def callback(self, pre, post, node_map):
        """The replacement of one match; return post to keep it."""
        raise NotImplementedError(f"{type(self).__name__} defines no callback")

    def rewrite(self, expr):
        """This callback applied to `expr` (see rewrite)."""
        return rewrite(self, expr)


def rewrite(callbacks, expr, mod=None):
    """The callbacks applied to `expr` (a function is rewritten in its body), in order, each to
    every disjoint match of its pattern, again while any changes something. `mod` is accepted
    for TVM's signature and unused."""
    if isinstance(callbacks, DFPatternCallback):
        callbacks = [callbacks]
    return _anvil.dfp_rewrite(list(callbacks), expr)


def partition(pattern, expr, attrs=None, check=None):
    """Each disjoint match of `pattern` in `expr` as a call of a new function with `attrs`
    (str -> str) and the values it reads as parameters; `check(root)` may refuse a match."""
    return pattern.partition(expr, attrs, check)
