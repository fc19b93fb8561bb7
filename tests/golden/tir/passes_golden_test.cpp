// Golden tests of the loop-IR passes: for each pass P, P.before.tir is parsed, P runs, and the
// printed result must equal P.after.tir byte for byte.
//
// After an intended change of a pass's output, regenerate with
//   ANVIL_UPDATE_GOLDEN=1 build/tests/anvil_tir_golden_tests
// and review the diff of the .after.tir files.
#include <gtest/gtest.h>

#include "golden/golden_file.h"
#include "tir/parser.h"
#include "tir/passes/passes.h"
#include "tir/printer.h"

namespace anvil::tir {
namespace {

using golden::read_file;

std::string golden_path(const std::string& name) {
    return golden::golden_path("tir", name);
}

Ref<PrimFunc> run_pass(const std::string& pass, const Ref<PrimFunc>& f) {
    LowerContext ctx;
    ctx.function_name = f->name;
    if (pass == "flatten_storage") return flatten_storage(f, ctx);
    Stmt (*fn)(const Stmt&, const LowerContext&) = nullptr;
    if (pass == "simplify") fn = simplify;
    if (pass == "vectorize_loops") fn = vectorize_loops;
    if (pass == "unroll_loops") fn = unroll_loops;
    if (pass == "prefetch_streams") fn = prefetch_streams;
    if (pass == "partition_loops") fn = partition_loops;
    if (pass == "reuse_storage") fn = reuse_storage;
    if (pass == "lower_intrinsics") fn = lower_intrinsics;
    if (pass == "instrument_bound_checkers") fn = instrument_bound_checkers;
    if (pass == "tensorize_amx") {
        // A target with both AMX kinds (the file: a bfloat16 convolution the AMX schedule made).
        ctx.amx_bf16 = ctx.amx_int8 = true;
        fn = tensorize_amx;
    }
    EXPECT_NE(fn, nullptr) << "unknown pass " << pass;
    return fn ? with_body(f, fn(f->body, ctx)) : f;
}

class PassGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(PassGolden, MatchesAfterFile) {
    const std::string pass = GetParam();
    Ref<PrimFunc> before = parse_prim_func(read_file(golden_path(pass + ".before.tir")));
    const std::string after_path = golden_path(pass + ".after.tir");
    if (!golden::compare_or_update(print(run_pass(pass, before)), after_path)) return;
    // The expected text is itself valid IR.
    EXPECT_NO_THROW(parse_prim_func(read_file(after_path)));
}

const std::vector<std::string> kPasses = {
    "simplify",      "flatten_storage",  "vectorize_loops",
    "unroll_loops",  "prefetch_streams", "partition_loops",
    "reuse_storage", "lower_intrinsics", "instrument_bound_checkers",
    "tensorize_amx"};

INSTANTIATE_TEST_SUITE_P(TirPasses, PassGolden, ::testing::ValuesIn(kPasses));

// Every statement pass of tir/passes/passes.h has a golden pair here, and every .before.tir file
// is read by a test: a new pass or a misnamed file fails instead of going untested.
TEST(PassGoldenCoverage, EveryPassHasAGoldenFileAndEveryFileAPass) {
    golden::expect_golden_coverage(kPasses, "src/tir/passes/passes.h",
                                   R"(^Stmt (\w+)\(const Stmt& \w+, const LowerContext& \w+\);)",
                                   "tir", ".before.tir");
}

}  // namespace
}  // namespace anvil::tir
