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
// pass, which the hardware prefetchers serve well), and it loads a contiguous vector (stride 1,
// at least one cache line) from a non-local buffer whose address advances by exactly the loaded
// span each iteration (the loads of one buffer at one such step, together, may cover the span:
// an unrolled body). Each such stream gets one prefetch per cache line of its span, kDistance
// bytes ahead. A prefetch never faults, so the lines past a buffer's end (the last iterations)
// need no guard.
#include <algorithm>
#include <map>

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

// A contiguous vector load's buffer, first element and lanes.
struct Stream {
    Ref<Buffer> buffer;
    PrimExpr first;       // the lowest first element among the loads of the stream
    int64_t step = 0;     // elements the address advances per iteration
    int64_t covered = 0;  // lanes loaded per iteration, all loads of the stream together
    int elem_bytes = 0;
};

// The loads of `body` that stream through a non-local buffer with `var`, grouped by buffer and
// step (the same buffer read at two steps is two streams).
std::vector<Stream> find_streams(const Stmt& body, const Ref<Var>& var) {
    std::map<std::pair<const Buffer*, int64_t>, Stream> streams;
    std::vector<std::pair<const Buffer*, int64_t>> order;
    Analyzer ana;
    auto visit_load = [&](const PrimExpr& e) {
        auto* load = e.as<Load>();
        if (!load || load->indices.size() != 1 || load->buffer->scope == "local") return;
        auto* ramp = load->indices[0].as<Ramp>();
        if (!ramp || !is_one(ramp->stride)) return;
        const int elem_bytes = load->dtype.element_of().bytes();
        if (ramp->lanes * elem_bytes < kLineBytes) return;
        PrimExpr next = substitute(ramp->base, {{var, PrimExpr(var) + make_int(var->dtype, 1)}});
        const int64_t* step = as_const_int(ana.simplify(next - ramp->base));
        if (!step || *step <= 0) return;
        auto key = std::make_pair(load->buffer.get(), *step);
        auto it = streams.find(key);
        if (it == streams.end()) {
            streams[key] = Stream{load->buffer, ramp->base, *step, ramp->lanes, elem_bytes};
            order.push_back(key);
            return;
        }
        Stream& s = it->second;
        s.covered += ramp->lanes;
        const int64_t* below = as_const_int(ana.simplify(ramp->base - s.first));
        if (below && *below < 0) s.first = ramp->base;
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
        const Stream& s = streams[key];
        // A stream: the loads cover what the address skips each iteration (no gaps to fetch for
        // nothing), and the step spans at least a cache line.
        if (s.covered >= s.step && s.step * s.elem_bytes >= kLineBytes) out.push_back(s);
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
            const int64_t step_bytes = st.step * st.elem_bytes;
            const int64_t ahead = (kDistanceBytes + step_bytes - 1) / step_bytes;
            const DataType it = st.first.dtype();
            PrimExpr later =
                substitute(st.first, {{loop->var, PrimExpr(loop->var) + make_int(it, ahead)}});
            for (int64_t line = 0; line < step_bytes; line += kLineBytes) {
                PrimExpr index = simplify(later + make_int(it, line / st.elem_bytes));
                PrimExpr element = make_load(st.buffer, {index});
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
