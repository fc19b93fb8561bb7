// tensorize_amx: the loop nests of a matrix product of words as AMX tile products.
//
// The words form of nn.conv2d_nchwc, scheduled for AMX (ops/conv_schedule.cpp,
// schedule_conv2d_nchwc_amx), lowers to
//   for m in [0, M):                      the tile's rows (output pixels), M <= 16
//     for n in [0, N):                    its columns (output channels), N * 4 <= 64 bytes
//       C[f] = 0
//       for r1 ... for rj:                the other reduction loops (channel blocks, taps)
//         for k in [0, K):                words of channels, K <= 16
//           C[f] = C[f] + dot(word of X[g], W[h])
// with dot_bf16 of two bfloat16 (a word of X: X[g], X[g + 1]) or dot_u8s8 of four uint8, C
// float32 or int32. Where the indices are linear in m, n and k as a tile needs (f: columns
// adjacent, rows at least N apart, independent of the reduction; g: words adjacent along k, the
// same for every column; h: columns adjacent, the same for every row) and the target has the
// tile product, the nest becomes
//   amx_tile_config(M, 4N, M, 4K, K, 4N)  tile 0: C's M x N, 1: X's M x K words, 2: W's K x N
//   amx_tile_zero(0)
//   for r1 ... for rj:
//     amx_tile_load(1, X[g at m = k = 0], row stride of g)
//     amx_tile_load(2, W[h at n = k = 0], row stride of h)
//     amx_tile_dot_bf16(0, 1, 2)          or amx_tile_dot_u8s8
//   amx_tile_store(0, C[f at m = n = 0], row stride of f)
//   amx_tile_release()
// so the accumulator stays in tile 0 over the reduction: one tdpbf16ps sums 16 x 16 x 32
// products where a vdpbf16ps sums 16 x 2. Nests of other forms are left as they are. Then the
// iterations of a parallel loop whose products all configure the tiles alike configure and
// release them once (HoistConfigs).
#include <optional>

#include "ir/analyzer.h"
#include "ir/intrinsics.h"
#include "ir/linear_form.h"
#include "ir/structural_equal.h"
#include "tir/passes/passes.h"
#include "tir/stmt_functor.h"

