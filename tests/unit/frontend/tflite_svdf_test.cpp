// The TFLite importer's SVDF (frontend/tflite/convert_svdf.cpp): the graph it makes and every
// refusal. Its numbers are tested against TFLite's reference kernels in
// python/tests/tflite/test_tflite_svdf.py.
#include <gtest/gtest.h>

#include <functional>

#include "errors/expect_message.h"
#include "frontend/tflite/from_tflite.h"
#include "graph/printer.h"
#include "tflite_test_model.h"

namespace anvil::frontend {
namespace {

namespace tfl = tflite;
using testing::bytes_of;
using testing::import_tflite;
using testing::OptionField;
using testing::TestModel;
using testing::TestOperator;
using testing::TestTensor;

// An int8 SVDF, or a float one: batch 2, 3 inputs, 4 filters of rank 2 (2 units), memory 3;
// `edit` breaks it. Tensors: 0 x, 1 weights_feature, 2 weights_time, 3 bias, 4 state, 5 y.
TestModel svdf(bool integer, const std::function<void(TestModel&, TestOperator&)>& edit) {
    TestModel m;
    auto add = [&](const std::string& name, std::vector<int32_t> shape, int8_t type,
                   std::vector<uint8_t> data, float scale, int64_t zero_point) {
        TestTensor t{.name = name, .shape = std::move(shape), .data = std::move(data)};
        if (integer) {
            t.type = type;
            t.scales = {scale};
            t.zero_points = {zero_point};
        }
        m.tensors.push_back(std::move(t));
    };
    auto bytes = [&](size_t n, int8_t type) {
        if (!integer) return bytes_of(std::vector<float>(n, 0.5f));
        if (type == tfl::tensor_type::kInt16) return bytes_of(std::vector<int16_t>(n, 3));
        if (type == tfl::tensor_type::kInt32) return bytes_of(std::vector<int32_t>(n, 7));
        return bytes_of(std::vector<int8_t>(n, 2));
    };
    add("x", {2, 3}, tfl::tensor_type::kInt8, {}, 0.05f, -3);
    add("wf", {4, 3}, tfl::tensor_type::kInt8, bytes(12, tfl::tensor_type::kInt8), 0.01f, 0);
    add("wt", {4, 3}, tfl::tensor_type::kInt16, bytes(12, tfl::tensor_type::kInt16), 1e-4f, 0);
    add("b", {2}, tfl::tensor_type::kInt32, bytes(2, tfl::tensor_type::kInt32), 1e-8f, 0);
    add("state", {2, 12}, tfl::tensor_type::kInt16, {}, 1e-4f, 0);
    m.tensors.back().is_variable = true;
    add("y", {2, 2}, tfl::tensor_type::kInt8, {}, 0.02f, -128);
    TestOperator op{.builtin = tfl::op::kSvdf,
                    .inputs = {0, 1, 2, 3, 4},
                    .outputs = {5},
                    .options_type = tfl::options_type::kSvdf,
                    .options = {OptionField{tfl::svdf_options::kRank, 2},
                                OptionField{tfl::svdf_options::kActivation, 1, 1}}};
    m.inputs = {0};
    m.outputs = {5};
    edit(m, op);
    m.operators = {op};
    return m;
}

const auto kUnchanged = [](TestModel&, TestOperator&) {};

TEST(TfliteSvdf, ImportsFloatAndInt8) {
    EXPECT_EQ(graph::type_str(import_tflite(svdf(false, kUnchanged)).main()->body->type),
              "Tensor[(2, 2), float32]");
    EXPECT_EQ(graph::type_str(import_tflite(svdf(true, kUnchanged)).main()->body->type),
              "Tensor[(2, 2), int8]");
}

TEST(TfliteSvdf, RefusesMalformedOperands) {
    auto with = [](bool integer, const std::function<void(TestModel&, TestOperator&)>& edit) {
        return [=] { import_tflite(svdf(integer, edit)); };
    };
    EXPECT_MESSAGE(with(false, [](TestModel& m, TestOperator&) { m.tensors[0].shape = {6}; })(),
                   "(SVDF, opset 1): the input must be [batch, n_input], got [6]");
    EXPECT_MESSAGE(with(false,
                        [](TestModel& m, TestOperator&) {
                            m.tensors[1].shape = {4, 2};
                            m.tensors[1].data.resize(32);
                        })(),
                   "weights_feature [4, 2] must be [n_filter, 3]");
    EXPECT_MESSAGE(with(false,
                        [](TestModel& m, TestOperator&) {
                            m.tensors[2].shape = {3, 4};
                        })(),
                   "weights_time [3, 4] must be [4, memory_size]");
    EXPECT_MESSAGE(with(false, [](TestModel&, TestOperator& op) { op.options[0].value = 3; })(),
                   "rank 3 must be positive and divide the 4 filters");
    EXPECT_MESSAGE(with(false,
                        [](TestModel& m, TestOperator&) {
                            m.tensors[4].shape = {2, 8};
                        })(),
                   "the state [2, 8] must be [2, 12] (batch, memory_size * n_filter)");
    EXPECT_MESSAGE(
        with(false, [](TestModel& m, TestOperator&) { m.tensors[4].is_variable = false; })(),
        "the state (operand 4) must be a variable tensor");
    EXPECT_MESSAGE(with(false,
                        [](TestModel& m, TestOperator&) {
                            m.tensors[3].shape = {4};
                            m.tensors[3].data.resize(16);
                        })(),
                   "the bias [4] must be [2]");
    EXPECT_MESSAGE(
        with(false,
             [](TestModel& m, TestOperator&) { m.tensors[2].type = tfl::tensor_type::kInt32; })(),
        "weights_time must be float32, int8 or int16, got int32");
    EXPECT_MESSAGE(with(false, [](TestModel&, TestOperator& op) { op.inputs[4] = -1; })(),
                   "operand 4 is required, the model omits it");
}

TEST(TfliteSvdf, RefusesTypesItHasNoKernelFor) {
    EXPECT_MESSAGE(import_tflite(svdf(true,
                                      [](TestModel& m, TestOperator&) {
                                          m.tensors[2].type = tfl::tensor_type::kInt8;
                                          m.tensors[2].data.resize(12);
                                      })),
                   "an int8 SVDF needs int8 weights_feature, int16 or int8 weights_time and a "
                   "state of that type, an int32 bias or none, and an int8 result; got int8, "
                   "int8, int16, int32, int8");
    EXPECT_MESSAGE(import_tflite(svdf(true,
                                      [](TestModel& m, TestOperator& op) {
                                          m.tensors[2].type = tfl::tensor_type::kInt8;
                                          m.tensors[2].data.resize(12);
                                          op.inputs[3] = -1;
                                      })),
                   "got int8, int8, int16, no bias, int8");
    EXPECT_MESSAGE(import_tflite(svdf(true,
                                      [](TestModel& m, TestOperator&) {
                                          m.tensors[0].type = tfl::tensor_type::kInt16;
                                      })),
                   "the input must be float32 or int8, got int16");
    EXPECT_MESSAGE(import_tflite(svdf(true,
                                      [](TestModel& m, TestOperator&) {
                                          m.tensors[2].type = tfl::tensor_type::kInt32;
                                          m.tensors[4].type = tfl::tensor_type::kInt32;
                                          m.tensors[2].data.resize(48);
                                      })),
                   "got int8, int32, int32, int32, int8");
}

}  // namespace
}  // namespace anvil::frontend
