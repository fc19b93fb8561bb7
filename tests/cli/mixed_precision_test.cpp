// anvil compile --mixed-precision: a bfloat16 ResNet-18 classifies its test input as the float32
// one does, and a value other than bf16/fp16 is an error naming the option.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cli/cli_run.h"
#include "require_package.h"

namespace {

namespace fs = std::filesystem;
using anvil::cli::testing::Result;
using anvil::cli::testing::run;
using anvil::cli::testing::temp_so;

// The class index `anvil run --print-top 1` prints: "top-1 of output 0: 556 (1.57)".
std::string top1(const std::string& output) {
    const std::string mark = "top-1 of output 0: ";
    size_t at = output.find(mark);
    if (at == std::string::npos) return "";
    at += mark.size();
    return output.substr(at, output.find(' ', at) - at);
}

TEST(CliMixedPrecision, Bfloat16ResNet18KeepsTheFloat32Top1) {
    fs::path dir = fs::path(ANVIL_SOURCE_DIR) / ".." / "shared" / "models" / "resnet18";
    ANVIL_REQUIRE_SHARED_MODELS(fs::exists(dir / "model.onnx"));
    std::string inputs = (dir / "test_data_set_0").string();
    std::string classes[2];
    for (int bf16 = 0; bf16 < 2; ++bf16) {
        std::string so = temp_so(bf16 ? "resnet18_bf16" : "resnet18_fp32");
        Result c = run("compile " + (dir / "model.onnx").string() + " -o " + so +
                       (bf16 ? " --mixed-precision bf16 --print-after to_mixed_precision" : ""));
        ASSERT_EQ(c.status, 0) << c.output;
        if (bf16) {
            // The convolutions take bfloat16 and sum in float32.
            EXPECT_NE(c.output.find("bfloat16"), std::string::npos);
            EXPECT_NE(c.output.find("out_dtype=\"float32\""), std::string::npos);
        }
        Result r = run("run " + so + " --inputs " + inputs + " --print-top 1");
        ASSERT_EQ(r.status, 0) << r.output;
        classes[bf16] = top1(r.output);
        fs::remove(so);
    }
    EXPECT_FALSE(classes[0].empty());
    EXPECT_EQ(classes[1], classes[0]);
}

TEST(CliMixedPrecision, OtherTypesAreAnErrorNamingTheOption) {
    fs::path model = "/usr/share/libonnx-testdata/data/node/test_relu/model.onnx";
    ANVIL_REQUIRE_ONNX_TESTDATA(fs::exists(model));
    Result r = run("compile " + model.string() + " -o " + temp_so("mixed_bad") +
                   " --mixed-precision int8");
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_NE(r.output.find("--mixed-precision: expected bf16 (bfloat16) or fp16 (float16), got "
                            "'int8'"),
              std::string::npos)
        << r.output;
    EXPECT_EQ(r.output.find("terminate"), std::string::npos) << r.output;
}

}  // namespace
