// Realizing a sketch: its plans and a program's decisions become schedule primitives applied to
// a fresh schedule, in four passes over the plans — structure (inlining, cache and rfactor
// stages), loops (splits, reorders, the parallel loop), locations (compute_at, which names the
// readers' final loops) and last the inner annotations (vectors, unrolling), which must know
// where other stages were attached.
#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "ir/expr_functor.h"
#include "support/error.h"
#include "tune/sketch/sketch.h"

namespace anvil::tune {

namespace {

using IterVarRef = Ref<IterVar>;

int64_t product(const std::vector<int64_t>& f, size_t from, size_t to) {
    int64_t p = 1;
    for (size_t i = from; i < to && i < f.size(); ++i) p *= f[i];
    return p;
}

class Realizer {
public:
    // `reads`: per plan, the plans whose stages its stage loads.
    Realizer(const Sketch& sketch, const Decisions& d, te::Schedule& s,
             std::vector<std::unordered_map<int, int>> reads)
        : reads_(std::move(reads)), sketch_(sketch), d_(d), s_(s) {
        ANVIL_CHECK(d.size() == sketch.space.slots.size())
            << "decisions for another sketch: " << d.size() << " slots, expected "
            << sketch.space.slots.size();
        for (size_t k = 0; k < d.size(); ++k) {
            const auto& slot = sketch.space.slots[k];
            const size_t want = slot.kind == DecisionSlot::Kind::Tile ? slot.levels : 1;
            ANVIL_CHECK(d[k].size() == want) << "decision " << slot.what << " has " << d[k].size()
                                             << " values, expected " << want;
        }
    }

    void run() {
        const size_t n = sketch_.plans.size();
        reading_stage_.resize(n);
        for (size_t i = 0; i < n; ++i) structure(static_cast<int>(i));
        for (int i = static_cast<int>(n) - 1; i >= 0; --i) loops(i);
        for (int i = static_cast<int>(n) - 1; i >= 0; --i) location(i);
        for (size_t i = 0; i < n; ++i) annotate(static_cast<int>(i));
    }

private:
    int64_t choice(int slot) const { return slot < 0 ? 0 : d_[slot].at(0); }
    const std::vector<int64_t>& tile(int slot) const { return d_.at(slot); }

    // ---- structure ----------------------------------------------------------------------

    void structure(int i) {
        const StagePlan& p = sketch_.plans[i];
        reading_stage_[i] = p.stage;
        if (p.kind == PlanKind::Inline) {
            s_[p.stage].compute_inline();
        } else if (p.kind == PlanKind::Tiled && p.cache_write) {
            // The cache computes the reduction; the stage copies it out (its fused consumer).
            te::Tensor cache = s_.cache_write(s_.tensor(p.stage), "local");
            reading_stage_[i] = s_[cache].name();
        } else if (p.kind == PlanKind::Rfactor) {
            te::StageRef st = s_[p.stage];
            const int64_t v = p.vector_factors.at(choice(p.vector_slot));
            auto reduce = st.op_reduce_axis();
            auto [outer, inner] = st.split(reduce.back(), v);
            note_split(outer, inner, reduce.back(), v);
            const int ndata = static_cast<int>(st.op_axis().size());
            te::Tensor rf = s_.rfactor(s_.tensor(p.stage), inner, ndata);
            reading_stage_[i] = s_[rf].name();
        }
    }

    // ---- loops --------------------------------------------------------------------------

    void loops(int i) {
        const StagePlan& p = sketch_.plans[i];
        switch (p.kind) {
            case PlanKind::Tiled:
                tiled_loops(i);
                break;
            case PlanKind::Simple:
                simple_loops(i);
                break;
            case PlanKind::Rfactor:
                rfactor_loops(i);
                break;
            default:
                break;
        }
    }

    int64_t extent_of(const IterVarRef& iv) const {
        auto it = extents_.find(iv.get());
        if (it != extents_.end()) return it->second;
        if (auto* e = as_const_int(iv->dom.extent)) return *e;
        return -1;
    }

