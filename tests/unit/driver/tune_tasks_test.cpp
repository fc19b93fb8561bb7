// Tuning tasks and the default schedules: the default configuration of every knob reproduces the
// analytical schedules exactly. The golden files (tests/golden/schedules/) hold every distinct
// kernel's schedule primitives for four networks; they were written before the schedules'
// constants became knobs, so a knob whose default differs from the constant it replaced fails
// here.
#include "driver/tune_tasks.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "driver/workload_key.h"
#include "frontend/onnx/from_onnx.h"
#include "golden/golden_file.h"
#include "require_package.h"

namespace anvil::driver {
namespace {

std::string model_path(const std::string& name) {
    std::string shared = "/work/shared/models/" + name + "/model.onnx";
    if (std::filesystem::exists(shared)) return shared;
    return std::string(ANVIL_SOURCE_DIR) + "/tests/models/" + name + "/model.onnx";
}

std::string schedules_text(const std::vector<TuneTask>& tasks) {
    std::string text;
    for (const auto& t : tasks) {
        text += "## " + t.name + " (calls " + std::to_string(t.weight) + ")\n" +
                te::print_record(t.default_schedule);
        if (!text.empty() && text.back() != '\n') text += "\n";
    }
    return text;
}

void expect_default_schedules(const std::string& model) {
    std::string path = model_path(model);
    ANVIL_REQUIRE_SHARED_MODELS(std::filesystem::exists(path));
    auto tasks = extract_tasks(frontend::from_onnx(path), "llvm -mcpu=znver4");
    ASSERT_FALSE(tasks.empty());
    golden::compare_or_update(schedules_text(tasks),
                              golden::golden_path("schedules", model + ".txt"));
}

TEST(DefaultSchedules, ResNet18) {
    expect_default_schedules("resnet18");
}
TEST(DefaultSchedules, MobileNetV2) {
    expect_default_schedules("mobilenet_v2");
}
TEST(DefaultSchedules, GoogLeNet) {
    expect_default_schedules("googlenet");
}
TEST(DefaultSchedules, BertTiny) {
    expect_default_schedules("bert_tiny_gelu");
}

TEST(TuneTasks, OneTaskPerWorkloadWeightedByCalls) {
    std::string path = model_path("resnet18");
    ANVIL_REQUIRE_SHARED_MODELS(std::filesystem::exists(path));
    auto m = frontend::from_onnx(path);
    auto tasks = extract_tasks(m, "llvm -mcpu=znver4");
    int calls = 0, repeated = 0;
    std::set<std::string> keys;
    for (const auto& t : tasks) {
        EXPECT_TRUE(keys.insert(t.workload).second) << "two tasks share " << t.workload;
        EXPECT_EQ(t.workload.rfind(kWorkloadKeyVersion, 0), 0u) << t.workload;
        EXPECT_GE(t.weight, 1);
        calls += t.weight;
        repeated += t.weight > 1;
        EXPECT_TRUE(t.static_shapes);
    }
    // ResNet-18 repeats its 3x3 convolutions within a stage.
    EXPECT_GT(repeated, 0);
    EXPECT_GT(calls, static_cast<int>(tasks.size()));
    // Extracting again gives the same keys: nothing of a run enters them.
    auto again = extract_tasks(m, "llvm -mcpu=znver4");
    ASSERT_EQ(again.size(), tasks.size());
    for (size_t i = 0; i < tasks.size(); ++i) EXPECT_EQ(again[i].workload, tasks[i].workload);
}

}  // namespace
}  // namespace anvil::driver