namespace anvil::tir {

namespace {

constexpr int64_t kMaxTileRows = 16;
constexpr int64_t kMaxTileBytes = 64;

PrimExpr I(int64_t v) {
    return make_int(DataType::int32(), v);
}

// The coefficient of `v` in the integer index `e` where `v` appears only as a term of its own
// (e = c * v + terms without v), else none.
std::optional<int64_t> coefficient(const PrimExpr& e, const Var* v) {
    LinearSum s = to_linear(e);
    int64_t c = 0;
    for (const auto& t : s.terms) {
        if (t.atom.as<Var>() == v) {
            c += s.signed_value(t.coeff);
        } else if (uses_var(t.atom, v)) {
            return std::nullopt;
        }
    }
    return c;
}

bool has_coefficient(const PrimExpr& e, const Var* v, int64_t c) {
    std::optional<int64_t> got = coefficient(e, v);
    return got && *got == c;
}

// A word of X: its first element's load and the elements per word.
struct Word {
    const Load* first = nullptr;
    int64_t per = 0;
};

// Flattens bitwise_or(...) into its parts.
void or_parts(const PrimExpr& e, std::vector<PrimExpr>* out) {
    auto* c = e.as<Call>();
    if (c && c->name == intrin::kBitwiseOr && c->args.size() == 2) {
        or_parts(c->args[0], out);
        or_parts(c->args[1], out);
        return;
    }
    out->push_back(e);
}

// The load of one part of a word (ops/conv_words.cpp's `word`): a bfloat16's bits
// cast<int32>(reinterpret<uint16>(X[i])), or a byte's bitwise_and(cast<int32>(X[i]), 255).
const Load* part_load(const PrimExpr& e, bool bf16) {
    if (bf16) {
        auto* cast = e.as<Cast>();
        auto* bits = cast && cast->dtype == DataType::int32() ? cast->value.as<Call>() : nullptr;
        if (!bits || bits->name != intrin::kReinterpret || bits->dtype != DataType::uint(16)) {
            return nullptr;
        }
        auto* load = bits->args[0].as<Load>();
        return load && load->dtype.is_bfloat() && load->dtype.is_scalar() ? load : nullptr;
    }
    auto* mask = e.as<Call>();
    if (!mask || mask->name != intrin::kBitwiseAnd || !is_const_int(mask->args[1], 255)) {
        return nullptr;
    }
    auto* cast = mask->args[0].as<Cast>();
    auto* load = cast && cast->dtype == DataType::int32() ? cast->value.as<Load>() : nullptr;
    return load && load->dtype == DataType::uint(8) ? load : nullptr;
}

// The word `e` of `per` adjacent elements of one buffer, element j in bits [j * 32 / per, ...).
std::optional<Word> match_word(const PrimExpr& e, bool bf16, Analyzer& analyzer) {
    const int64_t per = bf16 ? 2 : 4;
    const int64_t bits = 32 / per;
    std::vector<PrimExpr> parts;
    or_parts(e, &parts);
    if (static_cast<int64_t>(parts.size()) != per) return std::nullopt;
    std::vector<const Load*> loads(static_cast<size_t>(per), nullptr);
    for (const auto& p : parts) {
        int64_t j = 0;
        PrimExpr v = p;
        if (auto* shift = p.as<Call>(); shift && shift->name == intrin::kShiftLeft) {
            const int64_t* amount = as_const_int(shift->args[1]);
            if (!amount || *amount % bits != 0) return std::nullopt;
            j = *amount / bits;
            v = shift->args[0];
        }
        const Load* load = part_load(v, bf16);
        if (!load || j < 0 || j >= per || loads[static_cast<size_t>(j)] ||
            load->indices.size() != 1) {
            return std::nullopt;
        }
        loads[static_cast<size_t>(j)] = load;
    }
    for (int64_t j = 1; j < per; ++j) {
        const Load* l = loads[static_cast<size_t>(j)];
        if (!l->buffer.same_as(loads[0]->buffer) ||
            !is_const_int(analyzer.simplify(l->indices[0] - loads[0]->indices[0]), j)) {
            return std::nullopt;
        }
    }
    return Word{loads[0], per};
}

PrimExpr at_zero(const PrimExpr& e, const std::vector<const For*>& loops) {
    std::vector<std::pair<Ref<Var>, PrimExpr>> zero;
    for (const For* l : loops) zero.emplace_back(l->var, make_int(l->var->dtype, 0));
    return substitute(e, zero);
}

Stmt call(const char* name, std::vector<PrimExpr> args, const SourceLoc& loc) {
    return make_evaluate(make_call(DataType::int32(), name, std::move(args)), loc);
}

class TileProducts : public StmtMutator {
public:
    explicit TileProducts(const LowerContext& ctx) : ctx_(ctx) {}

protected:
    Stmt mutate_stmt_(const For* op, const Stmt& self) override {
        if (std::optional<Stmt> tiled = tensorize(op)) return *tiled;
        return StmtMutator::mutate_stmt_(op, self);
    }

private:
    // A constant extent in [1, max] of a loop from 0, else 0.
    static int64_t extent_of(const For* loop, int64_t max) {
        const int64_t* e = as_const_int(loop->extent);
        if (!is_zero(loop->min) || !e || *e < 1 || *e > max) return 0;
        return loop->for_kind == ForKind::Serial || loop->for_kind == ForKind::Unrolled ? *e : 0;
    }