    void note_split(const IterVarRef& outer, const IterVarRef& inner, const IterVarRef& parent,
                    int64_t factor) {
        const int64_t whole = extent_of(parent);
        extents_[inner.get()] = factor;
        extents_[outer.get()] = whole < 0 ? -1 : (whole + factor - 1) / factor;
    }

    // Splits `axis` into one loop per factor (outer to inner; `factors` multiply to the axis's
    // extent where the stage is computed). An axis of extent 1 stays one loop.
    std::vector<IterVarRef> split_levels(te::StageRef st, IterVarRef axis,
                                         const std::vector<int64_t>& factors) {
        if (extent_of(axis) == 1 || factors.size() <= 1) return {axis};
        std::vector<IterVarRef> out;
        IterVarRef cur = axis;
        for (size_t lv = 0; lv + 1 < factors.size(); ++lv) {
            const int64_t inner_extent = product(factors, lv + 1, factors.size());
            auto [o, in] = st.split(cur, inner_extent);
            note_split(o, in, cur, inner_extent);
            out.push_back(o);
            cur = in;
        }
        out.push_back(cur);
        return out;
    }

    // Fuses the outermost of `candidates` (adjacent leaves, outer to inner) into a parallel
    // loop, as many as hold `count` loops of more than one iteration (loops of one iteration, a
    // batch of 1, come along but do not count: fusing only those would be a serial program).
    // Returns how many candidates were fused (0: no parallel loop).
    int64_t parallelize(te::StageRef st, const std::vector<IterVarRef>& candidates, int64_t count) {
        int64_t taken = 0, counted = 0, whole = 1;
        while (taken < static_cast<int64_t>(candidates.size()) && counted < count) {
            const int64_t e = extent_of(candidates[taken]);
            counted += e != 1;
            whole *= std::max<int64_t>(1, e);
            ++taken;
        }
        if (counted == 0) return 0;
        IterVarRef loop = candidates[0];
        if (taken >= 2) {
            loop = st.fuse({candidates.begin(), candidates.begin() + taken});
            extents_[loop.get()] = whole;
        }
        st.parallel(loop);
        return taken;
    }

    void tiled_loops(int i) {
        const StagePlan& p = sketch_.plans[i];
        te::StageRef pst = s_[reading_stage_[i]];
        const auto data = pst.op_axis();
        const auto reduce = pst.op_reduce_axis();
        const size_t nd = data.size();
        // The consumer whose tiles compute this stage: the stage itself after cache_write.
        std::string consumer = p.cache_write     ? p.stage
                               : p.consumer >= 0 ? sketch_.plans[p.consumer].stage
                                                 : std::string();
        const int level = consumer.empty() ? -1 : static_cast<int>(choice(p.fusion_level_slot));
        // Levels of this stage's own data loops: all four, or those below the fusion level.
        std::vector<std::vector<IterVarRef>> by_level(4);
        std::vector<IterVarRef> unit;
        for (size_t a = 0; a < nd; ++a) {
            const auto& f = tile(p.tile_slots[a]);
            if (extent_of(data[a]) == 1) {
                unit.push_back(data[a]);
                continue;
            }
            std::vector<int64_t> own(f.begin() + (level + 1), f.end());
            // Computed in the consumer's tile, the axis covers only the levels below it.
            if (level >= 0) extents_[data[a].get()] = product(own, 0, own.size());
            auto ls = split_levels(pst, data[a], own);
            for (size_t k = 0; k < ls.size(); ++k) by_level[level + 1 + k].push_back(ls[k]);
        }
        std::vector<IterVarRef> r0, r1;
        for (size_t r = 0; r < reduce.size(); ++r) {
            auto ls = split_levels(pst, reduce[r], tile(p.tile_slots[nd + r]));
            r0.push_back(ls[0]);
            if (ls.size() > 1) r1.push_back(ls[1]);
        }
        // S0 S1 R0 S2 R1 S3 (the levels above the fusion level are the consumer's).
        std::vector<IterVarRef> order = unit;
        for (int lv = level + 1; lv < 2; ++lv) {
            order.insert(order.end(), by_level[lv].begin(), by_level[lv].end());
        }
        order.insert(order.end(), r0.begin(), r0.end());
        order.insert(order.end(), by_level[2].begin(), by_level[2].end());
        order.insert(order.end(), r1.begin(), r1.end());
        order.insert(order.end(), by_level[3].begin(), by_level[3].end());
        if (order.size() >= 2) pst.reorder(order);
        // The innermost data loop of the last axis is the vector (when it is not a unit axis).
        if (!by_level[3].empty() && extent_of(data[nd - 1]) > 1 &&
            extent_of(by_level[3].back()) > 1 &&
            by_level[3].back().same_as(pst.leaf_axes().back())) {
            vector_[reading_stage_[i]] = by_level[3].back();
        }
        if (consumer.empty()) {
            std::vector<IterVarRef> outer = unit;
            outer.insert(outer.end(), by_level[0].begin(), by_level[0].end());
            parallelize(pst, outer, choice(p.parallel_slot));
            return;
        }
        consumer_loops(i, consumer, level);
    }

