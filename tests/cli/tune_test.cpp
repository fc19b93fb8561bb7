// anvil tune and anvil compile --tuning-records end to end, with a tiny budget.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cli_run.h"

namespace anvil::cli::testing {
namespace {

namespace fs = std::filesystem;

const char* kConvRelu =
    R"(def @main(%x: Tensor[(1, 16, 12, 12), float32], %w: Tensor[(16, 16, 3, 3), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);
  nn.relu(%0)
}
)";

TEST(CliTune, TunesWritesRecordsCurveAndCompileAppliesThem) {
    std::string model = write_temp_module("tune_conv", kConvRelu);
    std::string records = temp_path("tune_records", ".json");
    std::string cache = temp_path("tune_cache", "");
    fs::remove(records);
    fs::remove_all(cache);
    Result t = run("tune " + model + " --target llvm -o " + records +
                   " --trials 5 --tuner ga --tuning-cache " + cache);
    ASSERT_EQ(t.status, 0) << t.output;
    EXPECT_NE(t.output.find("speedup"), std::string::npos) << t.output;
    EXPECT_NE(t.output.find("5 trials"), std::string::npos) << t.output;
    EXPECT_TRUE(fs::exists(records + ".curve.csv"));
    EXPECT_TRUE(fs::exists(records + ".curve.png"));
    std::string so = temp_so("tune_conv");
    Result c = run("compile " + model + " --target llvm -o " + so + " --tuning-records " + records);
    ASSERT_EQ(c.status, 0) << c.output;
    EXPECT_NE(c.output.find("tuning records: 1 of 1 tunable kernels"), std::string::npos)
        << c.output;
    // A corrupt line is a warning naming the file and line, not a failure.
    std::ofstream(records, std::ios::app) << "{not json\n";
    Result w = run("compile " + model + " --target llvm -o " + so + " --tuning-records " + records);
    EXPECT_EQ(w.status, 0) << w.output;
    EXPECT_NE(w.output.find("warning: " + records + ":"), std::string::npos) << w.output;
    for (const auto& p : {model, records, records + ".curve.csv", records + ".curve.png", so}) {
        fs::remove(p);
    }
    fs::remove_all(cache);
}

TEST(CliTune, BadArgumentsAreErrorsNotCrashes) {
    std::string model = write_temp_module("tune_bad", kConvRelu);
    Result no_output = run("tune " + model + " --trials 3");
    EXPECT_EQ(no_output.status, 2) << no_output.output;
    EXPECT_NE(no_output.output.find("-o"), std::string::npos) << no_output.output;
    Result no_budget = run("tune " + model + " -o /tmp/x.json");
    EXPECT_EQ(no_budget.status, 2) << no_budget.output;
    EXPECT_NE(no_budget.output.find("budget"), std::string::npos) << no_budget.output;
    Result bad_duration = run("tune " + model + " -o /tmp/x.json --time-budget 10x");
    EXPECT_EQ(bad_duration.status, 2) << bad_duration.output;
    EXPECT_NE(bad_duration.output.find("--time-budget"), std::string::npos) << bad_duration.output;
    EXPECT_EQ(run("tune " + model + " -o /tmp/x.json --trials 3 --tuner annealing").status, 2);
    Result missing = run("compile " + model + " -o /tmp/x.so --tuning-records /nonexistent.json");
    EXPECT_EQ(missing.status, 1) << missing.output;
    EXPECT_NE(missing.output.find("/nonexistent.json"), std::string::npos) << missing.output;
    fs::remove(model);
}

TEST(CliTune, NothingMeasurableIsAnErrorNamingWhy) {
    // Without a C compiler on PATH no candidate can be linked: every trial fails to compile.
    std::string model = write_temp_module("tune_nocc", kConvRelu);
    std::string records = temp_path("tune_nocc", ".json");
    fs::remove(records);
    Result r = run_with_env("PATH=/nonexistent",
                            "tune " + model + " -o " + records + " --trials 2 --no-tuning-cache");
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_NE(r.output.find("no candidate of any task could be measured"), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("compile: "), std::string::npos) << r.output;
    for (const auto& p : {model, records, records + ".curve.csv", records + ".curve.png"}) {
        fs::remove(p);
    }
}

}  // namespace
}  // namespace anvil::cli::testing
