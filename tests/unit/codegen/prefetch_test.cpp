// The prefetch intrinsic (made by tir's prefetch_streams): a hint that reads nothing, so an
// address far past the buffer's end neither faults nor changes what the kernel computes.
#include <gtest/gtest.h>

#include <vector>

#include "codegen_test_util.h"
#include "ir/intrinsics.h"

namespace anvil {
namespace {

using namespace codegen_test;

TEST(Prefetch, HintPastTheBufferRunsAndComputesTheSame) {
    const int64_t n = 64;
    auto A = make_buffer("A", DataType::float32(), {i32(n)});
    auto C = make_buffer("C", DataType::float32(), {i32(n)});
    auto i = make_var("i");
    // 4 MiB and 4 GiB past A's end: unmapped memory for all we know.
    tir::Stmt near = tir::make_evaluate(make_call(DataType::int32(), intrin::kPrefetch,
                                                  {make_load(A, {PrimExpr(i) + i32(1 << 20)})}));
    tir::Stmt far = tir::make_evaluate(make_call(
        DataType::int32(), intrin::kPrefetch,
        {make_load(A, {cast(DataType::int64(), i) + make_int(DataType::int64(), 1LL << 30)})}));
    tir::Stmt store = tir::make_store(C, make_load(A, {i}) * 2.0f, {i});
    auto f = tir::make_prim_func(
        "prefetched", {A, C},
        tir::make_for(i, i32(0), i32(n), tir::ForKind::Serial, tir::make_seq({near, far, store})));
    std::vector<float> a(n);
    for (int64_t k = 0; k < n; ++k) a[k] = static_cast<float>(k) - 20.5f;
    runtime::NDArray in = make_array(a, DataType::float32()),
                     out = make_empty(DataType::float32(), {n});
    runtime::Module m = codegen::build_llvm({f}, host_target());
    EXPECT_NE(codegen::get_source(m, "ll").find("llvm.prefetch"), std::string::npos);
    m.get_function(f->name)(in, out);
    std::vector<float> got = out.to_vector<float>();
    for (int64_t k = 0; k < n; ++k) EXPECT_EQ(got[k], 2.0f * a[k]) << k;
}

TEST(Prefetch, TakesOneScalarLoad) {
    auto A = make_buffer("A", DataType::float32(), {i32(8)});
    auto f =
        tir::make_prim_func("bad", {A},
                            tir::make_evaluate(make_call(DataType::int32(), intrin::kPrefetch,
                                                         {make_const(DataType::float32(), 1.0)})));
    EXPECT_THROW(jit(f), InternalError);
}

}  // namespace
}  // namespace anvil
