"""Importing a TorchScript module whose graph description was edited first: for the converters'
checks of operands PyTorch itself would refuse (a strided 'same' convolution, a bad scale), which
no traced or scripted module can reach but a hand-written or corrupted description can."""
import json

from anvil import _anvil, _torchscript, frontend


def describe(scripted):
    """(description, tensors) of a TorchScript module, as from_pytorch reads it."""
    return _torchscript.read_module(scripted)


def nodes_of_kind(description, kind):
    """The description's nodes of `kind` (top-level block)."""
    return [n for n in description["graph"]["nodes"] if n["kind"] == kind]


def constant_of(description, value_id):
    """The prim::Constant node defining value `value_id`."""
    for n in description["graph"]["nodes"]:
        if n["kind"] == "prim::Constant" and n["outputs"][0]["id"] == value_id:
            return n
    raise KeyError(value_id)


def set_operand(description, node, index, const, type_):
    """Makes operand `index` of `node` a new constant `const` ({"int": 2}, ...) of `type_`."""
    new_id = 1 + max(v["id"] for n in description["graph"]["nodes"] for v in n["outputs"])
    new_id = max(new_id, 1 + max(v["id"] for v in description["graph"]["inputs"]))
    nodes = description["graph"]["nodes"]
    nodes.insert(nodes.index(node), {"kind": "prim::Constant", "inputs": [],
                                     "outputs": [{"id": new_id, "name": f"c{new_id}",
                                                  "type": type_}],
                                     "value": const})
    node["inputs"][index] = new_id


def import_description(description, tensors, inputs):
    """from_pytorch's import of an (edited) description, inputs given by example tensors."""
    infos = frontend._input_infos(
        [(f"input{i}", (tuple(t.shape), str(t.dtype).replace("torch.", "")))
         for i, t in enumerate(inputs)], "float32")
    return _anvil.from_torchscript(json.dumps(description), tensors, infos, "edited")
