// Small TFLite flatbuffers written in tests: tensors, operators and their options, with the
// flatbuffers builder and the field indices of tflite_schema.h. Fields may be left out or set to
// values a converter never writes, to test the importer's checks.
#pragma once

#include <flatbuffers/flatbuffers.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "frontend/tflite/from_tflite.h"
#include "frontend/tflite/tflite_schema.h"

namespace anvil::testing {

struct TestTensor {
    std::string name;
    std::vector<int32_t> shape;
    int8_t type = frontend::tflite::tensor_type::kFloat32;
    std::vector<uint8_t> data;  // a constant's bytes; empty for an activation
    std::vector<float> scales;  // quantization, when not empty
    std::vector<int64_t> zero_points;
    int32_t quantized_dimension = 0;
    std::vector<int32_t> shape_signature;
    bool is_variable = false;  // a state tensor (an LSTM's)
};

// Scalar fields of an options table: (field index, value, size in bytes).
struct OptionField {
    int field;
    int64_t value;
    int bytes = 4;  // 1 for byte/bool fields
    bool is_float = false;
    float float_value = 0;
};

inline OptionField byte_field(int field, int64_t v) {
    return {field, v, 1};
}

inline OptionField float_field(int field, float v) {
    return {.field = field, .value = 0, .is_float = true, .float_value = v};
}

struct TestOperator {
    int32_t builtin;
    std::vector<int32_t> inputs;
    std::vector<int32_t> outputs;
    uint8_t options_type = 0;
    std::vector<OptionField> options;
    std::vector<int32_t> int_vector_option;  // written at int_vector_field when not empty
    int int_vector_field = 0;
    std::string custom_code;              // for CUSTOM (32)
    std::vector<uint8_t> custom_options;  // a CUSTOM operator's options, when not empty
    uint8_t custom_options_format = 0;
    // The options at an offset of the file instead (models over 2 GiB); 0: none.
    uint64_t large_custom_options_offset = 0, large_custom_options_size = 0;
    int32_t version = 1;
};

struct TestModel {
    std::vector<TestTensor> tensors;
    std::vector<TestOperator> operators;
    std::vector<int32_t> inputs;
    std::vector<int32_t> outputs;
    uint32_t version = 3;
};

template <typename T>
std::vector<uint8_t> bytes_of(const std::vector<T>& values) {
    std::vector<uint8_t> out(values.size() * sizeof(T));
    if (!out.empty()) std::memcpy(out.data(), values.data(), out.size());
    return out;
}

inline std::vector<uint8_t> build_tflite(const TestModel& m) {
    namespace tfl = frontend::tflite;
    using flatbuffers::Offset;
    using flatbuffers::uoffset_t;
    auto vt = [](int field) { return flatbuffers::voffset_t(4 + 2 * field); };
    flatbuffers::FlatBufferBuilder b;

    // Buffers: 0 is the empty sentinel, then one per constant tensor.
    std::vector<Offset<void>> buffers;
    std::vector<uint32_t> buffer_of(m.tensors.size(), 0);
    {
        uoffset_t start = b.StartTable();
        buffers.push_back(Offset<void>(b.EndTable(start)));
    }
    for (size_t i = 0; i < m.tensors.size(); ++i) {
        if (m.tensors[i].data.empty()) continue;
        b.ForceVectorAlignment(m.tensors[i].data.size(), 1, 16);
        auto data = b.CreateVector(m.tensors[i].data);
        uoffset_t start = b.StartTable();
        b.AddOffset(vt(tfl::buffer_field::kData), data);
        buffer_of[i] = uint32_t(buffers.size());
        buffers.push_back(Offset<void>(b.EndTable(start)));
    }

    std::vector<Offset<void>> tensors;
    for (size_t i = 0; i < m.tensors.size(); ++i) {
        const TestTensor& t = m.tensors[i];
        auto shape = b.CreateVector(t.shape);
        auto name = b.CreateString(t.name);
        Offset<void> quant;
        if (!t.scales.empty()) {
            auto scales = b.CreateVector(t.scales);
            auto zps = b.CreateVector(t.zero_points);
            uoffset_t start = b.StartTable();
            b.AddOffset(vt(tfl::quantization_field::kScale), scales);
            b.AddOffset(vt(tfl::quantization_field::kZeroPoint), zps);
            b.AddElement<int32_t>(vt(tfl::quantization_field::kQuantizedDimension),
                                  t.quantized_dimension, 0);
            quant = Offset<void>(b.EndTable(start));
        }
        flatbuffers::Offset<flatbuffers::Vector<int32_t>> signature;
        if (!t.shape_signature.empty()) signature = b.CreateVector(t.shape_signature);
        uoffset_t start = b.StartTable();
        b.AddOffset(vt(tfl::tensor_field::kShape), shape);
        b.AddElement<int8_t>(vt(tfl::tensor_field::kType), t.type, 0);
        b.AddElement<uint32_t>(vt(tfl::tensor_field::kBuffer), buffer_of[i], 0);
        b.AddOffset(vt(tfl::tensor_field::kName), name);
        if (!quant.IsNull()) b.AddOffset(vt(tfl::tensor_field::kQuantization), quant);
        if (!signature.IsNull()) b.AddOffset(vt(tfl::tensor_field::kShapeSignature), signature);
        if (t.is_variable) b.AddElement<uint8_t>(vt(tfl::tensor_field::kIsVariable), 1);
        tensors.push_back(Offset<void>(b.EndTable(start)));
    }

    // Operator codes: one per operator, in order.
    std::vector<Offset<void>> codes;
    for (const TestOperator& op : m.operators) {
        Offset<flatbuffers::String> custom;
        if (!op.custom_code.empty()) custom = b.CreateString(op.custom_code);
        uoffset_t start = b.StartTable();
        b.AddElement<int8_t>(vt(tfl::operator_code_field::kDeprecatedBuiltinCode),
                             int8_t(std::min(op.builtin, 127)), 0);
        if (!custom.IsNull()) b.AddOffset(vt(tfl::operator_code_field::kCustomCode), custom);
        b.AddElement<int32_t>(vt(tfl::operator_code_field::kVersion), op.version, 1);
        b.AddElement<int32_t>(vt(tfl::operator_code_field::kBuiltinCode), op.builtin, 0);
        codes.push_back(Offset<void>(b.EndTable(start)));
    }

    std::vector<Offset<void>> operators;
    for (size_t k = 0; k < m.operators.size(); ++k) {
        const TestOperator& op = m.operators[k];
        auto inputs = b.CreateVector(op.inputs);
        auto outputs = b.CreateVector(op.outputs);
        flatbuffers::Offset<flatbuffers::Vector<uint8_t>> custom_options;
        if (!op.custom_options.empty()) custom_options = b.CreateVector(op.custom_options);
        Offset<void> options;
        if (op.options_type != 0) {
            flatbuffers::Offset<flatbuffers::Vector<int32_t>> ints;
            if (!op.int_vector_option.empty()) ints = b.CreateVector(op.int_vector_option);
            uoffset_t start = b.StartTable();
            for (const OptionField& f : op.options) {
                if (f.is_float) {
                    b.AddElement<float>(vt(f.field), f.float_value);
                } else if (f.bytes == 1) {
                    b.AddElement<int8_t>(vt(f.field), int8_t(f.value));
                } else {
                    b.AddElement<int32_t>(vt(f.field), int32_t(f.value));
                }
            }
            if (!ints.IsNull()) b.AddOffset(vt(op.int_vector_field), ints);
            options = Offset<void>(b.EndTable(start));
        }
        uoffset_t start = b.StartTable();
        b.AddElement<uint32_t>(vt(tfl::operator_field::kOpcodeIndex), uint32_t(k), 0);
        b.AddOffset(vt(tfl::operator_field::kInputs), inputs);
        b.AddOffset(vt(tfl::operator_field::kOutputs), outputs);
        if (op.options_type != 0) {
            b.AddElement<uint8_t>(vt(tfl::operator_field::kBuiltinOptionsType), op.options_type, 0);
            b.AddOffset(vt(tfl::operator_field::kBuiltinOptions), options);
        }
        if (!custom_options.IsNull()) {
            b.AddOffset(vt(tfl::operator_field::kCustomOptions), custom_options);
        }
        if (op.large_custom_options_offset != 0) {
            b.AddElement<uint64_t>(vt(tfl::operator_field::kLargeCustomOptionsOffset),
                                   op.large_custom_options_offset, 0);
            b.AddElement<uint64_t>(vt(tfl::operator_field::kLargeCustomOptionsSize),
                                   op.large_custom_options_size, 0);
        }
        if (op.custom_options_format != 0) {
            b.AddElement<uint8_t>(vt(tfl::operator_field::kCustomOptionsFormat),
                                  op.custom_options_format, 0);
        }
        operators.push_back(Offset<void>(b.EndTable(start)));
    }

    auto tensor_vec = b.CreateVector(tensors);
    auto in_vec = b.CreateVector(m.inputs);
    auto out_vec = b.CreateVector(m.outputs);
    auto op_vec = b.CreateVector(operators);
    uoffset_t sg_start = b.StartTable();
    b.AddOffset(vt(tfl::subgraph_field::kTensors), tensor_vec);
    b.AddOffset(vt(tfl::subgraph_field::kInputs), in_vec);
    b.AddOffset(vt(tfl::subgraph_field::kOutputs), out_vec);
    b.AddOffset(vt(tfl::subgraph_field::kOperators), op_vec);
    Offset<void> subgraph(b.EndTable(sg_start));

    auto code_vec = b.CreateVector(codes);
    auto sg_vec = b.CreateVector(std::vector<Offset<void>>{subgraph});
    auto buf_vec = b.CreateVector(buffers);
    uoffset_t root = b.StartTable();
    b.AddElement<uint32_t>(vt(tfl::model_field::kVersion), m.version, 0);
    b.AddOffset(vt(tfl::model_field::kOperatorCodes), code_vec);
    b.AddOffset(vt(tfl::model_field::kSubgraphs), sg_vec);
    b.AddOffset(vt(tfl::model_field::kBuffers), buf_vec);
    b.Finish(Offset<void>(b.EndTable(root)), "TFL3");
    return std::vector<uint8_t>(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
}

// `m` written and imported as the file "t.tflite".
inline graph::IRModule import_tflite(const TestModel& m,
                                     const frontend::TfliteImportOptions& options = {}) {
    std::vector<uint8_t> bytes = build_tflite(m);
    return frontend::from_tflite_bytes(
        std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), options,
        "t.tflite");
}

}  // namespace anvil::testing
