// nn.dense, nn.matmul, nn.batch_matmul and nn.bias_add against double-precision references:
// odd sizes, broadcast batch dimensions, 1-D operands, transposed operands, a fused tail, type
// errors and a transformer-sized dense layer.
#include "nn_op_runner.h"
#include "ops/dense.h"

namespace anvil {
namespace {

using ops::BiasAddAttrs;
using ops::MatmulAttrs;
using runtime::NDArray;
using testing::random_tensor;
using testing::run_op;

using Shape = std::vector<int64_t>;

// numpy.matmul in double precision (transposes applied to operands with >= 2 dimensions).
std::vector<double> matmul_reference(const NDArray& a, const NDArray& b, bool ta, bool tb,
                                     Shape* out_shape) {
    Shape as(a.shape().begin(), a.shape().end()), bs(b.shape().begin(), b.shape().end());
    bool av = as.size() == 1, bv = bs.size() == 1;
    if (av) as.insert(as.begin(), 1);
    if (bv) bs.push_back(1);
    size_t ra = as.size(), rb = bs.size();
    int64_t m = ta && !av ? as[ra - 1] : as[ra - 2], k = ta && !av ? as[ra - 2] : as[ra - 1];
    int64_t n = tb && !bv ? bs[rb - 2] : bs[rb - 1];
    Shape ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
    size_t nb = std::max(ab.size(), bb.size());
    Shape batch(nb, 1);
    for (size_t d = 0; d < nb; ++d) {
        int64_t x = d + ab.size() >= nb ? ab[d + ab.size() - nb] : 1;
        int64_t y = d + bb.size() >= nb ? bb[d + bb.size() - nb] : 1;
        batch[d] = std::max(x, y);
    }
    auto offset = [&](const Shape& own, const Shape& idx) {
        int64_t off = 0;
        for (size_t d = 0; d < own.size(); ++d) {
            off = off * own[d] + (own[d] == 1 ? 0 : idx[d + nb - own.size()]);
        }
        return off;
    };
    int64_t nbatch = 1;
    for (int64_t d : batch) nbatch *= d;
    std::vector<double> out(nbatch * m * n);
    Shape idx(nb, 0);
    for (int64_t bi = 0; bi < nbatch; ++bi) {
        int64_t r = bi;
        for (size_t d = nb; d-- > 0;) {
            idx[d] = r % batch[d];
            r /= batch[d];
        }
        const float* pa = a.data<float>() + offset(ab, idx) * m * k;
        const float* pb = b.data<float>() + offset(bb, idx) * k * n;
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
                double acc = 0;
                for (int64_t kk = 0; kk < k; ++kk) {
                    double x = ta && !av ? pa[kk * m + i] : pa[i * k + kk];
                    double y = tb && !bv ? pb[j * k + kk] : pb[kk * n + j];
                    acc += x * y;
                }
                out[(bi * m + i) * n + j] = acc;
            }
    }
    *out_shape = batch;
    if (!av) out_shape->push_back(m);
    if (!bv) out_shape->push_back(n);
    return out;
}

MatmulAttrs mm(bool ta, bool tb) {
    MatmulAttrs a;
    a.transpose_a = ta;
    a.transpose_b = tb;
    return a;
}

TEST(Dense, MatchesReferenceAtOddSizes) {
    for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{7, 9, 13},
                           {1, 1, 1},
                           {13, 40, 17},
                           {20, 100, 33},
                           {3, 64, 5}}) {
        auto x = random_tensor({m, k}, 1), w = random_tensor({n, k}, 2);
        Shape shape;
        auto want = matmul_reference(x, w, false, true, &shape);
        for (bool generic : {false, true}) {
            NDArray y = run_op("nn.dense", ops::DenseAttrs(), {x, w}, {},
                               generic ? ops::schedule_matmul_generic : nullptr);
            testing::expect_close(y, want, 1e-4,
                                  "dense " + std::to_string(m) + "x" + std::to_string(n) + "x" +
                                      std::to_string(k) + (generic ? " generic" : " x86"));
        }
    }
}

