#include "tune/program_features.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "te/math.h"
#include "te/reduction.h"
#include "te/schedule_to_loops.h"
#include "tir/printer.h"

namespace anvil::tune {
namespace {

// One kernel's row, its columns looked up by name.
class Row {
public:
    explicit Row(const Ref<tir::PrimFunc>& f)
        : text_(tir::print(f)), values_(program_features(*f)) {}
    float operator[](const std::string& name) const {
        const auto& names = program_feature_names();
        for (size_t i = 0; i < names.size(); ++i) {
            if (names[i] == name) return values_[i];
        }
        ADD_FAILURE() << "no feature column " << name;
        return 0;
    }
    const std::vector<float>& values() const { return values_; }
    const std::string& text() const { return text_; }  // the kernel, for failure messages

private:
    std::string text_;
    std::vector<float> values_;
};

float log1p2(double x) {
    return static_cast<float>(std::log2(1 + x));
}

#define EXPECT_FEATURE(row, name, value) \
    EXPECT_NEAR((row)[name], (value), 1e-4) << (name) << " of\n" << (row).text()

// Columns come in groups named by their prefix ("store1.access2.", "program."): a group is either
// wholly present and finite, or wholly NaN (a missing store or access); program columns are
// always present.
void expect_groups_finite_or_missing(const Row& row) {
    const auto& names = program_feature_names();
    std::map<std::string, std::pair<int, int>> groups;  // prefix -> (finite, NaN) counts
    for (size_t i = 0; i < names.size(); ++i) {
        const std::string prefix = names[i].substr(0, names[i].rfind('.'));
        float v = row.values()[i];
        EXPECT_FALSE(std::isinf(v)) << names[i] << " of\n" << row.text();
        ++(std::isnan(v) ? groups[prefix].second : groups[prefix].first);
    }
    for (const auto& [prefix, counts] : groups) {
        EXPECT_TRUE(counts.first == 0 || counts.second == 0) << prefix << " is partly missing in\n"
                                                             << row.text();
    }
    EXPECT_EQ(groups["program"].second, 0) << row.text();
}

constexpr int kM = 32, kN = 64, kK = 16;

// C[i, j] = sum over k of A[i, k] * B[k, j].
struct Matmul {
    te::Tensor A = te::placeholder({kM, kK}, DataType::float32(), "A");
    te::Tensor B = te::placeholder({kK, kN}, DataType::float32(), "B");
    te::Tensor C = te::compute(
        {kM, kN},
        [&](PrimExpr i, PrimExpr j) {
            auto k = te::reduce_axis(kK, "k");
            return te::sum(A(i, k->var) * B(k->var, j), {k});
        },
        "C");
    te::Schedule s = te::create_schedule({C});
    Ref<IterVar> i() { return s[C].op_axis()[0]; }
    Ref<IterVar> j() { return s[C].op_axis()[1]; }
    Ref<IterVar> k() { return s[C].op_reduce_axis()[0]; }
    Row lower() { return Row(te::schedule_to_loops(s, {A, B, C}, "matmul")); }
};

TEST(ProgramFeatures, WidthMatchesNames) {
    const auto& names = program_feature_names();
    EXPECT_EQ(static_cast<int>(names.size()), program_feature_width());
    EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());
    Matmul mm;
    Row row = mm.lower();
    EXPECT_EQ(static_cast<int>(row.values().size()), program_feature_width());
    expect_groups_finite_or_missing(row);
}

TEST(ProgramFeatures, MatmulLoopsStridesReuseAndFlops) {
    Matmul mm;
    mm.s[mm.C].reorder({mm.i(), mm.k(), mm.j()});  // j innermost
    Row r = mm.lower();
    expect_groups_finite_or_missing(r);
    // store0: the init C[i, j] = 0 over i, j; store1: the update over i, k, j.
    EXPECT_FEATURE(r, "store0.log_executions", log1p2(kM * kN));
    EXPECT_FEATURE(r, "store0.log_float_add_sub", 0);
    EXPECT_FEATURE(r, "store0.num_accesses", 1);
    EXPECT_FEATURE(r, "store1.num_loops", 3);
    EXPECT_FEATURE(r, "store1.serial_loops", 3);
    EXPECT_FEATURE(r, "store1.log_executions", log1p2(kM * kN * kK));
    EXPECT_FEATURE(r, "store1.log_innermost_extent", log1p2(kN));
    EXPECT_FEATURE(r, "store1.log_float_add_sub", 1);  // one add
    EXPECT_FEATURE(r, "store1.log_float_mul", 1);      // one mul
    EXPECT_FEATURE(r, "store1.log_float_div", 0);
    EXPECT_FEATURE(r, "store1.vector_lanes", 0);
    EXPECT_FEATURE(r, "store1.parallel_depth", 0);
    EXPECT_FEATURE(r, "store1.num_accesses", 4);
    // Slots: the store C, then loads by unique bytes: C (8 KiB), B (4 KiB), A (2 KiB).
    EXPECT_FEATURE(r, "store1.access0.is_write", 1);
    EXPECT_FEATURE(r, "store1.access0.stride_kind", 1);
    EXPECT_FEATURE(r, "store1.access0.stride", 1);
    EXPECT_FEATURE(r, "store1.access0.log_unique_bytes", log1p2(kM * kN * 4));
    EXPECT_FEATURE(r, "store1.access0.log_reuse", log1p2(kK));
    EXPECT_FEATURE(r, "store1.access0.reuse_depth", 2);  // k, one loop out from j
    EXPECT_FEATURE(r, "store1.access0.log_reuse_bytes", log1p2(kN * 4));
    EXPECT_FEATURE(r, "store1.access0.lines_per_iteration", 4.0 / 64);
    EXPECT_FEATURE(r, "store1.access0.is_local", 0);
    EXPECT_FEATURE(r, "store1.access1.is_write", 0);
    EXPECT_FEATURE(r, "store1.access1.log_unique_bytes", log1p2(kM * kN * 4));
    EXPECT_FEATURE(r, "store1.access2.log_unique_bytes", log1p2(kK * kN * 4));  // B
    EXPECT_FEATURE(r, "store1.access2.stride_kind", 1);
    EXPECT_FEATURE(r, "store1.access2.reuse_depth", 3);  // i
    EXPECT_FEATURE(r, "store1.access2.log_reuse_bytes", log1p2(kK * kN * 4));
    EXPECT_FEATURE(r, "store1.access3.log_unique_bytes", log1p2(kM * kK * 4));  // A
    EXPECT_FEATURE(r, "store1.access3.stride_kind", 0);  // A[i, k] is the same along j
    EXPECT_FEATURE(r, "store1.access3.stride", 0);
    EXPECT_FEATURE(r, "store1.access3.reuse_depth", 1);  // j itself
    EXPECT_FEATURE(r, "store1.access3.log_reuse_bytes", log1p2(4));
    EXPECT_FEATURE(r, "store1.access3.lines_per_iteration", 0);
    EXPECT_FEATURE(r, "store1.access3.log_reuse", log1p2(kN));
    EXPECT_TRUE(std::isnan(r["store1.access4.is_write"])) << r.text();
    const double bytes = 4.0 * (2 * kM * kN + kK * kN + kM * kK);
    EXPECT_FEATURE(r, "store1.log_intensity", log1p2(2.0 * kM * kN * kK / bytes));
    EXPECT_TRUE(std::isnan(r["store2.log_executions"])) << r.text();
    EXPECT_FEATURE(r, "program.num_stores", 2);
    EXPECT_FEATURE(r, "program.num_loops", 4);  // i, j of the init, k, j of the update
    EXPECT_FEATURE(r, "program.log_float_ops", log1p2(2.0 * kM * kN * kK));
    EXPECT_FEATURE(r, "program.parallel_loops", 0);
}

TEST(ProgramFeatures, MatmulDefaultOrderStridesAlongK) {
    Matmul mm;  // i, j, k: k innermost
    Row r = mm.lower();
    EXPECT_FEATURE(r, "store1.access0.stride_kind", 0);          // C[i, j]
    EXPECT_FEATURE(r, "store1.access2.stride", log1p2(kN));      // B[k, j]: a row apart
    EXPECT_FEATURE(r, "store1.access2.stride_kind", 2);          // strided
    EXPECT_FEATURE(r, "store1.access2.lines_per_iteration", 1);  // a new line each k
    EXPECT_FEATURE(r, "store1.access3.stride_kind", 1);          // A[i, k]
}

TEST(ProgramFeatures, VectorizedParallelMatmul) {
    Matmul mm;
    auto [jo, ji] = mm.s[mm.C].split(mm.j(), 16);
    mm.s[mm.C].reorder({mm.i(), jo, mm.k(), ji});
    mm.s[mm.C].vectorize(ji);
    mm.s[mm.C].parallel(mm.i());
    Row r = mm.lower();
    expect_groups_finite_or_missing(r);
    EXPECT_FEATURE(r, "store1.vector_lanes", 16);
    EXPECT_FEATURE(r, "store1.vector_is_innermost", 1);
    EXPECT_FEATURE(r, "store1.log_parallel_extent", log1p2(kM));
    EXPECT_FEATURE(r, "store1.parallel_depth", 1);
    EXPECT_FEATURE(r, "store1.serial_loops", 2);  // j.outer, k
    EXPECT_FEATURE(r, "store1.log_executions", log1p2(kM * kN * kK));
    EXPECT_FEATURE(r, "store1.access0.vector_stride_kind", 1);  // C along j.inner
    EXPECT_FEATURE(r, "store1.access2.vector_stride_kind", 1);  // B
    EXPECT_FEATURE(r, "store1.access3.vector_stride_kind", 0);  // A: one value for all lanes
    EXPECT_FEATURE(r, "store0.vector_lanes", 16);               // the init is split too
    EXPECT_FEATURE(r, "program.log_outer_parallel_extent", log1p2(kM));
    EXPECT_FEATURE(r, "program.parallel_loops", 1);
    EXPECT_FEATURE(r, "program.vectorized_loops", 2);
}

TEST(ProgramFeatures, VectorizedLoopOutsideTheInnermost) {
    // Schedules keep a vectorized loop innermost, but the loop IR allows one outside (the
    // vectorizer handles the inner loop per lane): C[i] += A[i, k] with i vectorized over k.
    auto A = make_buffer("A", DataType::float32(), {8, 16});
    auto C = make_buffer("C", DataType::float32(), {8});
    auto i = make_var("i"), k = make_var("k");
    tir::Stmt update = tir::make_store(C, make_load(C, {i}) + make_load(A, {i, k}), {i});
    tir::Stmt body = tir::make_for(i, 0, 8, tir::ForKind::Vectorized,
                                   tir::make_for(k, 0, 16, tir::ForKind::Serial, update));
    Row r(tir::make_prim_func("f", {A, C}, body));
    expect_groups_finite_or_missing(r);
    EXPECT_FEATURE(r, "store0.vector_lanes", 8);
    EXPECT_FEATURE(r, "store0.vector_is_innermost", 0);
    EXPECT_FEATURE(r, "store0.access0.stride_kind", 0);         // C along k
    EXPECT_FEATURE(r, "store0.access0.vector_stride_kind", 1);  // C along i
    EXPECT_FEATURE(r, "store0.access1.stride_kind", 1);         // A (512 bytes) along k
    EXPECT_FEATURE(r, "store0.access1.vector_stride_kind", 2);  // A along i: a row apart
    EXPECT_FEATURE(r, "store0.log_parallel_extent", 0);
}

TEST(ProgramFeatures, CacheWriteAccumulatorIsLocal) {
    Matmul mm;
    te::Tensor CC = mm.s.cache_write(mm.C, "local");
    auto t = mm.s[mm.C].tile(mm.i(), mm.j(), 8, 16);
    mm.s[CC].compute_at(mm.s[mm.C], t[1]);
    Row r = mm.lower();
    expect_groups_finite_or_missing(r);
    const float tile_bytes = log1p2(8 * 16 * 4);
    // store0/1: C.local's init and update; store2: the copy into C.
    EXPECT_FEATURE(r, "store1.log_alloc_bytes", tile_bytes);
    EXPECT_FEATURE(r, "store1.access0.is_local", 1);
    EXPECT_FEATURE(r, "store1.access0.log_unique_bytes", tile_bytes);  // a tile, not all of C
    EXPECT_FEATURE(r, "store1.num_loops", 5);
    EXPECT_FEATURE(r, "store1.log_float_mul", 1);
    EXPECT_FEATURE(r, "store2.log_alloc_bytes", 0);
    EXPECT_FEATURE(r, "store2.access0.is_local", 0);
    EXPECT_FEATURE(r, "store2.access1.is_local", 1);
    EXPECT_FEATURE(r, "store2.access1.stride_kind", 1);
    EXPECT_FEATURE(r, "store2.log_float_add_sub", 0);
    EXPECT_FEATURE(r, "program.log_alloc_bytes", tile_bytes);
    EXPECT_FEATURE(r, "program.num_stores", 3);
}

TEST(ProgramFeatures, KeepsTheFourHeaviestStoresInProgramOrder) {
    // Six independent outputs; weight = executions * (1 + float ops). T0 runs 4 times but with 40
    // exps (weight 164) outweighs T5 (64 * 2 = 128) and T3 (8 * 2 = 16).
    te::Tensor A = te::placeholder({512}, DataType::float32(), "A");
    const int sizes[] = {4, 256, 128, 8, 512, 64};
    const char* const names[] = {"T0", "T1", "T2", "T3", "T4", "T5"};
    std::vector<te::Tensor> outs;
    for (int t = 0; t < 6; ++t) {
        outs.push_back(te::compute(
            {sizes[t]},
            [&](PrimExpr i) {
                PrimExpr v = A(i);
                if (t == 0) {
                    for (int n = 0; n < 40; ++n) v = te::exp(v);
                    return v;
                }
                return v * 2.0f;
            },
            names[t]));
    }
    te::Schedule s = te::create_schedule(outs);
    std::vector<te::Tensor> args{A};
    args.insert(args.end(), outs.begin(), outs.end());
    Row r(te::schedule_to_loops(s, args, "six"));
    expect_groups_finite_or_missing(r);
    EXPECT_FEATURE(r, "program.num_stores", 6);
    EXPECT_FEATURE(r, "store0.log_executions", log1p2(4));
    EXPECT_FEATURE(r, "store0.log_float_math", log1p2(40));
    EXPECT_FEATURE(r, "store1.log_executions", log1p2(256));
    EXPECT_FEATURE(r, "store2.log_executions", log1p2(128));
    EXPECT_FEATURE(r, "store3.log_executions", log1p2(512));
    EXPECT_FEATURE(r, "store3.log_float_mul", 1);
    // Program totals still count every store.
    EXPECT_FEATURE(r, "program.log_float_ops", log1p2(4 * 40 + 256 + 128 + 8 + 512 + 64));
}

TEST(ProgramFeatures, TwoSchedulesOfOneComputationDiffer) {
    Matmul plain;
    Matmul tiled;
    auto t = tiled.s[tiled.C].tile(tiled.i(), tiled.j(), 8, 8);
    tiled.s[tiled.C].reorder({t[0], t[1], tiled.k(), t[2], t[3]});
    tiled.s[tiled.C].unroll(t[2]);
    Row a = plain.lower(), b = tiled.lower();
    expect_groups_finite_or_missing(b);
    EXPECT_FEATURE(b, "store1.log_unrolled_extent", log1p2(8));
    EXPECT_FEATURE(a, "store1.log_unrolled_extent", 0);
    int differing = 0;
    for (size_t i = 0; i < a.values().size(); ++i) {
        float x = a.values()[i], y = b.values()[i];
        if (!(x == y || (std::isnan(x) && std::isnan(y)))) ++differing;
    }
    EXPECT_GT(differing, 5);
    // And one schedule always gives the same row.
    Row again = tiled.lower();
    for (size_t i = 0; i < b.values().size(); ++i) {
        float x = b.values()[i], y = again.values()[i];
        EXPECT_TRUE(x == y || (std::isnan(x) && std::isnan(y))) << program_feature_names()[i];
    }
}

TEST(ProgramFeatures, StrideKindsAndArithmetic) {
    // B[i, j] = exp(A[j, i / 4]) / 2 + A[j, i / 4]. Along j the load strides a row of A; along i
    // (innermost after the reorder) its index is floordiv(i, 4), not linear.
    te::Tensor A = te::placeholder({16, 8}, DataType::float32(), "A");
    te::Tensor B = te::compute(
        {32, 16},
        [&](PrimExpr i, PrimExpr j) {
            PrimExpr a = A(j, floordiv(i, 4));
            return te::exp(a) / 2.0f + a;
        },
        "B");
    te::Schedule s = te::create_schedule({B});
    Row inner_i = [&] {
        te::Schedule s2 = te::create_schedule({B});
        s2[B].reorder({s2[B].op_axis()[1], s2[B].op_axis()[0]});
        return Row(te::schedule_to_loops(s2, {A, B}, "f"));
    }();
    Row inner_j(te::schedule_to_loops(s, {A, B}, "f"));
    expect_groups_finite_or_missing(inner_i);
    EXPECT_FEATURE(inner_j, "store0.log_float_math", 1);
    EXPECT_FEATURE(inner_j, "store0.log_float_div", 1);
    EXPECT_FEATURE(inner_j, "store0.log_float_add_sub", 1);
    EXPECT_FEATURE(inner_j, "store0.num_accesses", 2);  // the two reads of A are one access
    EXPECT_FEATURE(inner_j, "store0.access1.stride_kind", 2);
    EXPECT_FEATURE(inner_j, "store0.access1.stride", log1p2(8));
    EXPECT_FEATURE(inner_i, "store0.access1.stride_kind", 3);
    EXPECT_FEATURE(inner_i, "store0.access1.stride", 0);
    EXPECT_FEATURE(inner_i, "store0.access1.lines_per_iteration", 1);
    EXPECT_FEATURE(inner_i, "store0.access0.stride_kind", 2);  // B[i, j] along i: 16 apart
}

TEST(ProgramFeatures, NonDivisibleSplitIsGuarded) {
    te::Tensor A = te::placeholder({67}, DataType::float32(), "A");
    te::Tensor B = te::compute(
        {67}, [&](PrimExpr i) { return A(i) + 1.0f; }, "B");
    te::Schedule s = te::create_schedule({B});
    s[B].split(s[B].op_axis()[0], 16);
    Row r(te::schedule_to_loops(s, {A, B}, "f"));
    expect_groups_finite_or_missing(r);
    EXPECT_FEATURE(r, "store0.guards", 1);
    EXPECT_FEATURE(r, "store0.log_executions", log1p2(5 * 16));
    // The load cannot touch more than A holds.
    EXPECT_FEATURE(r, "store0.access1.log_unique_bytes", log1p2(67 * 4));
}

TEST(ProgramFeatures, LetsGathersAndStoresOutsideLoops) {
    // S[0] = 1; for i { let t = i * 4 + Off[0] in Out[i] = A[Idx[i]] + A[t] }; a call for its
    // effect. (simplify inlines lets of plain index arithmetic; one that reads memory stays.)
    auto A = make_buffer("A", DataType::float32(), {64});
    auto Idx = make_buffer("Idx", DataType::int32(), {16});
    auto Out = make_buffer("Out", DataType::float32(), {16});
    auto S = make_buffer("S", DataType::float32(), {1});
    auto Off = make_buffer("Off", DataType::int32(), {1});
    auto i = make_var("i"), t = make_var("t");
    PrimExpr value = make_load(A, {make_load(Idx, {i})}) + make_load(A, {t});
    tir::Stmt body = tir::make_seq({
        tir::make_store(S, 1.0f, {0}),
        tir::make_for(
            i, 0, 16, tir::ForKind::Serial,
            tir::make_let(t, i * 4 + make_load(Off, {0}), tir::make_store(Out, value, {i}))),
        tir::make_evaluate(make_call(DataType::int32(), "side_effect", {})),
    });
    Row r(tir::make_prim_func("f", {A, Idx, Out, S, Off}, body));
    expect_groups_finite_or_missing(r);
    EXPECT_FEATURE(r, "program.num_stores", 2);
    EXPECT_FEATURE(r, "store0.num_loops", 0);
    EXPECT_FEATURE(r, "store0.log_executions", 1);
    EXPECT_FEATURE(r, "store0.access0.reuse_depth", 0);
    EXPECT_FEATURE(r, "store0.access0.lines_per_iteration", 1);
    // Loads of 64 bytes each, in order of appearance: the gather, its index, the let-bound read.
    EXPECT_FEATURE(r, "store1.num_accesses", 4);
    EXPECT_FEATURE(r, "store1.access1.stride_kind", 3);  // A[Idx[i]]: data-dependent
    EXPECT_FEATURE(r, "store1.access1.log_unique_bytes", log1p2(64));
    EXPECT_FEATURE(r, "store1.access2.element_bytes", 4);
    EXPECT_FEATURE(r, "store1.access2.stride_kind", 1);  // Idx[i]
    EXPECT_FEATURE(r, "store1.access3.stride_kind", 2);  // A[t]: 4 apart along i
    EXPECT_FEATURE(r, "store1.access3.stride", log1p2(4));
    EXPECT_TRUE(std::isnan(r["store1.access4.stride"])) << r.text();
}

TEST(ProgramFeatures, KernelWithoutStores) {
    Row r(tir::make_prim_func("f", {}, tir::make_evaluate(make_call(DataType::int32(), "g", {}))));
    expect_groups_finite_or_missing(r);
    EXPECT_FEATURE(r, "program.num_stores", 0);
    EXPECT_TRUE(std::isnan(r["store0.log_executions"])) << r.text();
}

TEST(ProgramFeatures, SymbolicDimensionsCountAs1024) {
    // B = transpose(A) with A: [n, m]; the load A[j, i] strides m (unknown) along j.
    auto n = make_var("n"), m = make_var("m");
    te::Tensor A = te::placeholder({n, m}, DataType::float32(), "A");
    te::Tensor B = te::compute(
        {m, n}, [&](PrimExpr i, PrimExpr j) { return A(j, i) * 2.0f; }, "B");
    te::Schedule s = te::create_schedule({B});
    s[B].parallel(s[B].op_axis()[0]);
    Row r(te::schedule_to_loops(s, {A, B}, "f"));
    expect_groups_finite_or_missing(r);
    EXPECT_FEATURE(r, "store0.log_executions", log1p2(1024.0 * 1024));
    EXPECT_FEATURE(r, "store0.log_parallel_extent", log1p2(1024));
    EXPECT_FEATURE(r, "store0.access0.stride_kind", 1);
    EXPECT_FEATURE(r, "store0.access1.stride_kind", 2);
    EXPECT_FEATURE(r, "store0.access1.stride", log1p2(1024));
    EXPECT_TRUE(std::isnan(r["store1.log_executions"])) << r.text();
}

TEST(ProgramFeatures, TailExtentCountsFromTheLoopStart) {
    // for i in [0, n / 16 + 1) { for j in [0, min(16, n - i * 16)) { B[i * 16 + j] = 0 } }: the
    // inner extent counts as 16 (i at 0), the outer as 1024 / 16 + 1.
    auto n = make_var("n");
    auto B = make_buffer("B", DataType::float32(), {n});
    auto i = make_var("i"), j = make_var("j");
    tir::Stmt inner = tir::make_for(j, 0, min(PrimExpr(16), PrimExpr(n) - PrimExpr(i) * 16),
                                    tir::ForKind::Serial, tir::make_store(B, 0.0f, {i * 16 + j}));
    tir::Stmt body =
        tir::make_for(i, 0, floordiv(PrimExpr(n), 16) + 1, tir::ForKind::Serial, inner);
    Row r(tir::make_prim_func("f", {B}, body));
    expect_groups_finite_or_missing(r);
    EXPECT_FEATURE(r, "store0.log_innermost_extent", log1p2(16));
    EXPECT_FEATURE(r, "store0.log_executions", log1p2(65 * 16));
    EXPECT_FEATURE(r, "store0.access0.stride_kind", 1);
    EXPECT_FEATURE(r, "store0.access0.log_unique_bytes", log1p2(1024 * 4));  // capped at B
}

}  // namespace
}  // namespace anvil::tune
