"""The dataflow pattern language from Python (anvil.graph.dataflow_pattern), written as a TVM
user writes relay.dataflow_pattern code."""
import numpy as np
import pytest

import anvil
from anvil import graph
from anvil.graph.dataflow_pattern import (DFPatternCallback, dominates, has_dtype, is_constant,
                                          is_op, is_tuple, is_tuple_get_item, is_var, partition,
                                          rewrite, wildcard)


def conv_bias_relu(x, channels=4):
    w = np.full((channels, channels, 3, 3), 0.25, "float32")
    conv = graph.op.nn.conv2d(x, w, padding=[1, 1, 1, 1])
    return graph.op.nn.relu(graph.op.nn.bias_add(conv, np.ones(channels, "float32")))


def test_match_and_print():
    x = graph.var("x", shape=(1, 4, 8, 8))
    y = conv_bias_relu(x)
    conv = is_op("nn.conv2d")(wildcard(), is_constant())
    pattern = is_op("nn.relu")(conv.optional(lambda c: is_op("nn.bias_add")(c, is_constant())))
    assert pattern.match(y)
    assert not is_op("nn.relu")(is_op("nn.conv2d")(wildcard(), is_constant())).match(y)
    assert str(pattern) == "nn.relu((%0=nn.conv2d(*, const) | nn.bias_add(%0, const)))"
    assert is_op("nn.relu").has_attr({}).match(y)
    assert has_dtype("float32").match(y) and not has_dtype("int8").match(y)
    assert wildcard().has_shape((1, 4, 8, 8)).match(y)
    assert wildcard().has_type(y.checked_type).match(y)
    assert is_var("x").match(x) and not is_var("z").match(x)
    t = graph.tuple_([x, y])
    assert is_tuple_get_item(is_tuple([wildcard(), is_op("nn.relu")]), 1).match(t[1])
    pool = graph.op.nn.max_pool2d(x, pool_size=[2, 2])
    assert is_op("nn.max_pool2d").has_attr({"pool_size": [2, 2], "layout": "NCHW"}).match(pool)
    assert not is_op("nn.max_pool2d").has_attr({"pool_size": [3, 3]}).match(pool)


def test_rewrite_with_a_callback_class():
    class CollapseRelu(DFPatternCallback):
        def __init__(self):
            super().__init__()
            self.inner = is_op("nn.relu")(wildcard())
            self.pattern = is_op("nn.relu")(self.inner)

        def callback(self, pre, post, node_map):
            return node_map[self.inner][0]

    x = graph.var("x", shape=(4,))
    y = graph.op.nn.relu(graph.op.nn.relu(graph.op.nn.relu(x)))
    out = rewrite(CollapseRelu(), y)
    assert str(out) == str(graph.op.nn.relu(x))
    assert str(CollapseRelu().rewrite(y)) == str(out)


def test_rewrite_sees_pre_post_and_rewritten_operands():
    seen = []

    class ExpToRelu(DFPatternCallback):
        def __init__(self):
            super().__init__()
            self.a = wildcard()
            self.pattern = is_op("exp")(self.a)

        def callback(self, pre, post, node_map):
            seen.append(str(pre).count("exp("))
            return graph.op.nn.relu(node_map[self.a][0])

    x = graph.var("x", shape=(4,))
    out = rewrite([ExpToRelu()], graph.op.exp(graph.op.exp(x)))
    assert "exp" not in str(out) and str(out).count("nn.relu(") == 2
    assert seen == [1, 2]


def test_rewrite_errors():
    class NoPattern(DFPatternCallback):
        pass

    class ReturnsNone(DFPatternCallback):
        def __init__(self):
            super().__init__()
            self.pattern = is_op("exp")(wildcard())

        def callback(self, pre, post, node_map):
            return None

    x = graph.var("x", shape=(4,))
    with pytest.raises(anvil.UserError, match="has no pattern"):
        rewrite(NoPattern(), graph.op.exp(x))
    with pytest.raises(anvil.UserError, match="not an expression"):
        rewrite(ReturnsNone(), graph.op.exp(x))
    with pytest.raises(anvil.UserError, match="no op of that name"):
        is_op("nn.conv3x3")
    with pytest.raises(anvil.UserError, match="list value must hold integers"):
        wildcard().has_attr({"axes": [1.5]})
    with pytest.raises(anvil.UserError, match="must be a dataflow pattern"):
        is_op("add")(wildcard(), x)
    with pytest.raises(anvil.UserError, match=r"the right side of \|"):
        wildcard() | "relu"
    with pytest.raises(anvil.UserError, match="the names are str"):
        wildcard().has_attr({1: 2})
    with pytest.raises(anvil.UserError, match="must be a str"):
        partition(wildcard(), graph.op.exp(x), {"Composite": 1})


def test_node_map_key_error():
    class Looks(DFPatternCallback):
        def __init__(self):
            super().__init__()
            self.other = wildcard()
            self.pattern = is_op("exp")(wildcard())

        def callback(self, pre, post, node_map):
            assert self.pattern in node_map and self.other not in node_map
            with pytest.raises(KeyError):
                node_map[self.other]
            return post

    rewrite(Looks(), graph.op.exp(graph.var("x", shape=(4,))))


def test_partition_with_attrs_and_check():
    x = graph.var("x", shape=(1, 4, 8, 8))
    y = conv_bias_relu(conv_bias_relu(x))
    pattern = is_op("nn.relu")(is_op("nn.bias_add")(
        is_op("nn.conv2d")(wildcard(), is_constant()), is_constant()))
    out = partition(pattern, y, {"Composite": "dnnl.conv2d_bias_relu"})
    text = str(out)
    assert text.count('Composite="dnnl.conv2d_bias_relu"') == 2
    assert 'PartitionedFromPattern="nn.conv2d_nn.bias_add_nn.relu_"' in text
    # check refuses the inner one.
    roots = []

    def first_only(root):  # any truth value, as `if check(root):` reads it
        roots.append(root)
        return 1 if len(roots) == 1 else None

    out = pattern.partition(y, {"Composite": "c"}, check=first_only)
    assert len(roots) == 2 and str(out).count('Composite="c"') == 1
    # The partitioned function compiles and computes what the graph did.
    f = graph.function([x], partition(pattern, y, {"Composite": "c"}))
    ref = graph.function([x], y)
    xv = np.random.rand(1, 4, 8, 8).astype("float32")
    results = []
    for fn in (ref, f):
        lib = anvil.build(graph.IRModule.from_expr(fn), target="llvm")
        m = anvil.runtime.GraphModule(lib["default"](anvil.cpu()))
        m.run(x=xv)
        results.append(m.get_output(0).numpy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-5)


def test_dominates():
    x = graph.var("x", shape=(1, 4, 8, 8))
    conv = graph.op.nn.conv2d(x, np.ones((4, 4, 1, 1), "float32"))
    out = graph.op.nn.relu(graph.op.exp(conv) + graph.op.sigmoid(conv))
    path = is_op("exp") | is_op("sigmoid") | is_op("add")
    assert dominates(is_op("nn.conv2d"), path, is_op("nn.relu")).match(out)
    assert not dominates(is_op("nn.dense"), path, is_op("nn.relu")).match(out)