    // The consumer's loops follow the producer's tiles down to `level`; the producer is computed
    // in its last loop of that level.
    void consumer_loops(int i, const std::string& consumer, int level) {
        const StagePlan& p = sketch_.plans[i];
        te::StageRef cst = s_[consumer];
        const auto data = cst.op_axis();
        const size_t nd = data.size();
        std::vector<std::vector<IterVarRef>> by_level(level + 1);
        std::vector<IterVarRef> unit, rest, vector_loop;
        for (size_t a = 0; a < nd; ++a) {
            const auto& f = tile(p.tile_slots[a]);
            if (extent_of(data[a]) == 1) {
                unit.push_back(data[a]);
                continue;
            }
            std::vector<int64_t> q(f.begin(), f.begin() + level + 1);
            const bool last = a + 1 == nd;
            // The last axis keeps its innermost factor apart: the consumer's vector.
            q.push_back(product(f, level + 1, last ? 3 : 4));
            if (last) q.push_back(f[3]);
            auto ls = split_levels(cst, data[a], q);
            for (int lv = 0; lv <= level; ++lv) by_level[lv].push_back(ls[lv]);
            for (size_t k = level + 1; k < ls.size(); ++k) {
                (last && k + 1 == ls.size() ? vector_loop : rest).push_back(ls[k]);
            }
        }
        std::vector<IterVarRef> order = unit;
        for (int lv = 0; lv <= level; ++lv) {
            order.insert(order.end(), by_level[lv].begin(), by_level[lv].end());
        }
        const size_t tiles = order.size();  // loops down to the fusion level
        order.insert(order.end(), rest.begin(), rest.end());
        order.insert(order.end(), vector_loop.begin(), vector_loop.end());
        if (order.size() >= 2) cst.reorder(order);
        if (!vector_loop.empty() && extent_of(vector_loop[0]) > 1) {
            vector_[consumer] = vector_loop[0];
        }
        std::vector<IterVarRef> outer = unit;
        outer.insert(outer.end(), by_level[0].begin(), by_level[0].end());
        const int64_t fused = parallelize(cst, outer, choice(p.parallel_slot));
        // Fusing k loops leaves k - 1 fewer before the attach point.
        const size_t at = tiles - 1 - (fused >= 2 ? fused - 1 : 0);
        attach_[reading_stage_[i]] = {consumer, cst.leaf_axes().at(at)};
    }

    void simple_loops(int i) {
        const StagePlan& p = sketch_.plans[i];
        te::StageRef st = s_[p.stage];
        const auto data = st.op_axis();
        const auto reduce = st.op_reduce_axis();
        std::vector<IterVarRef> outer(data.begin(), data.end());
        const int64_t v = p.vector_factors.at(choice(p.vector_slot));
        if (v > 1 && !data.empty()) {
            auto [o, in] = st.split(data.back(), v);
            note_split(o, in, data.back(), v);
            outer.back() = o;
            if (!reduce.empty()) {
                std::vector<IterVarRef> order = outer;
                order.insert(order.end(), reduce.begin(), reduce.end());
                order.push_back(in);
                st.reorder(order);
            }
            vector_[p.stage] = in;
        }
        if (choice(p.location_slot) == 0) parallelize(st, outer, choice(p.parallel_slot));
    }

