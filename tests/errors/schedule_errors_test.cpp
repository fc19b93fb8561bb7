// Every UserError a schedule can raise, with the message it must carry.
#include <gtest/gtest.h>

#include <functional>

#include "driver/build.h"
#include "errors/expect_message.h"
#include "support/error.h"
#include "te/reduction.h"
#include "te/schedule_to_loops.h"

namespace anvil::te {
namespace {

// The message of the UserError `f` raises; fails the test when it raises none.
struct Graph {
    Tensor A, B, C, D;
    Ref<IterVar> k;
};

// B = A * 2; C[i, j] = sum_k B[i, k] * A[k, j]; D = C + 1
Graph graph() {
    Graph g;
    g.A = placeholder({16, 16}, DataType::float32(), "A");
    g.B = compute(
        {16, 16}, [&](PrimExpr i, PrimExpr j) { return g.A(i, j) * 2.0f; }, "B");
    g.k = reduce_axis(16, "k");
    g.C = compute(
        {16, 16},
        [&](PrimExpr i, PrimExpr j) { return sum(g.B(i, g.k->var) * g.A(g.k->var, j), {g.k}); },
        "C");
    g.D = compute(
        {16, 16}, [&](PrimExpr i, PrimExpr j) { return g.C(i, j) + 1.0f; }, "D");
    return g;
}

TEST(ScheduleErrors, ReorderOfAxesFromAnotherStage) {
    Graph g = graph();
    Schedule s = create_schedule({g.D});
    auto c = s[g.C].op_axis();
    auto d = s[g.D].op_axis();
    EXPECT_MESSAGE(s[g.D].reorder({d[1], c[0]}), "reorder", "stage 'D'", "axis 'i'", "stage 'C'");
}

TEST(ScheduleErrors, ReorderTwice) {
    Graph g = graph();
    Schedule s = create_schedule({g.D});
    auto d = s[g.D].op_axis();
    EXPECT_MESSAGE(s[g.D].reorder({d[1], d[1]}), "reorder", "stage 'D'", "'j'", "listed twice");
}

TEST(ScheduleErrors, VectorizeNonInnermost) {
    Graph g = graph();
    Schedule s = create_schedule({g.D});
    auto d = s[g.D].op_axis();
    EXPECT_MESSAGE(s[g.D].vectorize(d[0]), "vectorize", "stage 'D'", "axis 'i'", "innermost");
}

TEST(ScheduleErrors, VectorizeReductionAxis) {
    Graph g = graph();
    Schedule s = create_schedule({g.D});
    EXPECT_MESSAGE(s[g.C].vectorize(g.k), "vectorize", "stage 'C'", "axis 'k'", "reduction");
}

TEST(ScheduleErrors, ParallelReductionAxis) {
    Graph g = graph();
    Schedule s = create_schedule({g.D});
    EXPECT_MESSAGE(s[g.C].parallel(g.k), "parallel", "stage 'C'", "axis 'k'", "reduction");
}

TEST(ScheduleErrors, ReorderMovesVectorizedAxisOut) {
    Graph g = graph();
    Schedule s = create_schedule({g.D});
    auto d = s[g.D].op_axis();
    s[g.D].vectorize(d[1]);
    EXPECT_MESSAGE(s[g.D].reorder({d[1], d[0]}), "reorder", "stage 'D'", "axis 'j'", "vectorized");
}

TEST(ScheduleErrors, ComputeAtNonConsumer) {
    Graph g = graph();
    Schedule s = create_schedule({g.D});
    Tensor E = compute(
        {16}, [&](PrimExpr i) { return g.A(i, 0) * 3.0f; }, "E");
    Schedule s2 = create_schedule({g.D, E});
    auto e = s2[E].op_axis();
    EXPECT_MESSAGE(s2[g.B].compute_at(s2[E], e[0]), "compute_at", "stage 'B'", "axis 'i'",
                   "'E' does not consume 'B'");
}

TEST(ScheduleErrors, ComputeAtLoopThatIsNotAnAncestor) {
    // B is read by C, which is computed at D's inner loop j; attaching B at D's outer loop i is
    // fine, but attaching it at a loop outside of where C is computed is not.
    Graph g = graph();
    Schedule s = create_schedule({g.D});
    auto d = s[g.D].op_axis();
    s[g.C].compute_at(s[g.D], d[0]);
    auto [jo, ji] = s[g.D].split(d[1], 4);
    s[g.B].compute_at(s[g.D], ji);
    EXPECT_MESSAGE(schedule_to_loops(s, {g.A, g.D}, "f"), "compute_at of stage 'B'", "'j.inner'",
                   "of 'D'", "not an ancestor of the consumer");
}

TEST(ScheduleErrors, ComputeAtOfOutput) {
    Graph g = graph();
    Schedule s = create_schedule({g.C, g.D});
    auto d = s[g.D].op_axis();
    EXPECT_MESSAGE(s[g.C].compute_at(s[g.D], d[0]), "compute_at", "stage 'C'", "output");
}

TEST(ScheduleErrors, ComputeInlineOfReduction) {
    Graph g = graph();
    Schedule s = create_schedule({g.D});
    EXPECT_MESSAGE(s[g.C].compute_inline(), "compute_inline", "stage 'C'", "reduction");
}

TEST(ScheduleErrors, SplitByZero) {
    Graph g = graph();
    Schedule s = create_schedule({g.D});
    auto d = s[g.D].op_axis();
    EXPECT_MESSAGE(s[g.D].split(d[0], 0), "split", "stage 'D'", "axis 'i'", "must be positive");
}

TEST(ScheduleErrors, SplitOfAnAxisAlreadySplit) {
    Graph g = graph();
    Schedule s = create_schedule({g.D});
    auto d = s[g.D].op_axis();
    s[g.D].split(d[0], 4);
    EXPECT_MESSAGE(s[g.D].split(d[0], 2), "split", "stage 'D'", "axis 'i'", "already split");
}

TEST(ScheduleErrors, FuseNonAdjacent) {
    Graph g = graph();
    Schedule s = create_schedule({g.D});
    auto c = s[g.C].op_axis();
    EXPECT_MESSAGE(s[g.C].fuse({c[0], g.k}), "fuse", "stage 'C'", "'i'", "'k'");
}

TEST(ScheduleErrors, UnknownAxisInRecord) {
    Graph g = graph();
    Schedule s = create_schedule({g.D});
    EXPECT_MESSAGE(s.apply(parse_record("split(D, q, factor=4)")), "split", "stage 'D'",
                   "no axis 'q'");
}

TEST(ScheduleErrors, UnknownStageInRecord) {
    Graph g = graph();
    Schedule s = create_schedule({g.D});
    EXPECT_MESSAGE(s.apply(parse_record("parallel(Z, i)")), "no stage 'Z'", "stages: A, B, C, D");
}

TEST(ScheduleErrors, PrimitiveOnPlaceholder) {
    Graph g = graph();
    Schedule s = create_schedule({g.D});
    EXPECT_MESSAGE(s.apply(parse_record("split(A, i, factor=4)")), "split", "stage 'A'",
                   "placeholder");
}

TEST(ScheduleErrors, BindUnknownThreadAxis) {
    Graph g = graph();
    Schedule s = create_schedule({g.D});
    auto d = s[g.D].op_axis();
    EXPECT_MESSAGE(s[g.D].bind(d[0], "warpIdx.x"), "bind", "stage 'D'", "axis 'i'", "warpIdx.x");
}

TEST(ScheduleErrors, BindOnCpuTarget) {
    Graph g = graph();
    Schedule s = create_schedule({g.D});
    auto d = s[g.D].op_axis();
    s[g.D].bind(d[0], "threadIdx.x");
    EXPECT_MESSAGE(driver::build(s, {g.A, g.D}, "llvm", "f"), "threadIdx.x", "not a GPU");
}

TEST(ScheduleErrors, VectorizeThenSplit) {
    Graph g = graph();
    Schedule s = create_schedule({g.D});
    auto d = s[g.D].op_axis();
    s[g.D].vectorize(d[1]);
    s[g.D].split(d[1], 4);
    EXPECT_MESSAGE(schedule_to_loops(s, {g.A, g.D}, "f"), "stage 'D'", "split or fused afterwards");
}

TEST(ScheduleErrors, NestedParallel) {
    Graph g = graph();
    Schedule s = create_schedule({g.D});
    auto d = s[g.D].op_axis();
    s[g.D].parallel(d[0]);
    s[g.C].compute_at(s[g.D], d[0]);
    s[g.C].parallel(s[g.C].op_axis()[0]);
    EXPECT_MESSAGE(schedule_to_loops(s, {g.A, g.D}, "f"), "parallel", "stage 'C'", "axis 'i'",
                   "nested");
}

TEST(ScheduleErrors, MissingArgument) {
    Graph g = graph();
    Schedule s = create_schedule({g.D});
    EXPECT_MESSAGE(schedule_to_loops(s, {g.D}, "f"), "input 'A'",
                   "not among the function's arguments");
    EXPECT_MESSAGE(schedule_to_loops(s, {g.A}, "f"), "output 'D'", "not among");
}

TEST(ScheduleErrors, CacheWriteAfterOtherPrimitives) {
    Graph g = graph();
    Schedule s = create_schedule({g.D});
    s[g.D].split(s[g.D].op_axis()[0], 4);
    EXPECT_MESSAGE(s.cache_write(g.D, "local"), "cache_write", "stage 'D'",
                   "before other primitives");
}

TEST(TensorErrors, WrongIndexCount) {
    Tensor A = placeholder({4, 4}, DataType::float32(), "A");
    EXPECT_MESSAGE(A(PrimExpr(1)), "tensor 'A'", "2 dimensions", "indexed with 1");
}

TEST(TensorErrors, MixedTypes) {
    Tensor A = placeholder({4}, DataType::float32(), "A");
    Tensor I = placeholder({4}, DataType::int32(), "I");
    EXPECT_MESSAGE(compute(
                       {4}, [&](PrimExpr i) { return A(i) + I(i); }, "C"),
                   "float32", "int32", "insert a cast");
}

TEST(TensorErrors, NestedReduction) {
    Tensor A = placeholder({4, 4}, DataType::float32(), "A");
    auto k = reduce_axis(4, "k");
    EXPECT_MESSAGE(compute(
                       {4}, [&](PrimExpr i) { return sum(A(i, k->var), {k}) + 1.0f; }, "C"),
                   "compute 'C'", "must be the whole body");
}

TEST(TensorErrors, NegativeExtent) {
    EXPECT_MESSAGE(placeholder({4, -1}, DataType::float32(), "A"), "placeholder 'A'",
                   "is negative");
}

}  // namespace
}  // namespace anvil::te
