// TFLite models from the command line: `anvil compile model.tflite`, with --input-shapes
// overriding a shape, then `anvil run` on an .npz of inputs; refusals exit 1 with the message.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli/cli_run.h"
#include "require_package.h"
#include "runtime/npz.h"
#include "unit/frontend/tflite_test_model.h"

namespace {

namespace fs = std::filesystem;
using anvil::cli::testing::Result;
using anvil::cli::testing::run;
using anvil::cli::testing::temp_path;
using anvil::cli::testing::temp_so;

fs::path tflite_model(const std::string& name) {
    return fs::path(ANVIL_SOURCE_DIR) / ".." / "shared" / "models" / "tflite" / name;
}

// hello_world_float computes sin(x) for x [1, 1]; with the batch made 3 it takes 3 values.
TEST(CliTflite, CompilesAndRunsWithABatchGivenOnTheCommandLine) {
    fs::path model = tflite_model("hello_world_float.tflite");
    ANVIL_REQUIRE_SHARED_MODELS(fs::exists(model));
    std::string so = temp_so("hello_world");
    Result c = run("compile " + model.string() + " -o " + so +
                   " --input-shapes 'serving_default_dense_input:0:[3,1]'");
    ASSERT_EQ(c.status, 0) << c.output;
    Result inspect = run("inspect " + model.string());
    EXPECT_EQ(inspect.status, 0) << inspect.output;
    EXPECT_NE(inspect.output.find("nn.dense                 3"), std::string::npos)
        << inspect.output;

    auto x = anvil::runtime::NDArray::empty({3, 1}, {kDLFloat, 32, 1});
    x.copy_from(std::vector<float>{0.5f, 1.5f, 3.0f});
    std::string inputs = temp_path("hello_world_in", ".npz");
    std::string outputs = temp_path("hello_world_out", ".npz");
    anvil::runtime::write_npz(inputs, {{"serving_default_dense_input:0", x}});
    Result r = run("run " + so + " --inputs " + inputs + " --outputs " + outputs);
    ASSERT_EQ(r.status, 0) << r.output;
    auto out = anvil::runtime::read_npz(outputs);
    ASSERT_EQ(out.size(), 1u);
    std::vector<float> y = out[0].second.to_vector<float>();
    ASSERT_EQ(y.size(), 3u);
    EXPECT_NEAR(y[0], std::sin(0.5f), 0.1);
    EXPECT_NEAR(y[1], std::sin(1.5f), 0.1);
    EXPECT_NEAR(y[2], std::sin(3.0f), 0.1);
    for (const auto& f : {so, inputs, outputs}) fs::remove(f);
}

// --tflite-rounding picks how quantized products rescale: in fixed point (TFLITE, the default)
// or in float32 (XNNPACK); it is refused for another kind of model and for another value.
TEST(CliTflite, RoundingIsChosenOnTheCommandLine) {
    fs::path model = tflite_model("hello_world_int8.tflite");
    ANVIL_REQUIRE_SHARED_MODELS(fs::exists(model));
    std::string so = temp_so("hello_int8");
    auto compile = [&](const std::string& rounding) {
        return run("compile " + model.string() + " -o " + so + " --tflite-rounding " + rounding +
                   " --print-after infer_types");
    };
    Result fixed = compile("TFLITE"), in_float = compile("XNNPACK");
    ASSERT_EQ(fixed.status, 0) << fixed.output;
    ASSERT_EQ(in_float.status, 0) << in_float.output;
    EXPECT_NE(fixed.output.find("fixed_point_multiply"), std::string::npos) << fixed.output;
    EXPECT_EQ(in_float.output.find("fixed_point_multiply"), std::string::npos) << in_float.output;
    Result bad = compile("NEAREST");
    EXPECT_EQ(bad.status, 1) << bad.output;
    EXPECT_NE(bad.output.find("rounding 'NEAREST' is neither TFLITE nor XNNPACK"),
              std::string::npos)
        << bad.output;
    std::string text = temp_path("not_tflite", ".anvil");
    std::ofstream(text) << "def @main(%x: Tensor[(2), float32]) { %x }";
    Result other = run("compile " + text + " -o " + so + " --tflite-rounding XNNPACK");
    EXPECT_EQ(other.status, 1) << other.output;
    EXPECT_NE(
        other.output.find("--tflite-rounding applies to TFLite models; " + text + " is not one"),
        std::string::npos)
        << other.output;
    fs::remove(so);
    fs::remove(text);
}

// anvil tune takes the same option, so that it tunes the kernels compile builds.
TEST(CliTflite, TuneTakesTheRoundingToo) {
    fs::path model = tflite_model("hello_world_int8.tflite");
    ANVIL_REQUIRE_SHARED_MODELS(fs::exists(model));
    std::string records = temp_path("hello_int8_records", ".json");
    Result bad =
        run("tune " + model.string() + " -o " + records + " --trials 1 --tflite-rounding NEAREST");
    EXPECT_EQ(bad.status, 1) << bad.output;
    EXPECT_NE(bad.output.find("rounding 'NEAREST' is neither TFLITE nor XNNPACK"),
              std::string::npos)
        << bad.output;
    Result tuned =
        run("tune " + model.string() + " -o " + records + " --trials 2 --tflite-rounding XNNPACK");
    EXPECT_EQ(tuned.status, 0) << tuned.output;
    for (const auto& p : {records, records + ".curve.csv", records + ".curve.png"}) fs::remove(p);
}

TEST(CliTflite, RefusalsExitOneWithTheMessage) {
    // A CUSTOM operator the importer has no converter for (TFLite's AudioSpectrogram).
    anvil::testing::TestModel spectrogram;
    spectrogram.tensors = {{.name = "audio", .shape = {16, 1}}, {.name = "s", .shape = {1, 3, 5}}};
    spectrogram.operators = {{.builtin = anvil::frontend::tflite::op::kCustom,
                              .inputs = {0},
                              .outputs = {1},
                              .custom_code = "AudioSpectrogram"}};
    spectrogram.inputs = {0};
    spectrogram.outputs = {1};
    std::string model = temp_path("spectrogram", ".tflite");
    std::vector<uint8_t> bytes = anvil::testing::build_tflite(spectrogram);
    std::ofstream(model, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    Result r = run("compile " + model + " -o " + temp_so("spectrogram"));
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_NE(r.output.find("operator 0 (CUSTOM 'AudioSpectrogram')"), std::string::npos)
        << r.output;
    fs::remove(model);
    fs::path hello = tflite_model("hello_world_float.tflite");
    Result dtype = run("compile " + hello.string() + " -o " + temp_so("hello_dtype") +
                       " --input-shapes 'serving_default_dense_input:0:[1,1]:int8'");
    EXPECT_EQ(dtype.status, 1) << dtype.output;
    EXPECT_NE(dtype.output.find("is float32 in the model; the given dtype is int8"),
              std::string::npos)
        << dtype.output;
    std::string garbage = temp_path("garbage", ".tflite");
    std::ofstream(garbage) << "not a flatbuffer";
    Result bad = run("compile " + garbage + " -o " + temp_so("garbage"));
    EXPECT_EQ(bad.status, 1) << bad.output;
    EXPECT_NE(bad.output.find("not a valid TFLite model"), std::string::npos) << bad.output;
    EXPECT_EQ(bad.output.find("terminate"), std::string::npos) << bad.output;
    fs::remove(garbage);
}

}  // namespace
