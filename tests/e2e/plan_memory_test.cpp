// Static memory planning: buffers are shared, but never between tensors that are live at once,
// and never for graph inputs and outputs.
#include "driver/plan_memory.h"

#include <gtest/gtest.h>

#include <random>

namespace anvil::driver {
namespace {

using runtime::GraphPlan;
using runtime::PlanNodeKind;

// Checks the invariants of a plan: each buffer is large enough for its tensors, two tensors
// sharing a buffer have disjoint live ranges [def, last_use], external tensors share nothing.
void check_plan(std::span<const TensorLifetime> tensors, const MemoryPlan& plan) {
    ASSERT_EQ(plan.storage_of.size(), tensors.size());
    int64_t total = 0;
    for (int64_t b : plan.storage_bytes) total += b;
    EXPECT_EQ(plan.planned_bytes, total);
    EXPECT_LE(plan.planned_bytes, plan.unshared_bytes);
    for (size_t i = 0; i < tensors.size(); ++i) {
        int s = plan.storage_of[i];
        ASSERT_GE(s, 0);
        ASSERT_LT(static_cast<size_t>(s), plan.storage_bytes.size());
        EXPECT_GE(plan.storage_bytes[s], tensors[i].bytes) << "tensor " << i;
        for (size_t j = 0; j < i; ++j) {
            if (plan.storage_of[j] != s) continue;
            EXPECT_FALSE(tensors[i].external || tensors[j].external)
                << "external tensor " << i << " or " << j << " shares buffer " << s;
            int end_j = std::max(tensors[j].last_use, tensors[j].def);
            int end_i = std::max(tensors[i].last_use, tensors[i].def);
            bool disjoint = end_j < tensors[i].def || end_i < tensors[j].def;
            EXPECT_TRUE(disjoint) << "tensors " << j << " and " << i << " overlap in buffer " << s;
        }
    }
}

TEST(PlanMemory, ChainReusesTwoBuffers) {
    // in -> t1 -> t2 -> t3 -> t4 -> out: a chain needs only two intermediate buffers.
    std::vector<TensorLifetime> tensors = {
        {.bytes = 4096, .def = 0, .last_use = 1, .external = true},  // input
        {.bytes = 4096, .def = 1, .last_use = 2},
        {.bytes = 4096, .def = 2, .last_use = 3},
        {.bytes = 4096, .def = 3, .last_use = 4},
        {.bytes = 4096, .def = 4, .last_use = 5},
        {.bytes = 4096, .def = 5, .last_use = 5, .external = true},  // output
    };
    MemoryPlan plan = plan_memory(tensors);
    check_plan(tensors, plan);
    EXPECT_EQ(plan.storage_bytes.size(), 4u);
    EXPECT_EQ(plan.planned_bytes, 4 * 4096);
    EXPECT_EQ(plan.unshared_bytes, 6 * 4096);
    EXPECT_EQ(plan.storage_of[1], plan.storage_of[3]);
    EXPECT_EQ(plan.storage_of[2], plan.storage_of[4]);
    EXPECT_NE(plan.summary().find("4 buffers for 6 tensors"), std::string::npos) << plan.summary();
}

TEST(PlanMemory, AKernelsOutputNeverTakesItsInputsBuffer) {
    // t1 is last read at step 2, where t2 is written: they must not share.
    std::vector<TensorLifetime> tensors = {
        {.bytes = 64, .def = 1, .last_use = 2},
        {.bytes = 64, .def = 2, .last_use = 3},
    };
    MemoryPlan plan = plan_memory(tensors);
    check_plan(tensors, plan);
    EXPECT_NE(plan.storage_of[0], plan.storage_of[1]);
}

TEST(PlanMemory, BestFitPicksTheSmallestBufferThatFits) {
    std::vector<TensorLifetime> tensors = {
        {.bytes = 1000, .def = 0, .last_use = 2},  // buffer A, 1024 bytes
        {.bytes = 300, .def = 1, .last_use = 2},   // buffer B, 320 bytes
        {.bytes = 200, .def = 3, .last_use = 4},   // both free: B fits best
        {.bytes = 900, .def = 3, .last_use = 4},   // A
        {.bytes = 5000, .def = 5, .last_use = 6},  // none fits: the largest (A) grows
    };
    MemoryPlan plan = plan_memory(tensors);
    check_plan(tensors, plan);
    EXPECT_EQ(plan.storage_of[2], plan.storage_of[1]);
    EXPECT_EQ(plan.storage_of[3], plan.storage_of[0]);
    EXPECT_EQ(plan.storage_of[4], plan.storage_of[0]);
    EXPECT_EQ(plan.storage_bytes[plan.storage_of[0]], 5056);  // rounded to 64
    EXPECT_EQ(plan.storage_bytes.size(), 2u);
}

TEST(PlanMemory, ExternalTensorsGetTheirOwnBuffers) {
    std::vector<TensorLifetime> tensors = {
        {.bytes = 64, .def = 0, .last_use = 0, .external = true},
        {.bytes = 64, .def = 1, .last_use = 1, .external = true},
        {.bytes = 64, .def = 2, .last_use = 3},
        {.bytes = 64, .def = 4, .last_use = 5, .external = true},
    };
    MemoryPlan plan = plan_memory(tensors);
    check_plan(tensors, plan);
    EXPECT_EQ(plan.storage_bytes.size(), 4u);
}

TEST(PlanMemory, RandomGraphsKeepLiveRangesApart) {
    std::mt19937 rng(7);
    for (int round = 0; round < 200; ++round) {
        std::vector<TensorLifetime> tensors;
        int steps = 1 + static_cast<int>(rng() % 30);
        for (int step = 0; step < steps; ++step) {
            int outputs = 1 + static_cast<int>(rng() % 3);
            for (int k = 0; k < outputs; ++k) {
                int life = static_cast<int>(rng() % 6) - 1;  // -1: never read
                tensors.push_back({.bytes = static_cast<int64_t>(rng() % 5000),
                                   .def = step,
                                   .last_use = life < 0 ? -1 : step + life,
                                   .external = rng() % 8 == 0});
            }
        }
        MemoryPlan plan = plan_memory(tensors);
        check_plan(tensors, plan);
        if (::testing::Test::HasFailure()) return;
    }
}

TEST(PlanMemory, RejectsOutOfOrderTensors) {
    std::vector<TensorLifetime> tensors = {{.bytes = 4, .def = 2}, {.bytes = 4, .def = 1}};
    try {
        plan_memory(tensors);
        ADD_FAILURE() << "out-of-order tensors accepted";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("give tensors in execution order"), std::string::npos);
    }
}

runtime::PlanTensor f32(std::vector<int64_t> shape) {
    return {.shape = std::move(shape), .dtype = {kDLFloat, 32, 1}, .storage = -1};
}

TEST(PlanGraphMemory, AssignsStorageToAPlan) {
    // x -> b = k(x, w) -> c = k(b) -> (d0, d1) = k(c) -> e = k(d0, d1) -> f = k(e); outputs f, c.
    GraphPlan plan;
    plan.nodes = {
        {.kind = PlanNodeKind::input, .name = "x", .outputs = {f32({256})}},
        {.kind = PlanNodeKind::param, .name = "w", .outputs = {f32({256})}},
        {.kind = PlanNodeKind::kernel,
         .name = "b",
         .kernel = "k",
         .args = {{0, 0}, {1, 0}},
         .outputs = {f32({256})}},
        {.kind = PlanNodeKind::kernel,
         .name = "c",
         .kernel = "k",
         .args = {{2, 0}},
         .outputs = {f32({256})}},
        {.kind = PlanNodeKind::kernel,
         .name = "d",
         .kernel = "k",
         .args = {{3, 0}},
         .outputs = {f32({256}), f32({128})}},
        {.kind = PlanNodeKind::kernel,
         .name = "e",
         .kernel = "k",
         .args = {{4, 0}, {4, 1}},
         .outputs = {f32({256})}},
        {.kind = PlanNodeKind::kernel,
         .name = "f",
         .kernel = "k",
         .args = {{5, 0}},
         .outputs = {f32({256})}},
    };
    plan.inputs = {{"x", 0}};
    plan.outputs = {{"out", {6, 0}}, {"mid", {3, 0}}};
    plan.params["w"] = {.offset = 0, .nbytes = 1024, .shape = {256}, .dtype = {kDLFloat, 32, 1}};
    MemoryPlan mp = plan_graph_memory(plan);
    runtime::validate_plan(plan);  // every tensor has a declared, large enough storage
    auto storage = [&](int node, int k = 0) { return plan.nodes[node].outputs[k].storage; };
    EXPECT_EQ(storage(1), -1);             // params are not planned
    EXPECT_EQ(storage(4, 0), storage(2));  // b is last read by c: d reuses its buffer
    EXPECT_NE(storage(5), storage(4, 0));  // e's own inputs are live
    EXPECT_NE(storage(5), storage(4, 1));
    EXPECT_NE(storage(4, 0), storage(4, 1));
    for (int n : {0, 2, 4, 5}) {  // graph outputs c (mid) and f (out) share nothing
        EXPECT_NE(storage(n), storage(3));
        EXPECT_NE(storage(n), storage(6));
    }
    EXPECT_NE(storage(0), storage(2));  // the input shares nothing
    EXPECT_LT(mp.planned_bytes, mp.unshared_bytes);
    EXPECT_EQ(runtime::plan_storage_bytes(plan), mp.planned_bytes);
    EXPECT_EQ(runtime::plan_unshared_bytes(plan), mp.unshared_bytes);
}

}  // namespace
}  // namespace anvil::driver
