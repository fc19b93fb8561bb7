"""Reads what the TFLite importer's tests need to know of a .tflite file (its tensors'
names, shapes and quantization), and writes the adjusted copy the reference runtime takes
(litert.py), with the Table reader of python3-flatbuffers and the schema's field numbers."""
import struct

import numpy as np
from flatbuffers import encode, number_types as N
from flatbuffers.table import Table


def _root(buf):
    return Table(buf, encode.Get(N.UOffsetTFlags.packer_type, buf, 0))


def _field(table, index):
    return table.Offset(4 + 2 * index)


def _tables(table, index):
    o = _field(table, index)
    if not o:
        return []
    start = table.Vector(o)
    return [Table(table.Bytes, table.Indirect(start + 4 * k)) for k in range(table.VectorLen(o))]


def _int32_vector_positions(table, index):
    o = _field(table, index)
    if not o:
        return []
    start = table.Vector(o)
    return [start + 4 * k for k in range(table.VectorLen(o))]


def tensors(model):
    """The main subgraph's tensors: dicts of name, shape, type (TensorType's value), scale and
    zero_point (NumPy arrays, empty when not quantized) and data (a constant's bytes, else
    empty)."""
    buf = bytearray(model)
    root = _root(buf)
    buffers = _tables(root, 4)
    subgraph = _tables(root, 2)[0]
    out = []
    for t in _tables(subgraph, 0):
        o = _field(t, 3)
        name = t.String(t.Pos + o).decode() if o else ""
        o = _field(t, 1)
        ttype = t.Get(N.Int8Flags, t.Pos + o) if o else 0
        scale, zero_point = np.zeros(0, np.float32), np.zeros(0, np.int64)
        o = _field(t, 4)
        if o:
            q = Table(buf, t.Indirect(t.Pos + o))
            if _field(q, 2):
                scale = q.GetVectorAsNumpy(N.Float32Flags, _field(q, 2))
            if _field(q, 3):
                zero_point = q.GetVectorAsNumpy(N.Int64Flags, _field(q, 3))
        shape = [struct.unpack_from("<i", buf, p)[0] for p in _int32_vector_positions(t, 0)]
        o = _field(t, 2)
        data = b""
        if o:
            buffer = buffers[t.Get(N.Uint32Flags, t.Pos + o)]
            if _field(buffer, 0):
                data = bytes(buffer.GetVectorAsNumpy(N.Uint8Flags, _field(buffer, 0)))
        out.append({"name": name, "shape": shape, "type": ttype, "scale": scale,
                    "zero_point": zero_point, "data": data})
    return out


def inputs_and_outputs(model):
    """The main subgraph's input and output tensors (as tensors() describes them)."""
    buf = bytearray(model)
    subgraph = _tables(_root(buf), 2)[0]
    all_tensors = tensors(model)
    ins = [struct.unpack_from("<i", buf, p)[0] for p in _int32_vector_positions(subgraph, 1)]
    outs = [struct.unpack_from("<i", buf, p)[0] for p in _int32_vector_positions(subgraph, 2)]
    return [all_tensors[i] for i in ins], [all_tensors[i] for i in outs]


def reference_model(model):
    """`model` (bytes) as the reference runtime takes it: a dimension its shape signature leaves
    unknown (-1) fixed to the shape's size, and a rank-1 tensor's per-channel quantization axis
    reading 0 (person_detect's biases say 3, which the runtime refuses)."""
    buf = bytearray(model)
    for subgraph in _tables(_root(buf), 2):
        for tensor in _tables(subgraph, 0):
            shape = [struct.unpack_from("<i", buf, p)[0]
                     for p in _int32_vector_positions(tensor, 0)]
            for d, p in enumerate(_int32_vector_positions(tensor, 7)):
                if struct.unpack_from("<i", buf, p)[0] < 0:
                    struct.pack_into("<i", buf, p, shape[d])
            q = _field(tensor, 4)
            if q and len(shape) == 1:
                quant = Table(buf, tensor.Indirect(tensor.Pos + q))
                axis = _field(quant, 6)
                if axis:
                    struct.pack_into("<i", buf, quant.Pos + axis, 0)
    return bytes(buf)


