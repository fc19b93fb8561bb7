// Golden tests of the loop-IR passes: for each pass P, P.before.tir is parsed, P runs, and the
// printed result must equal P.after.tir byte for byte.
//
// After an intended change of a pass's output, regenerate with
//   ANVIL_UPDATE_GOLDEN=1 build/tests/anvil_tir_golden_tests
// and review the diff of the .after.tir files.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "tir/parser.h"
#include "tir/passes/passes.h"
#include "tir/printer.h"

namespace anvil::tir {
namespace {

std::string golden_path(const std::string& name) {
    return std::string(ANVIL_SOURCE_DIR) + "/tests/golden/tir/" + name;
}

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    EXPECT_TRUE(in.good()) << "cannot read " << path;
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

Ref<PrimFunc> run_pass(const std::string& pass, const Ref<PrimFunc>& f) {
    LowerContext ctx;
    if (pass == "flatten_storage") return flatten_storage(f, ctx);
    Stmt (*fn)(const Stmt&, const LowerContext&) = nullptr;
    if (pass == "simplify") fn = simplify;
    if (pass == "vectorize_loops") fn = vectorize_loops;
    if (pass == "unroll_loops") fn = unroll_loops;
    if (pass == "partition_loops") fn = partition_loops;
    if (pass == "reuse_storage") fn = reuse_storage;
    if (pass == "lower_intrinsics") fn = lower_intrinsics;
    EXPECT_NE(fn, nullptr) << "unknown pass " << pass;
    return fn ? with_body(f, fn(f->body, ctx)) : f;
}

class PassGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(PassGolden, MatchesAfterFile) {
    const std::string pass = GetParam();
    Ref<PrimFunc> before = parse_prim_func(read_file(golden_path(pass + ".before.tir")));
    std::string got = print(run_pass(pass, before));
    if (!got.empty() && got.back() != '\n') got += '\n';
    const std::string after_path = golden_path(pass + ".after.tir");
    if (std::getenv("ANVIL_UPDATE_GOLDEN")) {
        std::ofstream(after_path) << got;
        return;
    }
    EXPECT_EQ(got, read_file(after_path));
    // The expected text is itself valid IR.
    EXPECT_NO_THROW(parse_prim_func(read_file(after_path)));
}

INSTANTIATE_TEST_SUITE_P(TirPasses, PassGolden,
                         ::testing::Values("simplify", "flatten_storage", "vectorize_loops",
                                           "unroll_loops", "partition_loops", "reuse_storage",
                                           "lower_intrinsics"));

}  // namespace
}  // namespace anvil::tir
