// One graph pass run alone (driver/pipeline.h run_graph_pass, what anvil.transform.<name>()(mod)
// calls): no other pass runs with it — fuse_ops only where it is the pass asked for — and the
// pass is found by name in the one table (graph/passes/pass_table.h) the pipeline uses too.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>

#include "driver/compile.h"
#include "driver/evaluate.h"
#include "driver/pipeline.h"
#include "graph/parser.h"
#include "graph/passes/pass_table.h"
#include "graph/printer.h"
#include "ops/op_table.h"

namespace anvil::driver {
namespace {

// Constant arithmetic to fold, a dense with a constant weight to pack, ops to fuse: something
// for several passes to do. (The weight: 3 x 4 ones; then the scalars 2 and 3.)
const char* const kModule = R"(def @main(%x: Tensor[(2, 4), float32]) {
  %0 = add(meta[Constant][1], meta[Constant][2]);
  %1 = multiply(%x, %0);
  %2 = nn.dense(%1, meta[Constant][0]);
  nn.relu(%2)
}

#[metadata]
meta[Constant][0]: Tensor[(3, 4), float32] = "AACAPwAAgD8AAIA/AACAPwAAgD8AAIA/AACAPwAAgD8AAIA/AACAPwAAgD8AAIA/"
meta[Constant][1]: Tensor[(), float32] = "AAAAQA=="
meta[Constant][2]: Tensor[(), float32] = "AABAQA=="
)";

graph::IRModule test_module() {
    return graph::parse_module(kModule, ops::op_table());
}

graph::PassContext context() {
    graph::PassContext ctx;
    ctx.evaluate = evaluate_constant;
    return ctx;
}

bool has_primitive_function(const graph::IRModule& m) {
    return graph::print(m).find("primitive=1") != std::string::npos;
}

TEST(GraphPassRunner, FoldConstantsRunsAlone) {
    graph::IRModule out = run_graph_pass(test_module(), "fold_constants", context(), {});
    const std::string text = graph::print(out, graph::PrintOptions{.metadata = false});
    EXPECT_FALSE(has_primitive_function(out)) << text;
    EXPECT_EQ(text.find("add("), std::string::npos) << text;
    // 2 + 3, folded: a scalar, written inline.
    EXPECT_NE(text.find("multiply(%x, 5f)"), std::string::npos) << text;
    EXPECT_NE(text.find("nn.dense("), std::string::npos) << text;  // not packed: no other pass
}

TEST(GraphPassRunner, OnlyFuseOpsMakesPrimitiveFunctions) {
    for (const auto& pass : graph::graph_passes()) {
        graph::PassContext ctx = context();
        // (By name, it needs the half type the pipeline gives it.)
        if (std::string(pass.name) == "to_mixed_precision")
            ctx.mixed_precision = DataType::bfloat16();
        graph::IRModule out = run_graph_pass(test_module(), pass.name, ctx, {});
        EXPECT_EQ(has_primitive_function(out), std::string(pass.name) == "fuse_ops") << pass.name;
    }
}

TEST(GraphPassRunner, PrintsAfterThePassWhenAsked) {
    std::ostringstream log;
    PipelineOptions options;
    options.print_after = "prepack_weights";
    options.log = &log;
    run_graph_pass(test_module(), "prepack_weights", context(), options);
    EXPECT_NE(log.str().find("// after prepack_weights"), std::string::npos);
    EXPECT_NE(log.str().find("nn.dense_packed("), std::string::npos) << log.str();
}

TEST(GraphPassRunner, AnUnknownNameListsThePasses) {
    try {
        run_graph_pass(test_module(), "fold_constant", context(), {});
        FAIL() << "no error";
    } catch (const UserError& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find("unknown graph pass 'fold_constant'"), std::string::npos);
        EXPECT_NE(message.find("fold_constants"), std::string::npos) << message;
        EXPECT_NE(message.find("fuse_ops"), std::string::npos) << message;
    }
}

TEST(GraphPassRunner, TheTableNamesEachPassOnce) {
    std::vector<std::string> names = graph_pass_names();
    EXPECT_EQ(names.size(), graph::graph_passes().size());
    std::sort(names.begin(), names.end());
    EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end());
    for (const auto& name : names) EXPECT_NE(graph::find_graph_pass(name), nullptr) << name;
    EXPECT_EQ(graph::find_graph_pass("bind_params"), nullptr);  // takes values, not a context
}

TEST(GraphPassRunner, TheCompileContextCarriesTheTarget) {
    const Target aarch64 = Target::parse("llvm -mtriple=aarch64-linux-gnu");
    EXPECT_EQ(compile_pass_context({}, aarch64).target, aarch64);
    EXPECT_EQ(graph::PassContext{}.target, Target::host());
}

}  // namespace
}  // namespace anvil::driver
