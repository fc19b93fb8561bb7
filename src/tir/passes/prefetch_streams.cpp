// prefetch_streams: software prefetch of the memory streams that feed register accumulators.
//
// The micro-kernel of a register-tiled product (a matmul tile, a blocked convolution) is a loop
// over the reduction whose body multiplies one vector of a packed operand per row of the tile
// into "local" accumulators: for k { acc[i] += a[i, k] * panel[k * VB : k * VB + VB] }. Each
// iteration reads the next VB elements of the panel, a stream read at the rate of the FMA units
// (128 bytes every 8 cycles on a core with two 512-bit FMA pipes). Where the panel is in L2 the
// hardware prefetchers keep up; where it comes from DRAM (a transformer's weights, read once per
// layer and never again before the next inference) they do not reach far enough ahead, and the
// first row tile that reads a panel waits for memory (BERT-base's products: 10-15 % slower than
// the same kernel with its weights in cache). A prefetch of the stream a fixed number of bytes
// ahead brings each line in before it is needed.
//
// A loop qualifies when it is serial, its body is straight-line (no inner loops) and stores only
// to local buffers (accumulators: the loop computes in registers, not a copy or an elementwise
// pass, which the hardware prefetchers serve well), and it loads contiguous vectors (stride 1) of
// a non-local buffer whose first elements advance by the same constant step each iteration and
// lie at constant offsets from each other. The distinct intervals those loads cover are merged;
// each merged interval at least one step long is a stream (one that covers less leaves gaps that
// a prefetch would fetch for nothing) and gets one prefetch per cache line of a step, kDistance
// bytes ahead of the interval's start (every element of the stream passes through it). A first
// element built from loads, calls or variables bound inside the body is not prefetched (the
// prefetch goes before the body, and must not read anything itself). The prefetch index is
// computed in 64 bits, so lines past an int32-indexed buffer's end cannot wrap. A prefetch
// never faults, so the lines past a buffer's end (the last iterations) need no guard.
#include <algorithm>
#include <map>
#include <set>

#include "ir/analyzer.h"
#include "ir/expr_functor.h"
#include "ir/intrinsics.h"
#include "tir/passes/passes.h"
#include "tir/stmt_functor.h"

