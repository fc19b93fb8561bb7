// The evolutionary search over sketches: batches of valid programs never proposed twice, a cost
// model that learns from the updates, resumed records that are not proposed again, and records
// of another computation refused.
#include "tune/sketch/evolutionary_search.h"

#include <gtest/gtest.h>

#include <set>

#include "te/reduction.h"
#include "tune/program_features.h"

namespace anvil::tune {
namespace {

SearchKernel matmul_kernel() {
    te::Tensor A = te::placeholder({32, 48}, DataType::float32(), "A");
    te::Tensor B = te::placeholder({48, 64}, DataType::float32(), "B");
    auto k = te::reduce_axis(48, "k");
    te::Tensor C = te::compute(
        {32, 64}, [&](PrimExpr i, PrimExpr j) { return te::sum(A(i, k->var) * B(k->var, j), {k}); },
        "C");
    te::Tensor D = te::compute(
        {32, 64}, [&](PrimExpr i, PrimExpr j) { return max(C(i, j), 0.0f); }, "D");
    SearchKernel kernel;
    kernel.task = "matmul_relu";
    kernel.inputs = {A, B};
    kernel.outputs = {D};
    kernel.target.vector_lanes = 16;
    return kernel;
}

TEST(EvolutionarySearch, BatchesAreValidAndNeverRepeat) {
    auto model = std::make_shared<ProgramCostModel>(1);
    EvolutionarySearch search(matmul_kernel(), model, 7, SearchOptions{.population = 16});
    ASSERT_FALSE(search.sketches().empty());
    std::set<std::string> seen;
    for (int round = 0; round < 6; ++round) {
        std::vector<Program> batch = search.next_batch(8);
        ASSERT_EQ(batch.size(), 8u);
        std::vector<double> costs;
        for (const auto& p : batch) {
            EXPECT_TRUE(seen.insert(p.key).second) << "proposed twice:\n" << p.key;
            EXPECT_FALSE(p.record.empty());
            // A made-up cost that prefers wider vectors of the tile: something to learn.
            costs.push_back(1e-3 / (1.0 + (p.key.find("vectorize") != std::string::npos)));
        }
        search.update(batch, costs);
    }
    EXPECT_EQ(search.invalid(), 0);
    EXPECT_EQ(model->measured(), 48u);
    EXPECT_TRUE(model->predict({std::vector<float>(program_feature_width(), 0.0f)}).has_value());
}

TEST(EvolutionarySearch, ResumedProgramsAreNotProposedAgain) {
    SearchKernel kernel = matmul_kernel();
    auto model = std::make_shared<ProgramCostModel>(1);
    EvolutionarySearch first(kernel, model, 3, SearchOptions{.population = 16});
    std::vector<Program> measured = first.next_batch(6);
    ASSERT_EQ(measured.size(), 6u);
    EvolutionarySearch again(kernel, model, 3, SearchOptions{.population = 16});
    std::set<std::string> resumed;
    for (const auto& p : measured) {
        EXPECT_TRUE(again.resume(p.record, 1e-3));
        resumed.insert(p.key);
    }
    for (int round = 0; round < 4; ++round) {
        for (const auto& p : again.next_batch(8)) EXPECT_FALSE(resumed.count(p.key)) << p.key;
    }
    // A program of another computation (an older Anvil's stage names) is refused.
    te::ScheduleRecord stale = {te::Primitive{.kind = "compute_inline", .stage = "gone"}};
    EXPECT_FALSE(again.resume(stale, 1e-3));
}

}  // namespace
}  // namespace anvil::tune