    void rfactor_loops(int i) {
        const StagePlan& p = sketch_.plans[i];
        // The partial reductions: data axes, the reduce loops, the lanes innermost.
        te::StageRef rf = s_[reading_stage_[i]];
        const auto data = rf.op_axis();
        const auto reduce = rf.op_reduce_axis();
        const int64_t v = p.vector_factors.at(choice(p.vector_slot));
        extents_[data.back().get()] = v;
        std::vector<IterVarRef> order(data.begin(), data.end() - 1);
        order.insert(order.end(), reduce.begin(), reduce.end());
        order.push_back(data.back());
        rf.reorder(order);
        vector_[reading_stage_[i]] = data.back();
        // The stage sums the lanes; the partial results are computed per output element.
        te::StageRef st = s_[p.stage];
        const auto out_axes = st.op_axis();
        extents_[st.op_reduce_axis().back().get()] = v;
        std::vector<IterVarRef> outer(out_axes.begin(), out_axes.end());
        if (choice(p.location_slot) == 0) parallelize(st, outer, choice(p.parallel_slot));
        const auto leaves = st.leaf_axes();
        size_t data_leaves = 0;
        for (const auto& l : leaves) data_leaves += l->kind != IterKind::Reduce;
        if (data_leaves > 0) attach_[reading_stage_[i]] = {p.stage, leaves[data_leaves - 1]};
    }

    // ---- locations ----------------------------------------------------------------------

    // The stage that reads plan i's result (through inlined stages): the one computing its
    // reader's body. Empty when there is none or several.
    std::string reader_stage(int i) const {
        int at = i;
        for (;;) {
            std::vector<int> readers;
            for (size_t r = 0; r < sketch_.plans.size(); ++r) {
                if (reads_[r].count(at)) readers.push_back(static_cast<int>(r));
            }
            if (readers.size() != 1) return {};
            if (sketch_.plans[readers[0]].kind != PlanKind::Inline) {
                return reading_stage_[readers[0]];
            }
            at = readers[0];
        }
    }

    void location(int i) {
        const StagePlan& p = sketch_.plans[i];
        const int64_t k = choice(p.location_slot);
        auto fixed = attach_.find(reading_stage_[i]);
        if (fixed != attach_.end()) {
            s_[reading_stage_[i]].compute_at(s_[fixed->second.first], fixed->second.second);
        }
        if (k == 0 || (p.kind != PlanKind::Simple && p.kind != PlanKind::Rfactor)) return;
        const std::string reader = reader_stage(i);
        if (reader.empty()) return;
        std::vector<IterVarRef> candidates = location_candidates(p.stage, reader);
        if (candidates.empty()) return;
        const size_t pick = std::min<size_t>(k, candidates.size()) - 1;
        s_[p.stage].compute_at(s_[reader], candidates[pick]);
    }

    // The root axes a leaf loop of `st` was made from (through splits and fuses).
    static void root_axes_of(const te::Stage& st, const IterVarRef& leaf,
                             std::vector<const IterVar*>* out) {
        for (const auto& r : st.relations) {
            if (r.kind == te::Relation::Kind::Split &&
                (r.outer.same_as(leaf) || r.inner.same_as(leaf))) {
                root_axes_of(st, r.parent, out);
                return;
            }
            if (r.kind == te::Relation::Kind::Fuse && r.parent.same_as(leaf)) {
                root_axes_of(st, r.outer, out);
                root_axes_of(st, r.inner, out);
                return;
            }
        }
        out->push_back(leaf.get());
    }

