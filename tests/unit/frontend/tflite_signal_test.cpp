// The TFLite importer's converters of TFLite Micro's signal operators
// (frontend/tflite/convert_signal*.cpp) and the custom options they read (custom_options.cpp):
// every refusal. Their numbers are tested against the C kernels' arithmetic in
// python/tests/tflite/test_tflite_signal.py.
#include <flatbuffers/flexbuffers.h>
#include <gtest/gtest.h>

#include <functional>

#include "errors/expect_message.h"
#include "frontend/tflite/from_tflite.h"
#include "graph/printer.h"
#include "tflite_test_model.h"

namespace anvil::frontend {
namespace {

namespace tfl = tflite;
namespace type = tflite::tensor_type;
using testing::bytes_of;
using testing::import_tflite;
using testing::TestModel;
using testing::TestOperator;
using testing::TestTensor;

using Options = std::function<void(flexbuffers::Builder&)>;

std::vector<uint8_t> flex_map(const Options& fill) {
    flexbuffers::Builder b;
    b.Map([&] { fill(b); });
    b.Finish();
    return b.GetBuffer();
}

// One CUSTOM operator `name` over `inputs` (tensors 0..), with `outputs` after them; the
// tensors with data are constants, the others model inputs.
TestModel custom_model(const std::string& name, std::vector<TestTensor> inputs,
                       std::vector<TestTensor> outputs, const Options& options) {
    TestModel m;
    TestOperator op{.builtin = tfl::op::kCustom, .custom_code = name};
    for (TestTensor& t : inputs) {
        if (t.data.empty()) m.inputs.push_back(int32_t(m.tensors.size()));
        op.inputs.push_back(int32_t(m.tensors.size()));
        m.tensors.push_back(std::move(t));
    }
    for (TestTensor& t : outputs) {
        op.outputs.push_back(int32_t(m.tensors.size()));
        m.outputs.push_back(int32_t(m.tensors.size()));
        m.tensors.push_back(std::move(t));
    }
    op.custom_options = flex_map(options);
    m.operators = {op};
    return m;
}

TestTensor tensor(std::vector<int32_t> shape, int8_t t, std::vector<uint8_t> data = {}) {
    return TestTensor{.name = "t", .shape = std::move(shape), .type = t, .data = std::move(data)};
}

TestModel window(const Options& options, int8_t input_type = type::kInt16,
                 int32_t window_length = 4) {
    return custom_model("SignalWindow",
                        {tensor({2, 8}, input_type),
                         tensor({window_length}, type::kInt16,
                                bytes_of(std::vector<int16_t>(size_t(window_length), 4096)))},
                        {tensor({2, 8}, input_type)}, options);
}

const Options kShift12 = [](flexbuffers::Builder& b) { b.Int("shift", 12); };

TEST(TfliteSignal, ImportsAWellFormedWindow) {
    EXPECT_EQ(graph::type_str(import_tflite(window(kShift12)).main()->body->type),
              "Tensor[(2, 8), int16]");
}

TEST(TfliteSignal, RefusesMalformedCustomOptions) {
    TestModel m = window(kShift12);
    m.operators[0].custom_options_format = 1;
    EXPECT_MESSAGE(import_tflite(m), "(SignalWindow, opset 1)",
                   "its custom options are in format 1; only FlexBuffers (0) are read");
    m = window(kShift12);
    m.operators[0].custom_options.clear();
    EXPECT_MESSAGE(import_tflite(m), "it has no custom options");
    m = window(kShift12);
    m.operators[0].custom_options = {1, 2, 3, 200, 7};
    EXPECT_MESSAGE(import_tflite(m), "its custom options (5 bytes) are not a valid FlexBuffer");
    flexbuffers::Builder vector;
    vector.Vector([&] { vector.Int(12); });
    vector.Finish();
    m.operators[0].custom_options = vector.GetBuffer();
    EXPECT_MESSAGE(import_tflite(m), "its custom options are not a FlexBuffer map");
    EXPECT_MESSAGE(import_tflite(window([](flexbuffers::Builder& b) { b.Int("shiftt", 1); })),
                   "its custom options have no 'shift'");
    EXPECT_MESSAGE(
        import_tflite(window([](flexbuffers::Builder& b) { b.String("shift", "twelve"); })),
        "its custom option 'shift' is not an integer");
    EXPECT_MESSAGE(import_tflite(window([](flexbuffers::Builder& b) { b.Int("shift", 40); })),
                   "its custom option 'shift' is 40, outside [0, 31]");
    EXPECT_MESSAGE(
        import_tflite(window([](flexbuffers::Builder& b) { b.UInt("shift", uint64_t(1) << 40); })),
        "its custom option 'shift' is 1099511627776, outside [0, 31]");
}

// Models over 2 GiB keep custom options past the flatbuffer, at an offset of the file.
TEST(TfliteSignal, ReadsCustomOptionsPastTheFlatbuffer) {
    TestModel m = window(kShift12);
    std::vector<uint8_t> options = m.operators[0].custom_options;
    m.operators[0].custom_options.clear();
    m.operators[0].large_custom_options_offset = 1;  // a placeholder of the same size
    m.operators[0].large_custom_options_size = options.size();
    size_t flatbuffer_size = testing::build_tflite(m).size();
    m.operators[0].large_custom_options_offset = flatbuffer_size;
    std::vector<uint8_t> bytes = testing::build_tflite(m);
    ASSERT_EQ(bytes.size(), flatbuffer_size);
    bytes.insert(bytes.end(), options.begin(), options.end());
    auto import = [](const std::vector<uint8_t>& b) {
        return from_tflite_bytes(
            std::string_view(reinterpret_cast<const char*>(b.data()), b.size()), {}, "t.tflite");
    };
    EXPECT_EQ(graph::type_str(import(bytes).main()->body->type), "Tensor[(2, 8), int16]");
    bytes.pop_back();
    EXPECT_MESSAGE(import(bytes), "its custom options lie outside the file");
}

TEST(TfliteSignal, RefusesWindowsThatDoNotFit) {
    EXPECT_MESSAGE(import_tflite(window(kShift12, type::kInt32)),
                   "the input and the result must be int16");
    EXPECT_MESSAGE(import_tflite(window(kShift12, type::kInt16, 5)),
                   "the window's length 5 must divide the input's 16 elements");
    TestModel m = window(kShift12);
    m.tensors[1].data.clear();
    m.inputs.push_back(1);
    EXPECT_MESSAGE(import_tflite(m), "the window (operand 1) must be known at import time");
    m = window(kShift12);
    m.tensors[1].type = type::kInt32;
    m.tensors[1].data.resize(16);
    EXPECT_MESSAGE(import_tflite(m), "the window must be a 1-D int16 tensor, got int32 [4]");
}

const Options kNoOptions = [](flexbuffers::Builder&) {};

TEST(TfliteSignal, RefusesMalformedSpectra) {
    EXPECT_MESSAGE(import_tflite(custom_model(
                       "SignalFftAutoScale", {tensor({8}, type::kInt16)},
                       {tensor({8}, type::kInt16), tensor({1}, type::kInt32)}, kNoOptions)),
                   "result 1 (the scale bits) must be an int32 scalar");
    EXPECT_MESSAGE(import_tflite(custom_model(
                       "SignalFftAutoScale", {tensor({2, 4}, type::kInt16)},
                       {tensor({2, 4}, type::kInt16), tensor({}, type::kInt32)}, kNoOptions)),
                   "the input must be a 1-D int16 tensor, got int16 [2, 4]");
    auto energy = [](int32_t length, int64_t start, int64_t end) {
        return custom_model("SignalEnergy", {tensor({length}, type::kInt16)},
                            {tensor({length / 2}, type::kUInt32)}, [=](flexbuffers::Builder& b) {
                                b.Int("end_index", end);
                                b.Int("start_index", start);
                            });
    };
    EXPECT_MESSAGE(import_tflite(energy(9, 0, 4)),
                   "the input holds complex values (re, im): its length 9 must be even");
    EXPECT_MESSAGE(import_tflite(energy(8, 5, 5)),
                   "its custom option 'start_index' is 5, outside [0, 4]");
    EXPECT_MESSAGE(import_tflite(energy(8, 3, 2)),
                   "its custom option 'end_index' is 2, outside [3, 4]");
    EXPECT_MESSAGE(
        import_tflite(custom_model("SignalFilterBankSquareRoot",
                                   {tensor({4}, type::kUInt64), tensor({1}, type::kInt32)},
                                   {tensor({4}, type::kUInt32)}, kNoOptions)),
        "operand 1 (the scale bits) must be an int32 scalar");
}

TEST(TfliteSignal, RefusesFftsKissfftCannotCompute) {
    auto rfft = [](int8_t t, int64_t option_t, int64_t fft_length, std::vector<int32_t> in,
                   std::vector<int32_t> out) {
        return custom_model("SignalRfft", {tensor(std::move(in), t)}, {tensor(std::move(out), t)},
                            [=](flexbuffers::Builder& b) {
                                b.Int("T", option_t);
                                b.Int("fft_length", fft_length);
                            });
    };
    EXPECT_EQ(graph::type_str(
                  import_tflite(rfft(type::kInt16, 7, 16, {3, 10}, {3, 18})).main()->body->type),
              "Tensor[(3, 18), int16]");
    EXPECT_MESSAGE(import_tflite(rfft(type::kUInt8, 3, 16, {10}, {18})),
                   "the input must be int16, int32 or float32, got uint8");
    EXPECT_MESSAGE(import_tflite(rfft(type::kInt16, 2, 16, {10}, {18})),
                   "the option T (TFLite type 2), the input and the result must have one type");
    EXPECT_MESSAGE(import_tflite(rfft(type::kInt16, 7, 14, {10}, {16})),
                   "fft_length 14 must be even with fft_length / 2 a product of 2, 3 and 5");
    EXPECT_MESSAGE(import_tflite(rfft(type::kInt16, 7, 9, {9}, {10})), "fft_length 9 must be even");
    EXPECT_MESSAGE(import_tflite(rfft(type::kInt16, 7, 131072, {9}, {131074})),
                   "its custom option 'fft_length' is 131072, outside [4, 65536]");
    EXPECT_MESSAGE(import_tflite(rfft(type::kInt16, 7, 16, {20}, {18})),
                   "frames of 20 values are longer than fft_length 16");
    EXPECT_MESSAGE(import_tflite(rfft(type::kInt16, 7, 16, {10}, {16})),
                   "the result must be [18] (fft_length / 2 + 1 complex bins per frame), the "
                   "model declares [16]");
    EXPECT_MESSAGE(import_tflite(rfft(type::kInt16, 7, 16, {}, {18})),
                   "the input must have at least one axis");
}

// A filter bank of 2 channels over 8 bins: channel c starts at bin 1 + 2c, width 2.
TestModel filter_bank(std::vector<int16_t> first_bins, size_t unweights = 6, int32_t channels = 2) {
    auto i16 = [](std::vector<int16_t> v) {
        int32_t n = int32_t(v.size());
        return tensor({n}, type::kInt16, bytes_of(v));
    };
    return custom_model(
        "SignalFilterBank",
        {tensor({8}, type::kUInt32), i16(std::vector<int16_t>(6, 100)),
         i16(std::vector<int16_t>(unweights, 50)), i16(first_bins), i16({0, 2, 4}), i16({2, 2, 2})},
        {tensor({channels}, type::kUInt64)},
        [](flexbuffers::Builder& b) { b.Int("num_channels", 2); });
}

TEST(TfliteSignal, RefusesFilterBanksOutsideTheirData) {
    EXPECT_EQ(graph::type_str(import_tflite(filter_bank({1, 3, 5})).main()->body->type),
              "Tensor[(2,), uint64]");
    EXPECT_MESSAGE(import_tflite(filter_bank({1, 3, 5}, 4)),
                   "the weights (6) and unweights (4) must be as long");
    EXPECT_MESSAGE(import_tflite(filter_bank({1, 3})),
                   "the channels' first bins, first weights and widths must hold 3 values "
                   "(num_channels + 1), got 2, 3 and 3");
    EXPECT_MESSAGE(import_tflite(filter_bank({1, 3, 7})),
                   "channel 2 (first bin 7, first weight 4, width 2) reaches outside the 8 bins "
                   "or the 6 weights");
    EXPECT_MESSAGE(import_tflite(filter_bank({1, 3, 5}, 6, 3)),
                   "the result must hold num_channels = 2 values");
}

// Every channel spanning the same 32767 weights: a table of channels x 65534 terms, refused
// before it is built.
TEST(TfliteSignal, RefusesFilterBanksWhoseTableWouldBeHuge) {
    const int16_t width = 32767;
    const int32_t channels = 100;
    auto i16 = [](std::vector<int16_t> v) {
        int32_t n = int32_t(v.size());
        return tensor({n}, type::kInt16, bytes_of(v));
    };
    std::vector<int16_t> weights(size_t(width), 7), zeros(size_t(channels + 1), 0),
        widths(size_t(channels + 1), width);
    TestModel m = custom_model("SignalFilterBank",
                               {tensor({width}, type::kUInt32), i16(weights), i16(weights),
                                i16(zeros), i16(zeros), i16(widths)},
                               {tensor({channels}, type::kUInt64)},
                               [&](flexbuffers::Builder& b) { b.Int("num_channels", channels); });
    EXPECT_MESSAGE(import_tflite(m),
                   "the filter bank's table of 100 channels by up to 65534 terms exceeds 4194304 "
                   "terms");
}

TEST(TfliteSignal, RefusesNoiseStagesOfMismatchedLengths) {
    auto subtraction = [](int32_t channels, const std::string& clamping_kind) {
        return custom_model("SignalFilterBankSpectralSubtraction", {tensor({4}, type::kUInt32)},
                            {tensor({4}, type::kUInt32), tensor({4}, type::kUInt32)},
                            [=](flexbuffers::Builder& b) {
                                b.Int("alternate_one_minus_smoothing", 15401);
                                b.Int("alternate_smoothing", 983);
                                if (clamping_kind == "bool") b.Bool("clamping", false);
                                if (clamping_kind == "string") b.String("clamping", "no");
                                b.Int("min_signal_remaining", 819);
                                b.Int("num_channels", channels);
                                b.Int("one_minus_smoothing", 15975);
                                b.Int("smoothing", 409);
                                b.Int("smoothing_bits", 10);
                                b.Int("spectral_subtraction_bits", 14);
                            });
    };
    EXPECT_EQ(graph::type_str(import_tflite(subtraction(4, "bool")).main()->body->type),
              "(Tensor[(4,), uint32], Tensor[(4,), uint32])");
    EXPECT_MESSAGE(import_tflite(subtraction(5, "bool")),
                   "the input and both results must hold num_channels = 5 values");
    EXPECT_MESSAGE(import_tflite(subtraction(4, "none")), "its custom options have no 'clamping'");
    EXPECT_MESSAGE(import_tflite(subtraction(4, "string")),
                   "its custom option 'clamping' is not a boolean");
    auto pcan = [](size_t lut, int32_t noise) {
        return custom_model(
            "SignalPCAN",
            {tensor({4}, type::kUInt32), tensor({noise}, type::kUInt32),
             tensor({int32_t(lut)}, type::kInt16, bytes_of(std::vector<int16_t>(lut, 1)))},
            {tensor({4}, type::kUInt32)}, [](flexbuffers::Builder& b) { b.Int("snr_shift", 6); });
    };
    EXPECT_EQ(graph::type_str(import_tflite(pcan(125, 4)).main()->body->type),
              "Tensor[(4,), uint32]");
    EXPECT_MESSAGE(import_tflite(pcan(124, 4)),
                   "the gain table must hold at least 125 values (three per octave of a uint32 "
                   "noise estimate), got 124");
    EXPECT_MESSAGE(import_tflite(pcan(125, 3)),
                   "the input, the noise estimate and the result must be as long");
    EXPECT_MESSAGE(import_tflite(custom_model("SignalFilterBankLog", {tensor({4}, type::kUInt32)},
                                              {tensor({5}, type::kInt16)},
                                              [](flexbuffers::Builder& b) {
                                                  b.Int("input_correction_bits", 3);
                                                  b.Int("output_scale", 64);
                                              })),
                   "the input and the result must be as long");
}

}  // namespace
}  // namespace anvil::frontend
