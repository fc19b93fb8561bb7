// The checked mode in generated code: kernels instrumented by tir::instrument_bound_checkers and
// compiled fail through the runtime's error path (a UserError here, the C ABI's status and last
// error message underneath) naming the kernel, the buffer and the index, also from a parallel
// loop and with workspace allocated; in-bounds runs are unaffected, and masked lanes of vector
// loads that point outside a buffer are not reported.
#include <gtest/gtest.h>

#include "codegen_test_util.h"
#include "tir/parser.h"
#include "tir/passes/passes.h"

namespace anvil::codegen_test {
namespace {

using runtime::NDArray;

// Parses `text`, instruments it and compiles it; the kernel callable.
runtime::PackedFunc jit_checked(const std::string& text) {
    Ref<tir::PrimFunc> f = tir::parse_prim_func(text);
    tir::LowerContext ctx;
    ctx.function_name = f->name;
    return jit(tir::with_body(f, tir::instrument_bound_checkers(f->body, ctx)));
}

std::vector<float> iota(int n) {
    std::vector<float> v(n);
    for (int k = 0; k < n; ++k) v[k] = static_cast<float>(k);
    return v;
}

TEST(BoundCheck, ScalarOutOfBoundsFailsWithKernelBufferAndIndex) {
    runtime::PackedFunc fn =
        jit_checked(R"(prim_func shift(A: float32[n], B: float32[n], k: int32) {
  for i in [0, n) { B[i] = A[i + k] }
})");
    NDArray A = make_array(iota(10), DataType::float32()),
            B = make_empty(DataType::float32(), {10});
    fn(A, B, 0);
    EXPECT_EQ(B.to_vector<float>(), iota(10));
    EXPECT_EQ(error_of([&] { fn(A, B, 3); }),
              "kernel shift: buffer 'A' index 10 out of bounds [0, 10) (load)");
}

TEST(BoundCheck, ParallelLoopWithWorkspaceReportsAndFrees) {
    // The scratch buffer is large enough for the workspace (not the stack); the failing check
    // sits inside it and inside a parallel loop, whose error path frees it.
    runtime::PackedFunc fn =
        jit_checked(R"(prim_func par(A: float32[1048576], B: float32[1048576], k: int32) {
  allocate T: float32[1048576] {
    for i in [0, 1048576) parallel { T[i] = A[i] * 2.0f }
    for i in [0, 1048576) parallel { B[i] = T[i * k] }
  }
})");
    NDArray A = make_array(iota(1 << 20), DataType::float32());
    NDArray B = make_empty(DataType::float32(), {1 << 20});
    fn(A, B, 1);
    EXPECT_EQ(B.to_vector<float>()[12345], 24690.0f);
    std::string e = error_of([&] { fn(A, B, 3); });
    EXPECT_NE(e.find("kernel par: buffer 'T' index "), std::string::npos) << e;
    EXPECT_NE(e.find(" out of bounds [0, 1048576) (load)"), std::string::npos) << e;
}

TEST(BoundCheck, MaskedLanesOutsideAreNotReportedAndAdmittedOnesAre) {
    // B[i] = lo <= i < 10 ? A[i - 2] : 0 over 12 lanes: with lo = 2 the lanes that point before
    // A are masked off; with lo = 1 lane 1 reads A[-1], the first lane reported.
    runtime::PackedFunc fn =
        jit_checked(R"(prim_func pad(A: float32[8], B: float32[12], lo: int32) {
  B[ramp(0, 1, 12)] = call<float32x12>("if_then_else", ramp(0, 1, 12) >= broadcast(lo, 12) && ramp(0, 1, 12) < broadcast(10, 12), A[ramp(-2, 1, 12)], broadcast(0.0f, 12))
})");
    NDArray A = make_array(iota(8), DataType::float32()), B = make_empty(DataType::float32(), {12});
    fn(A, B, 2);
    EXPECT_EQ(B.to_vector<float>(), (std::vector<float>{0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 0, 0}));
    EXPECT_EQ(error_of([&] { fn(A, B, 1); }),
              "kernel pad: buffer 'A' index -1 out of bounds [0, 8) (load)");
}

TEST(BoundCheck, VectorStoreReportsALaneOutside) {
    runtime::PackedFunc fn = jit_checked(R"(prim_func fill(B: float32[20], k: int32) {
  B[ramp(k, 1, 8)] = broadcast(1.0f, 8)
  B[ramp(0, 1, 4) * broadcast(k, 4)] = broadcast(2.0f, 4)
})");
    NDArray B = make_empty(DataType::float32(), {20});
    fn(B, 6);
    EXPECT_EQ(error_of([&] { fn(B, 13); }),
              "kernel fill: buffer 'B' index 20 out of bounds [0, 20) (store)");
    // The gather-style store: lanes 0, 7, 14, 21; the fourth is out.
    EXPECT_EQ(error_of([&] { fn(B, 7); }),
              "kernel fill: buffer 'B' index 21 out of bounds [0, 20) (store)");
}

}  // namespace
}  // namespace anvil::codegen_test
