#include "te/schedule_to_loops.h"

#include <algorithm>
#include <optional>
#include <unordered_set>

#include "ir/analyzer.h"
#include "ir/expr_functor.h"
#include "ir/intrinsics.h"
#include "support/error.h"
#include "te/stage_bounds.h"
#include "tir/stmt_functor.h"

namespace anvil::te {

namespace {

using tir::ForKind;
using tir::Stmt;

// Substitutes inlined producers into a body: a Load of an inlined stage's buffer becomes that
// stage's body at the loaded indices.
class Inliner : public ExprMutator {
public:
    explicit Inliner(const std::unordered_map<const Buffer*, const StageBounds*>& inlined)
        : inlined_(inlined) {}

protected:
    PrimExpr mutate_(const Load* op, const PrimExpr& self) override {
        PrimExpr load = ExprMutator::mutate_(op, self);
        auto it = inlined_.find(op->buffer.get());
        if (it == inlined_.end()) return load;
        const StageBounds& producer = *it->second;
        std::vector<std::pair<Ref<Var>, PrimExpr>> args;
        for (size_t d = 0; d < producer.op->axis.size(); ++d) {
            args.emplace_back(producer.op->axis[d]->var, load.as<Load>()->indices[d]);
        }
        return substitute(producer.body, args);
    }

private:
    const std::unordered_map<const Buffer*, const StageBounds*>& inlined_;
};

// Rewrites a stage body into loop terms: axis variables become expressions of the loops, and
// loads of computed stages read their realized buffers at region-relative indices.
class BodyRewriter : public ExprMutator {
public:
    BodyRewriter(std::vector<std::pair<Ref<Var>, PrimExpr>> vars,
                 const std::unordered_map<const Buffer*, const StageBounds*>& realized)
        : vars_(std::move(vars)), realized_(realized) {}

protected:
    PrimExpr mutate_(const Var* op, const PrimExpr& self) override {
        for (const auto& [v, e] : vars_) {
            if (v.get() == op) return e;
        }
        return self;
    }
    PrimExpr mutate_(const Load* op, const PrimExpr& self) override {
        std::vector<PrimExpr> idx;
        mutate_all(op->indices, &idx);
        auto it = realized_.find(op->buffer.get());
        if (it == realized_.end()) return make_load(op->buffer, std::move(idx));
        const StageBounds& p = *it->second;
        for (size_t d = 0; d < idx.size(); ++d) {
            if (!is_zero(p.region_min[d])) idx[d] = idx[d] - p.region_min[d];
        }
        return make_load(p.realized, std::move(idx));
    }

private:
    std::vector<std::pair<Ref<Var>, PrimExpr>> vars_;
    const std::unordered_map<const Buffer*, const StageBounds*>& realized_;
};

PrimExpr conjunction(const std::vector<PrimExpr>& conds) {
    PrimExpr all;
    for (const auto& c : conds) all = all.defined() ? (all && c) : c;
    return all;
}

Stmt guard(const std::vector<PrimExpr>& conds, Stmt body) {
    if (conds.empty()) return body;
    PrimExpr c = conjunction(conds);
    return tir::make_if(make_call(DataType::bool_(), intrin::kLikely, {c}), std::move(body));
}

class Lowerer {
public:
    Lowerer(const Schedule& s, const std::vector<Tensor>& args) : sch_(s), args_(args) {}

    Ref<tir::PrimFunc> run(const std::string& name);

private:
    void check_args();
    void prepare_stages();
    Stmt make_stage(const StageBounds& b, bool in_parallel);
    Stmt wrap_attached(const StageBounds& consumer, const Ref<IterVar>& leaf, Stmt body,
                       bool in_parallel);
    ForKind loop_kind(const StageBounds& b, const Ref<IterVar>& leaf, bool in_parallel) const;
    void check_encloses(const StageBounds& producer, const StageBounds& reader,
                        const StageBounds& target) const;

