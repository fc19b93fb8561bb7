// A model that is one long chain of ops compiles and runs: the passes recurse once per nested
// expression, so compile_model runs them on a thread with a large stack (support/large_stack.h).
// Before, a chain of 5,000 ops overflowed the 8 MiB stack: a crash, not even an error.
#include <gtest/gtest.h>

#include <string>

#include "driver/compile.h"
#include "driver/evaluate.h"
#include "graph/parser.h"
#include "ops/op_table.h"
#include "support/error.h"
#include "support/large_stack.h"

namespace anvil::driver {
namespace {

// x -> negative -> abs -> negative -> abs ... (`length` ops) over a [3] tensor.
graph::IRModule chain(int length) {
    std::string text = "def @main(%x: Tensor[(3), float32]) {\n";
    std::string prev = "%x";
    for (int i = 0; i < length; ++i) {
        text += "  %" + std::to_string(i) + " = " + (i % 2 ? "abs(" : "negative(") + prev + ");\n";
        prev = "%" + std::to_string(i);
    }
    text += "  " + prev + "\n}\n";
    return graph::parse_module(text, ops::op_table());
}

TEST(DeepGraph, AChainOfTwentyThousandOpsCompilesAndRuns) {
    CompiledModel c = compile_model(chain(20000), "llvm", {});
    runtime::NDArray x = runtime::NDArray::empty({3}, {kDLFloat, 32, 1});
    x.copy_from(std::vector<float>{-2.0f, 0.5f, 3.0f});
    std::vector<runtime::NDArray> out = run_in_process(c.module, c.kernels, {x});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{2.0f, 0.5f, 3.0f}));  // |x|
}

TEST(DeepGraph, ErrorsComeBackFromTheLargeStack) {
    EXPECT_THROW(call_with_large_stack([]() -> int { throw UserError("from the other thread"); }),
                 UserError);
    EXPECT_EQ(call_with_large_stack([] { return 42; }), 42);
}

}  // namespace
}  // namespace anvil::driver
