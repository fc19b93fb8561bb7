// The TFLite importer (frontend/tflite/from_tflite.h): what graphs it makes, and the UserError
// each refusal raises, naming the file, the operator's index, builtin name and version.
#include <gtest/gtest.h>

#include <cctype>
#include <functional>

#include "errors/expect_message.h"
#include "frontend/tflite/from_tflite.h"
#include "graph/expr_functor.h"
#include "graph/printer.h"
#include "tflite_test_model.h"

namespace anvil::frontend {
namespace {

namespace tfl = tflite;
using testing::build_tflite;
using testing::bytes_of;
using testing::OptionField;
using testing::TestModel;
using testing::TestOperator;
using testing::TestTensor;

graph::IRModule import(const TestModel& m, const TfliteImportOptions& options = {}) {
    std::vector<uint8_t> bytes = build_tflite(m);
    return from_tflite_bytes(
        std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), options,
        "t.tflite");
}

// How often each op is called in main, and how many transposes take a non-constant operand.
struct Census {
    std::map<std::string, int> calls;
    int data_transposes = 0;
};

Census census(const graph::IRModule& m) {
    Census c;
    graph::post_order_visit(m.main()->body, [&](const graph::Expr& e) {
        const auto* call = e.as<graph::Call>();
        if (!call) return;
        ++c.calls[call->op->name];
        if (call->op->name == "transpose" && !call->args[0].is<graph::Constant>()) {
            ++c.data_transposes;
        }
    });
    return c;
}

std::vector<uint8_t> int8_bytes(size_t n, int8_t v) {
    return std::vector<uint8_t>(n, uint8_t(v));
}

OptionField byte_field(int field, int64_t v) {
    return {field, v, 1};
}

// x [1, 8, 8, 3] → CONV_2D 3x3 SAME (4 filters) + RELU6 → DEPTHWISE_CONV_2D 3x3 stride 2 →
// AVERAGE_POOL_2D 2x2 → MEAN over H, W → y [1, 4]. Float, or int8 with per-channel weights.
TestModel cnn(bool quantized) {
    TestModel m;
    auto act = [&](std::string name, std::vector<int32_t> shape) {
        TestTensor t{.name = name, .shape = shape};
        if (quantized) {
            t.type = tfl::tensor_type::kInt8;
            t.scales = {0.05f};
            t.zero_points = {-3};
        }
        return t;
    };
    auto weights = [&](std::string name, std::vector<int32_t> shape, int channels) {
        size_t n = 1;
        for (int32_t d : shape) n *= size_t(d);
        TestTensor t{.name = name, .shape = shape};
        if (quantized) {
            t.type = tfl::tensor_type::kInt8;
            t.data = int8_bytes(n, 3);
            t.scales.assign(size_t(channels), 0.01f);
            t.zero_points.assign(size_t(channels), 0);
            t.quantized_dimension = shape[0] == 1 ? 3 : 0;
        } else {
            t.data = bytes_of(std::vector<float>(n, 0.1f));
        }
        return t;
    };
    auto bias = [&](std::string name, int channels) {
        TestTensor t{.name = name, .shape = {channels}};
        if (quantized) {
            t.type = tfl::tensor_type::kInt32;
            t.data = bytes_of(std::vector<int32_t>(size_t(channels), 10));
        } else {
            t.data = bytes_of(std::vector<float>(size_t(channels), 0.5f));
        }
        return t;
    };
    m.tensors = {act("x", {1, 8, 8, 3}),
                 weights("w1", {4, 3, 3, 3}, 4),
                 bias("b1", 4),
                 act("c1", {1, 8, 8, 4}),
                 weights("w2", {1, 3, 3, 4}, 4),
                 bias("b2", 4),
                 act("c2", {1, 4, 4, 4}),
                 act("p", {1, 2, 2, 4}),
                 {.name = "axes",
                  .shape = {2},
                  .type = tfl::tensor_type::kInt32,
                  .data = bytes_of(std::vector<int32_t>{1, 2})},
                 {.name = "y", .shape = {1, 4}}};
    m.operators = {
        {.builtin = tfl::op::kConv2D,
         .inputs = {0, 1, 2},
         .outputs = {3},
         .options_type = tfl::options_type::kConv2D,
         .options = {byte_field(tfl::conv2d_options::kPadding, tfl::padding::kSame),
                     {tfl::conv2d_options::kStrideW, 1},
                     {tfl::conv2d_options::kStrideH, 1},
                     byte_field(tfl::conv2d_options::kActivation, tfl::activation::kRelu6)}},
        {.builtin = tfl::op::kDepthwiseConv2D,
         .inputs = {3, 4, 5},
         .outputs = {6},
         .options_type = tfl::options_type::kDepthwiseConv2D,
         .options = {byte_field(tfl::depthwise_options::kPadding, tfl::padding::kSame),
                     {tfl::depthwise_options::kStrideW, 2},
                     {tfl::depthwise_options::kStrideH, 2},
                     {tfl::depthwise_options::kDepthMultiplier, 1}}},
        {.builtin = tfl::op::kAveragePool2D,
         .inputs = {6},
         .outputs = {7},
         .options_type = tfl::options_type::kPool2D,
         .options = {byte_field(tfl::pool2d_options::kPadding, tfl::padding::kValid),
                     {tfl::pool2d_options::kStrideW, 2},
                     {tfl::pool2d_options::kStrideH, 2},
                     {tfl::pool2d_options::kFilterWidth, 2},
                     {tfl::pool2d_options::kFilterHeight, 2}}},
        {.builtin = tfl::op::kMean,
         .inputs = {7, 8},
         .outputs = {9},
         .options_type = tfl::options_type::kReducer},
    };
    if (quantized) {
        m.operators.pop_back();  // quantized MEAN is not converted; end at the pool
        m.tensors.resize(8);
        m.outputs = {7};
    } else {
        m.outputs = {9};
    }
    m.inputs = {0};
    return m;
}

TEST(TfliteImport, ConvolutionsComputeChannelsFirstWithTransposesOnlyAtTheEdges) {
    graph::IRModule m = import(cnn(false));
    Census c = census(m);
    EXPECT_EQ(c.calls["nn.conv2d"], 2);
    EXPECT_EQ(c.calls["nn.avg_pool2d"], 1);
    EXPECT_EQ(c.calls["mean"], 1);
    // Into channels-first at the input; the mean over H and W leaves [N, C], nothing to undo.
    EXPECT_EQ(c.data_transposes, 1) << graph::print(m);
    EXPECT_EQ(graph::type_str(m.main()->body->type), "Tensor[(1, 4), float32]");
}

TEST(TfliteImport, QuantizedConvolutionsRescalePerChannelInFixedPoint) {
    graph::IRModule m = import(cnn(true));
    Census c = census(m);
    EXPECT_EQ(c.calls["qnn.conv2d"], 2);
    EXPECT_EQ(c.calls["fixed_point_multiply"], 2);
    EXPECT_EQ(c.data_transposes, 2);  // in, and back to NHWC for the output
    std::string text = graph::print(m);
    EXPECT_NE(text.find("rounding=\"TFLITE\""), std::string::npos) << text;
    EXPECT_EQ(graph::type_str(m.main()->body->type), "Tensor[(1, 2, 2, 4), int8]");
}

TEST(TfliteImport, InputShapesAndDtypesAreChecked) {
    TestModel m = cnn(false);
    TfliteImportOptions batch;
    batch.input_shapes["x"] = {2, 8, 8, 3};
    EXPECT_EQ(graph::type_str(import(m, batch).main()->body->type), "Tensor[(2, 4), float32]");
    TfliteImportOptions wrong;
    wrong.input_shapes["x"] = {1, 8, 3};
    EXPECT_MESSAGE(import(m, wrong), "t.tflite",
                   "the shape [1, 8, 3] given for input 'x' does "
                   "not fit the model's [1, 8, 8, 3]");
    TfliteImportOptions unknown;
    unknown.input_shapes["z"] = {1};
    EXPECT_MESSAGE(import(m, unknown), "the model has no input named 'z'");
    TfliteImportOptions dtype;
    dtype.input_dtypes["x"] = DataType::int_(8);
    EXPECT_MESSAGE(import(m, dtype), "input 'x' is float32 in the model; the given dtype is int8");
}

TEST(TfliteImport, ListsEveryUnsupportedOperator) {
    TestModel m;
    m.tensors = {{.name = "x", .shape = {1, 4}},
                 {.name = "a", .shape = {1, 4}},
                 {.name = "y", .shape = {1, 4}}};
    m.operators = {
        {.builtin = 27 /* SVDF */, .inputs = {0}, .outputs = {1}},
        {.builtin = tfl::op::kCustom, .inputs = {1}, .outputs = {2}, .custom_code = "SignalFft"}};
    m.inputs = {0};
    m.outputs = {2};
    EXPECT_MESSAGE(import(m),
                   "t.tflite: the model uses 2 operator(s) the TFLite importer does "
                   "not support: operator 0 (SVDF), operator 1 (CUSTOM 'SignalFft')");
}

// One operator's refusal: `edit` breaks the CNN; the message names operator `index`.
struct BadOperator {
    const char* what;
    bool quantized;
    std::function<void(TestModel&)> edit;
    const char* message;
};

class TfliteOperatorErrors : public ::testing::TestWithParam<BadOperator> {};

TEST_P(TfliteOperatorErrors, NameTheOperator) {
    TestModel m = cnn(GetParam().quantized);
    GetParam().edit(m);
    EXPECT_MESSAGE(import(m), "t.tflite: node 'operator ", GetParam().message);
}

std::vector<OptionField>& conv_options(TestModel& m) {
    return m.operators[0].options;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, TfliteOperatorErrors,
    ::testing::Values(
        BadOperator{"arity", false,
                    [](TestModel& m) {
                        m.operators[2].inputs = {6, 6};
                    },
                    "(AVERAGE_POOL_2D, opset 1): takes 1 operand(s), the model gives it 2"},
        BadOperator{"options type", false,
                    [](TestModel& m) { m.operators[0].options_type = tfl::options_type::kPool2D; },
                    "(CONV_2D, opset 1): its builtin options are of union type 5, this "
                    "operator's are of type 1"},
        BadOperator{"padding", false, [](TestModel& m) { conv_options(m)[0].value = 7; },
                    "padding 7 is neither SAME (0) nor VALID (1)"},
        BadOperator{"stride", false, [](TestModel& m) { conv_options(m)[1].value = 0; },
                    "strides [1, 0] and dilations [1, 1] must be positive"},
        BadOperator{"activation", false,
                    [](TestModel& m) { conv_options(m)[3].value = tfl::activation::kSignBit; },
                    "the fused activation 5 is not supported"},
        BadOperator{"conv weights", false,
                    [](TestModel& m) {
                        m.tensors[1].shape = {4, 3, 3, 2};
                        m.tensors[1].data.resize(4 * 3 * 3 * 2 * 4);
                    },
                    "the weights [4, 3, 3, 2] are not [O, KH, KW, I] for 3 input channels"},
        BadOperator{"depthwise weights", false,
                    [](TestModel& m) {
                        m.tensors[4].shape = {2, 3, 3, 2};
                        m.tensors[4].data.resize(2 * 3 * 3 * 2 * 4);
                    },
                    "the weights [2, 3, 3, 2] are not [1, KH, KW, C * M] for 4 input channels"},
        BadOperator{"declared shape", false,
                    [](TestModel& m) {
                        m.tensors[3].shape = {1, 8, 8, 5};
                    },
                    "computes the shape [1, 8, 8, 4] for tensor 'c1', which the model declares "
                    "[1, 8, 8, 5]"},
        BadOperator{"declared type", false,
                    [](TestModel& m) { m.tensors[7].type = tfl::tensor_type::kInt32; },
                    "computes float32 for tensor 'p', which the model declares int32"},
        BadOperator{"unread tensor", false, [](TestModel& m) { m.operators[1].inputs[0] = 6; },
                    "tensor 6 ('c2') is read before any operator computes it"},
        BadOperator{"element type", false,
                    [](TestModel& m) { m.tensors[8].type = tfl::tensor_type::kString; },
                    "has element type string, which Anvil does not support"},
        BadOperator{"mixed types", true,
                    [](TestModel& m) { m.tensors[1].type = tfl::tensor_type::kUInt8; },
                    "a product of int8 data and uint8 weights is not supported"},
        BadOperator{"per-tensor input", true,
                    [](TestModel& m) {
                        m.tensors[0].scales = {0.1f, 0.2f, 0.3f};
                        m.tensors[0].zero_points = {0, 0, 0};
                        m.tensors[0].quantized_dimension = 3;
                    },
                    "the input ('x') must be quantized per tensor, it has 3 scales"},
        BadOperator{"scale", true, [](TestModel& m) { m.tensors[3].scales = {-1.0f}; },
                    "the result ('c1') has the scale -1; scales must be positive and finite"},
        BadOperator{"zero point", true, [](TestModel& m) { m.tensors[0].zero_points = {300}; },
                    "the input ('x') has the zero point 300, outside the range of int8"},
        BadOperator{"channel axis", true,
                    [](TestModel& m) { m.tensors[1].quantized_dimension = 2; },
                    "the weights ('w1') is quantized along axis 2 with 4 scales"},
        BadOperator{"bias type", true,
                    [](TestModel& m) {
                        m.tensors[2].type = tfl::tensor_type::kInt64;
                        m.tensors[2].data.resize(32);
                    },
                    "the bias ('b1') is int64; quantized products with int8 data take an int32 "
                    "bias"},
        BadOperator{"pool quantization", true, [](TestModel& m) { m.tensors[7].zero_points = {4}; },
                    "the input (scale 0.05, zero point -3) and the result (scale 0.05, zero "
                    "point 4) must be quantized alike"}),
    [](const auto& info) {
        std::string name = info.param.what;
        for (char& c : name) {
            if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
        }
        return name;
    });

}  // namespace
}  // namespace anvil::frontend
