// Every sketch of small workloads, with random decisions, lowers, compiles and computes what the
// unscheduled computation computes; and the records it makes replay to the same program.
#include "tune/sketch/sketch.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "e2e/run_kernel.h"
#include "te/math.h"
#include "te/reduction.h"
#include "te/schedule_to_loops.h"
#include "tir/printer.h"

namespace anvil::tune {
namespace {

using te::Tensor;

struct Workload {
    std::vector<Tensor> inputs;
    std::vector<Tensor> outputs;
};

std::vector<int64_t> shape_of(const Tensor& t) {
    std::vector<int64_t> s;
    for (const auto& d : t.shape()) s.push_back(*as_const_int(d));
    return s;
}

// Runs a schedule of the workload on fixed random inputs; returns the outputs' values.
std::vector<std::vector<float>> run(const te::Schedule& s, const Workload& w) {
    std::vector<Tensor> tensors = w.inputs;
    tensors.insert(tensors.end(), w.outputs.begin(), w.outputs.end());
    std::vector<runtime::NDArray> args;
    for (size_t i = 0; i < w.inputs.size(); ++i) {
        args.push_back(testing::random_tensor(shape_of(w.inputs[i]), 7 + i));
    }
    for (const auto& o : w.outputs) args.push_back(testing::zeros(shape_of(o)));
    testing::build_and_run(s, tensors, args);
    std::vector<std::vector<float>> out;
    for (size_t k = w.inputs.size(); k < args.size(); ++k) {
        const float* p = args[k].data<float>();
        out.emplace_back(p, p + args[k].num_elements());
    }
    return out;
}

void expect_close(const std::vector<std::vector<float>>& want,
                  const std::vector<std::vector<float>>& got, const std::string& what) {
    ASSERT_EQ(want.size(), got.size());
    for (size_t o = 0; o < want.size(); ++o) {
        ASSERT_EQ(want[o].size(), got[o].size());
        for (size_t i = 0; i < want[o].size(); ++i) {
            ASSERT_NEAR(want[o][i], got[o][i], 1e-4 + 1e-4 * std::fabs(want[o][i]))
                << what << "\noutput " << o << " element " << i;
        }
    }
}

const SketchTarget kTarget{.vector_lanes = 16};

// Generates the sketches, checks `expect` of them, then runs `samples` random programs of each.
void check_sketches(const std::function<Workload()>& make, int samples,
                    const std::function<void(const std::vector<Sketch>&)>& expect = {}) {
    Workload w = make();
    const auto want = run(te::create_schedule(w.outputs), w);
    const std::vector<Sketch> sketches = generate_sketches(te::create_schedule(w.outputs), kTarget);
    ASSERT_FALSE(sketches.empty());
    if (expect) expect(sketches);
    std::mt19937_64 rng(42);
    for (size_t k = 0; k < sketches.size(); ++k) {
        for (int n = 0; n < samples; ++n) {
            Decisions d = sample_decisions(sketches[k], rng);
            te::Schedule s = te::create_schedule(w.outputs);
            std::string what = "sketch " + std::to_string(k) + ":\n" + sketches[k].describe();
            try {
                realize(sketches[k], d, s);
            } catch (const std::exception& e) {
                FAIL() << what << "realize: " << e.what();
            }
            const std::string text = te::print_record(s.record());
            what += text;
            if (std::getenv("ANVIL_SHOW_SKETCH")) std::cerr << what << "\n";
            std::vector<std::vector<float>> got;
            try {
                got = run(s, w);
            } catch (const std::exception& e) {
                FAIL() << what << "\nlowering: " << e.what();
            }
            expect_close(want, got, what);
            // The record alone reproduces the program.
            te::Schedule replay = te::create_schedule(w.outputs);
            replay.apply(te::parse_record(text));
            std::vector<Tensor> args = w.inputs;
            args.insert(args.end(), w.outputs.begin(), w.outputs.end());
            EXPECT_EQ(tir::print(te::schedule_to_loops(s, args, "f")),
                      tir::print(te::schedule_to_loops(replay, args, "f")));
        }
    }
}

bool has_plan(const std::vector<Sketch>& sketches, PlanKind kind, bool cache_write = false) {
    for (const auto& s : sketches) {
        for (const auto& p : s.plans) {
            if (p.kind == kind && p.cache_write == cache_write) return true;
        }
    }
    return false;
}

Workload matmul(int m, int n, int k) {
    Tensor A = te::placeholder({m, k}, DataType::float32(), "A");
    Tensor B = te::placeholder({k, n}, DataType::float32(), "B");
    auto r = te::reduce_axis(k, "k");
    Tensor C = te::compute(
        {m, n}, [&](PrimExpr i, PrimExpr j) { return te::sum(A(i, r->var) * B(r->var, j), {r}); },
        "C");
    return {{A, B}, {C}};
}

TEST(Sketch, MatmulIsTiledWithAndWithoutCache) {
    check_sketches([] { return matmul(24, 48, 40); }, 12,
                   [](const std::vector<Sketch>& s) {
                       EXPECT_EQ(s.size(), 2u);
                       EXPECT_TRUE(has_plan(s, PlanKind::Tiled, true));
                       EXPECT_TRUE(has_plan(s, PlanKind::Tiled, false));
                   });
}

// A matrix product with a bias and relu epilogue, in two elementwise stages.
Workload matmul_bias_relu(int m, int n, int k) {
    Workload w = matmul(m, n, k);
    Tensor bias = te::placeholder({n}, DataType::float32(), "bias");
    Tensor C = w.outputs[0];
    Tensor biased = te::compute(
        {m, n}, [&](PrimExpr i, PrimExpr j) { return C(i, j) + bias(j); }, "biased");
    Tensor relu = te::compute(
        {m, n}, [&](PrimExpr i, PrimExpr j) { return max(biased(i, j), 0.0f); }, "relu");
    return Workload{{w.inputs[0], w.inputs[1], bias}, {relu}};
}

TEST(Sketch, EpilogueIsComputedInTheTiles) {
    check_sketches(
        [] { return matmul_bias_relu(32, 64, 16); }, 16,
        [](const std::vector<Sketch>& s) {
            ASSERT_EQ(s.size(), 1u);
            EXPECT_EQ(s[0].describe(),
                      "C: tiled, in the tiles of relu\nbiased: inline\nrelu: fused consumer\n");
        });
}

TEST(Sketch, AwkwardExtentsArePaddedAndGuarded) {
    // 37 rows (prime), 33 columns (two vectors and a lane), 41-long reduction (prime): half of
    // the tiles overshoot the extent; the tails must be guarded, in the product and in the
    // epilogue computed in its tiles.
    auto make = [] { return matmul_bias_relu(37, 33, 41); };
    check_sketches(make, 24);
    // Some of those programs were padded (the tiles do not all multiply to the extents).
    Workload w = make();
    const auto sketches = generate_sketches(te::create_schedule(w.outputs), kTarget);
    std::mt19937_64 rng(42);
    int padded = 0;
    for (int n = 0; n < 24; ++n) {
        const Decisions d = sample_decisions(sketches[0], rng);
        for (size_t k = 0; k < d.size(); ++k) {
            const auto& slot = sketches[0].space.slots[k];
            if (slot.kind != DecisionSlot::Kind::Tile) continue;
            int64_t p = 1;
            for (int64_t f : d[k]) p *= f;
            padded += p != slot.extent;
        }
    }
    EXPECT_GT(padded, 0);
}

TEST(Sketch, EpilogueReadingAUnitDimensionAtZeroIsFused) {
    // Broadcasting ops index a dimension of extent 1 with the constant 0.
    auto make = [] {
        Tensor A = te::placeholder({1, 16, 24}, DataType::float32(), "A");
        Tensor B = te::placeholder({24, 32}, DataType::float32(), "B");
        auto r = te::reduce_axis(24, "k");
        Tensor C = te::compute(
            {1, 16, 32},
            [&](std::span<const PrimExpr> i) {
                return te::sum(A(i[0], i[1], r->var) * B(r->var, i[2]), {r});
            },
            "C");
        Tensor D = te::compute(
            {1, 16, 32}, [&](std::span<const PrimExpr> i) { return max(C(0, i[1], i[2]), 0.0f); },
            "D");
        return Workload{{A, B}, {D}};
    };
    check_sketches(make, 10, [](const std::vector<Sketch>& s) {
        ASSERT_EQ(s.size(), 1u);
        EXPECT_EQ(s[0].describe(), "C: tiled, in the tiles of D\nD: fused consumer\n");
    });
}

TEST(Sketch, BatchMatmul) {
    auto make = [] {
        Tensor A = te::placeholder({3, 8, 12}, DataType::float32(), "A");
        Tensor B = te::placeholder({3, 12, 20}, DataType::float32(), "B");
        auto r = te::reduce_axis(12, "k");
        Tensor C = te::compute(
            {3, 8, 20},
            [&](std::span<const PrimExpr> i) {
                return te::sum(A(i[0], i[1], r->var) * B(i[0], r->var, i[2]), {r});
            },
            "C");
        return Workload{{A, B}, {C}};
    };
    check_sketches(make, 10);
}

TEST(Sketch, SoftmaxRows) {
    auto make = [] {
        Tensor X = te::placeholder({6, 80}, DataType::float32(), "X");
        auto k1 = te::reduce_axis(80, "k1");
        Tensor mx = te::compute(
            {6}, [&](PrimExpr i) { return te::max(X(i, k1->var), {k1}); }, "mx");
        Tensor e = te::compute(
            {6, 80}, [&](PrimExpr i, PrimExpr j) { return te::exp(X(i, j) - mx(i)); }, "e");
        auto k2 = te::reduce_axis(80, "k2");
        Tensor sm = te::compute(
            {6}, [&](PrimExpr i) { return te::sum(e(i, k2->var), {k2}); }, "sm");
        Tensor out = te::compute(
            {6, 80}, [&](PrimExpr i, PrimExpr j) { return e(i, j) / sm(i); }, "out");
        return Workload{{X}, {out}};
    };
    check_sketches(make, 8, [](const std::vector<Sketch>& s) {
        EXPECT_TRUE(has_plan(s, PlanKind::Rfactor));
        EXPECT_TRUE(has_plan(s, PlanKind::Inline));  // exp, read twice, may be inlined
        EXPECT_TRUE(has_plan(s, PlanKind::Simple));
    });
}

TEST(Sketch, LongRowSumUsesRfactor) {
    auto make = [] {
        Tensor X = te::placeholder({5, 203}, DataType::float32(), "X");
        auto k = te::reduce_axis(203, "k");
        Tensor s = te::compute(
            {5}, [&](PrimExpr i) { return te::sum(X(i, k->var), {k}); }, "rowsum");
        return Workload{{X}, {s}};
    };
    check_sketches(make, 12, [](const std::vector<Sketch>& s) {
        EXPECT_EQ(s.size(), 2u);
        EXPECT_TRUE(has_plan(s, PlanKind::Rfactor));
    });
}

TEST(Sketch, FullReductionToAScalar) {
    auto make = [] {
        Tensor X = te::placeholder({16, 96}, DataType::float32(), "X");
        auto a = te::reduce_axis(16, "a");
        auto b = te::reduce_axis(96, "b");
        Tensor s = te::compute(
            std::vector<PrimExpr>{},
            [&](std::span<const PrimExpr>) {
                return te::sum(X(a->var, b->var), {a, b});
            },
            "total");
        return Workload{{X}, {s}};
    };
    check_sketches(make, 8);
}

TEST(Sketch, PaddedConvolution) {
    auto make = [] {
        Tensor X = te::placeholder({1, 4, 10, 10}, DataType::float32(), "X");
        Tensor W = te::placeholder({8, 4, 3, 3}, DataType::float32(), "W");
        Tensor P = te::compute(
            {1, 4, 12, 12},
            [&](std::span<const PrimExpr> i) {
                PrimExpr inside = i[2] >= 1 && i[2] < 11 && i[3] >= 1 && i[3] < 11;
                return te::if_then_else(inside, X(i[0], i[1], i[2] - 1, i[3] - 1), 0.0f);
            },
            "pad");
        auto rc = te::reduce_axis(4, "rc");
        auto ry = te::reduce_axis(3, "ry");
        auto rx = te::reduce_axis(3, "rx");
        Tensor C = te::compute(
            {1, 8, 10, 10},
            [&](std::span<const PrimExpr> i) {
                return te::sum(P(i[0], rc->var, i[2] + ry->var, i[3] + rx->var) *
                                   W(i[1], rc->var, ry->var, rx->var),
                               {rc, ry, rx});
            },
            "conv");
        return Workload{{X, W}, {C}};
    };
    check_sketches(make, 8, [](const std::vector<Sketch>& s) {
        // pad inlined or kept, conv tiled with or without a cache.
        EXPECT_EQ(s.size(), 4u);
    });
}

TEST(Sketch, TransformOfManyLoadsIsNotRecomputedPerReuse) {
    // A Winograd-like input transform: each element combines 6 input elements (a stencil with
    // floor-divided indices). Inlined into the product, it would be recomputed for every
    // output column; it keeps loops of its own. Its extent is written as constant arithmetic
    // (the way tile counts are), which must read as the constant it is.
    auto make = [] {
        Tensor X = te::placeholder({20, 12}, DataType::float32(), "X");
        Tensor W = te::placeholder({12, 24}, DataType::float32(), "W");
        const PrimExpr four = make_int(DataType::int32(), 4);
        PrimExpr rows = floordiv(make_int(DataType::int32(), 20) + 3, four) * four;
        EXPECT_EQ(as_const_int(rows), nullptr);  // not folded as it is written
        Tensor T = te::compute(
            {rows, 12},
            [&](PrimExpr i, PrimExpr k) {
                PrimExpr acc = make_float(DataType::float32(), 0.0);
                for (int t = 0; t < 6; ++t) {
                    PrimExpr r = floormod(floordiv(i, four) * four + t, 20);
                    acc = acc + X(r, k) * static_cast<float>(t + 1);
                }
                return acc;
            },
            "transform");
        // The product's extents are written the same way (20 rows, a reduction of 12): read as
        // symbolic, the product would not be tiled.
        auto r = te::reduce_axis(floordiv(make_int(DataType::int32(), 48), four), "r");
        EXPECT_NE(as_const_int(r->dom.extent), nullptr);
        Tensor C = te::compute(
            {rows, 24},
            [&](PrimExpr i, PrimExpr j) { return te::sum(T(i, r->var) * W(r->var, j), {r}); }, "C");
        EXPECT_NE(as_const_int(C.shape()[0]), nullptr);
        return Workload{{X, W}, {C}};
    };
    check_sketches(make, 6, [](const std::vector<Sketch>& s) {
        EXPECT_EQ(s.size(), 2u);  // the product tiled with or without a cache
        for (const auto& k : s) {
            EXPECT_NE(k.describe().find("transform: simple"), std::string::npos) << k.describe();
            EXPECT_NE(k.describe().find("C: tiled"), std::string::npos) << k.describe();
        }
    });
}

TEST(Sketch, TransformOfManyLoadsMayBeInlinedWhereEachValueIsReadOnce) {
    // The same kind of transform, read by a reduction that reuses its other input (V, across
    // rows) but reads each transformed value once: inlining recomputes nothing, so both
    // sketches are made.
    // C = T * V over [20, columns]: each transformed value is read `columns` times.
    auto workload = [](int columns) {
        return [columns] {
            Tensor X = te::placeholder({20, 12}, DataType::float32(), "X");
            Tensor V = te::placeholder({12}, DataType::float32(), "V");
            Tensor T = te::compute(
                {20, 12},
                [&](PrimExpr i, PrimExpr k) {
                    PrimExpr acc = make_float(DataType::float32(), 0.0);
                    for (int t = 0; t < 6; ++t) acc = acc + X(floormod(i + t, 20), k);
                    return acc;
                },
                "transform");
            auto r = te::reduce_axis(make_int(DataType::int32(), 12), "r");
            Tensor C = te::compute(
                {20, columns},
                [&](PrimExpr i, PrimExpr) { return te::sum(T(i, r->var) * V(r->var), {r}); }, "C");
            return Workload{{X, V}, {C}};
        };
    };
    const auto make = workload(3);
    auto reused = [](const Workload& w, const std::string& stage) {
        for (const StageInfo& s : analyze_stages(te::create_schedule(w.outputs))) {
            if (s.name == stage) return s.reused_by_reader;
        }
        ADD_FAILURE() << "no stage " << stage;
        return std::vector<bool>{};
    };
    // C's second axis repeats each transformed value 3 times: reused.
    EXPECT_EQ(reused(make(), "transform"), std::vector<bool>{true});
    EXPECT_EQ(reused(make(), "V"), std::vector<bool>{true});
    check_sketches(make, 2, [](const std::vector<Sketch>& s) {
        for (const auto& k : s) {
            EXPECT_EQ(k.describe().find("transform: inline"), std::string::npos) << k.describe();
        }
    });

    const auto once = workload(1);
    EXPECT_EQ(reused(once(), "transform"), std::vector<bool>{false});  // an axis of extent 1
    EXPECT_EQ(reused(once(), "V"), std::vector<bool>{true});           // across the 20 rows
    bool inlined = false;
    check_sketches(once, 2, [&](const std::vector<Sketch>& s) {
        for (const auto& k : s) {
            inlined = inlined || k.describe().find("transform: inline") != std::string::npos;
        }
    });
    EXPECT_TRUE(inlined);
}

TEST(Sketch, BodiesOfManyLoadsAreUnrolledLess) {
    // An unrolled body's loads stay within kMaxUnrolledLoads: a 40-tap stencil (through an
    // inlined 2-tap step: 80 loads) is not unrolled, a 3-tap one is (up to 64 iterations).
    auto make = [](int taps) {
        Tensor X = te::placeholder({256}, DataType::float32(), "X");
        Tensor Y = te::compute(
            {200}, [&](PrimExpr i) { return X(i) + X(i + 1); }, "pairs");
        Tensor Z = te::compute(
            {160},
            [&](PrimExpr i) {
                PrimExpr acc = Y(i);
                for (int t = 1; t < taps; ++t) acc = acc + Y(i + t);
                return acc;
            },
            "stencil");
        return Workload{{X}, {Z}};
    };
    auto unroll_options = [](const Sketch& s) {
        for (const auto& slot : s.space.slots) {
            if (slot.what == "unroll stencil") return slot.options;
        }
        return -1;
    };
    for (int taps : {40, 5}) {
        Workload w = make(taps);
        const auto sketches = generate_sketches(te::create_schedule(w.outputs), kTarget);
        ASSERT_EQ(sketches.size(), 2u);  // pairs inlined or not
        for (const auto& s : sketches) {
            const bool inlined = s.describe().find("pairs: inline") != std::string::npos;
            // 40 taps: 40 or 80 loads, over 512 / 16: no unrolling. 5 taps: 5 loads (within
            // 512 / 64: every step), or 10 with pairs inlined (within 512 / 16 only).
            const int want = taps == 40 ? 1 : inlined ? 2 : 3;
            EXPECT_EQ(unroll_options(s), want) << taps << " taps\n" << s.describe();
        }
    }
    check_sketches([&] { return make(40); }, 4);
}

TEST(Sketch, ElementwiseChain) {
    auto make = [] {
        Tensor A = te::placeholder({7, 33}, DataType::float32(), "A");
        Tensor B = te::placeholder({33}, DataType::float32(), "B");
        Tensor E = te::compute(
            {7, 33}, [&](PrimExpr i, PrimExpr j) { return te::exp(A(i, j)); }, "E");
        Tensor F = te::compute(
            {7, 33}, [&](PrimExpr i, PrimExpr j) { return E(i, j) * 2.0f + B(j); }, "F");
        return Workload{{A, B}, {F}};
    };
    check_sketches(make, 12, [](const std::vector<Sketch>& s) {
        ASSERT_EQ(s.size(), 1u);
        EXPECT_EQ(s[0].describe(), "E: inline\nF: simple\n");
    });
}

TEST(Sketch, SampledTilesCoverTheExtent) {
    std::mt19937_64 rng(3);
    for (int64_t extent : {1, 2, 7, 64, 96, 197, 768, 3072}) {
        int padded = 0;
        for (int n = 0; n < 50; ++n) {
            auto f = sample_tile(extent, 4, 64, rng);
            ASSERT_EQ(f.size(), 4u);
            int64_t p = 1;
            for (auto x : f) p *= x;
            EXPECT_LE(f.back(), 64);
            EXPECT_GE(p, extent);
            // Only an awkward extent is padded, and by at most an eighth.
            if (!awkward_extent(extent, 0)) {
                EXPECT_EQ(p, extent);
            }
            EXPECT_LE((p - extent) * 8, extent);
            padded += p != extent;
        }
        if (extent == 197) {
            EXPECT_GT(padded, 10);
            EXPECT_LT(padded, 40);
        }
    }
    // A vector width makes the innermost level a multiple of it most of the time.
    int multiples = 0;
    for (int n = 0; n < 200; ++n) {
        auto f = sample_tile(1024, 4, 64, rng, 16);
        EXPECT_EQ(f[0] * f[1] * f[2] * f[3], 1024);
        multiples += f[3] % 16 == 0;
    }
    EXPECT_GT(multiples, 140);
    // A vector axis that is no whole number of vectors is padded to whole vectors.
    int whole_vectors = 0;
    for (int n = 0; n < 200; ++n) {
        auto f = sample_tile(197, 4, 64, rng, 16);
        const int64_t p = f[0] * f[1] * f[2] * f[3];
        EXPECT_GE(p, 197);
        whole_vectors += p != 197 && f[3] % 16 == 0;
    }
    EXPECT_GT(whole_vectors, 50);
}

TEST(Sketch, AwkwardExtents) {
    EXPECT_TRUE(awkward_extent(197, 0));   // prime
    EXPECT_TRUE(awkward_extent(394, 0));   // 2 x 197: no divisor from 4 to 32
    EXPECT_FALSE(awkward_extent(196, 0));  // 4 x 49
    EXPECT_FALSE(awkward_extent(31, 0));   // short: one tile
    EXPECT_TRUE(awkward_extent(33, 16));   // two vectors and a lane
    EXPECT_FALSE(awkward_extent(48, 16));
    EXPECT_FALSE(awkward_extent(7, 16));  // shorter than a vector
}

}  // namespace
}  // namespace anvil::tune
