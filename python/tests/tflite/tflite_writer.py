"""Writes small TFLite models for the TFLite importer's tests, with the flatbuffers builder of
python3-flatbuffers: tensors (float, or quantized per tensor or per channel), operators with
their builtin options, and the schema's field numbers (as src/frontend/tflite/tflite_schema.h
declares them, from TFLite's schema.fbs).

    w = ModelWriter()
    x = w.tensor("x", [1, 8, 8, 3], "int8", scale=0.05, zero_point=-3)
    ...
    w.op(CONV_2D, [x, k, b], [y], Conv2DOptions, [(0, "b", SAME), (1, "i", 1), ...])
    model = w.build(inputs=[x], outputs=[y])
"""
import flatbuffers
import flatbuffers.flexbuffers
import numpy as np

# enum TensorType
TENSOR_TYPES = {"float32": 0, "float16": 1, "int32": 2, "uint8": 3, "int64": 4, "bool": 6,
                "int16": 7, "int8": 9, "uint64": 12, "uint32": 15}

# enum BuiltinOperator (the ones the tests write)
ADD, AVERAGE_POOL_2D, CONCATENATION, CONV_2D, DEPTHWISE_CONV_2D = 0, 1, 2, 3, 4
DEQUANTIZE, FULLY_CONNECTED, LOGISTIC, MAX_POOL_2D, MUL, RELU = 6, 9, 14, 17, 18, 19
RELU_N1_TO_1, RELU6, RESHAPE, SOFTMAX, TANH, PAD, TRANSPOSE, MEAN = 20, 21, 22, 25, 28, 34, 39, 40
SUB, DIV, SQUEEZE, MAXIMUM, MINIMUM, PADV2, EXPAND_DIMS, SUM = 41, 42, 43, 55, 57, 60, 70, 74
QUANTIZE = 114
CUSTOM = 32

# union BuiltinOptions: the type of each options table
Conv2DOptions, DepthwiseConv2DOptions, Pool2DOptions, FullyConnectedOptions = 1, 2, 5, 8
SoftmaxOptions, ConcatenationOptions, AddOptions, ReshapeOptions, MulOptions = 9, 10, 11, 17, 21
PadOptions, TransposeOptions, ReducerOptions, SubOptions, DivOptions = 22, 26, 27, 28, 29
SqueezeOptions, MaximumMinimumOptions, PadV2Options, ExpandDimsOptions = 30, 39, 43, 52

# enum Padding, enum ActivationFunctionType
SAME, VALID = 0, 1
NONE, RELU_ACT, RELU_N1_TO_1_ACT, RELU6_ACT, TANH_ACT = 0, 1, 2, 3, 4


def _int_vector(b, values, dtype=np.int32):
    return b.CreateNumpyVector(np.asarray(values, dtype=dtype))


