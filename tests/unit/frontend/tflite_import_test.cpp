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
using testing::byte_field;
using testing::bytes_of;
using testing::float_field;
using testing::import_tflite;
using testing::OptionField;
using testing::TestModel;
using testing::TestOperator;
using testing::TestTensor;

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
        m.operators.pop_back();  // end at the pool: the quantized output stays 4-D
        m.tensors.resize(8);
        m.outputs = {7};
    } else {
        m.outputs = {9};
    }
    m.inputs = {0};
    return m;
}

TEST(TfliteImport, ConvolutionsComputeChannelsFirstWithTransposesOnlyAtTheEdges) {
    graph::IRModule m = import_tflite(cnn(false));
    Census c = census(m);
    EXPECT_EQ(c.calls["nn.conv2d"], 2);
    EXPECT_EQ(c.calls["nn.avg_pool2d"], 1);
    EXPECT_EQ(c.calls["mean"], 1);
    // Into channels-first at the input; the mean over H and W leaves [N, C], nothing to undo.
    EXPECT_EQ(c.data_transposes, 1) << graph::print(m);
    EXPECT_EQ(graph::type_str(m.main()->body->type), "Tensor[(1, 4), float32]");
}

TEST(TfliteImport, QuantizedConvolutionsRescalePerChannelInFixedPoint) {
    graph::IRModule m = import_tflite(cnn(true));
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
    EXPECT_EQ(graph::type_str(import_tflite(m, batch).main()->body->type),
              "Tensor[(2, 4), float32]");
    TfliteImportOptions wrong;
    wrong.input_shapes["x"] = {1, 8, 3};
    EXPECT_MESSAGE(import_tflite(m, wrong), "t.tflite",
                   "the shape [1, 8, 3] given for input 'x' does "
                   "not fit the model's [1, 8, 8, 3]");
    TfliteImportOptions unknown;
    unknown.input_shapes["z"] = {1};
    EXPECT_MESSAGE(import_tflite(m, unknown), "the model has no input named 'z'");
    TfliteImportOptions dtype;
    dtype.input_dtypes["x"] = DataType::int_(8);
    EXPECT_MESSAGE(import_tflite(m, dtype),
                   "input 'x' is float32 in the model; the given dtype is int8");
}

