// The TFLite flatbuffer reader (frontend/tflite/tflite_model.h): what it decodes, and that
// malformed, truncated or inconsistent files are UserErrors naming the file and the fault.
#include "frontend/tflite/tflite_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <functional>

#include "errors/expect_message.h"
#include "tflite_test_model.h"

namespace anvil::frontend::tflite {
namespace {

using testing::build_tflite;
using testing::bytes_of;
using testing::TestModel;
using testing::TestOperator;
using testing::TestTensor;

// x [1, 4] float → FULLY_CONNECTED with weights [3, 4] and a bias → y [1, 3].
TestModel dense_model() {
    TestModel m;
    m.tensors = {
        {.name = "x", .shape = {1, 4}},
        {.name = "w", .shape = {3, 4}, .data = bytes_of(std::vector<float>(12, 0.5f))},
        {.name = "b", .shape = {3}, .data = bytes_of(std::vector<float>{1, 2, 3})},
        {.name = "y", .shape = {1, 3}},
    };
    m.operators = {{.builtin = op::kFullyConnected,
                    .inputs = {0, 1, 2},
                    .outputs = {3},
                    .options_type = options_type::kFullyConnected,
                    .options = {{fully_connected_options::kActivation, activation::kRelu, 1}}}};
    m.inputs = {0};
    m.outputs = {3};
    return m;
}

TEST(TfliteModel, DecodesTensorsOperatorsAndBuffers) {
    TfliteModel m = read_tflite_model(build_tflite(dense_model()), "dense.tflite");
    ASSERT_EQ(m.subgraphs.size(), 1u);
    const TfliteSubgraph& g = m.subgraphs[0];
    ASSERT_EQ(g.tensors.size(), 4u);
    EXPECT_EQ(g.tensors[1].name, "w");
    EXPECT_EQ(g.tensors[1].shape, (std::vector<int32_t>{3, 4}));
    EXPECT_EQ(m.buffers[g.tensors[1].buffer].size(), 48u);
    EXPECT_TRUE(m.buffers[g.tensors[0].buffer].empty());
    ASSERT_EQ(g.operators.size(), 1u);
    EXPECT_EQ(m.operator_codes[g.operators[0].opcode_index].builtin, op::kFullyConnected);
    const TfliteOptions& o = g.operators[0].options;
    EXPECT_EQ(o.type(), options_type::kFullyConnected);
    EXPECT_EQ(o.int8(fully_connected_options::kActivation), activation::kRelu);
    // A field the file leaves out reads as the schema's default.
    EXPECT_FALSE(o.boolean(fully_connected_options::kKeepNumDims));
    EXPECT_EQ(o.int32(99, 7), 7);
    EXPECT_EQ(g.inputs, (std::vector<int32_t>{0}));
    EXPECT_EQ(g.outputs, (std::vector<int32_t>{3}));
}

TEST(TfliteModel, ReadsQuantizationParameters) {
    TestModel m = dense_model();
    m.tensors[1].type = tensor_type::kInt8;
    m.tensors[1].data = std::vector<uint8_t>(12, 1);
    m.tensors[1].scales = {0.5f, 0.25f, 0.125f};
    m.tensors[1].zero_points = {0, 0, 0};
    TfliteModel r = read_tflite_model(build_tflite(m), "q.tflite");
    const auto& q = r.subgraphs[0].tensors[1].quantization;
    ASSERT_TRUE(q.has_value());
    EXPECT_EQ(q->scale, (std::vector<float>{0.5f, 0.25f, 0.125f}));
    EXPECT_EQ(q->zero_point.size(), 3u);
}

TEST(TfliteModel, EveryTruncationIsAUserError) {
    std::vector<uint8_t> bytes = build_tflite(dense_model());
    for (size_t n = 0; n < bytes.size(); ++n) {
        std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + long(n));
        try {
            read_tflite_model(prefix, "cut.tflite");
        } catch (const UserError& e) {
            EXPECT_NE(std::string(e.what()).find("cut.tflite"), std::string::npos) << e.what();
            continue;
        }
        // A prefix that still holds every table the root reaches is a valid model; the root's
        // offset makes any shorter one fail.
        EXPECT_GT(n, bytes.size() / 2) << "a prefix of " << n << " bytes read as a model";
    }
}

TEST(TfliteModel, EverySingleByteCorruptionIsHandled) {
    std::vector<uint8_t> bytes = build_tflite(dense_model());
    for (size_t i = 0; i < bytes.size(); ++i) {
        for (uint8_t v : {uint8_t(0), uint8_t(0xff), uint8_t(bytes[i] ^ 0x80)}) {
            std::vector<uint8_t> bad = bytes;
            bad[i] = v;
            try {
                read_tflite_model(bad, "bad.tflite");
            } catch (const UserError&) {
            }
        }
    }
}

// Finds `prefixed` (a uint32 length and the first bytes it counts) in `bytes` and makes that
// length reach past the end of the file.
void overlong_at(std::vector<uint8_t>& bytes, const std::vector<uint8_t>& prefixed) {
    auto at = std::search(bytes.begin(), bytes.end(), prefixed.begin(), prefixed.end());
    ASSERT_NE(at, bytes.end());
    const uint8_t huge[4] = {0x00, 0xff, 0xff, 0x7f};
    std::copy(huge, huge + 4, at);
}

struct BadFile {
    const char* what;
    std::function<void(std::vector<uint8_t>&)> corrupt;
    std::function<void(TestModel&)> edit;
    const char* message;
};

class TfliteModelErrors : public ::testing::TestWithParam<BadFile> {};

TEST_P(TfliteModelErrors, NamesTheFault) {
    TestModel m = dense_model();
    if (GetParam().edit) GetParam().edit(m);
    std::vector<uint8_t> bytes = build_tflite(m);
    if (GetParam().corrupt) GetParam().corrupt(bytes);
    EXPECT_MESSAGE(read_tflite_model(bytes, "m.tflite"), GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, TfliteModelErrors,
    ::testing::Values(
        BadFile{"short", [](auto& b) { b.resize(5); }, nullptr,
                "m.tflite: not a valid TFLite model: the file is 5 bytes long"},
        BadFile{"identifier", [](auto& b) { b[4] = 'X'; }, nullptr,
                "the file identifier is not \"TFL3\""},
        BadFile{"root offset", [](auto& b) { b[0] = 0xf0, b[1] = 0xff, b[2] = 0xff, b[3] = 0x7f; },
                nullptr, "the root table's offset lies outside the file"},
        // Tensor 1's name "w" (length 1, the byte and its terminating zero).
        BadFile{"string",
                [](auto& b) {
                    overlong_at(b, {1, 0, 0, 0, 'w', 0});
                },
                nullptr, "is not a string inside the file"},
        // Its data: 48 bytes of 0.5f.
        BadFile{"vector",
                [](auto& b) {
                    overlong_at(b, {48, 0, 0, 0, 0, 0, 0, 0x3f});
                },
                nullptr, "is not a vector inside the file"},
        BadFile{"version", nullptr, [](TestModel& m) { m.version = 2; },
                "schema version 2 (the importer reads version 3)"},
        BadFile{"short data", nullptr, [](TestModel& m) { m.tensors[1].data.resize(40); },
                "subgraph 0: tensor 1 ('w') has 40 bytes of data; its shape needs 12 elements "
                "of 4 bytes"},
        BadFile{"negative dimension", nullptr,
                [](TestModel& m) {
                    m.tensors[3].shape = {1, -3};
                },
                "subgraph 0: tensor 3 has a negative dimension in its shape"},
        BadFile{"signature rank", nullptr,
                [](TestModel& m) { m.tensors[0].shape_signature = {-1}; },
                "its shape_signature's rank differs from its shape's"},
        BadFile{"input index", nullptr, [](TestModel& m) { m.inputs = {7}; },
                "subgraph 0: an input refers to tensor 7 of 4"},
        BadFile{"operator input", nullptr, [](TestModel& m) { m.operators[0].inputs[1] = -2; },
                "subgraph 0: operator 0: an input refers to tensor -2 of 4"},
        BadFile{"operator output", nullptr, [](TestModel& m) { m.operators[0].outputs = {-1}; },
                "subgraph 0: operator 0: an output refers to tensor -1 of 4"}),
    [](const auto& info) {
        std::string name = info.param.what;
        for (char& c : name) {
            if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
        }
        return name;
    });

TEST(TfliteModel, RefusesAMissingFile) {
    EXPECT_MESSAGE(read_tflite_file("/nonexistent/model.tflite"),
                   "/nonexistent/model.tflite: cannot open the file");
}

TEST(TfliteModel, NamesBuiltinsAndTypes) {
    EXPECT_EQ(builtin_name(op::kConv2D), "CONV_2D");
    EXPECT_EQ(builtin_name(op::kBatchMatMul), "BATCH_MATMUL");
    EXPECT_EQ(builtin_name(205), "REDUCE_WINDOW");
    EXPECT_EQ(builtin_name(4000), "BUILTIN_4000");
    EXPECT_EQ(tensor_type_name(tensor_type::kInt16), "int16");
    EXPECT_EQ(tensor_type_name(40), "tensor type 40");
}

}  // namespace
}  // namespace anvil::frontend::tflite