// nn.dense_pack_weight then nn.dense_packed (prepack_weights' rewrite) equals nn.dense.
TEST(Dense, PrepackedMatchesReference) {
    for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{7, 9, 13},
                           {1, 1000, 17},
                           {20, 100, 33},
                           {3, 64, 5}}) {
        auto x = random_tensor({m, k}, 1), w = random_tensor({n, k}, 2);
        Shape shape;
        auto want = matmul_reference(x, w, false, true, &shape);
        NDArray packed = run_op("nn.dense_pack_weight", graph::NoAttrs(), {w});
        ASSERT_EQ(packed.shape().size(), 3u);
        ops::DensePackedAttrs a;
        a.units = n;
        for (bool generic : {false, true}) {
            NDArray y = run_op("nn.dense_packed", a, {x, packed}, {},
                               generic ? ops::schedule_matmul_generic : nullptr);
            testing::expect_close(y, want, 1e-4,
                                  "dense_packed " + std::to_string(m) + "x" + std::to_string(n) +
                                      "x" + std::to_string(k) + (generic ? " generic" : " x86"));
        }
    }
    ops::DensePackedAttrs a;
    a.units = 40;
    std::string e = testing::type_error("nn.dense_packed", a, {{2, 5}, {1, 5, 32}});
    EXPECT_NE(e.find("nn.dense_packed: units=40 does not fit"), std::string::npos) << e;
}

TEST(Dense, BatchedDataAndBiasReluTail) {
    auto x = random_tensor({2, 5, 13}, 3), w = random_tensor({9, 13}, 4);
    auto bias = random_tensor({9}, 5);
    BiasAddAttrs ba;
    ba.axis = -1;
    // dense -> bias_add -> relu; bias_add's attrs are its defaults in the runner, so use add.
    NDArray y = run_op("nn.dense", ops::DenseAttrs(), {x, w}, {{"add", {bias}}, {"nn.relu", {}}});
    Shape shape;
    auto want = matmul_reference(x, w, false, true, &shape);
    for (size_t i = 0; i < want.size(); ++i) {
        want[i] = std::max(0.0, want[i] + bias.data<float>()[i % 9]);
    }
    testing::expect_close(y, want, 1e-4, "dense+add+relu");
}

// Few rows per batch entry (the sequence-first [tokens, 1, features] of attention's
// projections): the x86 schedule stacks rows of several entries into one register tile, with a
// guarded last tile when the entries are no multiple of it, and an epilogue computed in it.
TEST(Dense, FewRowsPerBatchEntryShareTheRegisterTile) {
    for (const Shape& xs : std::vector<Shape>{{37, 1, 19}, {13, 3, 19}, {2, 17, 1, 19}}) {
        auto x = random_tensor(xs, 11), w = random_tensor({40, 19}, 12);
        auto bias = random_tensor({40}, 13);
        Shape shape;
        auto want = matmul_reference(x, w, false, true, &shape);
        for (size_t i = 0; i < want.size(); ++i) {
            want[i] = std::max(0.0, want[i] + bias.data<float>()[i % 40]);
        }
        const std::string what = "dense of " + std::to_string(xs.size()) + "-D data, " +
                                 std::to_string(xs[0]) + " entries";
        NDArray y =
            run_op("nn.dense", ops::DenseAttrs(), {x, w}, {{"add", {bias}}, {"nn.relu", {}}});
        EXPECT_EQ(Shape(y.shape().begin(), y.shape().end()), shape);
        testing::expect_close(y, want, 1e-4, what);
        NDArray packed = run_op("nn.dense_pack_weight", graph::NoAttrs(), {w});
        ops::DensePackedAttrs a;
        a.units = 40;
        y = run_op("nn.dense_packed", a, {x, packed}, {{"add", {bias}}, {"nn.relu", {}}});
        testing::expect_close(y, want, 1e-4, what + ", prepacked");
    }
}

// The knobs a dense schedule runs with (blocked_dense_schedule), and those it resolved.
te::KnobValues g_knobs, g_resolved;

// The x86 dense schedule for 512-bit vectors whatever the host (8-row register tiles), with the
// knobs of g_knobs.
void blocked_dense_schedule(te::Schedule& s, const te::Tensor& anchor,
                            const std::vector<te::Tensor>& outputs,
                            const te::ScheduleContext& ctx) {
    te::ScheduleConfig cfg(g_knobs);
    tir::LowerContext target = ctx.target;
    target.vector_bits = 512;
    ops::schedule_matmul_x86(s, anchor, outputs, te::ScheduleContext{target, &cfg});
    g_resolved = cfg.resolved();
}