namespace anvil::tir {

namespace {

// How far ahead the stream is prefetched: 64 iterations of a 128-byte stream consumed every 8
// cycles, ~500 cycles, more than a DRAM access (~100 ns at 3-4 GHz). Measured on a chain of
// BERT-sized products with their weights in DRAM (Zen 5): 1 KiB and 2 KiB ahead gained half of
// what 4-16 KiB did, which were level within the noise.
constexpr int64_t kDistanceBytes = 8192;
constexpr int64_t kLineBytes = 64;

// Whether a statement is straight-line and stores only to local buffers.
bool is_register_body(const Stmt& body) {
    bool ok = true;
    pre_order_visit(body, [&](const Stmt& s) {
        if (s.is<For>() || s.is<Allocate>() || s.is<CallPacked>()) ok = false;
        if (auto* st = s.as<Store>(); st && st->buffer->scope != "local") ok = false;
    });
    return ok;
}

// Whether `e` is a first element the prefetch may compute before the body: no loads, no calls,
// no variable bound inside the body.
bool is_plain_index(const PrimExpr& e, const std::set<const Var*>& bound_inside) {
    bool ok = true;
    pre_order_visit(e, [&](const PrimExpr& x) {
        if (x.is<Load>() || x.is<Call>()) ok = false;
        if (auto* v = x.as<Var>(); v && bound_inside.count(v)) ok = false;
    });
    return ok;
}

// The vector loads of one buffer at one step: their first elements as constant offsets from
// `anchor` (the first load found), each with its lanes.
struct LoadGroup {
    Ref<Buffer> buffer;
    PrimExpr anchor;
    int64_t step = 0;  // elements the first elements advance per iteration
    std::set<std::pair<int64_t, int64_t>> intervals;  // distinct [offset, offset + lanes)
    bool valid = true;  // false: an offset that is no constant, or an index not plain
};

// One stream to prefetch: `step` elements from `anchor + offset`, per iteration.
struct Stream {
    Ref<Buffer> buffer;
    PrimExpr anchor;
    int64_t offset = 0, step = 0;
};

// The streams of `body`, a loop body over `var`.
std::vector<Stream> find_streams(const Stmt& body, const Ref<Var>& var) {
    std::set<const Var*> bound_inside;
    pre_order_visit(body, [&](const Stmt& s) {
        if (auto* let = s.as<LetStmt>()) bound_inside.insert(let->var.get());
    });
    std::map<std::pair<const Buffer*, int64_t>, LoadGroup> groups;
    std::vector<std::pair<const Buffer*, int64_t>> order;
    Analyzer ana;
    auto visit_load = [&](const PrimExpr& e) {
        auto* load = e.as<Load>();
        if (!load || load->indices.size() != 1 || load->buffer->scope == "local") return;
        auto* ramp = load->indices[0].as<Ramp>();
        if (!ramp || !is_one(ramp->stride)) return;
        PrimExpr next = substitute(ramp->base, {{var, PrimExpr(var) + make_int(var->dtype, 1)}});
        const PrimExpr step_expr = ana.simplify(next - ramp->base);  // kept: step points into it
        const int64_t* step = as_const_int(step_expr);
        if (!step || *step <= 0) return;
        auto key = std::make_pair(load->buffer.get(), *step);
        auto [it, fresh] = groups.try_emplace(key, LoadGroup{load->buffer, ramp->base, *step});
        if (fresh) order.push_back(key);
        LoadGroup& g = it->second;
        const PrimExpr offset_expr = ana.simplify(ramp->base - g.anchor);
        const int64_t* offset = as_const_int(offset_expr);
        if (!offset || !is_plain_index(ramp->base, bound_inside)) {
            g.valid = false;
            return;
        }
        g.intervals.insert({*offset, *offset + ramp->lanes});
    };
    pre_order_visit(body, [&](const Stmt& s) {
        if (auto* st = s.as<Store>()) {
            pre_order_visit(st->value, visit_load);
            for (const auto& i : st->indices) pre_order_visit(i, visit_load);
        } else if (auto* let = s.as<LetStmt>()) {
            pre_order_visit(let->value, visit_load);
        }
    });
    std::vector<Stream> out;
    for (const auto& key : order) {
        const LoadGroup& g = groups.at(key);
        if (!g.valid) continue;
        const int elem_bytes = g.buffer->dtype.bytes();
        if (g.step * elem_bytes < kLineBytes) continue;  // the hardware's business
        // Merge the sorted intervals; each merged one a step long or longer is a stream.
        int64_t lo = 0, hi = 0;
        bool open = false;
        auto close = [&]() {
            if (open && hi - lo >= g.step) out.push_back({g.buffer, g.anchor, lo, g.step});
        };
        for (const auto& [begin, end] : g.intervals) {
            if (open && begin <= hi) {
                hi = std::max(hi, end);
                continue;
            }
            close();
            lo = begin;
            hi = end;
            open = true;
        }
        close();
    }
    return out;
}

class StreamPrefetcher : public StmtMutator {
protected:
    Stmt mutate_stmt_(const For* op, const Stmt& self) override {
        Stmt s = StmtMutator::mutate_stmt_(op, self);
        auto* loop = s.as<For>();
        if (loop->for_kind != ForKind::Serial || !is_register_body(loop->body)) return s;
        std::vector<Stream> streams = find_streams(loop->body, loop->var);
        if (streams.empty()) return s;
        std::vector<Stmt> seq;
        for (const Stream& st : streams) {
            const int elem_bytes = st.buffer->dtype.bytes();
            const int64_t step_bytes = st.step * elem_bytes;
            const int64_t ahead = (kDistanceBytes + step_bytes - 1) / step_bytes;
            // The anchor as this iteration computes it (in range wherever the loads are), then
            // the distance in 64 bits.
            const PrimExpr anchor = cast(DataType::int64(), st.anchor);
            for (int64_t line = 0; line < step_bytes; line += kLineBytes) {
                const int64_t delta = st.offset + ahead * st.step + line / elem_bytes;
                PrimExpr element =
                    make_load(st.buffer, {anchor + make_int(DataType::int64(), delta)});
                seq.push_back(make_evaluate(
                    make_call(DataType::int32(), intrin::kPrefetch, {element}), loop->loc));
            }
        }
        seq.push_back(loop->body);
        return make_for(loop->var, loop->min, loop->extent, loop->for_kind, make_seq(seq),
                        loop->thread_tag, loop->loc);
    }
};

}  // namespace

Stmt prefetch_streams(const Stmt& s, const LowerContext& ctx) {
    if (ctx.is_gpu) return s;
    return StreamPrefetcher().mutate_stmt(s);
}

}  // namespace anvil::tir
