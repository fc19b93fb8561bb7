// reuse_storage: allocations whose lifetimes are consecutive statements of one SeqStmt share
// memory.
//
// In `seq { allocate A { s1 }, allocate B { s2 } }` A is dead before B is born, so one buffer of
// max(size A, size B) serves both: it is allocated around the whole sequence and A and B are
// renamed to it. A chain `allocate A { allocate B { ... } }` at the top of one statement is
// live at the same time, so its members take distinct slots. Only constant sizes (or identical
// size expressions) are merged: a slot must be sized before the sequence starts.
#include <algorithm>
#include <unordered_map>

#include "tir/passes/passes.h"
#include "tir/stmt_functor.h"

namespace anvil::tir {

namespace {

// One shared allocation and the original buffers it replaces.
struct Slot {
    Ref<Buffer> first;
    PrimExpr size;
    std::vector<Ref<Buffer>> members;
    Ref<Buffer> merged;
};

// The flat size of a buffer (flatten_storage leaves one dimension).
PrimExpr flat_size(const Ref<Buffer>& b) {
    if (b->shape.size() != 1) return PrimExpr();
    return b->shape[0];
}

// Picks the size that covers both, or null when it is not known before the sequence runs.
PrimExpr covering_size(const PrimExpr& a, const PrimExpr& b) {
    if (a.same_as(b)) return a;
    const int64_t* x = as_const_int(a);
    const int64_t* y = as_const_int(b);
    if (x && y && a.dtype() == b.dtype()) return *x >= *y ? a : b;
    return PrimExpr();
}

class BufferRenamer : public StmtMutator {
public:
    explicit BufferRenamer(const std::unordered_map<const Buffer*, Ref<Buffer>>& map) : map_(map) {}

protected:
    Ref<Buffer> mutate_buffer(const Ref<Buffer>& b) override {
        auto it = map_.find(b.get());
        return it == map_.end() ? b : it->second;
    }

private:
    const std::unordered_map<const Buffer*, Ref<Buffer>>& map_;
};

class StorageReuser : public StmtMutator {
protected:
    Stmt mutate_stmt_(const SeqStmt* op, const Stmt& self) override {
        Stmt s = StmtMutator::mutate_stmt_(op, self);
        auto* seq = s.as<SeqStmt>();
        if (!seq) return s;

        // A buffer allocated more than once (loop partitioning copies bodies) cannot be renamed
        // at one place only: leave such buffers alone.
        std::unordered_map<const Buffer*, int> allocations;
        pre_order_visit(s, [&](const Stmt& x) {
            if (auto* a = x.as<Allocate>()) ++allocations[a->buffer.get()];
        });

        // Assign each top-level allocation chain member to a slot; the k-th member of a chain
        // of one scope and type only competes with the k-th members of the other statements.
        std::vector<Slot> slots;
        for (size_t i = 0; i < seq->seq.size(); ++i) {
            std::vector<int> used;
            for (Stmt c = seq->seq[i]; auto* alloc = c.as<Allocate>(); c = alloc->body) {
                if (allocations[alloc->buffer.get()] > 1) continue;
                PrimExpr size = flat_size(alloc->buffer);
                int chosen = -1;
                for (size_t k = 0; size.defined() && k < slots.size() && chosen < 0; ++k) {
                    const Slot& slot = slots[k];
                    bool busy = std::find(used.begin(), used.end(), int(k)) != used.end();
                    if (busy || slot.first->scope != alloc->buffer->scope ||
                        slot.first->dtype != alloc->buffer->dtype) {
                        continue;
                    }
                    if (PrimExpr cover = covering_size(slot.size, size); cover.defined()) {
                        chosen = static_cast<int>(k);
                        slots[k].size = cover;
                    }
                }
                if (chosen < 0) {
                    chosen = static_cast<int>(slots.size());
                    slots.push_back({alloc->buffer, size, {}, Ref<Buffer>()});
                }
                slots[chosen].members.push_back(alloc->buffer);
                used.push_back(chosen);
            }
        }

        std::unordered_map<const Buffer*, Ref<Buffer>> rename;
        for (auto& slot : slots) {
            if (slot.members.size() < 2) continue;
            const Ref<Buffer>& f = slot.first;
            slot.merged = make_buffer(f->name, f->dtype, {slot.size}, f->scope);
            for (const auto& m : slot.members) rename[m.get()] = slot.merged;
        }
        if (rename.empty()) return s;

        // Drop the shared members' own Allocates; the slots are allocated around the sequence.
        std::vector<Stmt> body;
        for (size_t i = 0; i < seq->seq.size(); ++i) {
            body.push_back(strip_shared(seq->seq[i], rename));
        }
        Stmt result = BufferRenamer(rename).mutate_stmt(make_seq(std::move(body), seq->loc));
        for (auto it = slots.rbegin(); it != slots.rend(); ++it) {
            if (it->merged.defined()) result = make_allocate(it->merged, result, seq->loc);
        }
        return result;
    }

private:
    static Stmt strip_shared(const Stmt& s,
                             const std::unordered_map<const Buffer*, Ref<Buffer>>& rename) {
        auto* alloc = s.as<Allocate>();
        if (!alloc) return s;
        Stmt body = strip_shared(alloc->body, rename);
        if (rename.count(alloc->buffer.get())) return body;
        if (body.same_as(alloc->body)) return s;
        return make_allocate(alloc->buffer, body, alloc->loc);
    }
};

}  // namespace

Stmt reuse_storage(const Stmt& s, const LowerContext& ctx) {
    return StorageReuser().mutate_stmt(s);
}

}  // namespace anvil::tir