// The cache blocks of the register tiles (knobs tile_n_panels, tile_m_tiles): every blocking
// computes the same product, with rows and columns that leave a partial last tile and panel.
TEST(Dense, CacheBlocksMatchReference) {
    const int64_t m = 47, n = 180, k = 48;  // 6 row tiles of 8 (the last 7 rows), 6 panels of 32
    auto x = random_tensor({m, k}, 21), w = random_tensor({n, k}, 22);
    auto bias = random_tensor({n}, 23);
    Shape shape;
    auto want = matmul_reference(x, w, false, true, &shape);
    for (size_t i = 0; i < want.size(); ++i) want[i] += bias.data<float>()[i % n];
    NDArray packed = run_op("nn.dense_pack_weight", graph::NoAttrs(), {w});
    ops::DensePackedAttrs a;
    a.units = n;
    // tile_m_tiles is an upper bound: 4 means 3 tiles per block (the largest divisor of 6).
    for (auto [panels, tiles] :
         {std::pair<int64_t, int64_t>{1, 1}, {2, 3}, {3, 2}, {6, 6}, {2, 4}}) {
        g_knobs = {{"tile_m", 8}, {"tile_n_panels", panels}, {"tile_m_tiles", tiles}};
        NDArray y =
            run_op("nn.dense_packed", a, {x, packed}, {{"add", {bias}}}, blocked_dense_schedule);
        EXPECT_EQ(g_resolved.at("tile_n_panels"), panels);
        EXPECT_EQ(g_resolved.at("tile_m_tiles"), tiles);
        testing::expect_close(y, want, 1e-4,
                              "blocks of " + std::to_string(panels) + " panels x " +
                                  std::to_string(tiles) + " row tiles");
    }
}

// No blocks by default, whatever the reduction width (panel-major order: two threads split the
// weights instead of each streaming all of them; ops/dense.cpp pick_cache_blocks), but the knobs
// are declared for the tuner with their choices (blocks of 4 x 4 are still one), and they do not
// depend on tile_m: a tuned tile_m (here 16, 8 tiles) declares the same space. Checked on the
// schedule alone (no kernel is run).
TEST(Dense, NoCacheBlocksByDefault) {
    for (int64_t k : {768, 3072}) {
        const int64_t n = 3072 * 768 / k;
        auto x = random_tensor({128, k}, 1), w = random_tensor({n, k}, 2);
        NDArray packed = run_op("nn.dense_pack_weight", graph::NoAttrs(), {w});
        ops::DensePackedAttrs a;
        a.units = n;
        te::KnobValues defaults;
        for (int64_t tile_m : {0, 16}) {
            g_knobs = tile_m ? te::KnobValues{{"tile_m", tile_m}} : te::KnobValues{};
            testing::compile_op("nn.dense_packed", a, {x, packed}, {}, blocked_dense_schedule);
            EXPECT_EQ(g_resolved.at("tile_m"), tile_m ? tile_m : 8) << k;
            EXPECT_EQ(g_resolved.at("tile_n_panels"), 1) << k;
            EXPECT_EQ(g_resolved.at("tile_m_tiles"), 1) << k;
            if (tile_m == 0) defaults = g_resolved;
            EXPECT_EQ(g_resolved.size(), defaults.size()) << k;
        }
        g_knobs = {{"tile_n_panels", 4}, {"tile_m_tiles", 4}};
        testing::compile_op("nn.dense_packed", a, {x, packed}, {}, blocked_dense_schedule);
        EXPECT_EQ(g_resolved.at("tile_n_panels"), 4) << k;
        EXPECT_EQ(g_resolved.at("tile_m_tiles"), 4) << k;
    }
}

struct MatmulCase {
    Shape a, b;
    bool ta, tb;
};

TEST(Matmul, BroadcastBatchAndVectorOperands) {
    std::vector<MatmulCase> cases = {
        {{7, 13}, {13, 9}, false, false},
        {{2, 3, 7, 13}, {13, 9}, false, false},    // 2-D b shared by every batch
        {{3, 1, 5, 6}, {4, 6, 33}, false, false},  // batch [3, 1] x [4] -> [3, 4]
        {{1, 5, 6}, {2, 1, 6, 3}, false, false},   // a broadcast along b's batch
        {{13}, {13, 9}, false, false},             // 1-D a
        {{2, 7, 13}, {13}, false, false},          // 1-D b
        {{13}, {13}, false, false},                // dot product: 0-d result
        {{13}, {3, 13, 20}, false, false},         // 1-D a against batched b
        {{2, 13, 7}, {2, 9, 13}, true, true},      // both transposed
        {{4, 6, 5}, {1, 6, 17}, true, false},
    };
    for (const auto& c : cases) {
        auto a = random_tensor(c.a, 6), b = random_tensor(c.b, 7);
        Shape shape;
        auto want = matmul_reference(a, b, c.ta, c.tb, &shape);
        for (bool generic : {false, true}) {
            NDArray y = run_op("nn.matmul", mm(c.ta, c.tb), {a, b}, {},
                               generic ? ops::schedule_matmul_generic : nullptr);
            EXPECT_EQ(Shape(y.shape().begin(), y.shape().end()), shape);
            testing::expect_close(y, want, 1e-4, "matmul");
        }
    }
}

