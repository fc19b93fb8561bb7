#include "ir/structural_equal.h"

#include <gtest/gtest.h>

#include <cmath>

namespace anvil {
namespace {

class StructuralEqualTest : public ::testing::Test {
protected:
    Ref<Var> x_ = make_var("x"), y_ = make_var("y"), z_ = make_var("z");
    Ref<Var> x2_ = make_var("x");  // same name, different variable
    PrimExpr x = x_, y = y_, z = z_, x2 = x2_;
};

TEST_F(StructuralEqualTest, SameShapeIsEqual) {
    EXPECT_TRUE(structural_equal(x * 2 + floordiv(y, 4), x * 2 + floordiv(y, 4)));
    EXPECT_TRUE(structural_equal(select(x < y, x, 0), select(x < y, x, 0)));
    EXPECT_TRUE(
        structural_equal(make_call(DataType::float32(), "exp", {cast(DataType::float32(), x)}),
                         make_call(DataType::float32(), "exp", {cast(DataType::float32(), x)})));
}

TEST_F(StructuralEqualTest, DifferencesAreSeen) {
    EXPECT_FALSE(structural_equal(x + 1, x + 2));
    EXPECT_FALSE(structural_equal(x + 1, x - 1));
    EXPECT_FALSE(structural_equal(x + 1, 1 + x));
    EXPECT_FALSE(structural_equal(make_int(DataType::int32(), 1), make_int(DataType::int64(), 1)));
    EXPECT_FALSE(structural_equal(floordiv(x, 2), x / 2));
    EXPECT_FALSE(structural_equal(make_ramp(x, 1, 4), make_ramp(x, 1, 8)));
    EXPECT_FALSE(structural_equal(make_call(DataType::float32(), "exp", {1.0f}),
                                  make_call(DataType::float32(), "log", {1.0f})));
    EXPECT_FALSE(structural_equal(x, PrimExpr()));
    EXPECT_TRUE(structural_equal(PrimExpr(), PrimExpr()));
}

TEST_F(StructuralEqualTest, FloatsCompareBitwise) {
    EXPECT_TRUE(structural_equal(make_float(DataType::float32(), NAN),
                                 make_float(DataType::float32(), NAN)));
    EXPECT_FALSE(structural_equal(make_float(DataType::float32(), 0.0),
                                  make_float(DataType::float32(), -0.0)));
    // NaNs of other sign or payload differ unless asked otherwise (the text loses those bits).
    PrimExpr nan = make_float(DataType::float32(), NAN);
    PrimExpr minus_nan = make_float(DataType::float32(), -NAN);
    EXPECT_FALSE(structural_equal(nan, minus_nan));
    EXPECT_TRUE(StructuralEqualizer({.ignore_nan_bits = true}).equal(nan, minus_nan));
    EXPECT_FALSE(
        StructuralEqualizer({.ignore_nan_bits = true})
            .equal(make_float(DataType::float32(), 0.0), make_float(DataType::float32(), -0.0)));
}

TEST_F(StructuralEqualTest, VarsByIdentityUnlessMapped) {
    EXPECT_FALSE(structural_equal(x + 1, x2 + 1));
    EXPECT_FALSE(structural_equal(x + 1, y + 1));
    EXPECT_TRUE(structural_equal(x + 1, y + 1, /*map_free_vars=*/true));
    EXPECT_TRUE(structural_equal(x * y + x, y * z + y, true));
    // The mapping must be one-to-one and consistent.
    EXPECT_FALSE(structural_equal(x + y, z + z, true));
    EXPECT_FALSE(structural_equal(x + x, y + z, true));
    EXPECT_FALSE(structural_equal(
        x + 1, make_var("w", DataType::int64()) + make_int(DataType::int64(), 1), true));
}

TEST_F(StructuralEqualTest, RecordedCorrespondences) {
    StructuralEqualizer eq;
    ASSERT_TRUE(eq.bind_var(x_.get(), y_.get()));    // e.g. two loops' variables
    EXPECT_TRUE(eq.equal(x * 4 + z, y * 4 + z));     // z is free and the same object
    EXPECT_FALSE(eq.equal_var(x_.get(), x_.get()));  // x now stands for y
    EXPECT_FALSE(eq.equal_var(z_.get(), y_.get()));
    EXPECT_FALSE(eq.bind_var(x_.get(), z_.get()));  // already bound to y
    EXPECT_TRUE(eq.bind_var(x_.get(), y_.get()));   // rebinding the same pair is fine
}

// A Scope's bindings end with it: one Var bound by two sibling loops on the left may correspond
// to two distinct Vars on the right, and an inner binding shadows an outer one until it ends.
TEST_F(StructuralEqualTest, ScopedBindingsEndWithTheirScope) {
    StructuralEqualizer eq;
    {
        StructuralEqualizer::Scope first(eq);
        ASSERT_TRUE(first.bind_var(x_.get(), y_.get()));
        EXPECT_TRUE(eq.equal(x * 4 + 1, y * 4 + 1));
        EXPECT_FALSE(eq.renames_nothing());
    }
    EXPECT_TRUE(eq.renames_nothing());
    {
        StructuralEqualizer::Scope second(eq);
        ASSERT_TRUE(second.bind_var(x_.get(), z_.get()));  // the same x, another partner
        EXPECT_TRUE(eq.equal(x * 4 + 1, z * 4 + 1));
        EXPECT_FALSE(eq.equal(x * 4 + 1, y * 4 + 1));
    }
    EXPECT_TRUE(eq.equal(x + 1, x + 1));  // free again, so equal to itself only
    EXPECT_FALSE(eq.equal(x + 1, z + 1));

    StructuralEqualizer::Scope outer(eq);
    ASSERT_TRUE(outer.bind_var(x_.get(), y_.get()));
    {
        StructuralEqualizer::Scope inner(eq);
        ASSERT_TRUE(inner.bind_var(x_.get(), z_.get()));  // an inner loop over the same x
        EXPECT_TRUE(eq.equal_var(x_.get(), z_.get()));
        EXPECT_FALSE(eq.equal_var(x_.get(), y_.get()));
    }
    EXPECT_TRUE(eq.equal_var(x_.get(), y_.get()));  // the outer binding is back
    EXPECT_FALSE(eq.equal_var(x_.get(), z_.get()));
    EXPECT_TRUE(eq.equal_var(z_.get(), z_.get()));  // z's binding ended with the inner scope
    EXPECT_FALSE(outer.bind_var(x_.get(), make_var("w", DataType::int64()).get()));

    Ref<Buffer> a = make_buffer("A", DataType::float32(), {16});
    Ref<Buffer> b = make_buffer("B", DataType::float32(), {16});
    {
        StructuralEqualizer::Scope alloc(eq);
        alloc.bind_buffer(a.get(), b.get());
        EXPECT_TRUE(eq.equal_buffer(a.get(), b.get()));
        EXPECT_FALSE(eq.equal_buffer(a.get(), a.get()));
    }
    EXPECT_TRUE(eq.equal_buffer(a.get(), a.get()));
    EXPECT_FALSE(eq.equal_buffer(a.get(), b.get()));
}

TEST_F(StructuralEqualTest, Buffers) {
    Ref<Buffer> a = make_buffer("A", DataType::float32(), {16, 16});
    Ref<Buffer> a2 = make_buffer("A", DataType::float32(), {16, 16});
    Ref<Buffer> b = make_buffer("A", DataType::float32(), {16, 8});
    EXPECT_TRUE(structural_equal(make_load(a, {x, y}), make_load(a, {x, y})));
    EXPECT_FALSE(structural_equal(make_load(a, {x, y}), make_load(a2, {x, y})));
    EXPECT_TRUE(structural_equal(make_load(a, {x, y}), make_load(a2, {x, y}), true));
    EXPECT_FALSE(structural_equal(make_load(a, {x, y}), make_load(b, {x, y}), true));
    StructuralEqualizer eq;
    ASSERT_TRUE(eq.bind_buffer(a.get(), b.get()));  // an allocation bound in both statements
    EXPECT_TRUE(eq.equal(make_load(a, {x}), make_load(b, {x})));
    EXPECT_FALSE(eq.equal_buffer(a.get(), a2.get()));
}

TEST_F(StructuralEqualTest, ReduceMatchesAxesByPosition) {
    Ref<Buffer> a = make_buffer("A", DataType::float32(), {16});
    auto sum_over = [&](const std::string& axis_name) {
        Ref<Var> lhs = make_var("lhs", DataType::float32()),
                 rhs = make_var("rhs", DataType::float32());
        auto combiner = make_ref<CommReducer>(lhs, rhs, PrimExpr(lhs) + rhs, 0.0f, "sum");
        Ref<IterVar> k = make_iter_var(Range{0, 16}, axis_name, IterKind::Reduce);
        PrimExpr source = make_load(a, {k->var});
        return PrimExpr(new Reduce(DataType::float32(), combiner, source, {k}, make_bool(true)));
    };
    EXPECT_TRUE(structural_equal(sum_over("k"), sum_over("r")));
    EXPECT_EQ(structural_hash(sum_over("k")), structural_hash(sum_over("k")));
}

TEST_F(StructuralEqualTest, HashAgreesWithEquality) {
    EXPECT_EQ(structural_hash(x * 2 + floordiv(y, 4)), structural_hash(x * 2 + floordiv(y, 4)));
    // Vars hash by name and dtype, so renaming-equal expressions with equal names hash equal.
    EXPECT_EQ(structural_hash(x + 1), structural_hash(x2 + 1));
    EXPECT_NE(structural_hash(x + 1), structural_hash(x + 2));
    EXPECT_NE(structural_hash(x + 1), structural_hash(x - 1));
    EXPECT_NE(structural_hash(make_int(DataType::int32(), 1)),
              structural_hash(make_int(DataType::int64(), 1)));
    EXPECT_NE(structural_hash(make_float(DataType::float32(), 0.0)),
              structural_hash(make_float(DataType::float32(), -0.0)));
}

}  // namespace
}  // namespace anvil