class ModelWriter:
    def __init__(self):
        self._tensors = []  # (name, shape, dtype, data bytes or None, quantization or None)
        self._ops = []  # (builtin, inputs, outputs, options_type, options, version)

    def tensor(self, name, shape, dtype="float32", data=None, scale=None, zero_point=None,
               axis=0, variable=False):
        """A tensor; `data` (array-like) makes it a constant. `scale` / `zero_point` (a number or
        one per index along `axis`) quantize it. `variable`: a state tensor (an LSTM's)."""
        raw = None
        if data is not None:
            raw = np.asarray(data, dtype=dtype).reshape(shape).tobytes()
        quant = None
        if scale is not None:
            scales = np.atleast_1d(np.asarray(scale, np.float32))
            zps = np.atleast_1d(np.asarray(0 if zero_point is None else zero_point, np.int64))
            if zps.size == 1 and scales.size > 1:
                zps = np.repeat(zps, scales.size)
            quant = (scales, zps, axis)
        self._tensors.append((name, list(shape), dtype, raw, quant, variable))
        return len(self._tensors) - 1

    def op(self, builtin, inputs, outputs, options_type=0, options=(), version=1):
        """An operator. `options`: (field number, kind, value) with kind "b" (byte), "B" (bool),
        "i" (int32), "f" (float32) or "iv" (int32 vector)."""
        self._ops.append((builtin, list(inputs), list(outputs), options_type, list(options),
                          version))

    def custom_op(self, name, inputs, outputs, options=None, raw_options=None):
        """A CUSTOM operator named `name`; `options` (a dict) are written as a FlexBuffer map, or
        `raw_options` (bytes) as they are."""
        if raw_options is None and options is not None:
            raw_options = bytes(flatbuffers.flexbuffers.Dumps(options))
        self._ops.append((CUSTOM, list(inputs), list(outputs), 0, (name, raw_options), 1))

    def build(self, inputs, outputs):
        b = flatbuffers.Builder(1024)
        b.ForceDefaults(True)  # every field given is written, also one equal to its default
        # Buffers: 0 is empty; then one per constant.
        buffer_tables, buffer_of = [], {}
        b.StartObject(3)
        buffer_tables.append(b.EndObject())
        for i, (_, _, _, raw, _, _) in enumerate(self._tensors):
            if raw is None:
                continue
            b.StartVector(1, len(raw), 16)  # TFLite aligns buffer data to 16 bytes
            b.head = b.head - len(raw)
            b.Bytes[b.head:b.head + len(raw)] = raw
            data = b.EndVector()
            b.StartObject(3)
            b.PrependUOffsetTRelativeSlot(0, data, 0)
            buffer_of[i] = len(buffer_tables)
            buffer_tables.append(b.EndObject())

        tensor_tables = []
        for i, (name, shape, dtype, _, quant, variable) in enumerate(self._tensors):
            shape_vec = _int_vector(b, shape)
            name_str = b.CreateString(name)
            q_table = None
            if quant is not None:
                scales, zps, axis = quant
                s_vec = b.CreateNumpyVector(scales)
                z_vec = b.CreateNumpyVector(zps)
                b.StartObject(7)
                b.PrependUOffsetTRelativeSlot(2, s_vec, 0)
                b.PrependUOffsetTRelativeSlot(3, z_vec, 0)
                b.PrependInt32Slot(6, axis, 0)
                q_table = b.EndObject()
            b.StartObject(9)
            b.PrependUOffsetTRelativeSlot(0, shape_vec, 0)
            b.PrependInt8Slot(1, TENSOR_TYPES[dtype], 0)
            b.PrependUint32Slot(2, buffer_of.get(i, 0), 0)
            b.PrependUOffsetTRelativeSlot(3, name_str, 0)
            if q_table is not None:
                b.PrependUOffsetTRelativeSlot(4, q_table, 0)
            if variable:
                b.PrependBoolSlot(5, True, False)
            tensor_tables.append(b.EndObject())

        code_tables, op_tables = [], []
        for k, (builtin, ins, outs, options_type, options, version) in enumerate(self._ops):
            custom_name = b.CreateString(options[0]) if builtin == CUSTOM else None
            b.StartObject(4)
            if custom_name is not None:
                b.PrependUOffsetTRelativeSlot(1, custom_name, 0)
            b.PrependInt8Slot(0, min(builtin, 127), 0)
            b.PrependInt32Slot(2, version, 1)
            b.PrependInt32Slot(3, builtin, 0)
            code_tables.append(b.EndObject())
        for k, (builtin, ins, outs, options_type, options, version) in enumerate(self._ops):
            in_vec, out_vec = _int_vector(b, ins), _int_vector(b, outs)
            custom_vec = None
            if builtin == CUSTOM and options[1] is not None:
                custom_vec = b.CreateByteVector(options[1])
            opt_table = None
            if options_type:
                vectors = {f: _int_vector(b, v) for f, kind, v in options if kind == "iv"}
                b.StartObject(max([f for f, _, _ in options], default=0) + 1)
                for field, kind, value in options:
                    if kind == "b":
                        b.PrependInt8Slot(field, value, 0)
                    elif kind == "B":
                        b.PrependBoolSlot(field, value, False)
                    elif kind == "i":
                        b.PrependInt32Slot(field, value, 0)
                    elif kind == "f":
                        b.PrependFloat32Slot(field, value, 0.0)
                    else:
                        b.PrependUOffsetTRelativeSlot(field, vectors[field], 0)
                opt_table = b.EndObject()
            b.StartObject(13)
            b.PrependUint32Slot(0, k, 0)
            b.PrependUOffsetTRelativeSlot(1, in_vec, 0)
            b.PrependUOffsetTRelativeSlot(2, out_vec, 0)
            if opt_table is not None:
                b.PrependUint8Slot(3, options_type, 0)
                b.PrependUOffsetTRelativeSlot(4, opt_table, 0)
            if custom_vec is not None:
                b.PrependUOffsetTRelativeSlot(5, custom_vec, 0)
            op_tables.append(b.EndObject())

        def table_vector(tables):
            b.StartVector(4, len(tables), 4)
            for t in reversed(tables):
                b.PrependUOffsetTRelative(t)
            return b.EndVector()

        tensors_vec = table_vector(tensor_tables)
        inputs_vec, outputs_vec = _int_vector(b, inputs), _int_vector(b, outputs)
        ops_vec = table_vector(op_tables)
        b.StartObject(5)
        b.PrependUOffsetTRelativeSlot(0, tensors_vec, 0)
        b.PrependUOffsetTRelativeSlot(1, inputs_vec, 0)
        b.PrependUOffsetTRelativeSlot(2, outputs_vec, 0)
        b.PrependUOffsetTRelativeSlot(3, ops_vec, 0)
        subgraph = b.EndObject()

        codes_vec = table_vector(code_tables)
        subgraphs_vec = table_vector([subgraph])
        buffers_vec = table_vector(buffer_tables)
        b.StartObject(8)
        b.PrependUint32Slot(0, 3, 0)
        b.PrependUOffsetTRelativeSlot(1, codes_vec, 0)
        b.PrependUOffsetTRelativeSlot(2, subgraphs_vec, 0)
        b.PrependUOffsetTRelativeSlot(4, buffers_vec, 0)
        b.Finish(b.EndObject(), file_identifier=b"TFL3")
        return bytes(b.Output())
