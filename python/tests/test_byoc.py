"""BYOC from Python in TVM's names: the four-pass sequence, pattern tables, support checks."""
import pytest

import anvil
from anvil import transform
from anvil.graph.dataflow_pattern import is_op, wildcard

MODULE = """
def @main(%x: Tensor[(1, 4), float32]) {
  %0 = nn.relu(%x);
  %1 = exp(%0);
  %2 = sin(%0);
  %3 = add(%1, %2);
  tanh(%3)
}
"""


def parse(text):
    return anvil.graph.parse(text)


def test_four_pass_sequence_runs_as_written():
    mod = parse(MODULE)
    seq = transform.Sequential([
        transform.MergeComposite(transform.get_pattern_table("dnnl")),
        transform.AnnotateTarget("dnnl"),
        transform.MergeCompilerRegions(),
        transform.PartitionGraph(),
    ])
    text = str(seq(mod))
    # relu and exp merge (sin reads relu outside: the region returns both), add and tanh merge.
    assert text.count('Compiler="dnnl"') == 2, text
    assert 'global_symbol="tvmgen_default_dnnl_main_0"' in text
    assert 'global_symbol="tvmgen_default_dnnl_main_1"' in text
    assert "sin(" in text


def test_pattern_table_entries_are_name_pattern_check():
    table = transform.get_pattern_table("dnnl")
    names = [name for name, _, _ in table]
    # The int8 convolution twice: with a pad of the zero point folded into it, then without.
    assert names == ["dnnl.conv2d", "dnnl.dense", "dnnl.qnn.conv2d", "dnnl.qnn.conv2d",
                     "dnnl.qnn.dense"]
    assert all(callable(check) for _, _, check in table)


def test_python_pattern_table_and_support_check():
    mod = parse(MODULE)
    # relu's value is read by exp and sin: no region of relu and exp (its inside would be read
    # outside); add and tanh make one.
    table = [("acme.relu_exp", is_op("exp")(is_op("nn.relu")(wildcard()))),
             ("acme.add_tanh", is_op("tanh")(is_op("add")(wildcard(), wildcard())),
              lambda root: root is not None)]
    mod = transform.MergeComposite(table)(mod)
    assert 'Composite="acme.relu_exp"' not in str(mod)
    assert 'Composite="acme.add_tanh"' in str(mod)

    @transform.register_support_check("acme", "sin")
    def sin_ok(call):
        return True

    out = str(transform.AnnotateTarget(["acme"])(mod))
    assert out.count('Compiler="acme"') == 2, out  # the composite and sin


def test_errors_are_clear():
    mod = parse(MODULE)
    with pytest.raises(anvil.UserError, match="unknown external code generator 'nope'"):
        transform.AnnotateTarget("nope")(mod)
    with pytest.raises(anvil.UserError, match="there is no op of that name"):
        transform.MergeComposite([("dnnl.x", is_op("nn.no_such_op")(wildcard()))])
    with pytest.raises(anvil.UserError, match="built-in external code generator"):
        transform.register_support_check("dnnl", "sin", lambda call: True)
    with pytest.raises(anvil.UserError, match="pattern table entry"):
        transform.MergeComposite([("x",)])(mod)
