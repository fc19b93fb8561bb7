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
#include "ops/conv.h"
#include "ops/op_table.h"
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

namespace anvil::driver {
namespace {

// Keys spell every attribute but an unset type: a float convolution's key is the one its records
// were made with before nn.conv2d had out_dtype; an integer one's says so.
TEST(WorkloadKey, UnsetOutDtypeStaysOutOfTheKey) {
    auto key_of = [](DataType data, DataType weight, DataType out) {
        auto x =
            graph::make_var("x", graph::make_tensor_type(std::vector<int64_t>{1, 8, 6, 6}, data));
        auto w =
            graph::make_var("w", graph::make_tensor_type(std::vector<int64_t>{4, 8, 3, 3}, weight));
        auto attrs = make_ref<ops::Conv2DAttrs>();
        const_cast<ops::Conv2DAttrs*>(attrs.get())->out_dtype = out;
        graph::Expr conv =
            graph::make_call(ops::get_op("nn.conv2d"), std::vector<graph::Expr>{x, w}, attrs);
        return workload_key(*graph::make_function(std::vector<Ref<graph::Var>>{x, w}, conv, true));
    };
    std::string f = key_of(DataType::float32(), DataType::float32(), DataType::void_());
    EXPECT_NE(f.find("nn.conv2d(strides=[1, 1], padding=[0, 0, 0, 0], dilation=[1, 1], "
                     "groups=1) "),
              std::string::npos)
        << f;
    std::string i = key_of(DataType::uint(8), DataType::int_(8), DataType::int32());
    EXPECT_NE(i.find("groups=1, out_dtype=\"int32\")"), std::string::npos) << i;
}

}  // namespace
}  // namespace anvil::driver
