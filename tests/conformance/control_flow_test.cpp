// Control flow from ONNX: If, Loop and Scan become graph functions called by control.if /
// control.loop and run on the VM. The models are the ONNX backend tests' (Debian's
// libonnx-testdata), run here with other values than the tests use, so nothing is specialized
// on a test's data: both branches of If, loops of several lengths (zero included), scans over
// other inputs.
#include <gtest/gtest.h>

#include "conformance/node_model.h"
#include "driver/evaluate.h"
#include "graph/parser.h"
#include "graph/printer.h"
#include "graph/structural_equal.h"
#include "ops/op_table.h"

namespace anvil {
namespace {

using runtime::NDArray;
using testing::array;
using testing::CompiledNodeModel;
using testing::error_of;
using testing::shape_of;

using ControlFlow = testing::NodeModelTest;

NDArray scalar_float(float v) {
    return array<float>({}, {v}, "float32");
}

TEST_F(ControlFlow, IfRunsTheBranchItsConditionPicks) {
    // then_branch gives [1, 2, 3, 4, 5], else_branch [5, 4, 3, 2, 1] (constants in the model).
    CompiledNodeModel m("test_if");
    NDArray yes = array<uint8_t>({}, {1}, "bool");
    NDArray no = array<uint8_t>({}, {0}, "bool");
    EXPECT_EQ(m.run({yes})[0].to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5}));
    EXPECT_EQ(m.run({no})[0].to_vector<float>(), (std::vector<float>{5, 4, 3, 2, 1}));
    EXPECT_EQ(m.run({yes})[0].to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5}));
}

TEST_F(ControlFlow, LoopRunsAsOftenAsItsBoundsSay) {
    // Range written as a Loop: a trip count computed from the inputs, the value carried from one
    // iteration to the next and each iteration's value stacked as a scan output.
    CompiledNodeModel m("test_range_float_type_positive_delta_expanded");
    struct Case {
        float start, limit, delta;
        std::vector<float> want;
    };
    for (const Case& c : std::vector<Case>{{1, 10, 2.5f, {1, 3.5f, 6, 8.5f}},
                                           {0, 1, 0.25f, {0, 0.25f, 0.5f, 0.75f}},
                                           {-2, -1, 1, {-2}},
                                           {5, 1, 1, {}}}) {
        NDArray out =
            m.run({scalar_float(c.start), scalar_float(c.limit), scalar_float(c.delta)})[0];
        EXPECT_EQ(shape_of(out), (std::vector<int64_t>{static_cast<int64_t>(c.want.size())}));
        EXPECT_EQ(out.to_vector<float>(), c.want) << c.start << " " << c.limit << " " << c.delta;
    }
}

TEST_F(ControlFlow, ScanCarriesStatesAndStacksOutputs) {
    CompiledNodeModel m("test_scan9_sum");  // initial [2], x [3, 2]: running sums of x's rows
    NDArray initial = testing::random_array({2}, 3);
    NDArray x = testing::random_array({3, 2}, 4);
    std::vector<NDArray> out = m.run({initial, x});
    std::vector<float> sum = initial.to_vector<float>(), rows = x.to_vector<float>();
    std::vector<float> want_scan;
    for (int r = 0; r < 3; ++r) {
        for (int k = 0; k < 2; ++k) sum[k] += rows[r * 2 + k];
        want_scan.insert(want_scan.end(), sum.begin(), sum.end());
    }
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].to_vector<float>(), sum);
    EXPECT_EQ(shape_of(out[1]), (std::vector<int64_t>{3, 2}));
    EXPECT_EQ(out[1].to_vector<float>(), want_scan);
}

TEST_F(ControlFlow, ModulesWithControlFlowPrintAndParseBack) {
    for (const char* test :
         {"test_if", "test_scan9_sum", "test_range_float_type_positive_delta_expanded"}) {
        CompiledNodeModel m(test);
        std::string text = graph::print(m.imported());
        EXPECT_NE(text.find("control."), std::string::npos) << text;
        graph::IRModule back = graph::parse_module(text, ops::op_table());
        EXPECT_TRUE(graph::structural_equal(back, m.imported())) << text;
    }
}

TEST(ControlFlowModules, BranchesOfDifferentShapesBindTheResultAtRunTime) {
    // The result's length `d` is known only once a branch has run; the VM binds it from the
    // value the branch returns, and what follows allocates with it.
    const char* text = R"(
def @main(%c: Tensor[(), bool], %x: Tensor[(3,), float32]) {
  %0 = control.if(%c, %x, %x, then_branch="same", else_branch="twice", num_then_args=1,
                  out_shapes=(d,), out_ndims=[1], out_dtypes="float32");
  add(%0, %0)
}
def @same(%a: Tensor[(3,), float32]) { %a }
def @twice(%a: Tensor[(3,), float32]) { concatenate(%a, %a, axis=0) }
)";
    graph::IRModule m = graph::parse_module(text, ops::op_table());
    driver::CompiledModel c = driver::compile_model(m, "llvm");
    NDArray x = array<float>({3}, {1, 2, 3}, "float32");
    auto run = [&](uint8_t cond) {
        return driver::run_in_process(c.module, c.kernels,
                                      {array<uint8_t>({}, {cond}, "bool"), x})[0];
    };
    EXPECT_EQ(run(1).to_vector<float>(), (std::vector<float>{2, 4, 6}));
    EXPECT_EQ(run(0).to_vector<float>(), (std::vector<float>{2, 4, 6, 2, 4, 6}));
}

TEST_F(ControlFlow, CallsOfMissingOrMismatchedFunctionsAreClearErrors) {
    const char* missing = R"(
def @main(%c: Tensor[(), bool], %x: Tensor[(3,), float32]) {
  control.if(%c, %x, %x, then_branch="same", else_branch="nope", num_then_args=1,
             out_shapes=(3,), out_ndims=[1], out_dtypes="float32")
}
def @same(%a: Tensor[(3,), float32]) { %a }
)";
    graph::IRModule m = graph::parse_module(missing, ops::op_table());
    EXPECT_NE(error_of([&] {
                  driver::compile_model(m, "llvm");
              }).find("control.if: the module has no graph function 'nope'"),
              std::string::npos);
    const char* mismatched = R"(
def @main(%c: Tensor[(), bool], %x: Tensor[(3,), float32]) {
  control.if(%c, %x, %x, then_branch="same", else_branch="wider", num_then_args=1,
             out_shapes=(3,), out_ndims=[1], out_dtypes="float32")
}
def @same(%a: Tensor[(3,), float32]) { %a }
def @wider(%a: Tensor[(4,), float32]) { %a }
)";
    m = graph::parse_module(mismatched, ops::op_table());
    EXPECT_NE(error_of([&] { driver::compile_model(m, "llvm"); })
                  .find("argument 0 of 'wider' is Tensor[(3,), float32], its parameter %a is "
                        "Tensor[(4,), float32]"),
              std::string::npos);
}

}  // namespace
}  // namespace anvil
