// The execution plan's JSON form: round trip, and the errors a bad plan raises at load time.
#include "runtime/graph_plan.h"

#include <gtest/gtest.h>

#include <string>

#include "add_plan.h"
#include "runtime/graph_executor.h"

namespace anvil::runtime {
namespace {

std::string replace(std::string text, const std::string& from, const std::string& to) {
    size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
    return text;
}

std::string error_of(const std::string& json) {
    try {
        plan_from_json(json);
    } catch (const UserError& e) {
        return e.what();
    }
    return "(no error)";
}

TEST(GraphPlan, ParsesTheSchema) {
    GraphPlan plan = plan_from_json(kAddPlan);
    ASSERT_EQ(plan.nodes.size(), 3u);
    EXPECT_EQ(plan.nodes[2].kind, PlanNodeKind::kernel);
    EXPECT_EQ(plan.nodes[2].kernel, "k");
    EXPECT_EQ(plan.nodes[2].args, (std::vector<PlanEntry>{{0, 0}, {1, 0}}));
    EXPECT_EQ(plan.nodes[2].outputs[0].storage, 1);
    EXPECT_EQ(plan.outputs[0].name, "y");
    EXPECT_EQ(plan.outputs[0].entry, (PlanEntry{2, 0}));
    EXPECT_EQ(plan.params.at("w").nbytes, 24);
    EXPECT_EQ(plan_storage_bytes(plan), 128);  // allocations are 64-byte multiples
    EXPECT_EQ(plan_unshared_bytes(plan), 128);
}

TEST(GraphPlan, RoundTripsThroughJson) {
    GraphPlan plan = plan_from_json(kAddPlan);
    // A multi-output kernel uses the "outputs" list form.
    plan.nodes.push_back(
        {.kind = PlanNodeKind::kernel,
         .name = "split",
         .kernel = "s",
         .args = {{2, 0}},
         .outputs = {{{2, 1}, {kDLFloat, 32, 1}, 0}, {{2, 2}, {kDLInt, 8, 1}, 1}}});
    plan.outputs.push_back({"second", {3, 1}});
    std::string text = plan_to_json(plan);
    EXPECT_NE(text.find("\"outputs\":[{"), std::string::npos) << text;
    GraphPlan back = plan_from_json(text);
    EXPECT_EQ(plan_to_json(back, 2), plan_to_json(plan, 2));
    EXPECT_EQ(back.nodes[3].outputs[1].dtype.code, kDLInt);
    EXPECT_EQ(back.outputs[1].entry, (PlanEntry{3, 1}));
}

// A kernel node's operation count (for profiling) is optional: absent means unknown (-1).
TEST(GraphPlan, KernelFlopsAreOptional) {
    GraphPlan plan = plan_from_json(kAddPlan);
    EXPECT_EQ(plan.nodes[2].flops, -1);
    EXPECT_EQ(plan_to_json(plan).find("flops"), std::string::npos);
    plan.nodes[2].flops = 1234567890123;
    GraphPlan back = plan_from_json(plan_to_json(plan));
    EXPECT_EQ(back.nodes[2].flops, 1234567890123);
}

TEST(GraphPlan, PackParamsAlignsEveryTensor) {
    GraphPlan plan;
    auto a = NDArray::empty({3}, {kDLFloat, 32, 1});
    auto b = NDArray::empty({5}, {kDLInt, 8, 1});
    a.copy_from(std::vector<float>{1, 2, 3});
    b.copy_from(std::vector<int8_t>{1, 2, 3, 4, 5});
    std::string blob = pack_params({{"a", a}, {"b", b}}, &plan);
    EXPECT_EQ(plan.params.at("a").offset, 0);
    EXPECT_EQ(plan.params.at("b").offset, 64);
    EXPECT_EQ(plan.params.at("b").nbytes, 5);
    EXPECT_EQ(blob.size(), 69u);
    EXPECT_EQ(blob[64 + 4], 5);
}

struct BadPlan {
    const char* from;
    const char* to;
    const char* message;
};

class GraphPlanErrors : public ::testing::TestWithParam<BadPlan> {};

TEST_P(GraphPlanErrors, NameWhatIsWrong) {
    const BadPlan& bad = GetParam();
    std::string message = error_of(replace(kAddPlan, bad.from, bad.to));
    EXPECT_NE(message.find(bad.message), std::string::npos) << message;
    EXPECT_EQ(message.rfind("graph plan: ", 0), 0u) << message;
}

INSTANTIATE_TEST_SUITE_P(
    All, GraphPlanErrors,
    ::testing::Values(
        BadPlan{"\"version\": 1", "\"version\": 7", "version 7 is not supported"},
        BadPlan{"\"version\": 1,", "", "missing key 'version'"},
        BadPlan{"\"kind\": \"kernel\"", "\"kind\": \"conv\"", "unknown kind 'conv'"},
        BadPlan{"\"args\": [0, [1, 0]]", "\"args\": [0, 2]",
                "nodes[2] ('add'): argument node 2 does not refer to an earlier node"},
        BadPlan{"\"args\": [0, [1, 0]]", "\"args\": [0, [1, 1]]", "node 'w' has no output 1"},
        BadPlan{"\"kernel\": \"k\",", "\"kernel\": \"k\", \"flops\": -5,",
                "nodes[2] ('add'): 'flops' must be >= 0"},
        BadPlan{"\"kernel\": \"k\",", "\"kernel\": \"k\", \"flops\": 1.5,",
                "'flops' must be an integer"},
        BadPlan{"\"args\": [0, [1, 0]]", "\"args\": [0, \"w\"]",
                "an argument must be a node id or a [node, index] pair"},
        BadPlan{"\"dtype\": \"float32\", \"storage\": 0", "\"dtype\": \"floaty\", \"storage\": 0",
                "unknown data type 'floaty'"},
        BadPlan{"\"shape\": [2, 3], \"dtype\": \"float32\", \"storage\": 1",
                "\"shape\": [2, 30], \"dtype\": \"float32\", \"storage\": 1",
                "needs 240 bytes but storage 1 has 24"},
        BadPlan{"\"storage\": 1}", "\"storage\": 9}", "storage id 9 is not declared"},
        BadPlan{"{\"id\": 1, \"bytes\": 24, \"device\": \"cpu\"}",
                "{\"id\": 0, \"bytes\": 24, \"device\": \"cpu\"}", "duplicate storage id"},
        BadPlan{"\"device\": \"cpu\"", "\"device\": \"cuda\"", "device 'cuda' is not supported"},
        BadPlan{"\"offset\": 0", "\"offset\": 4", "offset 4 is not a non-negative multiple of 64"},
        BadPlan{"\"nbytes\": 24", "\"nbytes\": 20", "'nbytes' is 20"},
        BadPlan{"{\"w\": {", "{\"v\": {", "nodes[1] ('w'): no entry in 'params'"},
        BadPlan{"\"name\": \"add\"", "\"name\": \"x\"", "two nodes are named 'x'"},
        BadPlan{"{\"name\": \"x\", \"node\": 0}", "{\"name\": \"x\", \"node\": 2}",
                "node 2 ('add') is not an input node"},
        BadPlan{"{\"node\": 2, \"name\": \"y\"}", "{\"node\": 5, \"name\": \"y\"}",
                "outputs[0] ('y'): node 5 does not exist"},
        BadPlan{"\"version\": 1,", "\"version\": 1,,", "not valid JSON"}));

// The executor's per-node tensors are views of its storage buffers.
TEST(NDArrayView, SharesMemoryAndKeepsItAlive) {
    NDArray view;
    {
        NDArray base = NDArray::empty({16}, {kDLUInt, 8, 1});
        for (int i = 0; i < 16; ++i) base.data<uint8_t>()[i] = static_cast<uint8_t>(i);
        view = base.view({2, 2}, {kDLUInt, 8, 1}, 4);
        EXPECT_EQ(view.raw_data(), base.data<uint8_t>() + 4);
        EXPECT_THROW(base.view({17}, {kDLUInt, 8, 1}), UserError);
        EXPECT_THROW(base.view({4}, {kDLFloat, 32, 1}, 4), UserError);
        EXPECT_NO_THROW(base.view({4}, {kDLFloat, 32, 1}, 0));
    }
    EXPECT_EQ(view.to_vector<uint8_t>(), (std::vector<uint8_t>{4, 5, 6, 7}));
    EXPECT_EQ(view.str(), "uint8[2, 2]");
    static float external[4] = {1, 2, 3, 4};
    NDArray wrapped = NDArray::wrap(external, {4}, {kDLFloat, 32, 1}, nullptr);
    EXPECT_EQ(wrapped.to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
}

// Kernels written in C++: the executor needs only a module that has functions by name.
class FakeModule : public ModuleNode {
public:
    PackedFunc get_function(const std::string& name) override {
        if (name == "k") {  // out = a + b, float32
            return PackedFunc([](const Args& args, RetValue*) {
                if (args.size() != 3) user_error() << "k: expected 3 arguments";
                DLTensor* a = args[0].as_tensor();
                DLTensor* b = args[1].as_tensor();
                DLTensor* out = args[2].as_tensor();
                for (int i = 0; i < 6; ++i) {
                    static_cast<float*>(out->data)[i] =
                        static_cast<float*>(a->data)[i] + static_cast<float*>(b->data)[i];
                }
            });
        }
        if (name == "fails") {
            return PackedFunc([](const Args&, RetValue*) { user_error() << "fails: bad day"; });
        }
        return PackedFunc();
    }
    std::vector<std::string> function_names() const override { return {"k", "fails"}; }
};

std::string executor_error(const GraphPlan& plan, std::span<const std::byte> params, Module m) {
    try {
        GraphExecutor ex(plan, params, std::move(m));
        ex.run();
    } catch (const UserError& e) {
        return e.what();
    }
    return "(no error)";
}

TEST(GraphExecutorRuntime, RunsKernelsFromAnyModule) {
    GraphExecutor ex(std::string(kAddPlan), float_bytes({10, 20, 30, 40, 50, 60}),
                     Module(make_ref<FakeModule>()));
    EXPECT_EQ(ex.num_inputs(), 1);
    EXPECT_EQ(ex.num_outputs(), 1);
    EXPECT_EQ(ex.input_info(0).name, "x");
    EXPECT_EQ(ex.output_info(0).name, "y");
    EXPECT_EQ(ex.output_info(0).shape, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(ex.planned_bytes(), 128);
    EXPECT_EQ(ex.param_bytes(), 24);
    auto x = NDArray::empty({2, 3}, {kDLFloat, 32, 1});
    x.copy_from(std::vector<float>{1, 2, 3, 4, 5, 6});
    ex.set_input("x", x);
    ex.run();
    NDArray y = ex.get_output(0);
    EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{11, 22, 33, 44, 55, 66}));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(y.raw_data()) % ANVIL_TENSOR_ALIGNMENT, 0u);
    auto copy = NDArray::empty({2, 3}, {kDLFloat, 32, 1});
    ex.copy_output(0, copy.tensor());
    EXPECT_EQ(copy.to_vector<float>(), y.to_vector<float>());
}

TEST(GraphExecutorRuntime, ChecksInputs) {
    GraphExecutor ex(std::string(kAddPlan), float_bytes({0, 0, 0, 0, 0, 0}),
                     Module(make_ref<FakeModule>()));
    auto expect_error = [&](auto&& action, const std::string& message) {
        try {
            action();
            ADD_FAILURE() << "no error; expected " << message;
        } catch (const UserError& e) {
            EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
        }
    };
    auto x = NDArray::empty({2, 3}, {kDLFloat, 32, 1});
    expect_error([&] { ex.set_input("image", x); },
                 "the model has no input named 'image'; its inputs are 'x'");
    expect_error([&] { ex.set_input(3, x); }, "input index 3 is out of range");
    expect_error(
        [&] {
            ex.set_input("x", NDArray::empty({3, 2}, {kDLFloat, 32, 1}));
        },
        "set_input: input 0 'x': expected float32[2, 3], got float32[3, 2]");
    expect_error(
        [&] {
            ex.set_input("x", NDArray::empty({2, 3}, {kDLInt, 32, 1}));
        },
        "expected float32[2, 3], got int32[2, 3]");
    expect_error([&] { ex.get_output(1); }, "output index 1 is out of range");
}

TEST(GraphExecutorRuntime, ReportsPlanAndKernelErrors) {
    GraphPlan plan = plan_from_json(kAddPlan);
    auto params = float_bytes({0, 0, 0, 0, 0, 0});
    EXPECT_NE(executor_error(plan, params, Module()).find("module is null"), std::string::npos);
    std::string short_blob =
        executor_error(plan, std::span<const std::byte>(params.data(), 8), Module());
    EXPECT_NE(short_blob.find("lie outside the parameter blob of 8 bytes"), std::string::npos)
        << short_blob;
    plan.nodes[2].kernel = "missing";
    std::string missing = executor_error(plan, params, Module(make_ref<FakeModule>()));
    EXPECT_NE(missing.find("node 2 'add' calls kernel 'missing', which the module does not"),
              std::string::npos)
        << missing;
    plan.nodes[2].kernel = "fails";
    std::string fails = executor_error(plan, params, Module(make_ref<FakeModule>()));
    EXPECT_NE(fails.find("node 2 'add' (kernel 'fails') failed: fails: bad day"), std::string::npos)
        << fails;
}

TEST(GraphExecutorRuntime, CApiReportsErrors) {
    AnvilGraphExecutorHandle h = nullptr;
    EXPECT_EQ(anvil_graph_executor_create_from_file("/nonexistent/model.so", &h), -1);
    EXPECT_EQ(h, nullptr);
    EXPECT_NE(std::string(anvil_get_last_error()).find("/nonexistent/model.so"), std::string::npos)
        << anvil_get_last_error();
    EXPECT_EQ(anvil_graph_executor_run(nullptr), -1);
    EXPECT_NE(std::string(anvil_get_last_error()).find("handle is NULL"), std::string::npos);
    EXPECT_EQ(anvil_graph_executor_create("{", nullptr, 0, nullptr, &h), -1);
    EXPECT_NE(std::string(anvil_get_last_error()).find("not valid JSON"), std::string::npos);
}

}  // namespace
}  // namespace anvil::runtime