TEST(TfliteImport, ListsEveryUnsupportedOperator) {
    TestModel m;
    m.tensors = {{.name = "x", .shape = {1, 4}},
                 {.name = "a", .shape = {1, 4}},
                 {.name = "y", .shape = {1, 4}}};
    m.operators = {
        {.builtin = 26 /* SPACE_TO_DEPTH */, .inputs = {0}, .outputs = {1}},
        {.builtin = tfl::op::kCustom, .inputs = {1}, .outputs = {2}, .custom_code = "SignalFft"}};
    m.inputs = {0};
    m.outputs = {2};
    EXPECT_MESSAGE(import_tflite(m),
                   "t.tflite: the model uses 2 operator(s) the TFLite importer does "
                   "not support: operator 0 (SPACE_TO_DEPTH), operator 1 (CUSTOM 'SignalFft')");
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
    EXPECT_MESSAGE(import_tflite(m), "t.tflite: node 'operator ", GetParam().message);
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

namespace anvil::frontend {
namespace {

// One operator on graph inputs and constants: `inputs` become the model's inputs (and
// constants where `data` is set); `outputs` its results.
TestModel single_op(int32_t builtin, std::vector<TestTensor> inputs,
                    std::vector<TestTensor> outputs, uint8_t options_type = 0,
                    std::vector<OptionField> options = {}) {
    TestModel m;
    TestOperator op{.builtin = builtin, .options_type = options_type, .options = options};
    for (auto& t : inputs) {
        int32_t index = int32_t(m.tensors.size());
        if (t.data.empty()) m.inputs.push_back(index);
        op.inputs.push_back(index);
        m.tensors.push_back(std::move(t));
    }
    for (auto& t : outputs) {
        int32_t index = int32_t(m.tensors.size());
        m.outputs.push_back(index);
        op.outputs.push_back(index);
        m.tensors.push_back(std::move(t));
    }
    m.operators = {op};
    return m;
}

TestTensor f32(const std::string& name, std::vector<int32_t> shape) {
    return {.name = name, .shape = std::move(shape)};
}

TestTensor q(const std::string& name, std::vector<int32_t> shape, int8_t type, float scale,
             int64_t zero_point) {
    return {.name = name,
            .shape = std::move(shape),
            .type = type,
            .scales = {scale},
            .zero_points = {zero_point}};
}

TestTensor ints(const std::string& name, std::vector<int32_t> values) {
    return {.name = name,
            .shape = {int32_t(values.size())},
            .type = tfl::tensor_type::kInt32,
            .data = bytes_of(values)};
}

TestTensor scalar_int(const std::string& name, int32_t value) {
    return {.name = name,
            .shape = {},
            .type = tfl::tensor_type::kInt32,
            .data = bytes_of(std::vector<int32_t>{value})};
}

constexpr int8_t kI8 = tfl::tensor_type::kInt8, kI16 = tfl::tensor_type::kInt16;

struct BadModel {
    const char* what;
    std::function<TestModel()> make;
    const char* message;
};

class TfliteConverterErrors : public ::testing::TestWithParam<BadModel> {};

TEST_P(TfliteConverterErrors, NameTheOperator) {
    EXPECT_MESSAGE(import_tflite(GetParam().make()), "t.tflite: node 'operator 0",
                   GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, TfliteConverterErrors,
    ::testing::Values(
        BadModel{"gather batch dims",
                 [] {
                     return single_op(
                         tfl::op::kGather, {f32("x", {2, 3}), ints("i", {1})}, {f32("y", {2, 1})},
                         tfl::options_type::kGather,
                         {{tfl::gather_options::kAxis, 1}, {tfl::gather_options::kBatchDims, 1}});
                 },
                 "(GATHER, opset 1): batch_dims 1 is not supported (only 0)"},
        BadModel{"split count",
                 [] {
                     return single_op(tfl::op::kSplit, {scalar_int("axis", 1), f32("x", {2, 6})},
                                      {f32("a", {2, 3}), f32("b", {2, 3})},
                                      tfl::options_type::kSplit,
                                      {{tfl::split_options::kNumSplits, 3}});
                 },
                 "num_splits 3 does not match its 2 result(s)"},
        BadModel{"split uneven",
                 [] {
                     return single_op(tfl::op::kSplit, {scalar_int("axis", 1), f32("x", {2, 5})},
                                      {f32("a", {2, 3}), f32("b", {2, 2})},
                                      tfl::options_type::kSplit,
                                      {{tfl::split_options::kNumSplits, 2}});
                 },
                 "axis 1 of extent 5 does not split into 2 equal parts"},
        BadModel{"resize flags",
                 [] {
                     return single_op(
                         tfl::op::kResizeBilinear, {f32("x", {1, 2, 2, 1}), ints("size", {4, 4})},
                         {f32("y", {1, 4, 4, 1})}, tfl::options_type::kResizeBilinear,
                         {byte_field(tfl::resize_bilinear_options::kAlignCorners, 1),
                          byte_field(tfl::resize_bilinear_options::kHalfPixelCenters, 1)});
                 },
                 "align_corners and half_pixel_centers cannot both be set"},
        BadModel{"resize size",
                 [] {
                     return single_op(tfl::op::kResizeNearestNeighbor,
                                      {f32("x", {1, 2, 2, 1}), ints("size", {4, 0})},
                                      {f32("y", {1, 4, 4, 1})});
                 },
                 "the size [4, 0] must be two positive values"},
        BadModel{"ellipsis",
                 [] {
                     return single_op(tfl::op::kStridedSlice,
                                      {f32("x", {4, 4}), ints("b", {0, 0}), ints("e", {2, 2}),
                                       ints("s", {1, 1})},
                                      {f32("y", {2, 2})}, tfl::options_type::kStridedSlice,
                                      {{tfl::strided_slice_options::kEllipsisMask, 1}});
                 },
                 "ellipsis_mask and new_axis_mask are not supported"},
        BadModel{"zero stride",
                 [] {
                     return single_op(tfl::op::kStridedSlice,
                                      {f32("x", {4, 4}), ints("b", {0, 0}), ints("e", {2, 2}),
                                       ints("s", {1, 0})},
                                      {f32("y", {2, 2})}, tfl::options_type::kStridedSlice);
                 },
                 "the stride of axis 1 is 0"},
        BadModel{"shrink range",
                 [] {
                     return single_op(tfl::op::kStridedSlice,
                                      {f32("x", {4, 4}), ints("b", {5, 0}), ints("e", {6, 2}),
                                       ints("s", {1, 1})},
                                      {f32("y", {2})}, tfl::options_type::kStridedSlice,
                                      {{tfl::strided_slice_options::kShrinkAxisMask, 1}});
                 },
                 "axis 0 shrinks to index 5, outside its extent 4"},
        BadModel{"slice range",
                 [] {
                     return single_op(tfl::op::kSlice,
                                      {f32("x", {4, 4}), ints("b", {1, 2}), ints("n", {2, 3})},
                                      {f32("y", {2, 3})});
                 },
                 "the slice from [1, 2] of size [2, 3] does not lie inside the operand [4, 4]"},
        BadModel{"pad negative",
                 [] {
                     return single_op(tfl::op::kPad, {f32("x", {2, 2}), ints("p", {0, 1, -1, 0})},
                                      {f32("y", {3, 1})});
                 },
                 "the paddings [0, 1, -1, 0] must not be negative"},
        BadModel{"pad rank",
                 [] {
                     return single_op(tfl::op::kPad, {f32("x", {2, 2}), ints("p", {0, 1})},
                                      {f32("y", {3, 2})});
                 },
                 "the paddings hold 2 values; a rank-2 operand needs [2, 2]"},
        BadModel{"permutation",
                 [] {
                     return single_op(tfl::op::kTranspose, {f32("x", {2, 3}), ints("p", {0, 0})},
                                      {f32("y", {2, 3})});
                 },
                 "the permutation [0, 0] repeats 0"},
        BadModel{"expand axis",
                 [] {
                     return single_op(tfl::op::kExpandDims, {f32("x", {2}), ints("a", {0, 1})},
                                      {f32("y", {1, 2})});
                 },
                 "the axis must be one value, got 2"},
        BadModel{"int16 div",
                 [] {
                     return single_op(tfl::op::kDiv,
                                      {q("a", {2}, kI16, 0.1f, 0), q("b", {2}, kI16, 0.1f, 0)},
                                      {q("y", {2}, kI16, 0.1f, 0)});
                 },
                 "quantized DIV takes int8 or uint8 operands (as TFLite), got int16"},
        BadModel{"extremum quantization",
                 [] {
                     return single_op(tfl::op::kMaximum,
                                      {q("a", {2}, kI8, 0.1f, 0), q("b", {2}, kI8, 0.2f, 0)},
                                      {q("y", {2}, kI8, 0.1f, 0)});
                 },
                 "operand 1 is quantized with scale 0.2 and zero point 0, the result with 0.1 "
                 "and 0"},
        BadModel{"concatenation quantization",
                 [] {
                     return single_op(tfl::op::kConcatenation,
                                      {q("a", {2}, kI8, 0.1f, 0), q("b", {2}, kI8, 0.2f, 0)},
                                      {q("y", {4}, kI8, 0.1f, 0)},
                                      tfl::options_type::kConcatenation);
                 },
                 "operand 1 is quantized unlike the result; TFLite concatenates such operands "
                 "only for uint8"},
        BadModel{"weights format",
                 [] {
                     return single_op(
                         tfl::op::kFullyConnected,
                         {f32("x", {1, 4}),
                          {.name = "w", .shape = {2, 4}, .data = bytes_of(std::vector<float>(8))}},
                         {f32("y", {1, 2})}, tfl::options_type::kFullyConnected,
                         {byte_field(tfl::fully_connected_options::kWeightsFormat, 1)});
                 },
                 "weights in the SHUFFLED4x16INT8 format are not supported"},
        BadModel{"rows",
                 [] {
                     return single_op(
                         tfl::op::kFullyConnected,
                         {f32("x", {1, 5}),
                          {.name = "w", .shape = {2, 4}, .data = bytes_of(std::vector<float>(8))}},
                         {f32("y", {1, 2})}, tfl::options_type::kFullyConnected);
                 },
                 "the input [1, 5] does not divide into rows of 4"},
        BadModel{"relu types",
                 [] {
                     return single_op(tfl::op::kRelu, {q("x", {2}, kI8, 0.1f, 0)},
                                      {q("y", {2}, tfl::tensor_type::kUInt8, 0.1f, 0)});
                 },
                 "the operand is int8, the result uint8; they must match"},
        BadModel{"axes not constant",
                 [] {
                     return single_op(
                         tfl::op::kSum,
                         {f32("x", {2, 3}),
                          {.name = "a", .shape = {1}, .type = tfl::tensor_type::kInt32}},
                         {f32("y", {2})}, tfl::options_type::kReducer);
                 },
                 "the axes (operand 1) must be known at import time"},
        BadModel{"int16 batch matmul of int8",
                 [] {
                     return single_op(tfl::op::kBatchMatMul,
                                      {q("a", {2, 2}, kI16, 0.1f, 0), q("b", {2, 2}, kI8, 0.1f, 0)},
                                      {q("y", {2, 2}, kI16, 0.1f, 0)});
                 },
                 "an int16 batch matmul needs an int16 second operand and result, as TFLite's "
                 "kernel; got int8 and int16"},
        BadModel{"16x8 sums",
                 [] {
                     TestTensor w = q("w", {1, 1200}, kI8, 0.01f, 0);
                     w.data = std::vector<uint8_t>(1200, uint8_t(int8_t(-127)));
                     return single_op(
                         tfl::op::kFullyConnected, {q("x", {1, 1200}, kI16, 0.1f, 0), w},
                         {q("y", {1, 1}, kI16, 0.1f, 0)}, tfl::options_type::kFullyConnected);
                 },
                 "16x8 sums can reach 4993843200, past int32's range"},
        BadModel{"concatenation activation",
                 [] {
                     return single_op(tfl::op::kConcatenation, {f32("a", {2}), f32("b", {2})},
                                      {f32("y", {4})}, tfl::options_type::kConcatenation,
                                      {byte_field(tfl::concatenation_options::kActivation,
                                                  tfl::activation::kRelu)});
                 },
                 "(CONCATENATION, opset 1): a fused activation is not supported"},
        BadModel{"int16 zero point",
                 [] {
                     return single_op(tfl::op::kMul,
                                      {q("a", {2}, kI16, 0.1f, 3), q("b", {2}, kI16, 0.1f, 0)},
                                      {q("y", {2}, kI16, 0.1f, 0)});
                 },
                 "int16 tensor 'a' must have the zero point 0"},
        BadModel{"int16 power-of-two shifts",
                 [] {
                     return single_op(tfl::op::kAdd,
                                      {q("a", {2}, kI16, 0.25f, 0), q("b", {2}, kI16, 0.5f, 0)},
                                      {q("y", {2}, kI16, 0.125f, 0)});
                 },
                 "(ADD, opset 1): int16 operands with power-of-two scales (pot_scale_int16) need "
                 "one operand at the result's scale 2^-3 and the other at most 15 powers of "
                 "two below, got 2^-2 and 2^-1"},
        BadModel{"int16 power-of-two shift past 15",
                 [] {
                     return single_op(
                         tfl::op::kSub,
                         {q("a", {2}, kI16, 0.125f, 0), q("b", {2}, kI16, 0x1p-19f, 0)},
                         {q("y", {2}, kI16, 0.125f, 0)});
                 },
                 "(SUB, opset 1): int16 operands with power-of-two scales (pot_scale_int16) need "
                 "one operand at the result's scale 2^-3 and the other at most 15 powers of "
                 "two below, got 2^-3 and 2^-19"},
        BadModel{"int16 logistic scale",
                 [] {
                     return single_op(tfl::op::kLogistic, {q("x", {2}, kI16, 0.001f, 0)},
                                      {q("y", {2}, kI16, 0.001f, 0)});
                 },
                 "(LOGISTIC, opset 1): an int16 LOGISTIC needs zero points 0 and an int16 result "
                 "of scale 2^-15, as TFLite's kernel; got the zero points 0 and 0, the scale "
                 "0.001"},
        BadModel{"int16 tanh input scale",
                 [] {
                     return single_op(tfl::op::kTanh, {q("x", {2}, kI16, 4.0f, 0)},
                                      {q("y", {2}, kI16, 1.0f / 32768, 0)});
                 },
                 "(TANH, opset 1): the input scale 4 is too large for TFLite's int16 TANH (at "
                 "most about 2.67)"},
        BadModel{"int16 softmax scale",
                 [] {
                     return single_op(tfl::op::kSoftmax, {q("x", {1, 2}, kI16, 0.001f, 0)},
                                      {q("y", {1, 2}, kI16, 0.001f, 0)});
                 },
                 "(SOFTMAX, opset 1): an int16 SOFTMAX needs zero points 0 and an int16 result of "
                 "scale 2^-15, as TFLite's kernel; got the zero points 0 and 0, the scale 0.001"},
        BadModel{"integer bilinear requantizing",
                 [] {
                     return single_op(tfl::op::kResizeBilinear,
                                      {q("x", {1, 2, 2, 1}, kI16, 0.5f, 0), ints("size", {4, 4})},
                                      {q("y", {1, 4, 4, 1}, kI16, 0.25f, 0)});
                 },
                 "(RESIZE_BILINEAR, opset 1): a quantized bilinear resize keeps its input's "
                 "quantization (scale 0.5, zero point 0), as TFLite's kernels, but the result "
                 "has scale 0.25 and zero point 0"},
        BadModel{"leaky alpha",
                 [] {
                     return single_op(tfl::op::kLeakyRelu, {q("x", {2}, kI8, 0.1f, 0)},
                                      {q("y", {2}, kI8, 0.1f, 0)}, tfl::options_type::kLeakyRelu,
                                      {float_field(tfl::leaky_relu_options::kAlpha, -0.5f)});
                 },
                 "quantized LEAKY_RELU with alpha -0.5 is not supported (alpha >= 0)"},
        BadModel{"cast result",
                 [] {
                     return single_op(
                         tfl::op::kCast, {f32("x", {2})},
                         {{.name = "y", .shape = {2}, .type = tfl::tensor_type::kString}});
                 },
                 "the result has element type string, which Anvil does not support"},
        BadModel{"transpose conv output",
                 [] {
                     TestTensor w{.name = "w",
                                  .shape = {2, 3, 3, 1},
                                  .data = bytes_of(std::vector<float>(18))};
                     return single_op(tfl::op::kTransposeConv,
                                      {ints("shape", {1, 4, 4, 3}), w, f32("x", {1, 2, 2, 1})},
                                      {f32("y", {1, 4, 4, 2})}, tfl::options_type::kTransposeConv,
                                      {byte_field(tfl::transpose_conv_options::kPadding, 0),
                                       {tfl::transpose_conv_options::kStrideW, 2},
                                       {tfl::transpose_conv_options::kStrideH, 2}});
                 },
                 "the output shape [1, 4, 4, 3] does not fit the input [N, H, W, C] = [1, 2, 2, "
                 "1] and 2 output channels"}),
    [](const auto& info) {
        std::string name = info.param.what;
        for (char& c : name) {
            if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
        }
        return name;
    });

TEST(TfliteImport, RefusesAnUnknownRounding) {
    TfliteImportOptions options;
    options.rounding = "UPWARD";
    EXPECT_MESSAGE(import_tflite(cnn(false), options),
                   "rounding 'UPWARD' is neither TFLITE nor XNNPACK");
}

}  // namespace
}  // namespace anvil::frontend

namespace anvil::frontend {
namespace {

// x [1, 6, 6, 2] → PAD 1 on H and W → CONV_2D 3x3 VALID stride 2 (4 filters) → y [1, 3, 3, 4].
TestModel pad_then_conv(bool quantized) {
    std::vector<TestTensor> tensors = {
        f32("x", {1, 6, 6, 2}),
        ints("pads", {0, 0, 1, 1, 1, 1, 0, 0}),
        f32("p", {1, 8, 8, 2}),
        {.name = "w", .shape = {4, 3, 3, 2}, .data = bytes_of(std::vector<float>(72, 0.1f))},
        f32("y", {1, 3, 3, 4})};
    tensors[1].shape = {4, 2};
    if (quantized) {
        for (int i : {0, 2, 4}) {
            tensors[size_t(i)].type = kI8;
            tensors[size_t(i)].scales = {0.1f};
            tensors[size_t(i)].zero_points = {-5};
        }
        tensors[3].type = kI8;
        tensors[3].data = std::vector<uint8_t>(72, 3);
        tensors[3].scales = {0.02f};
        tensors[3].zero_points = {0};
    }
    TestModel m;
    m.tensors = tensors;
    m.operators = {{.builtin = tfl::op::kPad, .inputs = {0, 1}, .outputs = {2}},
                   {.builtin = tfl::op::kConv2D,
                    .inputs = {2, 3},
                    .outputs = {4},
                    .options_type = tfl::options_type::kConv2D,
                    .options = {byte_field(tfl::conv2d_options::kPadding, tfl::padding::kValid),
                                {tfl::conv2d_options::kStrideW, 2},
                                {tfl::conv2d_options::kStrideH, 2}}}};
    m.inputs = {0};
    m.outputs = {4};
    return m;
}

TEST(TfliteImport, AConvolutionTakesOverThePadBeforeIt) {
    for (bool quantized : {false, true}) {
        graph::IRModule m = import_tflite(pad_then_conv(quantized));
        Census c = census(m);
        EXPECT_EQ(c.calls["nn.pad"], 0) << graph::print(m);
        std::string text = graph::print(m);
        EXPECT_NE(text.find("padding=[1, 1, 1, 1]"), std::string::npos) << text;
        if (quantized) {
            // int8 data enters the product as uint8, its zero point shifted alike (-5 + 128).
            EXPECT_NE(text.find("qnn.conv2d("), std::string::npos) << text;
            EXPECT_NE(text.find(", 123, 0, 0.1f"), std::string::npos) << text;
        }
    }
}

}  // namespace
}  // namespace anvil::frontend
