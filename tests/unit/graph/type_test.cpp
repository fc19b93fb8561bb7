// Graph types (graph/type.h): what type_equal tells apart, and the sequence types' rules: the
// type of a sequence's elements (sequence_of), the join of two sequence types (loop-carried
// sequences, inserts) and whether a tensor fits a sequence.
#include "graph/type.h"

#include <gtest/gtest.h>

#include "support/error.h"

namespace anvil::graph {
namespace {

constexpr int64_t kAny = SequenceType::kAnyDim;

Type seq(std::vector<int64_t> dims, DataType t = DataType::float32()) {
    return make_sequence_type(t, std::move(dims));
}
Type any_rank(DataType t = DataType::float32()) {
    return make_sequence_type(t, std::nullopt);
}
Type empty(DataType t = DataType::float32()) {
    return make_empty_sequence_type(t);
}
const SequenceType& as_seq(const Type& t) {
    return *t.as<SequenceType>();
}
PrimExpr i64(int64_t v) {
    return make_int(DataType::int64(), v);
}

// The join's spelling, "none" when there is none.
std::string join(const Type& a, const Type& b) {
    std::optional<Type> j = join_sequence_types(as_seq(a), as_seq(b));
    return j ? type_str(*j) : "none";
}

TEST(GraphType, SequenceAndOptionalSpelling) {
    EXPECT_EQ(type_str(seq({kAny, 3})), "Sequence[(?, 3), float32]");
    EXPECT_EQ(type_str(seq({4}, DataType::int64())), "Sequence[(4,), int64]");
    EXPECT_EQ(type_str(seq({})), "Sequence[(), float32]");
    EXPECT_EQ(type_str(any_rank(DataType::bool_())), "Sequence[?, bool]");
    EXPECT_EQ(type_str(empty()), "Sequence[empty, float32]");
    EXPECT_EQ(type_str(make_optional_type(
                  make_tensor_type(std::vector<int64_t>{5}, DataType::float32()))),
              "Optional[Tensor[(5,), float32]]");
    EXPECT_EQ(type_str(make_optional_type(seq({kAny}))), "Optional[Sequence[(?,), float32]]");
    EXPECT_EQ(type_str(make_tuple_type({seq({2}), empty()})),
              "(Sequence[(2,), float32], Sequence[empty, float32])");
}

TEST(GraphType, TypeEqualTellsSequencesAndOptionalsApart) {
    std::vector<Type> distinct = {
        seq({kAny, 3}),
        seq({2, 3}),
        seq({3, kAny}),
        seq({kAny, 3, 1}),
        seq({}),
        seq({kAny, 3}, DataType::int32()),
        any_rank(),
        any_rank(DataType::int64()),
        empty(),
        empty(DataType::int64()),
        make_tensor_type(std::vector<int64_t>{2, 3}, DataType::float32()),
        make_optional_type(seq({kAny, 3})),
        make_optional_type(seq({2, 3})),
        make_optional_type(empty()),
        make_optional_type(make_tensor_type(std::vector<int64_t>{2, 3}, DataType::float32())),
        make_optional_type(make_tensor_type(std::vector<int64_t>{2, 4}, DataType::float32())),
        make_tuple_type({seq({kAny, 3})}),
    };
    for (size_t i = 0; i < distinct.size(); ++i) {
        for (size_t j = 0; j < distinct.size(); ++j) {
            EXPECT_EQ(type_equal(distinct[i], distinct[j]), i == j)
                << type_str(distinct[i]) << " vs " << type_str(distinct[j]);
        }
    }
    // Structurally, not by identity.
    EXPECT_TRUE(type_equal(seq({kAny, 3}), seq({kAny, 3})));
    EXPECT_TRUE(type_equal(empty(), empty()));
    EXPECT_TRUE(type_equal(make_optional_type(any_rank()), make_optional_type(any_rank())));
}

TEST(GraphType, SequenceOfKeepsConstantDimensions) {
    auto n = make_var("n", DataType::int64());
    Type t = make_tensor_type({PrimExpr(n), i64(3), i64(0)}, DataType::float16());
    EXPECT_EQ(type_str(sequence_of(*t.as<TensorType>())), "Sequence[(?, 3, 0), float16]");
    Type scalar = make_tensor_type(std::vector<int64_t>{}, DataType::int64());
    EXPECT_EQ(type_str(sequence_of(*scalar.as<TensorType>())), "Sequence[(), int64]");
}

TEST(GraphType, JoinKeepsWhatBothShare) {
    EXPECT_EQ(join(seq({2, 3}), seq({2, 3})), "Sequence[(2, 3), float32]");
    EXPECT_EQ(join(seq({2, 3}), seq({4, 3})), "Sequence[(?, 3), float32]");
    EXPECT_EQ(join(seq({2, 3}), seq({4, 5})), "Sequence[(?, ?), float32]");
    EXPECT_EQ(join(seq({kAny, 3}), seq({2, 3})), "Sequence[(?, 3), float32]");
    EXPECT_EQ(join(seq({2, 3}), seq({kAny, 3})), "Sequence[(?, 3), float32]");
    // Different ranks, or any rank: only the dtype is shared.
    EXPECT_EQ(join(seq({2, 3}), seq({2})), "Sequence[?, float32]");
    EXPECT_EQ(join(seq({2}), any_rank()), "Sequence[?, float32]");
    EXPECT_EQ(join(any_rank(), seq({2})), "Sequence[?, float32]");
    EXPECT_EQ(join(seq({}), seq({})), "Sequence[(), float32]");
    // An empty sequence joins to the other; two empties stay empty.
    EXPECT_EQ(join(empty(), seq({2, 3})), "Sequence[(2, 3), float32]");
    EXPECT_EQ(join(seq({kAny}), empty()), "Sequence[(?,), float32]");
    EXPECT_EQ(join(empty(), any_rank()), "Sequence[?, float32]");
    EXPECT_EQ(join(empty(), empty()), "Sequence[empty, float32]");
    // Different dtypes never join, not even with an empty sequence.
    EXPECT_EQ(join(seq({2}), seq({2}, DataType::int64())), "none");
    EXPECT_EQ(join(empty(DataType::int64()), seq({2})), "none");
    EXPECT_EQ(join(any_rank(), empty(DataType::int32())), "none");
    // The join is symmetric.
    std::vector<Type> all = {seq({2, 3}), seq({4, 3}), seq({kAny, 3}),
                             seq({2}),    any_rank(),  empty()};
    for (const Type& a : all) {
        for (const Type& b : all) EXPECT_EQ(join(a, b), join(b, a));
    }
}

TEST(GraphType, FitsSequence) {
    auto n = make_var("n", DataType::int64());
    auto tensor = [](std::vector<PrimExpr> shape, DataType t = DataType::float32()) {
        return make_tensor_type(std::move(shape), t);
    };
    auto fits = [](const Type& t, const Type& s) {
        return fits_sequence(*t.as<TensorType>(), as_seq(s));
    };
    Type t23 = tensor({i64(2), i64(3)});
    EXPECT_TRUE(fits(t23, seq({2, 3})));
    EXPECT_TRUE(fits(t23, seq({kAny, 3})));
    EXPECT_TRUE(fits(t23, seq({kAny, kAny})));
    EXPECT_TRUE(fits(t23, any_rank()));
    EXPECT_TRUE(fits(t23, empty()));
    EXPECT_FALSE(fits(t23, seq({2, 4})));
    EXPECT_FALSE(fits(t23, seq({2})));        // rank
    EXPECT_FALSE(fits(t23, seq({2, 3, 1})));  // rank
    EXPECT_FALSE(fits(t23, seq({2, 3}, DataType::int32())));
    EXPECT_FALSE(fits(t23, empty(DataType::int32())));
    EXPECT_FALSE(fits(t23, any_rank(DataType::float16())));
    // A symbolic dimension fits only where the elements may differ.
    Type tn3 = tensor({PrimExpr(n), i64(3)});
    EXPECT_TRUE(fits(tn3, seq({kAny, 3})));
    EXPECT_FALSE(fits(tn3, seq({2, 3})));
    EXPECT_TRUE(fits(tensor({}), seq({})));
    EXPECT_FALSE(fits(tensor({}), seq({1})));
}

TEST(GraphType, AnOptionalHoldsATensorOrASequence) {
    EXPECT_NO_THROW(make_optional_type(empty()));
    EXPECT_THROW(make_optional_type(make_tuple_type({})), InternalError);
    EXPECT_THROW(make_optional_type(make_optional_type(any_rank())), InternalError);
    EXPECT_THROW(make_sequence_type(DataType::float32(), std::vector<int64_t>{-2}), InternalError);
}

}  // namespace
}  // namespace anvil::graph
