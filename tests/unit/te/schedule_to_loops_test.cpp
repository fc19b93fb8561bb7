#include "te/schedule_to_loops.h"

#include <gtest/gtest.h>

#include "te/math.h"
#include "te/reduction.h"
#include "tir/printer.h"

namespace anvil::te {
namespace {

std::string lower_text(const Schedule& s, const std::vector<Tensor>& args) {
    return tir::print(schedule_to_loops(s, args, "f"));
}

TEST(ScheduleToLoops, ElementwiseDefault) {
    Tensor A = placeholder({7, 5}, DataType::float32(), "A");
    Tensor B = compute(
        {7, 5}, [&](PrimExpr i, PrimExpr j) { return A(i, j) * 2.0f; }, "B");
    Schedule s = create_schedule({B});
    EXPECT_EQ(lower_text(s, {A, B}),
              "prim_func f(A: float32[7, 5], B: float32[7, 5]) {\n"
              "  for i in [0, 7) {\n"
              "    for j in [0, 5) { B[i, j] = A[i, j] * 2.0f }\n"
              "  }\n"
              "}\n");
}

TEST(ScheduleToLoops, DivisibleSplitHasNoGuard) {
    Tensor A = placeholder({64}, DataType::float32(), "A");
    Tensor B = compute(
        {64}, [&](PrimExpr i) { return A(i) + 1.0f; }, "B");
    Schedule s = create_schedule({B});
    auto [o, in] = s[B].split(s[B].op_axis()[0], 16);
    std::string text = lower_text(s, {A, B});
    EXPECT_EQ(text.find("likely"), std::string::npos) << text;
    EXPECT_NE(text.find("for i_outer in [0, 4)"), std::string::npos) << text;
}

// A split by its number of parts: 4 parts of 64 are exact (no guard); 5 parts of 13 cover 65
// and the last part is guarded, fused with another loop or not.
TEST(ScheduleToLoops, SplitByPartsIsGuardedOnlyWhenThePartsOverreach) {
    for (int64_t parts : {4, 5}) {
        Tensor A = placeholder({3, 64}, DataType::float32(), "A");
        Tensor B = compute(
            {3, 64}, [&](PrimExpr r, PrimExpr i) { return A(r, i) + 1.0f; }, "B");
        Schedule s = create_schedule({B});
        auto [o, in] = s[B].split_nparts(s[B].op_axis()[1], parts);
        s[B].fuse({s[B].op_axis()[0], o});
        std::string text = lower_text(s, {A, B});
        EXPECT_EQ(text.find("< 64") != std::string::npos, parts == 5) << parts << "\n" << text;
    }
}

TEST(ScheduleToLoops, NonDivisibleSplitIsGuarded) {
    Tensor A = placeholder({67}, DataType::float32(), "A");
    Tensor B = compute(
        {67}, [&](PrimExpr i) { return A(i) + 1.0f; }, "B");
    Schedule s = create_schedule({B});
    s[B].split(s[B].op_axis()[0], 16);
    std::string text = lower_text(s, {A, B});
    EXPECT_NE(text.find("for i_outer in [0, 5)"), std::string::npos) << text;
    EXPECT_NE(text.find("likely"), std::string::npos) << text;
    EXPECT_NE(text.find("< 67"), std::string::npos) << text;
}

TEST(ScheduleToLoops, InlineSubstitutesTheProducer) {
    Tensor A = placeholder({10}, DataType::float32(), "A");
    Tensor B = compute(
        {10}, [&](PrimExpr i) { return exp(A(i)); }, "B");
    Tensor C = compute(
        {10}, [&](PrimExpr i) { return B(i) * 3.0f; }, "C");
    Schedule s = create_schedule({C});
    s[B].compute_inline();
    std::string text = lower_text(s, {A, C});
    EXPECT_NE(text.find("C[i] = exp(A[i]) * 3.0f"), std::string::npos) << text;
    EXPECT_EQ(text.find("allocate"), std::string::npos) << text;
}

TEST(ScheduleToLoops, RootIntermediateIsAllocated) {
    Tensor A = placeholder({10}, DataType::float32(), "A");
    Tensor B = compute(
        {10}, [&](PrimExpr i) { return A(i) + 1.0f; }, "B");
    Tensor C = compute(
        {10}, [&](PrimExpr i) { return B(i) * 3.0f; }, "C");
    Schedule s = create_schedule({C});
    std::string text = lower_text(s, {A, C});
    EXPECT_NE(text.find("allocate B: float32[10]"), std::string::npos) << text;
}

TEST(ScheduleToLoops, ComputeAtInfersTheRegion) {
    // C[i] = B[i] + B[i + 2]: computed at C's outer loop, B covers the tile plus a halo of 2.
    Tensor A = placeholder({40}, DataType::float32(), "A");
    Tensor B = compute(
        {40}, [&](PrimExpr i) { return A(i) * 2.0f; }, "B");
    Tensor C = compute(
        {38}, [&](PrimExpr i) { return B(i) + B(i + 2); }, "C");
    Schedule s = create_schedule({C});
    auto [o, in] = s[C].split(s[C].op_axis()[0], 8);
    s[B].compute_at(s[C], o);
    std::string text = lower_text(s, {A, C});
    EXPECT_NE(text.find("allocate B: float32[10]"), std::string::npos) << text;
}

TEST(ScheduleToLoops, ReductionInitAndUpdate) {
    Tensor A = placeholder({6, 9}, DataType::float32(), "A");
    auto k = reduce_axis(9, "k");
    Tensor B = compute(
        {6}, [&](PrimExpr i) { return max(A(i, k->var), {k}); }, "B");
    Schedule s = create_schedule({B});
    std::string text = lower_text(s, {A, B});
    EXPECT_NE(text.find("B[i] = -inff"), std::string::npos) << text;
    EXPECT_NE(text.find("B[i] = max(B[i], A[i, k])"), std::string::npos) << text;
}

TEST(ScheduleToLoops, CustomReducerAndCondition) {
    Tensor A = placeholder({5, 8}, DataType::int32(), "A");
    auto k = reduce_axis(8, "k");
    Reducer product = comm_reducer([](PrimExpr x, PrimExpr y) { return x * y; },
                                   [](DataType t) { return make_const(t, 1); }, "product");
    Tensor B = compute(
        {5}, [&](PrimExpr i) { return product(A(i, k->var), {k}, k->var < 4); }, "B");
    Schedule s = create_schedule({B});
    std::string text = lower_text(s, {A, B});
    EXPECT_NE(text.find("B[i] = 1"), std::string::npos) << text;
    EXPECT_NE(text.find("if k < 4"), std::string::npos) << text;
    EXPECT_NE(text.find("B[i] * A[i, k]"), std::string::npos) << text;
}

// A kernel whose every output has the symbolic dimension n does nothing when n is 0, so it runs
// under `if n >= 1` and its loops may assume n >= 1: ceil(n / 8) row tiles are then at least
// one, and a column split that divides needs no guard even when its loop is fused with the
// row tiles' symbolic one. Only the row tail (n need not be a multiple of 8) keeps its test.
TEST(ScheduleToLoops, SymbolicOutputSizeGuardsTheKernelAndKeepsSplitsExact) {
    PrimExpr n = make_var("n");
    Tensor A = placeholder({n, 64}, DataType::float32(), "A");
    Tensor B = compute(
        {n, 64}, [&](PrimExpr i, PrimExpr j) { return A(i, j) * 2.0f; }, "B");
    Schedule s = create_schedule({B});
    auto [io, ii] = s[B].split(s[B].op_axis()[0], 8);
    auto [jo, ji] = s[B].split(s[B].op_axis()[1], 32);
    s[B].reorder({jo, io, ii, ji});
    s[B].fuse({jo, io});
    std::string text = lower_text(s, {A, B});
    EXPECT_EQ(text.find("  if n >= 1 {\n"), text.find('\n') + 1) << text;
    EXPECT_EQ(text.find("< 64"), std::string::npos) << text;
    EXPECT_NE(text.find("< n"), std::string::npos) << text;
}

// A reduction over the symbolic axis still has outputs when n is 0 (the sums are 0): no skip.
TEST(ScheduleToLoops, ReductionOverASymbolicAxisAlsoRunsWhenItIsEmpty) {
    PrimExpr n = make_var("n");
    Tensor A = placeholder({n, 4}, DataType::float32(), "A");
    auto k = reduce_axis(n, "k");
    Tensor B = compute(
        {4}, [&](PrimExpr j) { return sum(A(k->var, j), {k}); }, "B");
    Schedule s = create_schedule({B});
    std::string text = lower_text(s, {A, B});
    EXPECT_EQ(text.find("if n >= 1"), std::string::npos) << text;
    EXPECT_NE(text.find("B[i] = 0.0f"), std::string::npos) << text;
}

// Several outputs: the kernel is skipped only for a size every output has. Here C lacks n (it
// still has rows to write at n = 0): no condition; with m in both, `if m >= 1` alone.
TEST(ScheduleToLoops, OnlyASizeEveryOutputHasGuardsTheKernel) {
    PrimExpr n = make_var("n"), m = make_var("m");
    Tensor A = placeholder({n, m}, DataType::float32(), "A");
    Tensor Z = placeholder({m}, DataType::float32(), "Z");
    Tensor B = compute(
        {n, m}, [&](PrimExpr i, PrimExpr j) { return A(i, j) * 2.0f; }, "B");
    Tensor C = compute(
        {4}, [&](PrimExpr) { return make_const(DataType::float32(), 1.0); }, "C");
    std::string text = lower_text(create_schedule({B, C}), {A, B, C});
    EXPECT_EQ(text.find(">= 1"), std::string::npos) << text;
    Tensor D = compute(
        {m}, [&](PrimExpr j) { return Z(j) + 1.0f; }, "D");
    text = lower_text(create_schedule({B, D}), {A, Z, B, D});
    EXPECT_EQ(text.find("  if m >= 1 {\n"), text.find('\n') + 1) << text;
    EXPECT_EQ(text.find("n >= 1"), std::string::npos) << text;
}

}  // namespace
}  // namespace anvil::te
