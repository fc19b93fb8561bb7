// Whole kernels: vector loads and stores, math intrinsics, parallel loops, allocations,
// assertions, scalar parameters and symbolic shapes, run through the JIT.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "codegen_test_util.h"
#include "ir/intrinsics.h"

namespace anvil {
namespace {

using namespace codegen_test;
using tir::ForKind;

const DataType f32 = DataType::float32();

TEST(Kernel, VectorAddWithScalarTail) {
    const int n = 37;
    auto A = make_buffer("A", f32, {i32(n)}), B = make_buffer("B", f32, {i32(n)});
    auto C = make_buffer("C", f32, {i32(n)});
    auto i = make_var("i"), j = make_var("j");
    PrimExpr r = make_ramp(i * 8, i32(1), 8);
    tir::Stmt body = tir::make_seq(
        {tir::make_for(i, i32(0), i32(n / 8), ForKind::Serial,
                       tir::make_store(C, make_load(A, {r}) + make_load(B, {r}), {r})),
         tir::make_for(j, i32(n / 8 * 8), i32(n % 8), ForKind::Serial,
                       tir::make_store(C, make_load(A, {j}) + make_load(B, {j}), {j}))});
    auto f = tir::make_prim_func("vadd", {A, B, C}, body);
    runtime::Module m = codegen::build_llvm({f}, host_target());
    std::vector<float> a(n), b(n);
    for (int k = 0; k < n; ++k) {
        a[k] = 0.5f * k;
        b[k] = 100.0f - k;
    }
    runtime::NDArray An = make_array(a, f32), Bn = make_array(b, f32), Cn = make_empty(f32, {n});
    m.get_function("vadd")(An, Bn, Cn);
    std::vector<float> c = Cn.to_vector<float>();
    for (int k = 0; k < n; ++k) EXPECT_EQ(c[k], a[k] + b[k]) << k;

    std::string ll = codegen::get_source(m, "ll");
    EXPECT_NE(ll.find("@vadd("), std::string::npos);
    EXPECT_NE(ll.find("<8 x float>"), std::string::npos) << ll;
    std::string asm_text = codegen::get_source(m, "asm");
    EXPECT_NE(asm_text.find("vadd"), std::string::npos);
    if (host_target().vector_bits() >= 256) {
        EXPECT_TRUE(asm_text.find("%ymm") != std::string::npos ||
                    asm_text.find("%zmm") != std::string::npos)
            << asm_text;
    }
}

TEST(Kernel, GatherAndScatterTranspose) {
    // 4x4 transposes: a strided vector load (a shuffled load) and a strided vector store
    // (scatter).
    auto A = make_buffer("A", f32, {i32(16)}), T1 = make_buffer("T1", f32, {i32(16)});
    auto T2 = make_buffer("T2", f32, {i32(16)});
    auto i = make_var("i");
    PrimExpr row = make_ramp(i * 4, i32(1), 4), col = make_ramp(i, i32(4), 4);
    tir::Stmt body =
        tir::make_for(i, i32(0), i32(4), ForKind::Serial,
                      tir::make_seq({tir::make_store(T1, make_load(A, {col}), {row}),
                                     tir::make_store(T2, make_load(A, {row}), {col})}));
    std::vector<float> a(16);
    for (int k = 0; k < 16; ++k) a[k] = static_cast<float>(k);
    runtime::NDArray An = make_array(a, f32), T1n = make_empty(f32, {16}),
                     T2n = make_empty(f32, {16});
    jit(tir::make_prim_func("transpose", {A, T1, T2}, body))(An, T1n, T2n);
    std::vector<float> want(16);
    for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 4; ++c) want[r * 4 + c] = a[c * 4 + r];
    EXPECT_EQ(T1n.to_vector<float>(), want);
    EXPECT_EQ(T2n.to_vector<float>(), want);
}

// Out[i * lanes + l] = In[base + (i * lanes + l) * stride]: strided vector loads, small strides
// as a contiguous load plus a shuffle, larger ones as gathers. The last vector's span ends at
// the input's last element, so a load past it would read outside the tensor.
template <typename T>
void check_strided_load(DataType t, int lanes, int stride) {
    const int vectors = 3, n_out = vectors * lanes;
    const int n_in = (n_out - 1) * stride + 1;
    auto In = make_buffer("In", t, {i32(n_in)}), Out = make_buffer("Out", t, {i32(n_out)});
    auto i = make_var("i");
    PrimExpr load = make_load(In, {make_ramp(i * (lanes * stride), i32(stride), lanes)});
    tir::Stmt body =
        tir::make_for(i, i32(0), i32(vectors), ForKind::Serial,
                      tir::make_store(Out, load, {make_ramp(i * lanes, i32(1), lanes)}));
    runtime::Module m =
        codegen::build_llvm({tir::make_prim_func("strided", {In, Out}, body)}, host_target());
    std::vector<T> in(n_in);
    for (int k = 0; k < n_in; ++k) in[k] = static_cast<T>(k % 100 - 50);
    runtime::NDArray In_n = make_array(in, t), Out_n = make_empty(t, {n_out});
    m.get_function("strided")(In_n, Out_n);
    std::vector<T> out = Out_n.template to_vector<T>();
    for (int k = 0; k < n_out; ++k) {
        ASSERT_EQ(out[k], in[k * stride]) << t.str() << " lanes " << lanes << " stride " << stride;
    }
    std::string ll = codegen::get_source(m, "ll");
    bool gathers = ll.find("llvm.masked.gather") != std::string::npos;
    EXPECT_EQ(gathers, stride > 4) << ll;  // codegen's kMaxShuffledStride
}

TEST(Kernel, StridedVectorLoads) {
    for (int lanes : {4, 8, 16}) {
        for (int stride : {2, 3, 4, 5}) {
            check_strided_load<float>(f32, lanes, stride);
            check_strided_load<int8_t>(DataType::int_(8), lanes, stride);
        }
    }
}

TEST(Kernel, OddLaneCountsTouchOnlyTheirElements) {
    // B[3 + k] = A[5 + k] * 2 for k < lanes, lanes 7 and 9 (masked accesses of 8 and 16 lanes
    // with AVX-512): the elements around the stored ones keep their values, and a global-scope
    // scratch buffer (on the stack, being small) in between works the same.
    for (int lanes : {3, 7, 9}) {
        auto A = make_buffer("A", f32, {i32(20)}), B = make_buffer("B", f32, {i32(20)});
        auto T = make_buffer("T", f32, {i32(lanes)});
        PrimExpr all = make_ramp(i32(0), i32(1), lanes);
        tir::Stmt body = tir::make_allocate(
            T, tir::make_seq(
                   {tir::make_store(T,
                                    make_load(A, {make_ramp(i32(5), i32(1), lanes)}) *
                                        make_broadcast(make_float(f32, 2.0), lanes),
                                    {all}),
                    tir::make_store(B, make_load(T, {all}), {make_ramp(i32(3), i32(1), lanes)})}));
        std::vector<float> a(20), b(20, -1.0f);
        for (int k = 0; k < 20; ++k) a[k] = static_cast<float>(k);
        runtime::NDArray An = make_array(a, f32), Bn = make_array(b, f32);
        jit(tir::make_prim_func("odd", {A, B}, body))(An, Bn);
        std::vector<float> got = Bn.to_vector<float>();
        for (int k = 0; k < 20; ++k) {
            float want = k >= 3 && k < 3 + lanes ? 2.0f * static_cast<float>(k + 2) : -1.0f;
            EXPECT_EQ(got[k], want) << "lanes " << lanes << " element " << k;
        }
    }
}

TEST(Kernel, GuardedVectorLoadsReadOnlyTheirLanes) {
    // Out[k] = k * stride in [3, 19) ? A[k * stride - 3] : -1, for strides 1 (a masked load), 2
    // (a masked load and a shuffle) and 5 (a masked gather): lanes outside the guard would read
    // before or after A.
    auto A = make_buffer("A", f32, {i32(16)});
    // The guard reads the position, the load its index (position - lo) as a ramp; lo = 3 is a
    // run-time scalar so that LLVM cannot resolve the mask at compile time.
    auto lo = make_var("lo");
    for (int stride : {1, 2, 5}) {
        const int lanes = 24 / stride;
        auto Out = make_buffer("Out", f32, {i32(lanes)});
        PrimExpr pos = make_ramp(i32(0), i32(stride), lanes);
        PrimExpr inside = make_binary(ExprKind::And, pos >= make_broadcast(lo, lanes),
                                      pos < make_broadcast(lo + 16, lanes));
        PrimExpr value =
            make_call(DataType::float_(32, lanes), intrin::kIfThenElse,
                      {inside, make_load(A, {make_ramp(i32(0) - lo, i32(stride), lanes)}),
                       make_broadcast(make_float(f32, -1.0), lanes)});
        tir::Stmt body = tir::make_store(Out, value, {make_ramp(i32(0), i32(1), lanes)});
        runtime::Module m = codegen::build_llvm(
            {tir::make_prim_func("guarded", {A, Out}, body, {lo})}, host_target());
        std::vector<float> a(16);
        for (int k = 0; k < 16; ++k) a[k] = static_cast<float>(k + 1);
        runtime::NDArray An = make_array(a, f32), On = make_empty(f32, {lanes});
        m.get_function("guarded")(An, On, 3);
        std::vector<float> out = On.to_vector<float>();
        for (int k = 0; k < lanes; ++k) {
            int p = k * stride;
            EXPECT_EQ(out[k], p >= 3 && p < 19 ? a[p - 3] : -1.0f) << "stride " << stride;
        }
        std::string ll = codegen::get_source(m, "ll");
        bool gathers = ll.find("llvm.masked.gather") != std::string::npos;
        EXPECT_EQ(gathers, stride > 4) << ll;  // codegen's kMaxShuffledStride
        if (stride <= 4) EXPECT_NE(ll.find("llvm.masked.load"), std::string::npos) << ll;
    }
}

struct MathCase {
    const char* name;
    double (*ref)(double, double);
    bool positive;  // domain needs x > 0
};

double ref_sigmoid(double x, double) {
    return 1.0 / (1.0 + std::exp(-x));
}
double ref_rsqrt(double x, double) {
    return 1.0 / std::sqrt(x);
}

TEST(Kernel, MathIntrinsicsMatchLibm) {
    const std::vector<MathCase> cases{
        {intrin::kExp, [](double x, double) { return std::exp(x); }, false},
        {intrin::kLog, [](double x, double) { return std::log(x); }, true},
        {intrin::kSqrt, [](double x, double) { return std::sqrt(x); }, true},
        {intrin::kRsqrt, ref_rsqrt, true},
        {intrin::kTanh, [](double x, double) { return std::tanh(x); }, false},
        {intrin::kErf, [](double x, double) { return std::erf(x); }, false},
        {intrin::kSigmoid, ref_sigmoid, false},
        {intrin::kAbs, [](double x, double) { return std::fabs(x); }, false},
        {intrin::kFloor, [](double x, double) { return std::floor(x); }, false},
        {intrin::kCeil, [](double x, double) { return std::ceil(x); }, false},
        {intrin::kRound, [](double x, double) { return std::nearbyint(x); }, false},
        {intrin::kPow, [](double x, double y) { return std::pow(x, y); }, true},
        {intrin::kFma, [](double x, double y) { return std::fma(x, y, x); }, false},
    };
    const std::vector<double> pos{0.5, 1, 1.5, 2, 3.25, 0.1, 4, 10};
    const std::vector<double> any{-2.5, -1, -0.3, 0, 0.3, 1.5, 2.5, 4};
    const std::vector<double> second{2, 0.5, -1, 3, 1.5, 2, -0.5, 1};
    for (DataType t : {DataType::float32(), DataType::float64(), DataType::float16()}) {
        for (int lanes : {1, 4}) {
            std::vector<Ref<tir::PrimFunc>> funcs;
            for (const auto& c : cases) {
                const std::string name = c.name;
                funcs.push_back(
                    elementwise2(name + "_k", t, t, t, 8, lanes, [&](PrimExpr x, PrimExpr y) {
                        std::vector<PrimExpr> args{x};
                        if (name == intrin::kPow) args.push_back(y);
                        if (name == intrin::kFma) args = {x, y, x};
                        return make_call(x.dtype(), name, args);
                    }));
            }
            runtime::Module m = codegen::build_llvm(funcs, host_target());
            for (size_t k = 0; k < cases.size(); ++k) {
                const auto& xs = cases[k].positive ? pos : any;
                runtime::NDArray X = make_empty(t, {8}), Y = make_empty(t, {8}),
                                 Z = make_empty(t, {8});
                std::vector<double> xin(8), yin(8), got(8);
                for (int e = 0; e < 8; ++e) {
                    if (t.bits() == 16) {
                        X.data<_Float16>()[e] = static_cast<_Float16>(xs[e]);
                        Y.data<_Float16>()[e] = static_cast<_Float16>(second[e]);
                        xin[e] = static_cast<double>(X.data<_Float16>()[e]);
                        yin[e] = static_cast<double>(Y.data<_Float16>()[e]);
                    } else if (t.bits() == 32) {
                        X.data<float>()[e] = static_cast<float>(xs[e]);
                        Y.data<float>()[e] = static_cast<float>(second[e]);
                        xin[e] = X.data<float>()[e];
                        yin[e] = Y.data<float>()[e];
                    } else {
                        X.data<double>()[e] = xin[e] = xs[e];
                        Y.data<double>()[e] = yin[e] = second[e];
                    }
                }
                m.get_function(funcs[k]->name)(X, Y, Z);
                const double tol = t.bits() == 16 ? 2e-3 : t.bits() == 32 ? 2e-6 : 1e-14;
                for (int e = 0; e < 8; ++e) {
                    double g = t.bits() == 16   ? static_cast<double>(Z.data<_Float16>()[e])
                               : t.bits() == 32 ? Z.data<float>()[e]
                                                : Z.data<double>()[e];
                    double want = cases[k].ref(xin[e], yin[e]);
                    EXPECT_NEAR(g, want, tol * std::max(1.0, std::fabs(want)))
                        << cases[k].name << " " << t.str() << " lanes " << lanes << " x=" << xin[e];
                }
            }
        }
    }
}

TEST(Kernel, ParallelLoopRunsOnThePool) {
    const int rows = 8, cols = 4096;
    auto A = make_buffer("A", f32, {i32(rows * cols)}),
         C = make_buffer("C", f32, {i32(rows * cols)});
    auto T = make_buffer("T", DataType::uint(64), {i32(rows)});
    auto i = make_var("i"), j = make_var("j");
    auto scale = make_var("scale", f32);
    PrimExpr idx = i * cols + j;
    tir::Stmt inner =
        tir::make_for(j, i32(0), i32(cols), ForKind::Serial,
                      tir::make_store(C, make_load(A, {idx}) * scale + cast(f32, i), {idx}));
    tir::Stmt record = tir::make_store(T, make_call(DataType::uint(64), "pthread_self", {}), {i});
    // Each row sleeps, so that the launching thread cannot finish every task before the pool's
    // workers wake up, even on a loaded machine.
    tir::Stmt nap = tir::make_evaluate(
        make_call(DataType::int32(), "usleep", {make_int(DataType::uint(32), 20000)}));
    tir::Stmt body = tir::make_let(scale, make_float(f32, 3.0),
                                   tir::make_for(i, i32(0), i32(rows), ForKind::Parallel,
                                                 tir::make_seq({inner, nap, record})));
    runtime::PackedFunc fn = jit(tir::make_prim_func("par", {A, C, T}, body));
    std::vector<float> a(rows * cols);
    for (size_t k = 0; k < a.size(); ++k) a[k] = static_cast<float>(k % 1000);
    runtime::NDArray An = make_array(a, f32), Cn = make_empty(f32, {rows * cols});
    runtime::NDArray Tn = make_empty(DataType::uint(64), {rows});

    ASSERT_EQ(anvil_set_num_threads(4), 0);
    size_t distinct = 0;
    for (int attempt = 0; attempt < 5 && distinct < 2; ++attempt) {
        fn(An, Cn, Tn);
        std::vector<uint64_t> t = Tn.to_vector<uint64_t>();
        distinct = std::set<uint64_t>(t.begin(), t.end()).size();
    }
    EXPECT_GE(distinct, 2u) << "the parallel loop never ran on more than one thread";
    std::vector<float> c = Cn.to_vector<float>();
    for (int r = 0; r < rows; ++r) {
        for (int k = 0; k < cols; k += 7) {
            ASSERT_EQ(c[r * cols + k], a[r * cols + k] * 3.0f + r) << r << "," << k;
        }
    }
    ASSERT_EQ(anvil_set_num_threads(0), 0);
}

TEST(Kernel, ParallelLoopErrorPropagates) {
    auto A = make_buffer("A", f32, {i32(64)});
    auto i = make_var("i");
    tir::Stmt body = tir::make_for(i, i32(0), i32(64), ForKind::Parallel,
                                   tir::make_assert(ne(i, i32(37)), "par_fail: row 37 is bad",
                                                    tir::make_store(A, cast(f32, i), {i})));
    runtime::PackedFunc fn = jit(tir::make_prim_func("par_fail", {A}, body));
    runtime::NDArray An = make_empty(f32, {64});
    std::string e = error_of([&] { fn(An); });
    EXPECT_NE(e.find("par_fail: row 37 is bad"), std::string::npos) << e;
}

TEST(Kernel, LocalAndWorkspaceAllocations) {
    // C[i] = sum_j 2 * A[i*8 + 7 - j] through a local scratch buffer, and D reversed through a
    // workspace buffer whose size is symbolic.
    auto n = make_var("n");
    auto A = make_buffer("A", f32, {n}), C = make_buffer("C", f32, {floordiv(n, i32(8))});
    auto D = make_buffer("D", f32, {n});
    auto tmp = make_buffer("tmp", f32, {i32(8)}, "local");
    auto W = make_buffer("W", f32, {n}, "global");
    auto i = make_var("i"), j = make_var("j"), k = make_var("k");
    tir::Stmt fill = tir::make_for(j, i32(0), i32(8), ForKind::Serial,
                                   tir::make_store(tmp, make_load(A, {i * 8 + j}) * 2.0f, {j}));
    tir::Stmt sum = tir::make_seq(
        {tir::make_store(C, make_float(f32, 0), {i}),
         tir::make_for(j, i32(0), i32(8), ForKind::Serial,
                       tir::make_store(C, make_load(C, {i}) + make_load(tmp, {7 - j}), {i}))});
    tir::Stmt local = tir::make_for(i, i32(0), floordiv(n, i32(8)), ForKind::Serial,
                                    tir::make_allocate(tmp, tir::make_seq({fill, sum})));
    tir::Stmt workspace = tir::make_allocate(
        W, tir::make_seq({tir::make_for(k, i32(0), n, ForKind::Serial,
                                        tir::make_store(W, make_load(A, {k}) + 1.0f, {k})),
                          tir::make_for(k, i32(0), n, ForKind::Serial,
                                        tir::make_store(D, make_load(W, {n - 1 - k}), {k}))}));
    auto f = tir::make_prim_func("allocs", {A, C, D}, tir::make_seq({local, workspace}));
    runtime::Module m = codegen::build_llvm({f}, host_target());
    EXPECT_NE(codegen::get_source(m, "ll").find("anvil_workspace_alloc"), std::string::npos);
    for (int size : {16, 64}) {
        std::vector<float> a(size);
        for (int q = 0; q < size; ++q) a[q] = static_cast<float>(q);
        runtime::NDArray An = make_array(a, f32), Cn = make_empty(f32, {size / 8});
        runtime::NDArray Dn = make_empty(f32, {size});
        m.get_function("allocs")(An, Cn, Dn);
        std::vector<float> c = Cn.to_vector<float>(), d = Dn.to_vector<float>();
        for (int r = 0; r < size / 8; ++r) {
            float want = 0;
            for (int q = 0; q < 8; ++q) want += 2 * a[r * 8 + q];
            EXPECT_EQ(c[r], want);
        }
        for (int q = 0; q < size; ++q) EXPECT_EQ(d[q], a[size - 1 - q] + 1) << q;
    }
}

TEST(Kernel, AssertFailsWithMessage) {
    auto n = make_var("n");
    auto A = make_buffer("A", f32, {n});
    auto W = make_buffer("W", f32, {n});
    auto i = make_var("i");
    // The failing assert sits inside a workspace allocation, which the error path frees.
    tir::Stmt body = tir::make_allocate(
        W, tir::make_assert(n > 2, "checked: need at least 3 elements",
                            tir::make_for(i, i32(0), n, ForKind::Serial,
                                          tir::make_store(A, make_float(f32, 1), {i}))));
    runtime::PackedFunc fn = jit(tir::make_prim_func("checked", {A}, body));
    runtime::NDArray small = make_empty(f32, {2}), big = make_empty(f32, {3});
    std::string e = error_of([&] { fn(small); });
    EXPECT_NE(e.find("checked: need at least 3 elements"), std::string::npos) << e;
    fn(big);
    EXPECT_EQ(big.to_vector<float>(), (std::vector<float>{1, 1, 1}));
}

TEST(Kernel, ScalarParamsBranchesAndLoopHints) {
    auto A = make_buffer("A", f32, {i32(16)}), C = make_buffer("C", f32, {i32(16)});
    auto alpha = make_var("alpha", f32), k = make_var("k", DataType::int64());
    auto i = make_var("i"), j = make_var("j");
    PrimExpr idx = i * 4 + j;
    tir::Stmt branch =
        tir::make_if(make_load(A, {idx}) > 0.0f,
                     tir::make_store(C, make_load(A, {idx}) * alpha + cast(f32, k), {idx}),
                     tir::make_store(C, make_float(f32, -1), {idx}));
    tir::Stmt body = tir::make_for(i, i32(0), i32(4), ForKind::Unrolled,
                                   tir::make_for(j, i32(0), i32(4), ForKind::Vectorized, branch));
    auto fn = jit(tir::make_prim_func("axpk", {A, C}, body, {alpha, k}));
    std::vector<float> a(16);
    for (int q = 0; q < 16; ++q) a[q] = static_cast<float>(q - 4);
    runtime::NDArray An = make_array(a, f32), Cn = make_empty(f32, {16});
    fn(An, Cn, 0.5, 10);
    for (int q = 0; q < 16; ++q)
        EXPECT_EQ(Cn.to_vector<float>()[q], a[q] > 0 ? a[q] * 0.5f + 10 : -1);
    fn(An, Cn, 2, int64_t{-3});  // an integer where a float is expected converts
    for (int q = 0; q < 16; ++q) EXPECT_EQ(Cn.to_vector<float>()[q], a[q] > 0 ? a[q] * 2 - 3 : -1);
}

TEST(Kernel, SymbolicShapesAndSeveralFunctions) {
    auto n = make_var("n", DataType::int64());
    auto A = make_buffer("A", f32, {n}), B = make_buffer("B", f32, {n}),
         C = make_buffer("C", f32, {n});
    auto i = make_var("i", DataType::int64());
    auto add = tir::make_prim_func(
        "add_n", {A, B, C},
        tir::make_for(i, make_int(DataType::int64(), 0), n, ForKind::Serial,
                      tir::make_store(C, make_load(A, {i}) + make_load(B, {i}), {i})));
    auto sub = tir::make_prim_func(
        "sub_n", {A, B, C},
        tir::make_for(i, make_int(DataType::int64(), 0), n, ForKind::Serial,
                      tir::make_store(C, make_load(A, {i}) - make_load(B, {i}), {i})));
    runtime::Module m = codegen::build_llvm({add, sub}, host_target());
    EXPECT_EQ(m.function_names(), (std::vector<std::string>{"add_n", "sub_n"}));
    EXPECT_FALSE(m.get_function("mul_n").defined());
    for (int size : {1, 7, 100}) {
        std::vector<float> a(size, 3.0f), b(size, 1.5f);
        runtime::NDArray An = make_array(a, f32), Bn = make_array(b, f32),
                         Cn = make_empty(f32, {size});
        m.get_function("add_n")(An, Bn, Cn);
        EXPECT_EQ(Cn.to_vector<float>(), std::vector<float>(size, 4.5f));
        m.get_function("sub_n")(An, Bn, Cn);
        EXPECT_EQ(Cn.to_vector<float>(), std::vector<float>(size, 1.5f));
    }
}

TEST(Kernel, BuildErrors) {
    auto A = make_buffer("A", f32, {i32(4)});
    auto i = make_var("i"), free_var = make_var("m");
    auto f =
        tir::make_prim_func("bad_free", {A}, tir::make_store(A, make_float(f32, 1), {free_var}));
    std::string e = error_of([&] { codegen::build_llvm({f}, host_target()); });
    EXPECT_NE(e.find("variable 'm'"), std::string::npos) << e;

    auto g = tir::make_prim_func("dup", {A}, tir::make_store(A, make_float(f32, 1), {i32(0)}));
    e = error_of([&] { codegen::build_llvm({g, g}, host_target()); });
    EXPECT_NE(e.find("two functions are named 'dup'"), std::string::npos) << e;

    auto h = tir::make_prim_func("bad name", {A}, tir::make_store(A, make_float(f32, 1), {i32(0)}));
    e = error_of([&] { codegen::build_llvm({h}, host_target()); });
    EXPECT_NE(e.find("not usable as a symbol"), std::string::npos) << e;

    auto t = tir::make_prim_func(
        "bound", {A},
        tir::make_for(i, i32(0), i32(4), ForKind::ThreadBinding,
                      tir::make_store(A, make_float(f32, 1), {i}), "threadIdx.x"));
    e = error_of([&] { codegen::build_llvm({t}, host_target()); });
    EXPECT_NE(e.find("threadIdx.x"), std::string::npos) << e;

    e = error_of([&] { codegen::build_llvm({g}, Target::parse("cuda")); });
    EXPECT_NE(e.find("not an LLVM CPU target"), std::string::npos) << e;
}

}  // namespace
}  // namespace anvil