    const Schedule& sch_;
    const std::vector<Tensor>& args_;
    Analyzer analyzer_;
    std::unordered_map<std::string, StageBounds> bounds_;
    std::vector<StageBounds*> order_;  // computed (non-inline) stages, producers first
    std::unordered_map<const Buffer*, const StageBounds*> inlined_;
    std::unordered_map<const Buffer*, const StageBounds*> realized_;
    // Stages attached at each consumer loop, producers first.
    std::unordered_map<const IterVar*, std::vector<const StageBounds*>> attached_;
};

void Lowerer::check_args() {
    std::unordered_set<const Buffer*> arg_buffers;
    for (const auto& t : args_) {
        const Stage* st = t.op.defined() ? sch_.find_stage(t.op.get()) : nullptr;
        // An input the outputs do not read (a resize's scales in align_corners mode) is still
        // a parameter of the function, just never loaded.
        if (!st && t.op.defined() && dynamic_cast<const PlaceholderOp*>(t.op.get())) {
            if (!arg_buffers.insert(t.op->buffer.get()).second) {
                user_error() << "argument '" << t.name() << "' is given twice";
            }
            continue;
        }
        if (!st) {
            user_error() << "argument '" << (t.op.defined() ? t.name() : "?")
                         << "' is not a tensor of this schedule";
        }
        if (!st->is_placeholder() && !st->is_output) {
            user_error() << "argument '" << t.name()
                         << "' is an intermediate stage; arguments are inputs and outputs";
        }
        if (!arg_buffers.insert(st->op->buffer.get()).second) {
            user_error() << "argument '" << t.name() << "' is given twice";
        }
    }
    for (const Stage& st : sch_.stages()) {
        if ((st.is_placeholder() || st.is_output) && !arg_buffers.count(st.op->buffer.get())) {
            user_error() << (st.is_placeholder() ? "input '" : "output '") << st.name
                         << "' is not among the function's arguments";
        }
    }
}

void Lowerer::prepare_stages() {
    // Bodies with inlined producers, producers first.
    for (const Stage& st : sch_.stages()) {
        StageBounds& b = bounds_[st.name];
        b.stage = &st;
        if (st.is_placeholder()) {
            b.realized = st.op->buffer;
            b.region_min.assign(st.op->buffer->shape.size(), make_int(DataType::int32(), 0));
            realized_[st.op->buffer.get()] = &b;
            continue;
        }
        b.op = st.op.as<ComputeOp>();
        b.body = Inliner(inlined_).mutate(b.op->body);
        if (st.attach == AttachKind::Inline) {
            inlined_[st.op->buffer.get()] = &b;
            continue;
        }
        order_.push_back(&b);
        realized_[st.op->buffer.get()] = &b;
    }
    // Which computed stages each body reads; validate attachments.
    for (StageBounds* b : order_) {
        std::unordered_set<const StageBounds*> seen;
        pre_order_visit(b->body, [&](const PrimExpr& e) {
            if (auto* load = e.as<Load>()) {
                auto it = realized_.find(load->buffer.get());
                if (it != realized_.end() && it->second->op && seen.insert(it->second).second) {
                    b->reads.push_back(const_cast<StageBounds*>(it->second));
                }
            }
        });
    }
    for (StageBounds* b : order_) {
        const Stage& st = *b->stage;
        if (st.attach != AttachKind::Scope) continue;
        const StageBounds& parent = bounds_.at(st.attach_stage);
        if (parent.stage->attach == AttachKind::Inline) {
            user_error() << "compute_at of stage '" << st.name << "' in '" << parent.stage->name
                         << "': that stage is inlined and has no loops";
        }
        if (std::none_of(parent.stage->leaf_axes.begin(), parent.stage->leaf_axes.end(),
                         [&](const Ref<IterVar>& l) { return l.same_as(st.attach_axis); })) {
            user_error() << "compute_at of stage '" << st.name << "' at '"
                         << parent.stage->axis_name(st.attach_axis) << "' of '"
                         << parent.stage->name << "': that axis was split or fused afterwards";
        }
        std::vector<const StageBounds*> readers;
        for (const StageBounds* reader : order_) {
            if (std::find(reader->reads.begin(), reader->reads.end(), b) != reader->reads.end()) {
                readers.push_back(reader);
            }
        }
        if (readers.empty()) {
            user_error() << "compute_at of stage '" << st.name << "' in '" << parent.stage->name
                         << "': nothing reads it";
        }
        // Every reader runs inside the attach loop; the stage computes the hull of their reads.
        for (const StageBounds* reader : readers) check_encloses(*b, *reader, parent);
        b->reads_from_me = readers;
        attached_[st.attach_axis.get()].push_back(b);
    }
    // Annotations must sit on loops.
    for (const StageBounds* b : order_) {
        const Stage& st = *b->stage;
        for (const auto& [iv, ann] : st.annotations) {
            bool is_leaf = std::any_of(st.leaf_axes.begin(), st.leaf_axes.end(),
                                       [&](const Ref<IterVar>& l) { return l.get() == iv; });
            if (!is_leaf) {
                user_error() << "stage '" << st.name << "': an annotated axis was split or fused "
                             << "afterwards; annotate the axes it became";
            }
            if (ann == LoopAnnotation::Vectorize && st.leaf_axes.back().get() != iv) {
                user_error() << "vectorize on stage '" << st.name
                             << "': the vectorized axis is no longer the innermost loop";
            }
        }
    }
}

// The attach loop of `producer` must enclose its reader: the reader is the target stage, or is
// attached (through a chain) at or inside that loop.
void Lowerer::check_encloses(const StageBounds& producer, const StageBounds& reader,
                             const StageBounds& target) const {
    const Stage& pst = *producer.stage;
    const StageBounds* s = &reader;
    Ref<IterVar> enclosing;  // the target's loop that holds the reader
    while (s != &target) {
        if (s->stage->attach != AttachKind::Scope) {
            user_error() << "compute_at of stage '" << pst.name << "' at '"
                         << target.stage->axis_name(pst.attach_axis) << "' of '"
                         << target.stage->name << "': its reader '" << reader.stage->name
                         << "' is not computed inside that loop, so the loop is not an ancestor "
                            "of the consumer";
        }
        enclosing = s->stage->attach_axis;
        s = &bounds_.at(s->stage->attach_stage);
    }
    if (!enclosing.defined()) return;
    const auto& leaves = target.stage->leaf_axes;
    auto pos = [&](const Ref<IterVar>& a) {
        return std::find_if(leaves.begin(), leaves.end(),
                            [&](const auto& l) { return l.same_as(a); }) -
               leaves.begin();
    };
    if (pos(enclosing) < pos(pst.attach_axis)) {
        user_error() << "compute_at of stage '" << pst.name << "' at '"
                     << target.stage->axis_name(pst.attach_axis) << "' of '" << target.stage->name
                     << "': its reader '" << reader.stage->name
                     << "' is computed at the outer loop '" << target.stage->axis_name(enclosing)
                     << "', so that loop is not an ancestor of the consumer";
    }
}

ForKind Lowerer::loop_kind(const StageBounds& b, const Ref<IterVar>& leaf, bool in_parallel) const {
    const Stage& st = *b.stage;
    auto it = st.annotations.find(leaf.get());
    if (it == st.annotations.end()) return ForKind::Serial;
    const PrimExpr& ext = b.extent.at(leaf.get());
    const std::string& axis = st.axis_name(leaf);
    switch (it->second) {
        case LoopAnnotation::Parallel:
            if (in_parallel) {
                user_error() << "parallel on stage '" << st.name << "', axis '" << axis
                             << "': it is nested inside another parallel loop";
            }
            return ForKind::Parallel;
        case LoopAnnotation::Vectorize:
        case LoopAnnotation::Unroll:
            if (!ext.is<IntImm>()) {
                user_error() << (it->second == LoopAnnotation::Vectorize ? "vectorize" : "unroll")
                             << " on stage '" << st.name << "', axis '" << axis << "': its extent "
                             << ext << " is not a constant; split it by a constant factor first";
            }
            return it->second == LoopAnnotation::Vectorize ? ForKind::Vectorized
                                                           : ForKind::Unrolled;
        case LoopAnnotation::Bind:
            return ForKind::ThreadBinding;
    }
    ANVIL_UNREACHABLE();
}

Stmt Lowerer::wrap_attached(const StageBounds& consumer, const Ref<IterVar>& leaf, Stmt body,
                            bool in_parallel) {
    auto it = attached_.find(leaf.get());
    if (it == attached_.end()) return body;
    // Producers first in program order: wrap from the last one outwards.
    const auto& producers = it->second;
    std::vector<Stmt> nests;
    for (const StageBounds* p : producers) nests.push_back(make_stage(*p, in_parallel));
    std::vector<Stmt> seq = nests;
    seq.push_back(body);
    Stmt result = tir::make_seq(seq);
    for (auto p = producers.rbegin(); p != producers.rend(); ++p) {
        result = tir::make_allocate((*p)->realized, result, (*p)->op->loc);
    }
    return result;
}

Stmt Lowerer::make_stage(const StageBounds& cb, bool in_parallel) {
    const StageBounds& b = cb;
    const Stage& st = *b.stage;
    // Body in loop terms.
    std::vector<std::pair<Ref<Var>, PrimExpr>> vars;
    std::vector<PrimExpr> store_index;
    for (size_t d = 0; d < b.op->axis.size(); ++d) {
        const auto& iv = b.op->axis[d];
        PrimExpr v = b.value.at(iv.get());
        vars.emplace_back(iv->var, analyzer_.simplify(b.region_min[d] + v));
        store_index.push_back(v);
    }
    for (const auto& iv : b.op->reduce_axis) {
        vars.emplace_back(iv->var, analyzer_.simplify(iv->dom.min + b.value.at(iv.get())));
    }
    BodyRewriter rewrite(vars, realized_);
    const SourceLoc& loc = b.op->loc;
    const auto& leaves = st.leaf_axes;

    // Opens loops leaves[from, to) around `inner`, with the stages attached at each.
    auto open_loops = [&](size_t from, size_t to, Stmt inner, bool parallel_outside) {
        std::vector<bool> par(leaves.size() + 1, parallel_outside);
        for (size_t i = from; i < to; ++i) {
            par[i + 1] = par[i] || loop_kind(b, leaves[i], par[i]) == ForKind::Parallel;
        }
        for (size_t i = to; i-- > from;) {
            inner = wrap_attached(b, leaves[i], inner, par[i + 1]);
            const std::string& tag =
                st.thread_tags.count(leaves[i].get()) ? st.thread_tags.at(leaves[i].get()) : "";
            inner = tir::make_for(leaves[i]->var, make_int(leaves[i]->var->dtype, 0),
                                  b.extent.at(leaves[i].get()), loop_kind(b, leaves[i], par[i]),
                                  inner, tag, loc);
        }
        return inner;
    };

    auto* reduce = b.body.as<Reduce>();
    if (!reduce) {
        Stmt store = tir::make_store(b.realized, rewrite.mutate(b.body), store_index, loc);
        Stmt body = open_loops(0, leaves.size(), guard(b.data_guards, store), in_parallel);
        return body;
    }
    // Reduction: the loops outside the first reduction loop enclose an init nest (over the
    // data-parallel loops that come later, with fresh variables) and the update nest.
    size_t first_reduce = leaves.size();
    for (size_t i = 0; i < leaves.size(); ++i) {
        if (leaves[i]->kind == IterKind::Reduce) {
            first_reduce = i;
            break;
        }
    }
    PrimExpr acc = make_load(b.realized, store_index);
    PrimExpr update_value = reduce->combiner->combine(acc, rewrite.mutate(reduce->source));
    Stmt update = tir::make_store(b.realized, update_value, store_index, loc);
    if (reduce->condition.defined() && !is_one(reduce->condition)) {
        update = tir::make_if(rewrite.mutate(reduce->condition), update);
    }
    std::vector<PrimExpr> update_guards = b.data_guards;
    update_guards.insert(update_guards.end(), b.reduce_guards.begin(), b.reduce_guards.end());
    update = guard(update_guards, update);

    bool par_outside = in_parallel;
    for (size_t i = 0; i < first_reduce; ++i) {
        par_outside = par_outside || loop_kind(b, leaves[i], par_outside) == ForKind::Parallel;
    }
    Stmt update_nest = open_loops(first_reduce, leaves.size(), update, par_outside);

    std::vector<std::pair<Ref<Var>, PrimExpr>> fresh;
    std::vector<Ref<Var>> init_vars;
    std::vector<Ref<IterVar>> init_leaves;
    for (size_t i = first_reduce; i < leaves.size(); ++i) {
        if (leaves[i]->kind == IterKind::Reduce) continue;
        auto v = make_var(leaves[i]->var->name + ".init", leaves[i]->var->dtype);
        analyzer_.bind(v, Range{make_int(v->dtype, 0), b.extent.at(leaves[i].get())});
        fresh.emplace_back(leaves[i]->var, v);
        init_vars.push_back(v);
        init_leaves.push_back(leaves[i]);
    }
    Stmt init = tir::make_store(b.realized, reduce->combiner->identity, store_index, loc);
    init = tir::substitute(guard(b.data_guards, init), fresh);
    for (size_t i = init_leaves.size(); i-- > 0;) {
        init = tir::make_for(init_vars[i], make_int(init_vars[i]->dtype, 0),
                             b.extent.at(init_leaves[i].get()),
                             loop_kind(b, init_leaves[i], par_outside), init, "", loc);
    }
    return open_loops(0, first_reduce, tir::make_seq({init, update_nest}), in_parallel);
}

// The dimension variables every output has as a dimension: when one of them is 0 every output
// is empty and the kernel has nothing to do, so the kernel runs only when they are all >= 1,
// and its loops may assume so (a symbolic tile count ceil(n / 8) is then positive, which bound
// inference needs to drop the guards of a loop fused with it).
std::vector<Ref<Var>> output_size_vars(const Schedule& s) {
    std::vector<Ref<Var>> out;
    bool first = true;
    for (const Stage& st : s.stages()) {
        if (!st.is_output) continue;
        std::vector<Ref<Var>> dims;
        for (const auto& d : st.op->buffer->shape) {
            const Var* v = dimension_var(d);
            if (!v) continue;
            bool listed = std::any_of(dims.begin(), dims.end(),
                                      [&](const Ref<Var>& x) { return x.get() == v; });
            if (!listed) dims.push_back(Ref<Var>(v));
        }
        if (first) {
            out = dims;
            first = false;
            continue;
        }
        std::erase_if(out, [&](const Ref<Var>& v) {
            return std::none_of(dims.begin(), dims.end(),
                                [&](const Ref<Var>& x) { return x.same_as(v); });
        });
    }
    return out;
}

Ref<tir::PrimFunc> Lowerer::run(const std::string& name) {
    check_args();
    prepare_stages();
    std::vector<Ref<Buffer>> params;
    for (const auto& t : args_) {
        const Stage* st = sch_.find_stage(t.op.get());
        params.push_back(st ? st->op->buffer : t.op->buffer);
    }
    analyzer_.bind_dimensions(params);
    std::vector<PrimExpr> sizes_positive;
    for (const auto& v : output_size_vars(sch_)) {
        sizes_positive.push_back(make_binary(ExprKind::GE, v, make_int(v->dtype, 1)));
    }
    PrimExpr nonempty = conjunction(sizes_positive);
    std::optional<ConstraintScope> assume_nonempty;
    if (nonempty.defined()) assume_nonempty.emplace(analyzer_, nonempty);
    // Bound inference runs consumers first: an attached stage's region is what its consumer
    // reads inside the attach loop.
    for (size_t i = order_.size(); i-- > 0;) {
        StageBounds& b = *order_[i];
        const Stage& st = *b.stage;
        infer_stage_bounds(b, bounds_, analyzer_);
        if (st.attach != AttachKind::Scope && st.scope == "global") {
            b.realized = st.op->buffer;
        } else {
            b.realized = make_buffer(st.name, st.op->buffer->dtype, b.region_extent, st.scope);
        }
    }
    std::vector<const StageBounds*> root_stages;
    for (StageBounds* b : order_) {
        if (b->stage->attach != AttachKind::Scope) root_stages.push_back(b);
    }
    std::vector<Stmt> nests;
    for (const StageBounds* b : root_stages) nests.push_back(make_stage(*b, false));
    Stmt body = tir::make_seq(nests);
    for (size_t i = root_stages.size(); i-- > 0;) {
        const StageBounds* b = root_stages[i];
        if (!b->stage->is_output) body = tir::make_allocate(b->realized, body, b->op->loc);
    }
    if (nonempty.defined()) body = tir::make_if(nonempty, body);
    return tir::make_prim_func(name, params, body, scalar_params(params, body));
}

}  // namespace

std::vector<Ref<Var>> unbound_shape_vars(const std::vector<Ref<Buffer>>& params) {
    std::unordered_set<const Var*> bound;
    for (const auto& b : params) {
        for (const auto& d : b->shape) {
            if (const Var* v = dimension_var(d)) bound.insert(v);
        }
    }
    std::vector<Ref<Var>> out;
    for (const auto& b : params) {
        for (const auto& d : b->shape) {
            pre_order_visit(d, [&](const PrimExpr& e) {
                auto* v = e.as<Var>();
                if (v && bound.insert(v).second) out.push_back(Ref<Var>(v));
            });
        }
    }
    return out;
}

std::vector<Ref<Var>> scalar_params(const std::vector<Ref<Buffer>>& params, const tir::Stmt& body) {
    std::vector<Ref<Var>> out = unbound_shape_vars(params);
    std::unordered_set<const Var*> known;
    for (const auto& v : out) known.insert(v.get());
    for (const auto& b : params) {
        for (const auto& d : b->shape) {
            if (const Var* v = dimension_var(d)) known.insert(v);
        }
    }
    for (const auto& v : tir::free_vars(body)) {
        if (known.insert(v.get()).second) out.push_back(v);
    }
    return out;
}

Ref<tir::PrimFunc> schedule_to_loops(const Schedule& schedule, const std::vector<Tensor>& args,
                                     const std::string& name) {
    return Lowerer(schedule, args).run(name);
}

}  // namespace anvil::te