    std::optional<Stmt> tensorize(const For* mloop) {
        const int64_t rows = extent_of(mloop, kMaxTileRows);
        auto* nloop = mloop->body.as<For>();
        const int64_t cols = nloop ? extent_of(nloop, kMaxTileBytes / 4) : 0;
        auto* seq = nloop ? nloop->body.as<SeqStmt>() : nullptr;
        if (!rows || !cols || !seq || seq->seq.size() != 2) return std::nullopt;
        // C[f] = 0, then the reduction loops down to the words' loop k.
        auto* init = seq->seq[0].as<Store>();
        std::vector<const For*> reduction;
        for (auto* l = seq->seq[1].as<For>(); l; l = l->body.as<For>()) reduction.push_back(l);
        auto* float_zero = init ? init->value.as<FloatImm>() : nullptr;
        if (!init || reduction.empty() || init->indices.size() != 1 ||
            !(is_zero(init->value) || (float_zero && float_zero->value == 0.0))) {
            return std::nullopt;
        }
        const For* kloop = reduction.back();
        reduction.pop_back();
        const int64_t words = extent_of(kloop, kMaxTileRows);
        auto* update = kloop->body.as<Store>();
        if (!words || !update || !update->buffer.same_as(init->buffer) ||
            update->indices.size() != 1 ||
            !structural_equal(update->indices[0], init->indices[0])) {
            return std::nullopt;
        }
        // C[f] + dot(word of X[g], W[h])
        auto* add = update->value.as<Add>();
        auto* acc = add ? add->a.as<Load>() : nullptr;
        auto* dot = add ? add->b.as<Call>() : nullptr;
        if (!acc || !dot || !acc->buffer.same_as(init->buffer) || acc->indices.size() != 1 ||
            !structural_equal(acc->indices[0], init->indices[0]) || dot->args.size() != 2) {
            return std::nullopt;
        }
        const bool bf16 = dot->name == intrin::kDotBF16;
        const bool u8s8 = dot->name == intrin::kDotU8S8;
        if (!((bf16 && ctx_.amx_bf16) || (u8s8 && ctx_.amx_int8)) || !dot->dtype.is_scalar() ||
            init->buffer->dtype != dot->dtype) {
            return std::nullopt;
        }
        std::optional<Word> x = match_word(dot->args[0], bf16, analyzer_);
        auto* w = dot->args[1].as<Load>();
        if (!x || !w || w->dtype != DataType::int32() || w->indices.size() != 1) {
            return std::nullopt;
        }
        const Var* m = mloop->var.get();
        const Var* n = nloop->var.get();
        const Var* k = kloop->var.get();
        const PrimExpr& f = init->indices[0];
        const PrimExpr& g = x->first->indices[0];
        const PrimExpr& h = w->indices[0];
        // The tile's rows and columns in memory (element strides).
        std::optional<int64_t> c_rows = coefficient(f, m);
        std::optional<int64_t> x_rows = coefficient(g, m);
        std::optional<int64_t> w_rows = coefficient(h, k);
        if (!c_rows || *c_rows < cols || !has_coefficient(f, n, 1) || !has_coefficient(f, k, 0) ||
            !x_rows || *x_rows < 0 || !has_coefficient(g, n, 0) || !has_coefficient(g, k, x->per) ||
            !w_rows || *w_rows < 0 || !has_coefficient(h, m, 0) || !has_coefficient(h, n, 1)) {
            return std::nullopt;
        }
        // The other reduction loops run the same for every row and column, and the sum's
        // element is the same through them.
        for (const For* r : reduction) {
            const bool serial = r->for_kind == ForKind::Serial || r->for_kind == ForKind::Unrolled;
            if (!serial || uses_var(r->min, m) || uses_var(r->min, n) || uses_var(r->extent, m) ||
                uses_var(r->extent, n) || uses_var(f, r->var.get())) {
                return std::nullopt;
            }
        }
        const SourceLoc& loc = mloop->loc;
        const int64_t x_bytes = x->first->dtype.bytes();
        Stmt body = make_seq(
            {call(intrin::kAmxTileLoad,
                  {I(1),
                   make_load(x->first->buffer, {analyzer_.simplify(at_zero(g, {mloop, kloop}))}),
                   I(*x_rows * x_bytes)},
                  loc),
             call(intrin::kAmxTileLoad,
                  {I(2), make_load(w->buffer, {analyzer_.simplify(at_zero(h, {nloop, kloop}))}),
                   I(*w_rows * 4)},
                  loc),
             call(bf16 ? intrin::kAmxTileDotBF16 : intrin::kAmxTileDotU8S8, {I(0), I(1), I(2)},
                  loc)},
            loc);
        for (auto it = reduction.rbegin(); it != reduction.rend(); ++it) {
            const For* r = *it;
            body = make_for(r->var, r->min, r->extent, r->for_kind, body, r->thread_tag, r->loc);
        }
        return make_seq(
            {call(intrin::kAmxTileConfig,
                  {I(rows), I(cols * 4), I(rows), I(words * 4), I(words), I(cols * 4)}, loc),
             call(intrin::kAmxTileZero, {I(0)}, loc), body,
             call(intrin::kAmxTileStore,
                  {I(0), make_load(init->buffer, {analyzer_.simplify(at_zero(f, {mloop, nloop}))}),
                   I(*c_rows * 4)},
                  loc),
             call(intrin::kAmxTileRelease, {}, loc)},
            loc);
    }

