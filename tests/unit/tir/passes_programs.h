// Sample loop-IR programs shaped like what TE lowering produces (split loops with `likely`
// guards, reductions, intermediate allocations), and the semantic check the pass tests share.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "ir/intrinsics.h"
#include "tir/passes/passes.h"
#include "tir/stmt_functor.h"
#include "tir/verifier.h"
#include "tir_interpreter.h"

namespace anvil::tir::testing {

inline PrimExpr likely(const PrimExpr& cond) {
    return make_call(DataType::bool_(), intrin::kLikely, {cond});
}

inline PrimExpr ceil_div(const PrimExpr& a, int64_t b) {
    return floordiv(a + int(b - 1), int(b));
}

// C[i] = A[i] + B[i] for i < n, i split by `factor`; the inner loop has kind `kind`. When n is
// not a multiple of factor (or `symbolic`), the body is guarded by likely(io*factor + ii < n).
inline Ref<PrimFunc> make_split_add(int n, int factor, ForKind kind, bool symbolic = false) {
    Ref<Var> nv = make_var("n");
    PrimExpr ne = symbolic ? PrimExpr(nv) : PrimExpr(n);
    auto A = make_buffer("A", DataType::float32(), {ne});
    auto B = make_buffer("B", DataType::float32(), {ne});
    auto C = make_buffer("C", DataType::float32(), {ne});
    auto io = make_var("io"), ii = make_var("ii");
    PrimExpr i = PrimExpr(io) * factor + ii;
    Stmt body = make_store(C, make_load(A, {i}) + make_load(B, {i}), {i});
    if (symbolic || n % factor != 0) body = make_if(likely(i < ne), body);
    PrimExpr outer = symbolic ? ceil_div(ne, factor) : PrimExpr((n + factor - 1) / factor);
    Stmt loop = make_for(io, 0, outer, ForKind::Serial, make_for(ii, 0, factor, kind, body));
    return make_prim_func("split_add", {A, B, C}, loop,
                          symbolic ? std::vector<Ref<Var>>{nv} : std::vector<Ref<Var>>{});
}

// C[i, j] = sum_k A[i, k] * B[k, j] (C is M x N), j split by `factor` with an inner loop of
// kind `kind`, guarded when N is not a multiple of factor.
inline Ref<PrimFunc> make_matmul(int M, int N, int K, int factor, ForKind kind) {
    auto A = make_buffer("A", DataType::float32(), {M, K});
    auto B = make_buffer("B", DataType::float32(), {K, N});
    auto C = make_buffer("C", DataType::float32(), {M, N});
    auto i = make_var("i"), k = make_var("k");
    auto inner = [&](const std::function<Stmt(const PrimExpr&)>& body) {
        auto jo = make_var("jo"), ji = make_var("ji");
        PrimExpr j = PrimExpr(jo) * factor + ji;
        Stmt s = body(j);
        if (N % factor != 0) s = make_if(likely(j < N), s);
        return make_for(jo, 0, (N + factor - 1) / factor, ForKind::Serial,
                        make_for(ji, 0, factor, kind, s));
    };
    Stmt init = inner([&](const PrimExpr& j) { return make_store(C, 0.0f, {i, j}); });
    Stmt update = make_for(
        k, 0, K, ForKind::Serial, inner([&](const PrimExpr& j) {
            PrimExpr acc = make_load(C, {i, j}) + make_load(A, {i, k}) * make_load(B, {k, j});
            return make_store(C, acc, {i, j});
        }));
    Stmt body = make_for(i, 0, M, ForKind::Serial, make_seq({init, update}));
    return make_prim_func("matmul", {A, B, C}, body);
}

inline Ref<PrimFunc> apply(const Ref<PrimFunc>& f, Stmt (*pass)(const Stmt&, const LowerContext&),
                           const LowerContext& ctx = {}) {
    return with_body(f, pass(f->body, ctx));
}

// Runs both functions on the same pseudo-random inputs and expects identical outputs.
inline void expect_equivalent(const Ref<PrimFunc>& before, const Ref<PrimFunc>& after,
                              const std::vector<int64_t>& scalars = {}, bool expect_writes = true) {
    EXPECT_NO_THROW(verify(after));
    auto inputs = make_inputs(before, scalars);
    auto a = run_func(before, inputs, scalars);
    auto b = run_func(after, inputs, scalars);
    EXPECT_EQ(compare_buffers(a, b), "");
    if (expect_writes) {
        EXPECT_NE(compare_buffers(inputs, a), "") << "the program should write something";
    }
}

// Counts statements matching `pred`.
inline int count_stmts(const Stmt& s, const std::function<bool(const Stmt&)>& pred) {
    int n = 0;
    pre_order_visit(s, [&](const Stmt& x) { n += pred(x) ? 1 : 0; });
    return n;
}

inline int count_loops(const Stmt& s, ForKind kind) {
    return count_stmts(s, [&](const Stmt& x) {
        auto* f = x.as<For>();
        return f && f->for_kind == kind;
    });
}

// Every expression of every statement, visited pre-order.
inline void visit_exprs(const Stmt& s, const std::function<void(const PrimExpr&)>& f) {
    struct Walker : StmtVisitor {
        const std::function<void(const PrimExpr&)>* fn;
        void visit(const PrimExpr& e) override {
            (*fn)(e);
            StmtVisitor::visit(e);
        }
    } w;
    w.fn = &f;
    w.visit_stmt(s);
}

}  // namespace anvil::tir::testing
