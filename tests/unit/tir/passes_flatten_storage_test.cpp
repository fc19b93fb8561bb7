#include <map>

#include "passes_programs.h"

namespace anvil::tir::testing {
namespace {

// Every buffer object reachable from a function, by name.
std::map<std::string, std::set<const Buffer*>> buffers_by_name(const Ref<PrimFunc>& f) {
    std::map<std::string, std::set<const Buffer*>> out;
    for (const auto& p : f->params) out[p->name].insert(p.get());
    pre_order_visit(f->body, [&](const Stmt& s) {
        if (auto* st = s.as<Store>()) out[st->buffer->name].insert(st->buffer.get());
        if (auto* a = s.as<Allocate>()) out[a->buffer->name].insert(a->buffer.get());
    });
    visit_exprs(f->body, [&](const PrimExpr& e) {
        if (auto* l = e.as<Load>()) out[l->buffer->name].insert(l->buffer.get());
    });
    return out;
}

TEST(FlattenStorage, MatmulBecomesOneDimensional) {
    auto f = make_matmul(5, 13, 7, 4, ForKind::Serial);
    auto g = flatten_storage(f, LowerContext{});
    // Parameters keep their identity and declared shapes (the entry checks callers' tensors).
    for (size_t k = 0; k < f->params.size(); ++k) EXPECT_TRUE(g->params[k].same_as(f->params[k]));
    visit_exprs(g->body, [](const PrimExpr& e) {
        if (auto* l = e.as<Load>()) {
            EXPECT_EQ(l->indices.size(), 1u);
        }
    });
    pre_order_visit(g->body, [](const Stmt& s) {
        if (auto* st = s.as<Store>()) {
            EXPECT_EQ(st->indices.size(), 1u);
        }
    });
    // One object per buffer, shared by parameters, loads and stores.
    for (const auto& [name, objects] : buffers_by_name(g)) EXPECT_EQ(objects.size(), 1u) << name;
    expect_equivalent(f, g);
}

TEST(FlattenStorage, AllocationsAndZeroDimensionalBuffers) {
    auto A = make_buffer("A", DataType::float32(), {3, 5, 2});
    auto B = make_buffer("B", DataType::float32(), {3, 10});
    auto S = make_buffer("S", DataType::float32(), {});
    auto T = make_buffer("T", DataType::float32(), {5, 2}, "local");
    auto i = make_var("i"), j = make_var("j"), k = make_var("k");
    Stmt fill = make_for(
        j, 0, 5, ForKind::Serial,
        make_for(k, 0, 2, ForKind::Serial, make_store(T, make_load(A, {i, j, k}) * 2.0f, {j, k})));
    Stmt use = make_for(
        j, 0, 5, ForKind::Serial,
        make_for(k, 0, 2, ForKind::Serial,
                 make_store(B, make_load(T, {j, k}) + make_load(S, {}), {i, PrimExpr(j) * 2 + k})));
    Stmt body = make_for(i, 0, 3, ForKind::Serial, make_allocate(T, make_seq({fill, use})));
    auto f = make_prim_func("f", {A, B, S}, body);
    auto g = flatten_storage(f, LowerContext{});
    int allocs = 0;
    pre_order_visit(g->body, [&](const Stmt& s) {
        if (auto* a = s.as<Allocate>()) {
            ++allocs;
            EXPECT_EQ(a->buffer->scope, "local");
            ASSERT_EQ(a->buffer->shape.size(), 1u);
            EXPECT_TRUE(is_const_int(a->buffer->shape[0], 10));
        }
    });
    EXPECT_EQ(allocs, 1);
    for (const auto& [name, objects] : buffers_by_name(g)) EXPECT_EQ(objects.size(), 1u) << name;
    expect_equivalent(f, g);
}

TEST(FlattenStorage, SymbolicShapes) {
    auto n = make_var("n"), m = make_var("m");
    auto A = make_buffer("A", DataType::float32(), {n, m});
    auto B = make_buffer("B", DataType::float32(), {m, n});
    auto i = make_var("i"), j = make_var("j");
    Stmt body = make_for(
        i, 0, n, ForKind::Serial,
        make_for(j, 0, m, ForKind::Serial, make_store(B, make_load(A, {i, j}) + 1.0f, {j, i})));
    auto f = make_prim_func("transpose", {A, B}, body, {n, m});
    auto g = flatten_storage(f, LowerContext{});
    expect_equivalent(f, g, {7, 3});
    // The Stmt-level entry point flattens the same way.
    Stmt s = flatten_storage(f->body, LowerContext{});
    pre_order_visit(s, [](const Stmt& x) {
        if (auto* st = x.as<Store>()) {
            EXPECT_EQ(st->indices.size(), 1u);
        }
    });
}

}  // namespace
}  // namespace anvil::tir::testing
