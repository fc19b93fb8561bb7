// Control flow from ONNX: If, Loop and Scan become graph functions called by control.if /
// control.loop and run on the VM. The models are the ONNX backend tests' (Debian's
// libonnx-testdata), run here with other values than the tests use, so nothing is specialized
// on a test's data: both branches of If, loops of several lengths (zero included), scans over
// other inputs; Scan-8 (batched) on a model built here.
#include <gtest/gtest.h>

#include "conformance/node_model.h"
#include "driver/evaluate.h"
#include "graph/parser.h"
#include "graph/printer.h"
#include "graph/structural_equal.h"
#include "ops/op_table.h"
#include "unit/frontend/onnx_test_util.h"

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

// Scan-8: every batch element scanned on its own; the second scan input runs backwards.
TEST(ControlFlowModels, Scan8ScansEachBatchElement) {
    frontend::testing::ModelBuilder b(8);
    b.input("init", {3, 2}).input("x", {3, 4, 2}).input("w", {3, 4, 2});
    auto* scan = b.node("Scan", {"", "init", "x", "w"}, {"final", "steps"}, "scan_8");
    frontend::testing::ModelBuilder::attr_int(scan, "num_scan_inputs", 2);
    frontend::testing::ModelBuilder::attr_ints(scan, "directions", {0, 1});
    auto* attr = scan->add_attribute();
    attr->set_name("body");
    attr->set_type(::onnx::AttributeProto::GRAPH);
    ::onnx::GraphProto* g = attr->mutable_g();
    g->set_name("body");
    for (const char* in : {"s", "xi", "wi"}) {
        frontend::testing::ModelBuilder::set_type(g->add_input(), ::onnx::TensorProto::FLOAT, {2},
                                                  {});
        g->mutable_input(g->input_size() - 1)->set_name(in);
    }
    auto add = [&](const char* op, std::vector<std::string> ins, const char* out) {
        auto* n = g->add_node();
        n->set_op_type(op);
        for (const auto& i : ins) n->add_input(i);
        n->add_output(out);
    };
    add("Mul", {"xi", "wi"}, "xw");
    add("Add", {"s", "xw"}, "s_next");
    add("Identity", {"s_next"}, "y");
    g->add_output()->set_name("s_next");
    g->add_output()->set_name("y");
    b.output("final").output("steps");
    CompiledNodeModel m(b.import());
    std::vector<float> init(6), x(24), w(24);
    for (size_t i = 0; i < init.size(); ++i) init[i] = static_cast<float>(i);
    for (size_t i = 0; i < x.size(); ++i) {
        x[i] = static_cast<float>(i % 7) - 3;
        w[i] = static_cast<float>(i % 5) * 0.5f;
    }
    std::vector<NDArray> out =
        m.run({array({3, 2}, init, "float32"), array({3, 4, 2}, x, "float32"),
               array({3, 4, 2}, w, "float32")});
    std::vector<float> want_final, want_steps;
    for (int bi = 0; bi < 3; ++bi) {
        float s[2] = {init[bi * 2], init[bi * 2 + 1]};
        for (int t = 0; t < 4; ++t) {
            for (int k = 0; k < 2; ++k) {
                s[k] += x[(bi * 4 + t) * 2 + k] * w[(bi * 4 + (3 - t)) * 2 + k];
                want_steps.push_back(s[k]);
            }
        }
        want_final.insert(want_final.end(), s, s + 2);
    }
    EXPECT_EQ(shape_of(out[1]), (std::vector<int64_t>{3, 4, 2}));
    EXPECT_EQ(out[0].to_vector<float>(), want_final);
    EXPECT_EQ(out[1].to_vector<float>(), want_steps);
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
