// Shape buckets (driver/shape_buckets.h): reading the option, the variants of a fused function
// (every combination of the sizes of the bucketed dimensions it uses), and the function with its
// dimensions fixed (types and shape attributes constant).
#include "driver/shape_buckets.h"

#include <gtest/gtest.h>

#include "graph/parser.h"
#include "graph/printer.h"
#include "ops/op_table.h"

namespace anvil::driver {
namespace {

TEST(ShapeBuckets, ParsesOneOrSeveralDimensionsPerArgument) {
    EXPECT_EQ(parse_shape_buckets({"n=1,8,32"}), (ShapeBuckets{{"n", {1, 8, 32}}}));
    EXPECT_EQ(parse_shape_buckets({"n=1 seq=64,128", "batch_size=4"}),
              (ShapeBuckets{{"n", {1}}, {"seq", {64, 128}}, {"batch_size", {4}}}));
    EXPECT_TRUE(parse_shape_buckets({}).empty());
    EXPECT_TRUE(parse_shape_buckets({" "}).empty());
}

// A fused group over (n, seq, 8) and a weight: the group uses n and seq, and a flattening reshape
// names n in its attributes.
constexpr const char* kGroup = R"(
def @main(%x: Tensor[(n, seq, 8), float32], %w: Tensor[(8,), float32]) {
  %0 = fn (%p0: Tensor[(n, seq, 8), float32], %p1: Tensor[(8,), float32], primitive=1) {
    %1 = multiply(%p0, %p1);
    reshape(%1, dims=(n * seq, 8))
  };
  %0(%x, %w)
}
)";

const graph::Function& group(const graph::IRModule& m) {
    const auto& call = *m.main()->body.as<graph::Call>();
    return *call.callee.as<graph::Function>();
}

TEST(ShapeBuckets, VariantsAreEveryCombinationOfTheBucketedDimensionsUsed) {
    graph::IRModule m = graph::parse_module(kGroup, ops::op_table());
    BucketVariants v = bucket_variants(group(m), {{"seq", {16, 64}}, {"n", {1, 8}}, {"m", {3}}});
    ASSERT_EQ(v.dims.size(), 2u);
    EXPECT_EQ(v.dims[0]->name, "n");  // by name; m is not used by this group
    EXPECT_EQ(v.dims[1]->name, "seq");
    EXPECT_EQ(v.sizes, (std::vector<std::vector<int64_t>>{{1, 16}, {1, 64}, {8, 16}, {8, 64}}));
    EXPECT_EQ(bucket_suffix(v.dims, v.sizes[2]), "n8_seq16");
    BucketVariants only_n = bucket_variants(group(m), {{"n", {2}}});
    EXPECT_EQ(only_n.sizes, (std::vector<std::vector<int64_t>>{{2}}));
    EXPECT_TRUE(bucket_variants(group(m), {{"m", {3}}}).dims.empty());
    EXPECT_TRUE(bucket_variants(group(m), {}).sizes.empty());
}

TEST(ShapeBuckets, SpecializingFixesTypesAndShapeAttributes) {
    graph::IRModule m = graph::parse_module(kGroup, ops::op_table());
    BucketVariants v = bucket_variants(group(m), {{"n", {4}}});
    Ref<graph::Function> f = specialize_dims(group(m), v.dims, {4});
    EXPECT_EQ(graph::type_str(f->params[0]->type), "Tensor[(4, seq, 8), float32]");
    EXPECT_EQ(graph::type_str(f->params[1]->type), "Tensor[(8,), float32]");
    EXPECT_EQ(graph::type_str(f->body->type), "Tensor[(seq * 4i64, 8), float32]");
    EXPECT_TRUE(f->primitive);
    // The whole group fixed: every type static.
    BucketVariants both = bucket_variants(group(m), {{"n", {4}}, {"seq", {3}}});
    Ref<graph::Function> g = specialize_dims(group(m), both.dims, {4, 3});
    EXPECT_EQ(graph::type_str(g->body->type), "Tensor[(12, 8), float32]");
}

TEST(ShapeBuckets, SuffixesAreIdentifiers) {
    Ref<Var> v = make_var("batch size", DataType::int64());
    EXPECT_EQ(bucket_suffix({v}, {16}), "batch_size16");
}

}  // namespace
}  // namespace anvil::driver