    const LowerContext& ctx_;
    Analyzer analyzer_;
};

bool is_call(const Stmt& s, const char* name) {
    auto* e = s.as<Evaluate>();
    auto* c = e ? e->value.as<Call>() : nullptr;
    return c && c->name == name;
}

// The configurations in a parallel loop's body, and whether it calls out of the kernel.
class ConfigCollector : public StmtVisitor {
public:
    std::vector<PrimExpr> configs;
    bool calls_out = false;

protected:
    void visit_stmt_(const Evaluate* op) override {
        if (auto* c = op->value.as<Call>(); c && c->name == intrin::kAmxTileConfig) {
            configs.push_back(op->value);
        }
    }
    void visit_stmt_(const CallPacked*) override { calls_out = true; }
};

// One configuration per iteration of a parallel loop: where every tile product of its body
// configures the tiles alike, the body configures them once, first, and releases them once,
// last (a configuration costs hundreds of cycles, as much as a few products). The tile
// registers are per thread and a task's thread runs other kernels' tasks between iterations,
// so it cannot leave the body; nor is it hoisted over a call out of the kernel (which may use
// the tiles itself), nor outside parallel loops (the calling thread runs tasks too).
class HoistConfigs : public StmtMutator {
protected:
    Stmt mutate_stmt_(const For* op, const Stmt& self) override {
        if (op->for_kind != ForKind::Parallel) return StmtMutator::mutate_stmt_(op, self);
        ConfigCollector c;
        c.visit_stmt(op->body);
        bool same = !c.configs.empty() && !c.calls_out;
        for (const auto& cfg : c.configs) same = same && structural_equal(cfg, c.configs[0]);
        if (!same) return self;
        dropping_ = true;
        Stmt body = mutate_stmt(op->body);
        dropping_ = false;
        const SourceLoc& loc = op->body->loc;
        body = make_seq(
            {make_evaluate(c.configs[0], loc), body,
             make_evaluate(make_call(DataType::int32(), intrin::kAmxTileRelease, {}), loc)},
            loc);
        return make_for(op->var, op->min, op->extent, op->for_kind, body, op->thread_tag, op->loc);
    }
    Stmt mutate_stmt_(const SeqStmt* op, const Stmt& self) override {
        if (!dropping_) return StmtMutator::mutate_stmt_(op, self);
        std::vector<Stmt> seq;
        for (const auto& s : op->seq) {
            if (!is_call(s, intrin::kAmxTileConfig) && !is_call(s, intrin::kAmxTileRelease)) {
                seq.push_back(mutate_stmt(s));
            }
        }
        return make_seq(std::move(seq), op->loc);
    }

private:
    bool dropping_ = false;
};

}  // namespace

Stmt tensorize_amx(const Stmt& s, const LowerContext& ctx) {
    if (!ctx.amx_bf16 && !ctx.amx_int8) return s;
    Stmt tiled = TileProducts(ctx).mutate_stmt(s);
    return tiled.same_as(s) ? s : HoistConfigs().mutate_stmt(tiled);
}

}  // namespace anvil::tir
