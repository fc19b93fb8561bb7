"""ONNX sequences and optionals through the VM from Python: a list of arrays is a sequence, None
an empty optional, in both directions."""
import numpy as np

import anvil
from anvil import frontend


def sequence_model():
    """(s: sequence of float [?, 3], t: [k, 3], o: optional float [2]) ->
    (s + [t], their concatenation, their count, whether o has a value)."""
    from onnx import TensorProto, helper

    elem = helper.make_tensor_type_proto(TensorProto.FLOAT, [None, 3])
    s = helper.make_value_info("s", helper.make_sequence_type_proto(elem))
    o = helper.make_value_info("o", helper.make_optional_type_proto(
        helper.make_tensor_type_proto(TensorProto.FLOAT, [2])))
    nodes = [
        helper.make_node("SequenceInsert", ["s", "t"], ["joined"], name="insert"),
        helper.make_node("ConcatFromSequence", ["joined"], ["cat"], name="cat", axis=0),
        helper.make_node("SequenceLength", ["joined"], ["count"], name="count"),
        helper.make_node("OptionalHasElement", ["o"], ["has"], name="has"),
    ]
    graph = helper.make_graph(
        nodes, "sequences",
        [s, helper.make_tensor_value_info("t", TensorProto.FLOAT, ["k", 3]), o],
        [helper.make_value_info("joined", helper.make_sequence_type_proto(elem)),
         helper.make_tensor_value_info("cat", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("count", TensorProto.INT64, []),
         helper.make_tensor_value_info("has", TensorProto.BOOL, [])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_sequences_and_optionals_in_and_out(tmp_path):
    mod, _ = frontend.from_onnx(sequence_model())
    path = tmp_path / "sequences.so"
    anvil.build(mod, target="llvm").export_library(path)
    vm = anvil.runtime.VirtualMachine(anvil.runtime.load_module(path))
    assert vm.input_kinds == ["sequence", "tensor", "optional tensor"]
    assert len(vm.output_names) == 4
    rng = np.random.default_rng(0)
    a, b, t = (rng.uniform(-1, 1, (n, 3)).astype("float32") for n in (2, 1, 4))
    joined, cat, count, has = vm["main"]([a, b], t, None)
    assert isinstance(joined, list) and len(joined) == 3
    for got, want in zip(joined, (a, b, t)):
        np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(cat.numpy(), np.concatenate([a, b, t]))
    assert int(count.numpy()) == 3 and not bool(has.numpy())
    # An empty sequence in, an optional with a value.
    joined, cat, count, has = vm["main"]([], t, np.zeros(2, "float32"))
    assert len(joined) == 1 and int(count.numpy()) == 1 and bool(has.numpy())
    np.testing.assert_array_equal(cat.numpy(), t)