TEST(BatchMatmul, MatchesReference) {
    auto a = random_tensor({3, 7, 13}, 8), b = random_tensor({1, 9, 13}, 9);
    Shape shape;
    auto want = matmul_reference(a, b, false, true, &shape);
    NDArray y = run_op("nn.batch_matmul", mm(false, true), {a, b});
    testing::expect_close(y, want, 1e-4, "batch_matmul");
}

TEST(BiasAdd, EachAxis) {
    auto x = random_tensor({2, 3, 4, 5}, 10);
    int64_t dims[] = {2, 3, 4, 5};
    for (int64_t axis : {0, 1, 2, 3, -1}) {
        int64_t ax = axis < 0 ? axis + 4 : axis;
        auto b = random_tensor({dims[ax]}, 11);
        BiasAddAttrs a;
        a.axis = axis;
        NDArray y = run_op("nn.bias_add", a, {x, b});
        std::vector<double> want(x.num_elements());
        for (int64_t i = 0; i < x.num_elements(); ++i) {
            int64_t r = i, c = 0;
            for (int d = 3; d >= 0; --d) {
                if (d == ax) c = r % dims[d];
                r /= dims[d];
            }
            want[i] = double(x.data<float>()[i]) + b.data<float>()[c];
        }
        testing::expect_close(y, want, 1e-6, "bias_add axis " + std::to_string(axis));
    }
}

TEST(DenseErrors, TypeRulesNameTheOpAndTheProblem) {
    std::string e = testing::type_error("nn.dense", ops::DenseAttrs(), {{7, 13}, {9, 12}});
    EXPECT_NE(e.find("node 'node_7'"), std::string::npos) << e;
    EXPECT_NE(e.find("nn.dense: the reduction dimensions differ: 13 (of a) and 12 (of b)"),
              std::string::npos)
        << e;
    e = testing::type_error("nn.dense", ops::DenseAttrs(), {{7, 13}, {2, 9, 13}});
    EXPECT_NE(e.find("nn.dense: the weight must be 2-D [units, K]"), std::string::npos) << e;
    e = testing::type_error("nn.matmul", MatmulAttrs(), {{2, 7, 13}, {3, 13, 4}});
    EXPECT_NE(e.find("nn.matmul: shapes cannot be broadcast together"), std::string::npos) << e;
    e = testing::type_error("nn.batch_matmul", MatmulAttrs(), {{13}, {3, 13, 4}});
    EXPECT_NE(e.find("nn.batch_matmul: operand a is Tensor[(13,), float32]; it needs at least 2 "
                     "dimensions"),
              std::string::npos)
        << e;
    BiasAddAttrs ba;
    e = testing::type_error("nn.bias_add", ba, {{2, 3, 4}, {4}});
    EXPECT_NE(e.find("nn.bias_add: the bias has 4 elements but axis 1 of"), std::string::npos) << e;
    ba.axis = 3;
    e = testing::type_error("nn.bias_add", ba, {{2, 3, 4}, {4}});
    EXPECT_NE(e.find("nn.bias_add: axis 3 is out of range for a 3-D input"), std::string::npos)
        << e;
}

// A transformer's feed-forward layer (128 tokens, 768 features): the full register tiles and
// the k loop of the real size, against the reference. bench/op_layers_bench times it.
TEST(Dense, TransformerFeedForwardMatchesReference) {
    auto x = random_tensor({128, 768}, 12), w = random_tensor({768, 768}, 13);
    NDArray y = run_op("nn.dense", ops::DenseAttrs(), {x, w});
    Shape out_shape;
    std::vector<double> want = matmul_reference(x, w, false, true, &out_shape);
    EXPECT_EQ(out_shape, (Shape{128, 768}));
    testing::expect_close(y, want, 1e-3, "transformer dense");
}

}  // namespace
}  // namespace anvil
