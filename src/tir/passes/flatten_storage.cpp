// flatten_storage: multi-dimensional buffers become one-dimensional, indexed row-major.
//
// Buffers are identified by object, so every use of one original buffer (its Allocate, Loads,
// Stores and, through the PrimFunc overload, the parameter list) must map to one new buffer
// object; the map below is the single source of that identity.
#include <unordered_map>

#include "tir/passes/passes.h"
#include "tir/stmt_functor.h"

namespace anvil::tir {

namespace {

// Folds the cheap cases so that the output stays readable before simplify runs.
PrimExpr mul_index(const PrimExpr& a, const PrimExpr& b) {
    if (is_one(a)) return b;
    if (is_one(b)) return a;
    const int64_t* ca = as_const_int(a);
    const int64_t* cb = as_const_int(b);
    if (ca && cb) return make_int(a.dtype(), *ca * *cb);
    return a * b;
}

PrimExpr add_index(const PrimExpr& a, const PrimExpr& b) {
    if (is_zero(a)) return b;
    if (is_zero(b)) return a;
    const int64_t* ca = as_const_int(a);
    const int64_t* cb = as_const_int(b);
    if (ca && cb) return make_int(a.dtype(), *ca + *cb);
    // A scalar plus a ramp stays a ramp, so vector accesses remain recognisably contiguous.
    if (auto* r = b.as<Ramp>(); r && a.dtype().is_scalar()) {
        return make_ramp(add_index(a, r->base), r->stride, r->lanes);
    }
    return a + b;
}

// Converts `e` to the index type `t` (shapes may be int64 while indices are int32).
PrimExpr to_index_type(const PrimExpr& e, DataType t) {
    DataType want = t.with_lanes(e.dtype().lanes());
    if (e.dtype() == want) return e;
    if (auto* imm = e.as<IntImm>()) return make_int(want, imm->value);
    return cast(want, e);
}

class StorageFlattener : public StmtMutator {
public:
    Ref<Buffer> flat_buffer(const Ref<Buffer>& b) {
        auto it = map_.find(b.get());
        if (it != map_.end()) return it->second;
        Ref<Buffer> flat = b;
        if (b->shape.size() != 1) {
            PrimExpr size = make_int(DataType::int32(), 1);
            if (!b->shape.empty()) size = b->shape[0];
            for (size_t d = 1; d < b->shape.size(); ++d) {
                size = mul_index(size, to_index_type(b->shape[d], size.dtype()));
            }
            flat = make_buffer(b->name, b->dtype, {size}, b->scope);
        }
        keep_alive_.push_back(b);
        map_.emplace(b.get(), flat);
        return flat;
    }
    // Keeps `b` itself, indexed by one row-major offset: parameters keep their declared shapes,
    // which the generated entry checks against the caller's tensors.
    void keep_shape(const Ref<Buffer>& b) {
        keep_alive_.push_back(b);
        map_.emplace(b.get(), b);
    }

protected:
    Ref<Buffer> mutate_buffer(const Ref<Buffer>& b) override { return flat_buffer(b); }

    PrimExpr mutate_(const Load* op, const PrimExpr& self) override {
        std::vector<PrimExpr> idx;
        bool changed = mutate_all(op->indices, &idx);
        Ref<Buffer> flat = flat_buffer(op->buffer);
        if (!changed && flat.same_as(op->buffer) && idx.size() == 1) return self;
        return make_load(flat, {flatten_index(op->buffer, idx)});
    }

    Stmt mutate_stmt_(const Store* op, const Stmt& self) override {
        PrimExpr value = mutate_expr(op->value);
        std::vector<PrimExpr> idx;
        bool changed = mutate_all(op->indices, &idx);
        Ref<Buffer> flat = flat_buffer(op->buffer);
        if (!changed && flat.same_as(op->buffer) && value.same_as(op->value) && idx.size() == 1) {
            return self;
        }
        return make_store(flat, value, {flatten_index(op->buffer, idx)}, op->loc);
    }

private:
    // Horner form of the row-major offset: ((i0 * s1 + i1) * s2 + i2) ...
    static PrimExpr flatten_index(const Ref<Buffer>& b, const std::vector<PrimExpr>& idx) {
        if (idx.empty()) return make_int(DataType::int32(), 0);
        if (idx.size() == 1) return idx[0];
        DataType it = idx.back().dtype().element_of();
        PrimExpr offset = to_index_type(idx[0], it);
        for (size_t d = 1; d < idx.size(); ++d) {
            PrimExpr scaled = mul_index(offset, to_index_type(b->shape[d], it));
            offset = add_index(scaled, to_index_type(idx[d], it));
        }
        return offset;
    }

    std::unordered_map<const Buffer*, Ref<Buffer>> map_;
    std::vector<Ref<Buffer>> keep_alive_;  // keys of map_ must not be freed and reused
};

}  // namespace

Stmt flatten_storage(const Stmt& s, const LowerContext& ctx) {
    return StorageFlattener().mutate_stmt(s);
}

Ref<PrimFunc> flatten_storage(const Ref<PrimFunc>& f, const LowerContext& ctx) {
    StorageFlattener flattener;
    for (const auto& p : f->params) flattener.keep_shape(p);
    return with_body(f, flattener.mutate_stmt(f->body));
}

}  // namespace anvil::tir
