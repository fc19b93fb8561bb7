#include "tune/sketch/sketch.h"

#include <algorithm>
#include <functional>
#include <map>
#include <tuple>

#include "support/error.h"

namespace anvil::tune {

const char* plan_kind_name(PlanKind k) {
    switch (k) {
        case PlanKind::Skip:
            return "skip";
        case PlanKind::Inline:
            return "inline";
        case PlanKind::Simple:
            return "simple";
        case PlanKind::Tiled:
            return "tiled";
        case PlanKind::FusedConsumer:
            return "fused consumer";
        case PlanKind::Rfactor:
            return "rfactor";
    }
    return "?";
}

std::string Sketch::describe() const {
    std::string out;
    for (const auto& p : plans) {
        if (p.kind == PlanKind::Skip) continue;
        out += p.stage + ": " + plan_kind_name(p.kind);
        if (p.cache_write) out += ", cache_write";
        if (p.consumer >= 0) out += ", in the tiles of " + plans[p.consumer].stage;
        out += "\n";
    }
    return out;
}

namespace {

using Rule = std::vector<SketchState> (*)(const SketchState&, int, const RuleContext&);

// In order: the first rule that applies to a stage decides its alternatives.
constexpr Rule kRules[] = {rule_skip_placeholder, rule_inline, rule_multi_level_tiling,
                           rule_rfactor, rule_simple};

int add_slot(Sketch& sketch, DecisionSlot slot) {
    sketch.space.slots.push_back(std::move(slot));
    return static_cast<int>(sketch.space.slots.size()) - 1;
}

int choice_slot(Sketch& sketch, int plan, int options, const std::string& what) {
    DecisionSlot s;
    s.kind = DecisionSlot::Kind::Choice;
    s.options = std::max(1, options);
    s.plan = plan;
    s.what = what + " " + sketch.plans[plan].stage;
    return add_slot(sketch, s);
}

int tile_slot(Sketch& sketch, int plan, int64_t extent, int levels, const std::string& what) {
    DecisionSlot s;
    s.kind = DecisionSlot::Kind::Tile;
    s.extent = std::max<int64_t>(1, extent);
    s.levels = levels;
    s.max_innermost = 64;
    s.plan = plan;
    s.what = "tile " + sketch.plans[plan].stage + " " + what;
    return add_slot(sketch, s);
}

// The vector widths offered for a row of `extent`: 1 (scalar), the divisors up to 64 that are
// powers of two, the native width and twice it (tails are split off by partition_loops), and
// the row itself when it is short.
std::vector<int64_t> vector_factors(int64_t extent, int lanes) {
    std::vector<int64_t> f = {1};
    if (extent <= 1) return f;
    for (int64_t v = 2; v <= 64 && v <= extent; v *= 2) {
        if (extent % v == 0) f.push_back(v);
    }
    for (int64_t v : {static_cast<int64_t>(lanes), 2 * static_cast<int64_t>(lanes)}) {
        if (v <= extent) f.push_back(v);
    }
    if (extent <= 64) f.push_back(extent);
    std::sort(f.begin(), f.end());
    f.erase(std::unique(f.begin(), f.end()), f.end());
    return f;
}

// The real reader of stage i (through inlined stages), or -1 when it has none or several.
int single_reader(const Sketch& sketch, int i, const RuleContext& ctx) {
    int at = i;
    for (;;) {
        if (ctx.info[at].readers.size() != 1) return -1;
        const int r = ctx.info[at].readers[0];
        if (sketch.plans[r].kind != PlanKind::Inline) return r;
        at = r;
    }
}

// Loads per element of stage i's body once the stages inlined into it are substituted (each
// load of an inlined stage becomes that stage's loads).
int64_t loads_with_inlined(const Sketch& sketch, const RuleContext& ctx, int i) {
    int64_t n = ctx.info[i].loads;
    for (size_t p = 0; p < ctx.info.size(); ++p) {
        if (sketch.plans[p].kind != PlanKind::Inline) continue;
        const auto& readers = ctx.info[p].readers;
        for (size_t k = 0; k < readers.size(); ++k) {
            if (readers[k] != i) continue;
            const int64_t each = loads_with_inlined(sketch, ctx, static_cast<int>(p));
            n = std::min<int64_t>(n + ctx.info[p].reads_per_reader[k] * (each - 1), 1 << 20);
        }
    }
    return n;
}

// The unroll steps (a prefix of kUnrollSteps) a stage of `loads` loads per element may take:
// the unrolled body stays within kMaxUnrolledLoads. A Winograd transform (hundreds of loads
// as written, guarded where padding is inlined) unrolled 64 times made LLVM's instruction combiner
// run for many minutes on one candidate, time no tuning budget can interrupt.
int unroll_options(int64_t loads) {
    int n = 1;  // no unrolling, always
    while (n < static_cast<int>(std::size(kUnrollSteps)) &&
           kUnrollSteps[n] * std::max<int64_t>(1, loads) <= kMaxUnrolledLoads) {
        ++n;
    }
    return n;
}

}  // namespace

void assign_slots(Sketch& sketch, const RuleContext& ctx) {
    sketch.space.slots.clear();
    for (size_t i = 0; i < sketch.plans.size(); ++i) {
        StagePlan& p = sketch.plans[i];
        const StageInfo& info = ctx.info[i];
        const int plan = static_cast<int>(i);
        const int ndata = static_cast<int>(info.extents.size());
        switch (p.kind) {
            case PlanKind::Skip:
            case PlanKind::Inline:
            case PlanKind::FusedConsumer:
                break;
            case PlanKind::Tiled:
                for (size_t d = 0; d < info.extents.size(); ++d) {
                    p.tile_slots.push_back(
                        tile_slot(sketch, plan, info.extents[d], 4, "axis " + std::to_string(d)));
                }
                // The last data axis is the vector (realize vectorizes its innermost level).
                if (!info.extents.empty()) {
                    sketch.space.slots[p.tile_slots.back()].vector_width = ctx.target.vector_lanes;
                }
                for (size_t r = 0; r < info.reduce_extents.size(); ++r) {
                    p.tile_slots.push_back(tile_slot(sketch, plan, info.reduce_extents[r], 2,
                                                     "reduce axis " + std::to_string(r)));
                }
                if (p.consumer >= 0 || p.cache_write) {
                    p.fusion_level_slot = choice_slot(sketch, plan, 2, "fusion level");
                }
                p.parallel_slot = choice_slot(sketch, plan, ndata + 1, "parallel");
                p.unroll_slot = choice_slot(
                    sketch, plan, unroll_options(loads_with_inlined(sketch, ctx, plan)), "unroll");
                break;
            case PlanKind::Simple:
            case PlanKind::Rfactor: {
                const int64_t row = p.kind == PlanKind::Rfactor
                                        ? info.reduce_extents.back()
                                        : (info.extents.empty() ? 1 : info.extents.back());
                p.vector_factors =
                    vector_factors(info.static_extents ? row : 1, ctx.target.vector_lanes);
                if (p.kind == PlanKind::Rfactor) {
                    // Splitting off one lane is no rfactor.
                    p.vector_factors.erase(p.vector_factors.begin());
                }
                p.vector_slot =
                    choice_slot(sketch, plan, static_cast<int>(p.vector_factors.size()), "vector");
                p.parallel_slot = choice_slot(sketch, plan, ndata + 1, "parallel");
                p.unroll_slot = choice_slot(
                    sketch, plan, unroll_options(loads_with_inlined(sketch, ctx, plan)), "unroll");
                if (!info.output && single_reader(sketch, plan, ctx) >= 0) {
                    p.location_slot = choice_slot(sketch, plan, 1 + kMaxLocations, "location");
                }
                break;
            }
        }
    }
}

std::vector<Sketch> generate_sketches(const te::Schedule& s, const SketchTarget& target,
                                      size_t max_sketches) {
    const std::vector<StageInfo> info = analyze_stages(s);
    RuleContext ctx{info, target};
    SketchState initial;
    for (const auto& st : s.stages()) initial.sketch.plans.push_back(StagePlan{.stage = st.name});
    std::vector<SketchState> states = {initial};
    // Consumers first: fusion changes the plan of a consumer decided before its producer.
    for (int i = static_cast<int>(info.size()) - 1; i >= 0; --i) {
        std::vector<SketchState> next;
        for (const auto& state : states) {
            for (Rule rule : kRules) {
                std::vector<SketchState> made = rule(state, i, ctx);
                if (made.empty()) continue;
                for (auto& m : made) {
                    if (next.size() < max_sketches) next.push_back(std::move(m));
                }
                break;
            }
        }
        states = std::move(next);
    }
    std::vector<Sketch> out;
    for (auto& st : states) {
        assign_slots(st.sketch, ctx);
        out.push_back(std::move(st.sketch));
    }
    return out;
}

namespace {

// Every ordered factorization of `extent` into `levels` factors whose last is at most
// `max_last`, remembered per thread (the search samples the same extents over and over).
const std::vector<std::vector<int64_t>>& factorizations(int64_t extent, int levels,
                                                        int64_t max_last) {
    thread_local std::map<std::tuple<int64_t, int, int64_t>, std::vector<std::vector<int64_t>>>
        memo;
    auto key = std::make_tuple(extent, levels, max_last);
    auto it = memo.find(key);
    if (it != memo.end()) return it->second;
    std::vector<int64_t> divisors;  // of extent, ascending
    for (int64_t d = 1; d * d <= extent; ++d) {
        if (extent % d == 0) divisors.push_back(d);
    }
    for (size_t i = divisors.size(); i-- > 0;) {
        if (divisors[i] * divisors[i] != extent) divisors.push_back(extent / divisors[i]);
    }
    std::vector<std::vector<int64_t>> out;
    std::vector<int64_t> prefix;
    std::function<void(int64_t, int)> fill = [&](int64_t rest, int left) {
        if (left == 1) {
            if (rest <= max_last || levels == 1) {
                prefix.push_back(rest);
                out.push_back(prefix);
                prefix.pop_back();
            }
            return;
        }
        for (int64_t f : divisors) {
            if (f > rest) break;
            if (rest % f != 0) continue;
            prefix.push_back(f);
            fill(rest / f, left - 1);
            prefix.pop_back();
        }
    };
    fill(extent, levels);
    return memo.emplace(key, std::move(out)).first->second;
}

}  // namespace

bool awkward_extent(int64_t extent, int64_t vector_width) {
    if (vector_width > 1 && extent > vector_width && extent % vector_width != 0) return true;
    if (extent <= 32) return false;
    for (int64_t d = 4; d <= 32; ++d) {
        if (extent % d == 0) return false;
    }
    return true;
}

namespace {

// `extent` rounded up to a multiple of a random small tile: on a vector axis to whole vectors
// (one when that wastes at most half, two or four when at most an eighth: 33 -> 48, 197 ->
// 208 or 224), else to a multiple of 2…32 that wastes at most an eighth. `extent` itself when no
// multiple qualifies.
int64_t padded_extent(int64_t extent, std::mt19937_64& rng, int64_t vector_width) {
    std::vector<int64_t> options;
    auto offer = [&](int64_t m, bool vector) {
        const int64_t padded = (extent + m - 1) / m * m;
        if (padded == extent || (padded - extent) * (vector ? 2 : 8) > extent) return;
        if (std::find(options.begin(), options.end(), padded) == options.end()) {
            options.push_back(padded);
        }
    };
    if (vector_width > 1 && extent % vector_width != 0) {
        offer(vector_width, true);
        for (int64_t m : {2 * vector_width, 4 * vector_width}) offer(m, false);
    } else {
        for (int64_t m : {2, 3, 4, 6, 8, 12, 16, 32}) offer(m, false);
    }
    if (options.empty()) return extent;
    return options[std::uniform_int_distribution<size_t>(0, options.size() - 1)(rng)];
}

}  // namespace

std::vector<int64_t> sample_tile(int64_t extent, int levels, int64_t max_innermost,
                                 std::mt19937_64& rng, int64_t vector_width) {
    ANVIL_CHECK(levels >= 1 && extent >= 1) << "sample_tile: bad tile";
    // An awkward extent (197 tokens) is tiled half of the time as if it were a little longer;
    // the loops then overshoot it and lowering guards the tail (partition_loops peels it off,
    // so the full tiles run without the test).
    int64_t whole = extent;
    if (levels > 1 && awkward_extent(extent, vector_width) &&
        std::bernoulli_distribution(0.5)(rng)) {
        whole = padded_extent(extent, rng, vector_width);
    }
    // Uniform over the factorizations (Ansor's sampling), not over where each prime factor
    // goes: that would make extreme tiles (a whole reduction in one level) rare, and they are
    // often the best.
    if (levels > 1 && vector_width > 1 && whole % vector_width == 0 &&
        vector_width <= max_innermost && std::bernoulli_distribution(0.8)(rng)) {
        std::vector<int64_t> widths;
        for (int64_t w = vector_width; w <= max_innermost && whole % w == 0; w *= 2) {
            widths.push_back(w);
        }
        const int64_t inner =
            widths[std::uniform_int_distribution<size_t>(0, widths.size() - 1)(rng)];
        const auto& outer = factorizations(whole / inner, levels - 1, whole);
        std::vector<int64_t> f =
            outer[std::uniform_int_distribution<size_t>(0, outer.size() - 1)(rng)];
        f.push_back(inner);
        return f;
    }
    const auto& all = factorizations(whole, levels, max_innermost);
    ANVIL_CHECK(!all.empty()) << "no tile of " << whole;
    return all[std::uniform_int_distribution<size_t>(0, all.size() - 1)(rng)];
}

Decisions sample_decisions(const Sketch& sketch, std::mt19937_64& rng) {
    Decisions d;
    for (const auto& slot : sketch.space.slots) {
        if (slot.kind == DecisionSlot::Kind::Tile) {
            d.push_back(
                sample_tile(slot.extent, slot.levels, slot.max_innermost, rng, slot.vector_width));
        } else {
            d.push_back({std::uniform_int_distribution<int64_t>(0, slot.options - 1)(rng)});
        }
    }
    return d;
}

}  // namespace anvil::tune
