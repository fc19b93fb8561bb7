// The TFLite importer's UNIDIRECTIONAL_SEQUENCE_LSTM (frontend/tflite/convert_lstm.cpp and
// convert_integer_lstm.cpp): the graphs it makes and every refusal. Their numbers are tested in
// python/tests/tflite (test_tflite_ops.py for float LSTMs, test_tflite_integer_lstm.py).
#include <gtest/gtest.h>

#include <functional>

#include "errors/expect_message.h"
#include "frontend/tflite/from_tflite.h"
#include "graph/printer.h"
#include "tflite_test_model.h"

namespace anvil::frontend {
namespace {

namespace tfl = tflite;
using testing::byte_field;
using testing::bytes_of;
using testing::float_field;
using testing::import_tflite;
using testing::TestModel;
using testing::TestOperator;
using testing::TestTensor;

std::vector<uint8_t> int8_bytes(size_t n, int8_t v) {
    return std::vector<uint8_t>(n, uint8_t(v));
}

TestTensor f32(const std::string& name, std::vector<int32_t> shape) {
    return {.name = name, .shape = std::move(shape)};
}

// An LSTM of batch 1, 2 steps, 2 inputs, 2 cells, no peepholes or projection; `edit` breaks it.
TestModel lstm(const std::function<void(TestModel&, TestOperator&)>& edit) {
    TestModel m;
    auto w = [&](const std::string& name, std::vector<int32_t> shape) {
        size_t n = 1;
        for (int32_t d : shape) n *= size_t(d);
        m.tensors.push_back(
            {.name = name, .shape = shape, .data = bytes_of(std::vector<float>(n, 0.1f))});
        return int32_t(m.tensors.size() - 1);
    };
    m.tensors.push_back(f32("x", {1, 2, 2}));
    TestOperator op{
        .builtin = tfl::op::kUnidirectionalSequenceLstm,
        .options_type = tfl::options_type::kUnidirectionalSequenceLstm,
        .options = {byte_field(tfl::sequence_lstm_options::kActivation, tfl::activation::kTanh)}};
    op.inputs = {0};
    for (int k = 0; k < 4; ++k) op.inputs.push_back(w("w" + std::to_string(k), {2, 2}));
    for (int k = 0; k < 4; ++k) op.inputs.push_back(w("r" + std::to_string(k), {2, 2}));
    for (int k = 0; k < 3; ++k) op.inputs.push_back(-1);
    for (int k = 0; k < 4; ++k) op.inputs.push_back(w("b" + std::to_string(k), {2}));
    op.inputs.push_back(-1);
    op.inputs.push_back(-1);
    for (const char* s : {"h", "c"}) {
        m.tensors.push_back({.name = s, .shape = {1, 2}});
        m.tensors.back().is_variable = true;
        op.inputs.push_back(int32_t(m.tensors.size() - 1));
    }
    m.tensors.push_back(f32("y", {1, 2, 2}));
    op.outputs = {int32_t(m.tensors.size() - 1)};
    m.inputs = {0};
    m.outputs = op.outputs;
    edit(m, op);
    m.operators = {op};
    return m;
}

TEST(TfliteImport, ImportsAnLstm) {
    graph::IRModule m = import_tflite(lstm([](TestModel&, TestOperator&) {}));
    EXPECT_EQ(graph::type_str(m.main()->body->type), "Tensor[(1, 2, 2), float32]");
}

// The variants convert (their numbers are held to TFLite's definition in test_tflite_ops.py).
TEST(TfliteImport, ImportsLstmVariants) {
    graph::IRModule cifg = import_tflite(lstm(
        [](TestModel&, TestOperator& op) { op.inputs[1] = op.inputs[5] = op.inputs[12] = -1; }));
    EXPECT_EQ(graph::type_str(cifg.main()->body->type), "Tensor[(1, 2, 2), float32]");
    graph::IRModule normalized = import_tflite(lstm([&](TestModel&, TestOperator& op) {
        for (int k = 0; k < 4; ++k) op.inputs.push_back(op.inputs[size_t(12 + k)]);
        op.options.push_back(float_field(tfl::sequence_lstm_options::kCellClip, 3.0f));
    }));
    EXPECT_EQ(graph::type_str(normalized.main()->body->type), "Tensor[(1, 2, 2), float32]");
}

TEST(TfliteImport, RefusesMalformedLstms) {
    EXPECT_MESSAGE(import_tflite(lstm([](TestModel&, TestOperator& op) { op.inputs[1] = -1; })),
                   "(UNIDIRECTIONAL_SEQUENCE_LSTM, opset 1): the input gate's weights (operand 1) "
                   "and recurrent weights (operand 5) must be given both");
    EXPECT_MESSAGE(
        import_tflite(lstm([](TestModel&, TestOperator& op) { op.inputs[1] = op.inputs[5] = -1; })),
        "the input gate's peephole, bias and layer norm coefficients (operands 9, 12, "
        "20) must be absent");
    EXPECT_MESSAGE(
        import_tflite(lstm([](TestModel&, TestOperator& op) { op.inputs.push_back(12); })),
        "the layer norm coefficients (operands 20-23) must be given for every gate or for none");
    EXPECT_MESSAGE(import_tflite(lstm([](TestModel&, TestOperator& op) { op.inputs[17] = 12; })),
                   "a projection bias needs a projection");
    EXPECT_MESSAGE(
        import_tflite(lstm([](TestModel&, TestOperator& op) {
            op.options.push_back(float_field(tfl::sequence_lstm_options::kProjClip, -1.0f));
        })),
        "the cell and projection clips must be finite and not negative (0: none), got "
        "0 and -1");
    EXPECT_MESSAGE(import_tflite(lstm([](TestModel&, TestOperator& op) { op.inputs[9] = 12; })),
                   "the peepholes must be given for all of the input, forget and output gates");
    EXPECT_MESSAGE(import_tflite(lstm([](TestModel&, TestOperator& op) {
                       op.options[0].value = tfl::activation::kRelu6;
                   })),
                   "the fused activation 3 is not supported for an LSTM (TANH, RELU)");
    EXPECT_MESSAGE(import_tflite(lstm([](TestModel&, TestOperator& op) { op.inputs[12] = -1; })),
                   "the gates' biases (operands 12-15) are required");
    EXPECT_MESSAGE(import_tflite(lstm([](TestModel&, TestOperator& op) { op.inputs[2] = -1; })),
                   "operand 2 is required, the model omits it");
}

// lstm() with int8 activations, int8 weights, int32 biases and an int16 cell: the integer LSTM
// TFLite Micro computes; `edit` breaks it.
TestModel integer_lstm(const std::function<void(TestModel&, TestOperator&)>& edit) {
    return lstm([&](TestModel& m, TestOperator& op) {
        for (TestTensor& t : m.tensors) {
            t.scales = {0.01f};
            t.zero_points = {0};
            if (t.name == "c") {
                t.type = tfl::tensor_type::kInt16;
                t.scales = {1.0f / 2048};
            } else if (t.name[0] == 'w' || t.name[0] == 'r') {
                t.type = tfl::tensor_type::kInt8;
                t.data = int8_bytes(4, 3);
            } else if (t.name[0] == 'b') {
                t.type = tfl::tensor_type::kInt32;
                t.data = bytes_of(std::vector<int32_t>(2, 100));
                t.scales = {0.0001f};
            } else {
                t.type = tfl::tensor_type::kInt8;
            }
        }
        edit(m, op);
    });
}

TEST(TfliteImport, ImportsAnIntegerLstm) {
    graph::IRModule m = import_tflite(integer_lstm([](TestModel&, TestOperator&) {}));
    EXPECT_EQ(graph::type_str(m.main()->body->type), "Tensor[(1, 2, 2), int8]");
}

TEST(TfliteImport, RefusesIntegerLstmsTfliteMicroDoesNotCompute) {
    EXPECT_MESSAGE(
        import_tflite(integer_lstm([](TestModel&, TestOperator& op) { op.inputs[9] = 1; })),
        "(UNIDIRECTIONAL_SEQUENCE_LSTM, opset 1): an integer LSTM computes as TFLite Micro's "
        "kernel, which takes no peepholes, projection or layer normalization (operand 9 is given)");
    EXPECT_MESSAGE(import_tflite(integer_lstm([](TestModel&, TestOperator& op) {
                       op.inputs[1] = op.inputs[5] = op.inputs[12] = -1;
                   })),
                   "which needs the input gate (operands 1, 5, 12): coupled input and forget "
                   "gates are not supported");
    EXPECT_MESSAGE(import_tflite(integer_lstm([](TestModel& m, TestOperator&) {
                       m.tensors[2].type = tfl::tensor_type::kFloat32;
                       m.tensors[2].data = bytes_of(std::vector<float>(4, 0.1f));
                   })),
                   "operand 2 ('w1') must be int8 weights, got float32");
    EXPECT_MESSAGE(import_tflite(integer_lstm([](TestModel& m, TestOperator&) {
                       m.tensors[9].type = tfl::tensor_type::kInt64;
                       m.tensors[9].data = bytes_of(std::vector<int64_t>(2, 100));
                   })),
                   "the biases of an LSTM with int8 activations must be int32, got int64");
    EXPECT_MESSAGE(import_tflite(integer_lstm([](TestModel& m, TestOperator&) {
                       m.tensors.back().type = tfl::tensor_type::kInt16;
                   })),
                   "the output state and the result must have the input's type int8, got int8 "
                   "and int16");
    EXPECT_MESSAGE(import_tflite(integer_lstm([](TestModel& m, TestOperator&) {
                       m.tensors[14].type = tfl::tensor_type::kInt8;
                   })),
                   "the cell state of an integer LSTM must be int16, got int8");
    EXPECT_MESSAGE(import_tflite(integer_lstm(
                       [](TestModel& m, TestOperator&) { m.tensors[14].scales = {8.0f}; })),
                   "the cell state's scale 8 is outside [2^-31, 2^2], where TFLite Micro's tanh "
                   "overflows");
    EXPECT_MESSAGE(import_tflite(integer_lstm([](TestModel& m, TestOperator&) {
                       m.tensors[6].shape = {2, 3};
                       m.tensors[6].data = int8_bytes(6, 3);
                   })),
                   "operand 6 ('r1') is [2, 3], not [2, 2]");
    EXPECT_MESSAGE(import_tflite(integer_lstm([](TestModel& m, TestOperator&) {
                       m.tensors[0].shape = {1, 2, 3};
                   })),
                   "the input gate's weights [2, 2] are not [n_cell, n_input] for the input "
                   "[1, 2, 3]");
    // int16 activations whose input products could pass int32: 600 inputs of weight 127.
    EXPECT_MESSAGE(import_tflite(integer_lstm([](TestModel& m, TestOperator&) {
                       for (TestTensor& t : m.tensors) {
                           if (t.name == "x" || t.name == "h" || t.name == "y") {
                               t.type = tfl::tensor_type::kInt16;
                           } else if (t.name[0] == 'b') {
                               t.type = tfl::tensor_type::kInt64;
                               t.data = bytes_of(std::vector<int64_t>(2, 100));
                           } else if (t.name[0] == 'w') {
                               t.shape = {2, 600};
                               t.data = int8_bytes(1200, 127);
                           }
                       }
                       m.tensors[0].shape = {1, 2, 600};
                   })),
                   "the sums of operand 1 ('w0') can reach 2496921600, past int32's range; "
                   "weights whose rows sum (in magnitude) past 65535 are not supported");
    EXPECT_MESSAGE(
        import_tflite(integer_lstm([](TestModel&, TestOperator& op) {
            op.options.push_back(float_field(tfl::sequence_lstm_options::kCellClip, -2.0f));
        })),
        "the cell clip must be finite and not negative (0: none), got -2");
    EXPECT_MESSAGE(import_tflite(integer_lstm([](TestModel&, TestOperator& op) {
                       op.options[0].value = tfl::activation::kRelu;
                   })),
                   "the fused activation 1 is not supported for an integer LSTM (TANH)");
    EXPECT_MESSAGE(import_tflite(integer_lstm([](TestModel& m, TestOperator&) {
                       for (TestTensor& t : m.tensors) {
                           if (t.data.empty() && t.name != "c") t.type = tfl::tensor_type::kUInt8;
                       }
                   })),
                   "an integer LSTM takes int8 or int16 activations, got uint8");
}

}  // namespace
}  // namespace anvil::frontend
