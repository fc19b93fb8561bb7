#include "te/stage_bounds.h"

#include <algorithm>

#include "ir/expr_functor.h"
#include "support/error.h"

namespace anvil::te {

namespace {

PrimExpr ceil_div(Analyzer& a, const PrimExpr& x, int64_t d) {
    return a.simplify(floordiv(x + make_const(x.dtype(), static_cast<double>(d - 1)),
                               make_const(x.dtype(), static_cast<double>(d))));
}

// Extends [lo, hi] to the region of `producer`'s tensor that `consumer` reads inside the loop
// `at` of stage `target`. The consumer is `target` itself or a stage attached (through a chain
// of attachments) inside `at`; every loop between `at` and the read ranges over its extent,
// loops outside stay symbolic.
void add_read_region(const StageBounds& producer, const StageBounds& consumer,
                     const StageBounds& target, const Ref<IterVar>& at,
                     std::unordered_map<std::string, StageBounds>& all, Analyzer& analyzer,
                     std::vector<PrimExpr>& lo, std::vector<PrimExpr>& hi) {
    const Stage& cst = *consumer.stage;
    std::unordered_map<const Var*, Interval> relax;
    auto relax_leaf = [&](const StageBounds& s, const Ref<IterVar>& leaf) {
        PrimExpr ext = s.extent.at(leaf.get());
        relax[leaf->var.get()] = {make_int(leaf->var->dtype, 0),
                                  analyzer.simplify(ext - make_int(ext.dtype(), 1))};
    };
    for (const StageBounds* s = &consumer; s != &target; s = &all.at(s->stage->attach_stage)) {
        for (const auto& leaf : s->stage->leaf_axes) relax_leaf(*s, leaf);
    }
    bool inside = false;
    for (const auto& leaf : target.stage->leaf_axes) {
        if (inside) relax_leaf(target, leaf);
        if (leaf.same_as(at)) inside = true;
    }
    // The consumer's axes as expressions of its loops (tensor coordinates, offsets included).
    std::vector<std::pair<Ref<Var>, PrimExpr>> coords;
    for (size_t d = 0; d < consumer.op->axis.size(); ++d) {
        const auto& iv = consumer.op->axis[d];
        coords.emplace_back(iv->var, consumer.region_min[d] + consumer.value.at(iv.get()));
    }
    for (const auto& iv : consumer.op->reduce_axis) {
        coords.emplace_back(iv->var, iv->dom.min + consumer.value.at(iv.get()));
    }
    size_t ndim = lo.size();
    bool found = false;
    pre_order_visit(consumer.body, [&](const PrimExpr& e) {
        auto* load = e.as<Load>();
        if (!load || !load->buffer.same_as(producer.stage->op->buffer)) return;
        found = true;
        for (size_t d = 0; d < ndim; ++d) {
            Interval iv = analyzer.eval_interval(substitute(load->indices[d], coords), relax);
            if (!iv.min.defined() || !iv.max.defined()) {
                user_error(producer.stage->op->loc)
                    << "compute_at of stage '" << producer.stage->name << "' in '" << cst.name
                    << "': cannot bound dimension " << d << " of the region read by '" << cst.name
                    << "' (index " << load->indices[d] << ")";
            }
            lo[d] = lo[d].defined() ? min(lo[d], iv.min) : iv.min;
            hi[d] = hi[d].defined() ? max(hi[d], iv.max) : iv.max;
        }
    });
    ANVIL_CHECK(found) << cst.name << " does not read " << producer.stage->name;
}

// The region of an attached `producer` its readers read inside the loop `at` of `target`: the
// hull of every reader's reads.
void infer_region(StageBounds& producer, const StageBounds& target, const Ref<IterVar>& at,
                  std::unordered_map<std::string, StageBounds>& all, Analyzer& analyzer) {
    size_t ndim = producer.op ? producer.op->axis.size() : 0;
    std::vector<PrimExpr> lo(ndim), hi(ndim);
    for (const StageBounds* consumer : producer.reads_from_me) {
        add_read_region(producer, *consumer, target, at, all, analyzer, lo, hi);
    }
    const std::string& cst_name = producer.reads_from_me.front()->stage->name;
    producer.region_min.clear();
    producer.region_extent.clear();
    for (size_t d = 0; d < ndim; ++d) {
        PrimExpr mn = analyzer.simplify(lo[d]);
        PrimExpr ext = analyzer.simplify(hi[d] - lo[d] + make_int(lo[d].dtype(), 1));
        if (!ext.is<IntImm>()) {
            // A region whose size depends on outer loops (e.g. clipped at a border) is allocated
            // at its largest size.
            ConstIntBound b = analyzer.const_int_bound(ext);
            if (b.max == ConstIntBound::kPosInf) {
                user_error(producer.stage->op->loc)
                    << "compute_at of stage '" << producer.stage->name << "' in '" << cst_name
                    << "': the region size " << ext << " of dimension " << d
                    << " has no constant upper bound";
            }
            ext = make_int(ext.dtype(), b.max);
        }
        producer.region_min.push_back(mn);
        producer.region_extent.push_back(ext);
    }
}

}  // namespace

void infer_stage_bounds(StageBounds& b, std::unordered_map<std::string, StageBounds>& all,
                        Analyzer& analyzer) {
    const Stage& st = *b.stage;
    const ComputeOp* op = b.op;
    if (st.attach == AttachKind::Scope) {
        infer_region(b, all.at(st.attach_stage), st.attach_axis, all, analyzer);
    } else {
        b.region_min.assign(op->axis.size(), make_int(DataType::int32(), 0));
        b.region_extent.clear();
        for (const auto& iv : op->axis) b.region_extent.push_back(iv->dom.extent);
    }
    // Extents: root axes from the region, derived axes through the relations.
    for (size_t d = 0; d < op->axis.size(); ++d) b.extent[op->axis[d].get()] = b.region_extent[d];
    for (const auto& iv : op->reduce_axis) b.extent[iv.get()] = iv->dom.extent;
    for (const auto& r : st.relations) {
        if (r.kind == Relation::Kind::Split) {
            PrimExpr e = b.extent.at(r.parent.get());
            PrimExpr f = make_int(e.dtype(), r.factor);
            if (r.nparts) {
                b.extent[r.outer.get()] = f;
                b.extent[r.inner.get()] = ceil_div(analyzer, e, r.factor);
            } else {
                b.extent[r.outer.get()] = ceil_div(analyzer, e, r.factor);
                b.extent[r.inner.get()] = f;
            }
        } else {
            b.extent[r.parent.get()] =
                analyzer.simplify(b.extent.at(r.outer.get()) * b.extent.at(r.inner.get()));
        }
    }
    for (const auto& leaf : st.leaf_axes) {
        analyzer.bind(leaf->var, Range{make_int(leaf->var->dtype, 0), b.extent.at(leaf.get())});
    }
    // Values: leaves are their loop variables; walk the relations backwards.
    for (const auto& leaf : st.leaf_axes) b.value[leaf.get()] = leaf->var;
    for (auto it = st.relations.rbegin(); it != st.relations.rend(); ++it) {
        const Relation& r = *it;
        if (r.kind == Relation::Kind::Split) {
            PrimExpr inner_extent = b.extent.at(r.inner.get());
            b.value[r.parent.get()] = analyzer.simplify(b.value.at(r.outer.get()) * inner_extent +
                                                        b.value.at(r.inner.get()));
        } else {
            PrimExpr fused = b.value.at(r.parent.get());
            PrimExpr inner_extent = b.extent.at(r.inner.get());
            b.value[r.outer.get()] = analyzer.simplify(floordiv(fused, inner_extent));
            b.value[r.inner.get()] = analyzer.simplify(floormod(fused, inner_extent));
        }
    }
    // Guards: a split whose loops overshoot the axis, and (for attached stages) a region that
    // may leave the tensor's domain.
    for (const auto& r : st.relations) {
        if (r.kind != Relation::Kind::Split) continue;
        // Every axis's value lies in [0, its extent): a leaf is its loop, a fused axis's parts
        // are floordiv / floormod of a value below their product, a split parent is guarded
        // here. So a split whose parts cover no more than the parent needs no guard, however
        // its loops were fused since (a symbolic fused extent hides this from the values).
        PrimExpr covered = b.extent.at(r.outer.get()) * b.extent.at(r.inner.get());
        if (analyzer.can_prove(covered <= b.extent.at(r.parent.get()))) continue;
        PrimExpr cond = b.value.at(r.parent.get()) < b.extent.at(r.parent.get());
        if (analyzer.can_prove(cond)) continue;
        (r.parent->kind == IterKind::Reduce ? b.reduce_guards : b.data_guards).push_back(cond);
    }
    if (st.attach == AttachKind::Scope) {
        for (size_t d = 0; d < op->axis.size(); ++d) {
            PrimExpr index = b.region_min[d] + b.value.at(op->axis[d].get());
            PrimExpr lower = index >= make_int(index.dtype(), 0);
            PrimExpr upper = index < op->axis[d]->dom.extent;
            if (!analyzer.can_prove(lower)) b.data_guards.push_back(analyzer.simplify(lower));
            if (!analyzer.can_prove(upper)) b.data_guards.push_back(analyzer.simplify(upper));
        }
    }
}

}  // namespace anvil::te