    // The loops of `reader` a producer may be computed in: its data loops outside its
    // reductions and its vector and, when it reads the producer directly, only as deep as every
    // enclosing loop indexes what it reads (under a loop that does not, the producer would be
    // computed again for the same values).
    std::vector<IterVarRef> location_candidates(const std::string& producer,
                                                const std::string& reader) const {
        const te::Stage& rst = s_.stage(reader);
        const Buffer* buffer = s_.stage(producer).op->buffer.get();
        std::vector<const Var*> used;
        bool direct = false;
        if (auto* c = rst.op.as<te::ComputeOp>()) {
            pre_order_visit(c->body, [&](const PrimExpr& e) {
                auto* l = e.as<Load>();
                if (!l || l->buffer.get() != buffer) return;
                direct = true;
                for (const auto& idx : l->indices) {
                    pre_order_visit(idx, [&](const PrimExpr& x) {
                        if (auto* v = x.as<Var>()) used.push_back(v);
                    });
                }
            });
        }
        auto vec = vector_.find(reader);
        std::vector<IterVarRef> out;
        for (const auto& leaf : rst.leaf_axes) {
            if (leaf->kind == IterKind::Reduce) break;
            if (vec != vector_.end() && leaf.same_as(vec->second)) break;
            std::vector<const IterVar*> roots;
            root_axes_of(rst, leaf, &roots);
            bool indexes = !direct;
            for (const IterVar* r : roots) {
                indexes =
                    indexes || std::find(used.begin(), used.end(), r->var.get()) != used.end();
            }
            if (!indexes) break;  // this loop and those inside it would repeat the producer
            out.push_back(leaf);
        }
        return out;
    }

    // ---- annotations --------------------------------------------------------------------

    bool attach_point(const IterVarRef& iv) const {
        for (const auto& st : s_.stages()) {
            if (st.attach == te::AttachKind::Scope && st.attach_axis.same_as(iv)) return true;
        }
        return false;
    }

    void annotate_stage(const std::string& name, int unroll_slot) {
        te::StageRef st = s_[name];
        auto leaves = st.leaf_axes();
        auto vec = vector_.find(name);
        if (vec != vector_.end() && !leaves.empty() && leaves.back().same_as(vec->second)) {
            st.vectorize(vec->second);
            leaves.pop_back();
        }
        const int64_t step = kUnrollSteps[choice(unroll_slot)];
        int64_t iterations = 1;
        for (auto it = leaves.rbegin(); it != leaves.rend(); ++it) {
            const int64_t e = extent_of(*it);
            const te::Stage& stage = st.stage();
            auto ann = stage.annotations.find(it->get());
            if (e <= 0 || attach_point(*it) || ann != stage.annotations.end()) break;
            iterations *= e;
            if (iterations > step) break;
            if (e > 1) st.unroll(*it);
        }
    }

    void annotate(int i) {
        const StagePlan& p = sketch_.plans[i];
        switch (p.kind) {
            case PlanKind::Tiled:
                annotate_stage(reading_stage_[i], p.unroll_slot);
                if (p.cache_write) annotate_stage(p.stage, -1);
                break;
            case PlanKind::FusedConsumer:
                annotate_stage(p.stage, -1);
                break;
            case PlanKind::Simple:
                annotate_stage(p.stage, p.unroll_slot);
                break;
            case PlanKind::Rfactor:
                annotate_stage(reading_stage_[i], p.unroll_slot);
                annotate_stage(p.stage, p.unroll_slot);
                break;
            default:
                break;
        }
    }

    std::vector<std::unordered_map<int, int>> reads_;  // see the constructor
    const Sketch& sketch_;
    const Decisions& d_;
    te::Schedule& s_;
    std::vector<std::string> reading_stage_;  // per plan: the stage whose body reads its inputs
    std::unordered_map<const IterVar*, int64_t> extents_;  // loops made by splits and fuses
    std::unordered_map<std::string, IterVarRef> vector_;   // per stage: its vector loop
    // Stages computed in a consumer's loop by their plan: stage -> (consumer, loop).
    std::unordered_map<std::string, std::pair<std::string, IterVarRef>> attach_;
};

}  // namespace

void realize(const Sketch& sketch, const Decisions& decisions, te::Schedule& s) {
    const std::vector<StageInfo> info = analyze_stages(s);
    ANVIL_CHECK(info.size() == sketch.plans.size())
        << "a sketch of " << sketch.plans.size() << " stages realized on " << info.size();
    std::vector<std::unordered_map<int, int>> reads(info.size());
    for (size_t p = 0; p < info.size(); ++p) {
        for (size_t k = 0; k < info[p].readers.size(); ++k) {
            reads[info[p].readers[k]][static_cast<int>(p)] = info[p].reads_per_reader[k];
        }
    }
    Realizer(sketch, decisions, s, std::move(reads)).run();
}

}  // namespace anvil::tune
