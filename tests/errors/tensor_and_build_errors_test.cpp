// UserErrors from building tensor expressions and from the driver, with their messages.
#include <gtest/gtest.h>

#include <functional>

#include "driver/build.h"
#include "errors/expect_message.h"
#include "support/error.h"
#include "te/math.h"
#include "te/reduction.h"
#include "te/schedule_to_loops.h"

namespace anvil::te {
namespace {

TEST(MathErrors, FloatFunctionOfAnInteger) {
    Tensor I = placeholder({4}, DataType::int32(), "I");
    EXPECT_MESSAGE(compute(
                       {4}, [&](PrimExpr i) { return exp(I(i)); }, "E"),
                   "exp(", "int32", "cast it to a float type");
}

TEST(MathErrors, PowOfMixedTypes) {
    Tensor X = placeholder({4}, DataType::float32(), "X");
    Tensor D = placeholder({4}, DataType::float64(), "D");
    EXPECT_MESSAGE(compute(
                       {4}, [&](PrimExpr i) { return pow(X(i), D(i)); }, "P"),
                   "pow(", "float32", "float64");
}

TEST(MathErrors, IfThenElseWithNonBooleanCondition) {
    Tensor X = placeholder({4}, DataType::float32(), "X");
    EXPECT_MESSAGE(compute(
                       {4}, [&](PrimExpr i) { return if_then_else(i, X(i), 0.0f); }, "S"),
                   "if_then_else", "condition", "int32");
}

TEST(ReductionErrors, DataParallelAxisAsReductionAxis) {
    Tensor X = placeholder({4, 4}, DataType::float32(), "X");
    auto not_reduce = make_iter_var({0, 4}, "q");
    EXPECT_MESSAGE(sum(X(0, not_reduce->var), {not_reduce}), "sum()", "axis 'q'",
                   "not a reduction axis");
}

TEST(ReductionErrors, NoAxis) {
    Tensor X = placeholder({4}, DataType::float32(), "X");
    EXPECT_MESSAGE(te::max(X(0), Axes{}), "max()", "no reduction axis");
}

TEST(ReductionErrors, UserReducerWithWrongIdentityType) {
    Tensor X = placeholder({4}, DataType::float32(), "X");
    auto k = reduce_axis(4, "k");
    Reducer bad = comm_reducer([](PrimExpr a, PrimExpr b) { return a * b; },
                               [](DataType) { return make_const(DataType::int32(), 1); }, "prod");
    EXPECT_MESSAGE(bad(X(k->var), {k}, PrimExpr()), "prod()", "identity has type int32",
                   "expected float32");
}

TEST(ReductionErrors, NonPositiveReduceExtent) {
    EXPECT_MESSAGE(reduce_axis(0, "r"), "reduce_axis 'r'", "extent 0");
}

TEST(TensorErrors, VectorBody) {
    Tensor X = placeholder({4}, DataType::float32(), "X");
    EXPECT_MESSAGE(compute(
                       {4}, [&](PrimExpr i) { return make_broadcast(X(i), 4); }, "V"),
                   "compute 'V'", "vector type float32x4", "vectorize in the schedule");
}

TEST(TensorErrors, VectorPlaceholder) {
    EXPECT_MESSAGE(placeholder({4}, DataType::float32().with_lanes(4), "X"), "placeholder 'X'",
                   "float32x4");
}

TEST(ScheduleErrors, UnknownPrimitiveKind) {
    Tensor X = placeholder({4}, DataType::float32(), "X");
    Tensor Y = compute(
        {4}, [&](PrimExpr i) { return X(i); }, "Y");
    Schedule s = create_schedule({Y});
    EXPECT_MESSAGE(s.apply(Primitive{.kind = "twist", .stage = "Y"}),
                   "unknown schedule primitive 'twist'");
}

TEST(ScheduleErrors, ComputeAtOfAStageWithAReaderOutsideTheLoop) {
    Tensor X = placeholder({8}, DataType::float32(), "X");
    Tensor B = compute(
        {8}, [&](PrimExpr i) { return X(i) + 1.0f; }, "B");
    Tensor C = compute(
        {8}, [&](PrimExpr i) { return B(i) * 2.0f; }, "C");
    Tensor D = compute(
        {8}, [&](PrimExpr i) { return B(i) + C(i); }, "D");
    Schedule s = create_schedule({D});
    // C, B's other reader, is computed at root: outside the loop B would be computed in.
    s[B].compute_at(s[D], s[D].op_axis()[0]);
    EXPECT_MESSAGE(schedule_to_loops(s, {X, D}, "f"), "compute_at of stage 'B'",
                   "its reader 'C' is not computed inside that loop");
}

TEST(ScheduleErrors, VectorizeWithSymbolicExtent) {
    Ref<Var> n = make_var("n");
    Tensor X = placeholder({n}, DataType::float32(), "X");
    Tensor Y = compute(
        {n}, [&](PrimExpr i) { return X(i); }, "Y");
    Schedule s = create_schedule({Y});
    s[Y].vectorize(s[Y].op_axis()[0]);
    EXPECT_MESSAGE(schedule_to_loops(s, {X, Y}, "f"), "vectorize on stage 'Y'", "axis 'i'",
                   "not a constant", "split it by a constant factor");
}

TEST(DriverErrors, UnknownPassNames) {
    Tensor X = placeholder({4}, DataType::float32(), "X");
    Tensor Y = compute(
        {4}, [&](PrimExpr i) { return X(i); }, "Y");
    Schedule s = create_schedule({Y});
    driver::PipelineOptions disable{.disabled_passes = {"fold_everything"}};
    EXPECT_MESSAGE(driver::build(s, {X, Y}, "llvm", "f", disable), "--disable-pass",
                   "unknown pass 'fold_everything'");
    driver::PipelineOptions print{.print_after = "nothing"};
    EXPECT_MESSAGE(driver::build(s, {X, Y}, "llvm", "f", print), "--print-after",
                   "unknown pass 'nothing'");
}

TEST(DriverErrors, TargetsThatCannotBeBuiltYet) {
    Tensor X = placeholder({4}, DataType::float32(), "X");
    Tensor Y = compute(
        {4}, [&](PrimExpr i) { return X(i); }, "Y");
    Schedule s = create_schedule({Y});
    EXPECT_MESSAGE(driver::build(s, {X, Y}, "c", "f"), "target 'c'", "only llvm targets");
    EXPECT_MESSAGE(driver::build(s, {X, Y}, "llvm -mcpu=pentium9000", "f"), "pentium9000");
}

}  // namespace
}  // namespace anvil::te
