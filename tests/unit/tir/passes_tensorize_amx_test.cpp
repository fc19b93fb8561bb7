// tensorize_amx: the loop nests of a matrix product of words (the AMX schedule of the words form
// of nn.conv2d_nchwc) become AMX tile calls that the interpreter, which knows the tiles' meaning,
// finds equal to the loops on any machine; nests a tile cannot compute are left alone, and a
// parallel task configures the tiles once.
#include <bit>

#include "ir/intrinsics.h"
#include "passes_programs.h"

namespace anvil::tir::testing {
namespace {

// The nest as TE lowers it, per task p of `tasks` (a parallel loop when tasks > 1):
//   for m < M: for n < N: { acc[m, n] = 0; for r < R: for k < K:
//       acc[m, n] += dot(word of X[p, r, m * step, k * P * spread + j for j < P], W[r, k, n]) }
//   C[p, m, n] = acc[m, n]
// with P = 2 bfloat16 or 4 uint8 per word; `spread` 2 leaves gaps between a word's elements'
// words, and `acc_cols` > N spreads the accumulator's columns. More that a tile cannot compute:
// `acc_by_r` moves the sum's element with r, `r_by_m` makes r's extent depend on m, `r_kind`
// makes r another kind of loop.
struct Nest {
    int M = 14, N = 16, K = 8, R = 3, step = 2, tasks = 2;
    bool bf16 = false;
    int spread = 1;
    int acc_cols = 0;  // 0: N
    int nests = 1;     // nests per task (the same one repeated, or with M - 2 rows: `vary`)
    bool vary = false;
    bool acc_by_r = false, r_by_m = false;
    ForKind r_kind = ForKind::Serial;
};

Ref<PrimFunc> words_nest(const Nest& s) {
    const int per = s.bf16 ? 2 : 4;
    const DataType elem = s.bf16 ? DataType::bfloat16() : DataType::uint(8);
    const DataType sum = s.bf16 ? DataType::float32() : DataType::int32();
    auto X = make_buffer("X", elem, {s.tasks, s.R, s.M * s.step, s.K * per * s.spread});
    auto W = make_buffer("W", DataType::int32(), {s.R, s.K, s.N});
    auto C = make_buffer("C", sum, {s.tasks, s.nests, s.M, s.N});
    auto p = make_var("p");
    std::vector<Stmt> per_task;
    for (int t = 0; t < s.nests; ++t) {
        const int rows = s.vary && t == 1 ? s.M - 2 : s.M;
        const int cols = s.acc_cols ? s.acc_cols : s.N + (s.acc_by_r ? 1 : 0);
        auto acc = make_buffer("acc", sum, {rows, cols}, "local");
        auto m = make_var("m"), n = make_var("n"), r = make_var("r"), k = make_var("k");
        auto m2 = make_var("m2"), n2 = make_var("n2");
        auto column = [&](const Ref<Var>& v) {
            return s.acc_cols ? PrimExpr(v) * (s.acc_cols / s.N) : PrimExpr(v);
        };
        const PrimExpr col = s.acc_by_r ? PrimExpr(n) + floormod(r, 2) : column(n);
        const PrimExpr r_extent = s.r_by_m ? PrimExpr(s.R - 1) + floormod(m, 2) : PrimExpr(s.R);
        PrimExpr word;
        for (int j = 0; j < per; ++j) {
            PrimExpr e =
                make_load(X, {p, r, PrimExpr(m) * s.step, PrimExpr(k) * (per * s.spread) + j});
            PrimExpr bits =
                s.bf16 ? cast(DataType::int32(),
                              make_call(DataType::uint(16), intrin::kReinterpret, {e}))
                       : make_call(DataType::int32(), intrin::kBitwiseAnd,
                                   {cast(DataType::int32(), e), make_int(DataType::int32(), 255)});
            if (j > 0) {
                bits = make_call(DataType::int32(), intrin::kShiftLeft,
                                 {bits, make_int(DataType::int32(), 32 / per * j)});
            }
            word = word.defined() ? make_call(DataType::int32(), intrin::kBitwiseOr, {word, bits})
                                  : bits;
        }
        PrimExpr dot = make_call(sum, s.bf16 ? intrin::kDotBF16 : intrin::kDotU8S8,
                                 {word, make_load(W, {r, k, n})});
        Stmt update = make_store(acc, make_load(acc, {m, col}) + dot, {m, col});
        Stmt nest =
            make_for(m, 0, rows, ForKind::Serial,
                     make_for(n, 0, s.N, ForKind::Serial,
                              make_seq({make_store(acc, make_const(sum, 0.0), {m, col}),
                                        make_for(r, 0, r_extent, s.r_kind,
                                                 make_for(k, 0, s.K, ForKind::Serial, update))})));
        Stmt out =
            make_for(m2, 0, rows, ForKind::Serial,
                     make_for(n2, 0, s.N, ForKind::Serial,
                              make_store(C, make_load(acc, {m2, column(n2)}), {p, t, m2, n2})));
        per_task.push_back(make_allocate(acc, make_seq({nest, out})));
    }
    Stmt body = make_for(p, 0, s.tasks, s.tasks > 1 ? ForKind::Parallel : ForKind::Serial,
                         make_seq(per_task));
    auto f = make_prim_func("nest", {X, W, C}, body);
    f = flatten_storage(f, LowerContext{});
    return apply(f, simplify);
}

LowerContext amx(bool bf16, bool int8) {
    LowerContext ctx;
    ctx.vector_bits = 512;
    ctx.amx_bf16 = bf16;
    ctx.amx_int8 = int8;
    return ctx;
}

// The calls named `name` in `s`, printed.
std::vector<std::string> calls(const Stmt& s, const std::string& name) {
    std::vector<std::string> out;
    pre_order_visit(s, [&](const Stmt& x) {
        auto* ev = x.as<Evaluate>();
        auto* c = ev ? ev->value.as<Call>() : nullptr;
        if (c && c->name == name) out.push_back(to_string(ev->value));
    });
    return out;
}

int dots_left(const Stmt& s) {
    int n = 0;
    pre_order_visit(s, [&](const Stmt& x) {
        if (auto* st = x.as<Store>()) {
            const std::string v = to_string(st->value);
            n += v.find("dot_u8s8") != std::string::npos || v.find("dot_bf16") != std::string::npos;
        }
    });
    return n;
}

TEST(TensorizeAmx, Uint8ProductsBecomeOneTileAccumulatorOverTheReduction) {
    Nest s;  // 14 rows three pixels apart, 16 columns, 8 words (32 bytes), 3 reduction steps
    s.step = 3;
    auto f = words_nest(s);
    auto g = apply(f, tensorize_amx, amx(false, true));
    EXPECT_EQ(dots_left(g->body), 0);
    // One configuration, first in the task: C 14 x 64 bytes, X 14 x 32, W 8 x 64.
    EXPECT_EQ(calls(g->body, intrin::kAmxTileConfig),
              std::vector<std::string>{"call<int32>(\"amx_tile_config\", 14, 64, 14, 32, 8, 64)"});
    auto* task = g->body.as<For>();
    ASSERT_NE(task, nullptr);
    auto* first = task->body.as<SeqStmt>();
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(calls(first->seq[0], intrin::kAmxTileConfig).size(), 1u);
    // Rows of X three pixels (3 x 32 bytes) apart, of W and of C 16 words apart.
    auto loads = calls(g->body, intrin::kAmxTileLoad);
    ASSERT_EQ(loads.size(), 2u);
    EXPECT_NE(loads[0].find("X["), std::string::npos) << loads[0];
    EXPECT_NE(loads[0].find(", 96)"), std::string::npos) << loads[0];
    EXPECT_NE(loads[1].find("W["), std::string::npos) << loads[1];
    EXPECT_NE(loads[1].find(", 64)"), std::string::npos) << loads[1];
    EXPECT_EQ(calls(g->body, intrin::kAmxTileDotU8S8).size(), 1u);
    auto stores = calls(g->body, intrin::kAmxTileStore);
    ASSERT_EQ(stores.size(), 1u);
    EXPECT_NE(stores[0].find(", 64)"), std::string::npos) << stores[0];
    // Released once, last in the task.
    EXPECT_EQ(calls(g->body, intrin::kAmxTileRelease).size(), 1u);
    EXPECT_EQ(calls(first->seq.back(), intrin::kAmxTileRelease).size(), 1u);
    expect_equivalent(f, g);
}

TEST(TensorizeAmx, BFloat16ProductsMatchTheLoopsWithinFloat32Rounding) {
    Nest s;
    s.bf16 = true;
    s.M = 5;   // odd rows
    s.K = 16;  // full 64-byte rows
    s.step = 1;
    auto f = words_nest(s);
    auto g = apply(f, tensorize_amx, amx(true, false));
    EXPECT_EQ(dots_left(g->body), 0);
    EXPECT_EQ(calls(g->body, intrin::kAmxTileDotBF16).size(), 1u);
    // bfloat16 data and words of two bfloat16 in [-4, 4) (make_inputs' int32 words would hold
    // NaNs).
    auto inputs = make_inputs(f);
    uint64_t state = 7;
    auto next = [&] {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        const float v = static_cast<float>(state >> 40) / float(1 << 24) * 8 - 4;
        return std::bit_cast<uint32_t>(v) >> 16;  // a bfloat16's bits
    };
    for (auto& x : inputs[0]) x = std::bit_cast<float>(next() << 16);
    for (auto& w : inputs[1]) w = static_cast<int32_t>(next() | (next() << 16));
    auto a = run_func(f, inputs);
    auto b = run_func(g, inputs);
    EXPECT_NE(compare_buffers(inputs, a), "");
    // tdpbf16ps adds each product with its own rounding, the loops each pair's sum: 96 products
    // of magnitude < 16 into sums of tens, each rounding within 2^-24 of a sum below 2^8.
    ASSERT_EQ(a[2].size(), b[2].size());
    for (size_t i = 0; i < a[2].size(); ++i) {
        ASSERT_NEAR(a[2][i], b[2][i], 96 * 256 * 0x1p-24) << "C[" << i << "]";
    }
    EXPECT_EQ(compare_buffers({a[0], a[1]}, {b[0], b[1]}), "");
}

TEST(TensorizeAmx, NestsATileCannotComputeAreLeftAlone) {
    auto untouched = [](const Nest& s, const LowerContext& ctx, const char* why) {
        auto f = words_nest(s);
        auto g = apply(f, tensorize_amx, ctx);
        EXPECT_TRUE(calls(g->body, intrin::kAmxTileConfig).empty()) << why;
        EXPECT_EQ(dots_left(g->body), dots_left(f->body)) << why;
    };
    untouched(Nest{}, LowerContext{}, "no AMX");
    untouched(Nest{}, amx(true, false), "AMX-BF16 only, uint8 products");
    untouched(Nest{.bf16 = true}, amx(false, true), "AMX-INT8 only, bfloat16 products");
    // Each a nest a tile cannot compute, on a target with both products.
    const std::vector<std::pair<Nest, const char*>> shapes = {
        {Nest{.M = 17}, "17 rows"},
        {Nest{.N = 32}, "128-byte rows of C"},
        {Nest{.K = 17}, "17 words (68-byte rows)"},
        {Nest{.spread = 2}, "words not adjacent"},
        {Nest{.acc_cols = 32}, "columns of C not adjacent"},
        {Nest{.acc_by_r = true}, "the sum's element moves with the reduction"},
        {Nest{.r_by_m = true}, "the reduction's extent depends on the row"},
        {Nest{.tasks = 1, .r_kind = ForKind::Parallel}, "a parallel reduction loop"},
    };
    for (const auto& [nest, why] : shapes) untouched(nest, amx(true, true), why);
}

TEST(TensorizeAmx, ATaskConfiguresOnceWhereItsProductsAgree) {
    Nest two;
    two.nests = 2;
    auto f = words_nest(two);
    auto g = apply(f, tensorize_amx, amx(true, true));
    EXPECT_EQ(calls(g->body, intrin::kAmxTileConfig).size(), 1u);
    EXPECT_EQ(calls(g->body, intrin::kAmxTileDotU8S8).size(), 2u);
    expect_equivalent(f, g);
    // Different shapes: each product keeps its own configuration.
    Nest mixed = two;
    mixed.vary = true;
    auto f2 = words_nest(mixed);
    auto g2 = apply(f2, tensorize_amx, amx(true, true));
    EXPECT_EQ(calls(g2->body, intrin::kAmxTileConfig).size(), 2u);
    EXPECT_EQ(calls(g2->body, intrin::kAmxTileRelease).size(), 2u);
    expect_equivalent(f2, g2);
    // Outside parallel loops (the calling thread runs other tasks in between): each product
    // configures and releases the tiles itself.
    Nest serial = two;
    serial.tasks = 1;
    auto f3 = words_nest(serial);
    auto g3 = apply(f3, tensorize_amx, amx(true, true));
    EXPECT_EQ(calls(g3->body, intrin::kAmxTileConfig).size(), 2u);
    EXPECT_EQ(calls(g3->body, intrin::kAmxTileRelease).size(), 2u);
    expect_equivalent(f3, g3);
}

}  // namespace
}  // namespace anvil::tir::testing
