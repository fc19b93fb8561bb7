// UserErrors of shape buckets (driver/shape_buckets.h): the option's text, names and sizes that do
// not fit the model, too many combinations, a size a kernel cannot take, and call_tir variants
// that do not fit their call; with their messages.
#include <gtest/gtest.h>

#include <functional>

#include "driver/compile.h"
#include "driver/shape_buckets.h"
#include "errors/expect_message.h"
#include "graph/parser.h"
#include "ops/op_table.h"
#include "support/error.h"

namespace anvil::driver {
namespace {

TEST(ShapeBucketsErrors, MalformedText) {
    EXPECT_MESSAGE(parse_shape_buckets({"n"}),
                   "--shape-buckets: 'n' is not NAME=SIZE,SIZE,... (e.g. n=1,8,32)");
    EXPECT_MESSAGE(parse_shape_buckets({"=8"}), "'=8' is not NAME=SIZE");
    EXPECT_MESSAGE(parse_shape_buckets({"n="}), "'n=' is not NAME=SIZE");
    EXPECT_MESSAGE(parse_shape_buckets({"n=1,"}), "'n=1,' is not NAME=SIZE");
    EXPECT_MESSAGE(parse_shape_buckets({"n=1,x"}),
                   "--shape-buckets: 'x' in 'n=1,x' is not a size (sizes are positive integers)");
    EXPECT_MESSAGE(parse_shape_buckets({"n=1,,2"}), "'' in 'n=1,,2' is not a size");
    EXPECT_MESSAGE(parse_shape_buckets({"n=2.5"}), "'2.5' in 'n=2.5' is not a size");
    EXPECT_MESSAGE(parse_shape_buckets({"n=0"}),
                   "--shape-buckets: 'n=0': sizes must be positive, not 0");
    EXPECT_MESSAGE(parse_shape_buckets({"n=4,-1"}), "sizes must be positive, not -1");
    EXPECT_MESSAGE(parse_shape_buckets({"n=8,1,8"}), "--shape-buckets: 'n=8,1,8' gives 8 twice");
    EXPECT_MESSAGE(parse_shape_buckets({"n=1", "n=2"}),
                   "--shape-buckets: the dimension 'n' is given twice");
}

graph::IRModule module(const char* text) {
    return graph::parse_module(text, ops::op_table());
}

constexpr const char* kSymbolic = R"(
def @main(%x: Tensor[(n, seq, 4), float32]) {
  nn.relu(%x)
}
)";

TEST(ShapeBucketsErrors, NamesAndSizesMustFitTheModel) {
    graph::IRModule m = module(kSymbolic);
    EXPECT_MESSAGE(check_shape_buckets(m, {{"batch", {1}}}),
                   "--shape-buckets: the model has no symbolic dimension 'batch' (its symbolic "
                   "dimensions: n, seq)");
    graph::IRModule fixed = module("def @main(%x: Tensor[(2, 4), float32]) { nn.relu(%x) }");
    EXPECT_MESSAGE(check_shape_buckets(fixed, {{"n", {1}}}),
                   "no symbolic dimension 'n' (its shapes are all static)");
    // From C++ or Python the sizes arrive unchecked.
    EXPECT_MESSAGE(check_shape_buckets(m, {{"n", {}}}), "--shape-buckets: no sizes for 'n'");
    EXPECT_MESSAGE(check_shape_buckets(m, {{"n", {4, 0}}}),
                   "--shape-buckets: n=4,0: sizes must be positive, not 0");
    EXPECT_MESSAGE(check_shape_buckets(m, {{"seq", {2, 3, 2}}}),
                   "--shape-buckets: seq=2,3,2 gives 2 twice");
    // compile_model checks them first.
    PipelineOptions options;
    options.shape_buckets = {{"N", {1}}};
    EXPECT_MESSAGE(compile_model(m, "llvm", options), "no symbolic dimension 'N'");
}

TEST(ShapeBucketsErrors, TheNumberOfCombinationsIsBounded) {
    graph::IRModule m = module(kSymbolic);
    std::vector<int64_t> eight = {1, 2, 3, 4, 5, 6, 7, 8}, nine = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    EXPECT_NO_THROW(check_shape_buckets(m, {{"n", eight}, {"seq", eight}}));
    EXPECT_MESSAGE(check_shape_buckets(m, {{"n", eight}, {"seq", nine}}),
                   "--shape-buckets: 8 x 9 combinations of sizes, more than 64 (a kernel using "
                   "every bucketed dimension is compiled once per combination); give fewer sizes");
}

TEST(ShapeBucketsErrors, ASizeAKernelCannotTakeNamesTheKernelAndTheSize) {
    graph::IRModule m = module(R"(
def @main(%x: Tensor[(1, 1, h, 4), float32]) {
  space_to_depth(%x, blocksize=2)
}
)");
    PipelineOptions options;
    options.shape_buckets = {{"h", {4, 3}}};
    EXPECT_MESSAGE(compile_model(m, "llvm", options),
                   "--shape-buckets: kernel fused_space_to_depth cannot be specialized for h = 3: ",
                   "height 3 of (1, 1, 3, 4) is not a multiple of 2");
}

TEST(ShapeBucketsErrors, CallTirVariantsMustBeConsistent) {
    EXPECT_MESSAGE(
        module(R"(
def @main(%x: Tensor[(n, 4), float32]) {
  call_tir(@relu, (%x,), Tensor[(n, 4), float32], bucket_dims=(n,), bucket_kernels=["relu_2"], bucket_values=[2, 3])
}
)"),
        "call_tir @relu: 1 bucket kernel(s) specialized for 1 dimension(s) need 1 bucket "
        "value(s), given 2");
    EXPECT_MESSAGE(module(R"(
def @main(%x: Tensor[(n, 4), float32]) {
  call_tir(@relu, (%x,), Tensor[(n, 4), float32], bucket_kernels=["relu"], bucket_values=[])
}
)"),
                   "call_tir @relu: bucket_kernels and bucket_dims come together (given 1 "
                   "kernel(s) and 0 dimension(s))");
    EXPECT_MESSAGE(module(R"(
def @main(%x: Tensor[(n, 4), float32]) {
  call_tir(@relu, (%x,), Tensor[(n, 4), float32], bucket_dims=(n,), bucket_kernels=["relu"], bucket_values=[2])
}
)"),
                   "call_tir @relu: a bucket kernel must be another kernel of the module");
    EXPECT_MESSAGE(module(R"(
def @main(%x: Tensor[(n, 4), float32]) {
  call_tir(@relu, (%x,), Tensor[(n, 4), float32], shape_args=(n,))
}
)"),
                   "'shape_args' is written in call_tir's own syntax, not as name=value");
    EXPECT_MESSAGE(module(R"(
def @main(%x: Tensor[(n, 4), float32]) {
  call_tir(@relu, (%x,), Tensor[(n, 4), float32], bucket_dims=(n,), bucket_dims=(n,))
}
)"),
                   "attribute 'bucket_dims' of call_tir is given twice");
    EXPECT_MESSAGE(module(R"(
def @main(%x: Tensor[(n, 4), float32]) {
  call_tir(@relu, (%x,), Tensor[(n, 4), float32], (n,), (n,))
}
)"),
                   "expected an attribute (name=value) or ')' in call_tir");
}

}  // namespace
}  // namespace anvil::driver
