// The checked mode in the loop-IR pipeline: PipelineOptions::checked (default from
// ANVIL_CHECKED) runs instrument_bound_checkers on every kernel; `on` leaves only the checks the
// simplifier cannot prove, `all` keeps every one.
#include <gtest/gtest.h>

#include <string>

#include "driver/pipeline.h"
#include "scoped_env.h"
#include "tir/parser.h"
#include "tir/stmt_functor.h"

namespace anvil::driver {
namespace {

int count_asserts(const Ref<tir::PrimFunc>& f) {
    int n = 0;
    tir::pre_order_visit(f->body, [&](const tir::Stmt& s) { n += s.is<tir::AssertStmt>(); });
    return n;
}

// In bounds, provably so for A and B; C's index depends on the data.
const char* const kKernel = R"(prim_func gather(A: float32[64], I: int32[64], B: float32[64]) {
  for i in [0, 64) { B[i] = A[I[i]] + A[i] }
})";

int asserts_when(tir::BoundChecks mode) {
    PipelineOptions options;
    options.checked = mode;
    return count_asserts(run_tir_pipeline(tir::parse_prim_func(kKernel), {}, options));
}

TEST(CheckedPipeline, OnKeepsTheUnprovenChecksAndAllKeepsEvery) {
    EXPECT_EQ(asserts_when(tir::BoundChecks::off), 0);
    EXPECT_EQ(asserts_when(tir::BoundChecks::on), 1);  // A[I[i]]
    EXPECT_EQ(asserts_when(tir::BoundChecks::all), 4);
}

TEST(CheckedPipeline, TheEnvironmentSetsTheDefault) {
    const std::pair<const char*, tir::BoundChecks> cases[] = {
        {nullptr, tir::BoundChecks::off}, {"", tir::BoundChecks::off},
        {"0", tir::BoundChecks::off},     {"1", tir::BoundChecks::on},
        {"yes", tir::BoundChecks::on},    {"all", tir::BoundChecks::all},
    };
    for (const auto& [value, mode] : cases) {
        testing::ScopedEnv env("ANVIL_CHECKED", value);
        EXPECT_EQ(PipelineOptions{}.checked, mode) << (value ? value : "(unset)");
    }
}

TEST(CheckedPipeline, ThePassCanBeNamedAndDisabled) {
    PipelineOptions options;
    options.checked = tir::BoundChecks::all;
    options.disabled_passes = {"instrument_bound_checkers"};
    EXPECT_EQ(count_asserts(run_tir_pipeline(tir::parse_prim_func(kKernel), {}, options)), 0);
}

}  // namespace
}  // namespace anvil::driver
