// rfactor (TVM's s.rfactor): a reduction C over loops {r, others...} becomes two stages,
//   C.rf[..., r, ...] = reduce over the others of C's source   (r a data axis: parallel or
//                                                                vectorizable across r)
//   C[...]            = reduce over r of C.rf[..., r, ...]
// with the same combiner; associativity and commutativity make the result equal. The leaf
// reduction loops of C become the root axes of C.rf, so each original reduction variable is
// rebuilt from them through C's split (and fuse) relations, as lowering does; a split that
// overshoots its axis adds a condition so the partial reductions cover exactly the original
// domain.
#include <algorithm>
#include <unordered_map>

#include "ir/analyzer.h"
#include "ir/intrinsics.h"
#include "support/error.h"
#include "te/math.h"
#include "te/schedule.h"

namespace anvil::te {

Tensor Schedule::rfactor(const Tensor& t, const Ref<IterVar>& axis, int factor_axis) {
    StageRef ref = (*this)[t];
    std::string n = ref.axis_name(axis, "rfactor");
    apply(Primitive{.kind = "rfactor", .stage = ref.name(), .axes = {n}, .factors = {factor_axis}});
    // The new stage is inserted right before the original.
    for (size_t i = 1; i < stages_.size(); ++i) {
        if (stages_[i].name == ref.name()) return Tensor(stages_[i - 1].op);
    }
    ANVIL_UNREACHABLE();
}

namespace {

// The checks that need only the stage: what makes C's loops a pure reduction-splitting shape.
void check_rfactor_stage(const Stage& st, const Ref<IterVar>& axis, const std::string& name) {
    auto* c = st.op.as<ComputeOp>();
    if (!c->is_reduction()) {
        user_error() << "rfactor on stage '" << st.name
                     << "': it is not a reduction (its body is not a sum, max, min or other "
                        "reducer)";
    }
    if (axis->kind != IterKind::Reduce) {
        user_error() << "rfactor on stage '" << st.name << "', axis '" << name
                     << "': it is a data-parallel axis; rfactor takes a reduction loop";
    }
    if (st.attach != AttachKind::Root) {
        user_error() << "rfactor on stage '" << st.name
                     << "': the stage is computed inside another stage (compute_at); apply "
                        "rfactor first";
    }
    if (!st.annotations.empty()) {
        const std::string& annotated = st.axis_name(Ref<IterVar>(st.annotations.begin()->first));
        user_error() << "rfactor on stage '" << st.name << "': its loop '" << annotated
                     << "' is already annotated (vectorize/parallel/unroll/bind); apply rfactor "
                        "right after splitting the reduction and annotate the new stages";
    }
    for (const Relation& r : st.relations) {
        if (r.parent->kind != IterKind::Reduce) {
            user_error() << "rfactor on stage '" << st.name << "': its data-parallel axis '"
                         << st.axis_name(r.parent) << "' was "
                         << (r.kind == Relation::Kind::Split ? "split" : "fused")
                         << "; apply rfactor right after splitting the reduction, before other "
                            "primitives on this stage";
        }
    }
    // The factored loop must be a plain split piece of one reduction axis: a fused loop mixes
    // several axes into one index, which TVM's rfactor does not accept either.
    Ref<IterVar> cur = axis;
    for (auto it = st.relations.rbegin(); it != st.relations.rend(); ++it) {
        if (it->kind == Relation::Kind::Split &&
            (it->outer.same_as(cur) || it->inner.same_as(cur))) {
            cur = it->parent;
        } else if (it->kind == Relation::Kind::Fuse && it->parent.same_as(cur)) {
            user_error() << "rfactor on stage '" << st.name << "', axis '" << name
                         << "': it is made by fusing reduction loops ('" << st.axis_name(cur)
                         << "'); rfactor takes a loop made by splits only";
        }
    }
}

PrimExpr ceil_div(Analyzer& a, const PrimExpr& x, int64_t d) {
    return a.simplify(floordiv(x + make_const(x.dtype(), static_cast<double>(d - 1)),
                               make_const(x.dtype(), static_cast<double>(d))));
}

}  // namespace

void Schedule::apply_rfactor(Stage& st, const Primitive& p) {
    if (p.axes.size() != 1 || p.factors.size() != 1) {
        user_error() << "rfactor on stage '" << st.name
                     << "': expected 1 axis name and 1 factor (factor_axis)";
    }
    Ref<IterVar> axis = require_leaf_axis(st, p, p.axes[0]);
    check_rfactor_stage(st, axis, p.axes[0]);
    for (const Stage& other : stages_) {
        if (other.attach == AttachKind::Scope && other.attach_stage == st.name) {
            user_error() << "rfactor on stage '" << st.name << "': stage '" << other.name
                         << "' is computed at its loop '" << st.axis_name(other.attach_axis)
                         << "'; apply rfactor before compute_at into this stage";
        }
    }
    auto* c = st.op.as<ComputeOp>();
    auto* reduce = c->body.as<Reduce>();
    const auto ndim = static_cast<int64_t>(c->axis.size());
    int64_t factor_axis = p.factors[0] < 0 ? p.factors[0] + ndim + 1 : p.factors[0];
    if (factor_axis < 0 || factor_axis > ndim) {
        user_error() << "rfactor on stage '" << st.name << "', axis '" << p.axes[0]
                     << "': factor_axis " << p.factors[0] << " is out of range; the new "
                     << "dimension goes at a position in [0, " << ndim << "] (or [" << -ndim - 1
                     << ", -1] from the end)";
    }

    // Extents of every reduction axis, root and derived, as lowering computes them.
    Analyzer analyzer;
    std::unordered_map<const IterVar*, PrimExpr> extent;
    for (const auto& iv : c->reduce_axis) extent[iv.get()] = iv->dom.extent;
    for (const Relation& r : st.relations) {
        if (r.kind == Relation::Kind::Split) {
            PrimExpr e = extent.at(r.parent.get());
            PrimExpr f = make_int(e.dtype(), r.factor);
            extent[r.outer.get()] = r.nparts ? f : ceil_div(analyzer, e, r.factor);
            extent[r.inner.get()] = r.nparts ? ceil_div(analyzer, e, r.factor) : f;
        } else {
            extent[r.parent.get()] =
                analyzer.simplify(extent.at(r.outer.get()) * extent.at(r.inner.get()));
        }
    }

    // C.rf's axes: C's data axes (fresh, same names) with the factored loop among them, and the
    // other leaf reduction loops, in C's loop order, as its reduction axes.
    std::vector<std::pair<Ref<Var>, PrimExpr>> rename;
    std::vector<Ref<IterVar>> rf_axis;
    for (const auto& iv : c->axis) {
        rf_axis.push_back(make_iter_var(iv->dom, st.axis_name(iv)));
        rename.emplace_back(iv->var, rf_axis.back()->var);
    }
    std::unordered_map<const IterVar*, PrimExpr> value;  // reduction axes in C.rf's variables
    std::vector<Ref<IterVar>> rf_reduce_axis;
    Ref<IterVar> factored;
    for (const auto& leaf : st.leaf_axes) {
        if (leaf->kind != IterKind::Reduce) continue;
        PrimExpr ext = extent.at(leaf.get());
        Range dom{make_int(ext.dtype(), 0), ext};
        Ref<IterVar> fresh;
        if (leaf.same_as(axis)) {
            fresh = factored = make_iter_var(dom, st.axis_name(leaf));
        } else {
            fresh = make_iter_var(dom, st.axis_name(leaf), IterKind::Reduce);
            rf_reduce_axis.push_back(fresh);
        }
        analyzer.bind(fresh->var, dom);
        value[leaf.get()] = fresh->var;
    }
    rf_axis.insert(rf_axis.begin() + factor_axis, factored);
    for (auto it = st.relations.rbegin(); it != st.relations.rend(); ++it) {
        const Relation& r = *it;
        if (r.kind == Relation::Kind::Split) {
            value[r.parent.get()] = analyzer.simplify(
                value.at(r.outer.get()) * extent.at(r.inner.get()) + value.at(r.inner.get()));
        } else {
            PrimExpr inner_extent = extent.at(r.inner.get());
            value[r.outer.get()] =
                analyzer.simplify(floordiv(value.at(r.parent.get()), inner_extent));
            value[r.inner.get()] =
                analyzer.simplify(floormod(value.at(r.parent.get()), inner_extent));
        }
    }
    for (const auto& iv : c->reduce_axis) {
        PrimExpr v = value.at(iv.get());
        if (!is_zero(iv->dom.min)) v = analyzer.simplify(iv->dom.min + v);
        if (v.dtype() != iv->var->dtype) v = cast(iv->var->dtype, v);
        rename.emplace_back(iv->var, v);
    }
    // A split that overshoots its axis would add points outside the original domain. The
    // guard is `likely`, as lowering marks its own split guards, so that partition_loops peels
    // the last iterations off and the rest (often vectorized across the factored axis) runs
    // without the test.
    PrimExpr guard;
    for (const Relation& r : st.relations) {
        if (r.kind != Relation::Kind::Split) continue;
        PrimExpr inside = value.at(r.parent.get()) < extent.at(r.parent.get());
        if (analyzer.can_prove(inside)) continue;
        inside = analyzer.simplify(inside);
        guard = guard.defined() ? (guard && inside) : inside;
    }
    if (guard.defined()) guard = make_call(DataType::bool_(), intrin::kLikely, {guard});
    PrimExpr condition = guard;
    if (reduce->condition.defined() && !is_one(reduce->condition)) {
        PrimExpr user = substitute(reduce->condition, rename);
        condition = guard.defined() ? (user && guard) : user;
    }
    PrimExpr source = substitute(reduce->source, rename);
    PrimExpr rf_body;
    if (!rf_reduce_axis.empty()) {
        if (!condition.defined()) condition = make_bool(true);
        rf_body = PrimExpr(
            new Reduce(reduce->dtype, reduce->combiner, source, rf_reduce_axis, condition));
    } else {
        // Nothing left to reduce: each element is one point of the original reduction.
        rf_body = condition.defined() ? if_then_else(condition, source, reduce->combiner->identity)
                                      : source;
    }
    std::string rf_name = unique_stage_name(st.name + ".rf");
    Ref<Operation> rf_op(new ComputeOp(rf_name, rf_axis, rf_body, c->loc));

    // C reduces C.rf over one new reduction axis named like the factored loop.
    Ref<IterVar> rv = reduce_axis(extent.at(axis.get()), p.axes[0]);
    std::vector<PrimExpr> idx;
    for (const auto& iv : c->axis) idx.push_back(iv->var);
    idx.insert(idx.begin() + factor_axis, rv->var);
    PrimExpr body(
        new Reduce(reduce->dtype, reduce->combiner, Tensor(rf_op)(idx), {rv}, make_bool(true)));
    retired_.push_back(st.op);
    st.op = Ref<Operation>(new ComputeOp(c->name, c->axis, body, c->loc, c->buffer));
    const_cast<Operation*>(st.op.get())->tag = c->tag;
    stage_of_op_[st.op.get()] = st.name;
    st.root_axes = c->axis;
    st.root_axes.push_back(rv);
    st.leaf_axes = st.root_axes;
    st.relations.clear();
    st.axis_names.erase(std::remove_if(st.axis_names.begin(), st.axis_names.end(),
                                       [&](const auto& e) {
                                           return std::none_of(
                                               c->axis.begin(), c->axis.end(),
                                               [&](const auto& a) { return a.same_as(e.first); });
                                       }),
                        st.axis_names.end());
    std::string rv_name = p.axes[0];
    for (int i = 1; st.find_axis(rv_name).defined(); ++i) {
        rv_name = p.axes[0] + "_" + std::to_string(i);
    }
    st.axis_names.emplace_back(rv, rv_name);

    size_t pos = 0;
    while (stages_[pos].name != st.name) ++pos;
    add_stage_for(rf_op, pos);
}

}  // namespace anvil::te
