#include "te/schedule.h"

#include <algorithm>
#include <functional>
#include <unordered_set>

#include "ir/expr_functor.h"
#include "support/error.h"

namespace anvil::te {

// ---- Stage ----------------------------------------------------------------------------------

const std::string& Stage::axis_name(const Ref<IterVar>& axis) const {
    for (const auto& [iv, n] : axis_names) {
        if (iv.same_as(axis)) return n;
    }
    internal_error() << "axis " << axis->var->name << " is not in stage " << name;
    ANVIL_UNREACHABLE();
}

Ref<IterVar> Stage::find_axis(const std::string& n) const {
    for (const auto& [iv, axis_name] : axis_names) {
        if (axis_name == n) return iv;
    }
    return nullptr;
}

// ---- StageRef: the object API, recorded as primitives by name -------------------------------

std::string StageRef::axis_name(const Ref<IterVar>& axis, const char* primitive) const {
    const Stage& st = stage();
    for (const auto& [iv, n] : st.axis_names) {
        if (iv.same_as(axis)) return n;
    }
    for (const Stage& other : sch_->stages()) {
        for (const auto& [iv, n] : other.axis_names) {
            if (iv.same_as(axis)) {
                user_error() << primitive << " on stage '" << name_ << "': axis '" << n
                             << "' belongs to stage '" << other.name << "'";
            }
        }
    }
    user_error() << primitive << " on stage '" << name_ << "': axis '" << axis->var->name
                 << "' is not an axis of this stage";
    ANVIL_UNREACHABLE();
}

const Stage& StageRef::stage() const {
    return sch_->stage(name_);
}

std::vector<Ref<IterVar>> StageRef::op_axis() const {
    if (auto* c = stage().op.as<ComputeOp>()) return c->axis;
    return {};
}
std::vector<Ref<IterVar>> StageRef::op_reduce_axis() const {
    if (auto* c = stage().op.as<ComputeOp>()) return c->reduce_axis;
    return {};
}

std::pair<Ref<IterVar>, Ref<IterVar>> StageRef::split(const Ref<IterVar>& axis, int64_t factor) {
    std::string n = axis_name(axis, "split");
    sch_->apply(Primitive{.kind = "split", .stage = name_, .axes = {n}, .factors = {factor}});
    const Stage& st = stage();
    return {st.find_axis(n + ".outer"), st.find_axis(n + ".inner")};
}

std::pair<Ref<IterVar>, Ref<IterVar>> StageRef::split_nparts(const Ref<IterVar>& axis,
                                                             int64_t nparts) {
    std::string n = axis_name(axis, "split");
    sch_->apply(Primitive{
        .kind = "split", .stage = name_, .axes = {n}, .factors = {nparts}, .nparts = true});
    const Stage& st = stage();
    return {st.find_axis(n + ".outer"), st.find_axis(n + ".inner")};
}

std::vector<Ref<IterVar>> StageRef::tile(const Ref<IterVar>& x, const Ref<IterVar>& y,
                                         int64_t x_factor, int64_t y_factor) {
    std::string xn = axis_name(x, "tile"), yn = axis_name(y, "tile");
    sch_->apply(Primitive{
        .kind = "tile", .stage = name_, .axes = {xn, yn}, .factors = {x_factor, y_factor}});
    const Stage& st = stage();
    return {st.find_axis(xn + ".outer"), st.find_axis(yn + ".outer"), st.find_axis(xn + ".inner"),
            st.find_axis(yn + ".inner")};
}

void StageRef::reorder(const std::vector<Ref<IterVar>>& order) {
    std::vector<std::string> names;
    for (const auto& a : order) names.push_back(axis_name(a, "reorder"));
    sch_->apply(Primitive{.kind = "reorder", .stage = name_, .axes = names});
}

Ref<IterVar> StageRef::fuse(const std::vector<Ref<IterVar>>& axes) {
    std::vector<std::string> names;
    for (const auto& a : axes) names.push_back(axis_name(a, "fuse"));
    sch_->apply(Primitive{.kind = "fuse", .stage = name_, .axes = names});
    return stage().leaf_axes.empty() ? nullptr
                                     : stage().find_axis(stage().axis_names.back().second);
}

void StageRef::vectorize(const Ref<IterVar>& axis) {
    sch_->apply(
        Primitive{.kind = "vectorize", .stage = name_, .axes = {axis_name(axis, "vectorize")}});
}
void StageRef::parallel(const Ref<IterVar>& axis) {
    sch_->apply(
        Primitive{.kind = "parallel", .stage = name_, .axes = {axis_name(axis, "parallel")}});
}
void StageRef::unroll(const Ref<IterVar>& axis) {
    sch_->apply(Primitive{.kind = "unroll", .stage = name_, .axes = {axis_name(axis, "unroll")}});
}
void StageRef::bind(const Ref<IterVar>& axis, const std::string& thread_tag) {
    sch_->apply(Primitive{
        .kind = "bind", .stage = name_, .axes = {axis_name(axis, "bind")}, .target = thread_tag});
}
void StageRef::compute_at(StageRef parent, const Ref<IterVar>& axis) {
    std::string n = parent.axis_name(axis, "compute_at");
    sch_->apply(
        Primitive{.kind = "compute_at", .stage = name_, .axes = {n}, .target = parent.name()});
}
void StageRef::compute_inline() {
    sch_->apply(Primitive{.kind = "compute_inline", .stage = name_});
}
void StageRef::compute_root() {
    sch_->apply(Primitive{.kind = "compute_root", .stage = name_});
}

// ---- Schedule -------------------------------------------------------------------------------

Schedule::Schedule(const std::vector<Tensor>& outputs) : outputs_(outputs) {
    // Post-order DFS from the outputs gives producers before consumers.
    std::vector<Ref<Operation>> order;
    std::unordered_set<const Operation*> visited;
    std::function<void(const Ref<Operation>&)> visit = [&](const Ref<Operation>& op) {
        if (!visited.insert(op.get()).second) return;
        if (auto* c = op.as<ComputeOp>()) {
            for (const auto& in : c->inputs) visit(in);
        }
        order.push_back(op);
    };
    for (const auto& t : outputs) {
        if (!t.op.defined()) user_error() << "create_schedule: an output tensor is undefined";
        visit(t.op);
    }
    for (const auto& op : order) add_stage_for(op, stages_.size());
    for (const auto& t : outputs) stage(stage_of_op_.at(t.op.get())).is_output = true;
}

std::string Schedule::unique_stage_name(const std::string& base) const {
    auto taken = [&](const std::string& n) {
        return std::any_of(stages_.begin(), stages_.end(),
                           [&](const Stage& s) { return s.name == n; });
    };
    if (!taken(base)) return base;
    for (int i = 1;; ++i) {
        std::string n = base + "_" + std::to_string(i);
        if (!taken(n)) return n;
    }
}

void Schedule::add_stage_for(const Ref<Operation>& op, size_t position) {
    Stage st;
    st.name = unique_stage_name(op->name);
    st.op = op;
    if (auto* c = op.as<ComputeOp>()) {
        st.root_axes = c->axis;
        st.root_axes.insert(st.root_axes.end(), c->reduce_axis.begin(), c->reduce_axis.end());
    }
    st.leaf_axes = st.root_axes;
    for (const auto& iv : st.root_axes) {
        std::string n = iv->var->name;
        for (int i = 1; st.find_axis(n).defined(); ++i) n = iv->var->name + "_" + std::to_string(i);
        st.axis_names.emplace_back(iv, n);
    }
    stage_of_op_[op.get()] = st.name;
    stages_.insert(stages_.begin() + static_cast<std::ptrdiff_t>(position), std::move(st));
}

StageRef Schedule::operator[](const Tensor& t) {
    auto it = stage_of_op_.find(t.op.get());
    if (it == stage_of_op_.end()) {
        user_error() << "tensor '" << t.name() << "' is not part of this schedule";
    }
    return StageRef(this, it->second);
}

StageRef Schedule::operator[](const std::string& stage_name) {
    stage(stage_name);  // validates
    return StageRef(this, stage_name);
}

const Stage& Schedule::stage(const std::string& name) const {
    for (const auto& st : stages_) {
        if (st.name == name) return st;
    }
    std::string known;
    for (const auto& st : stages_) known += (known.empty() ? "" : ", ") + st.name;
    user_error() << "schedule has no stage '" << name << "' (stages: " << known << ")";
    ANVIL_UNREACHABLE();
}

Stage& Schedule::stage(const std::string& name) {
    return const_cast<Stage&>(static_cast<const Schedule*>(this)->stage(name));
}

const Stage* Schedule::find_stage(const Operation* op) const {
    auto it = stage_of_op_.find(op);
    return it == stage_of_op_.end() ? nullptr : &stage(it->second);
}

Tensor Schedule::tensor(const std::string& stage_name) const {
    return Tensor(stage(stage_name).op);
}

Tensor Schedule::cache_read(const Tensor& t, const std::string& scope,
                            const std::vector<Tensor>& readers) {
    std::vector<std::string> names;
    for (const auto& r : readers) names.push_back((*this)[r].name());
    std::string name = (*this)[t].name();
    apply(Primitive{.kind = "cache_read", .stage = name, .target = scope, .readers = names});
    // The cache stage is inserted right after the source.
    for (size_t i = 0; i + 1 < stages_.size(); ++i) {
        if (stages_[i].name == name) return Tensor(stages_[i + 1].op);
    }
    ANVIL_UNREACHABLE();
}

Tensor Schedule::cache_write(const Tensor& t, const std::string& scope) {
    std::string name = (*this)[t].name();
    apply(Primitive{.kind = "cache_write", .stage = name, .target = scope});
    // The cache stage is inserted right before the original.
    for (size_t i = 1; i < stages_.size(); ++i) {
        if (stages_[i].name == name) return Tensor(stages_[i - 1].op);
    }
    ANVIL_UNREACHABLE();
}

void Schedule::apply(const ScheduleRecord& record) {
    for (const auto& p : record) apply(p);
}

void Schedule::apply(const Primitive& p) {
    static const char* kKinds[] = {"split",       "tile",           "reorder",      "fuse",
                                   "vectorize",   "parallel",       "unroll",       "bind",
                                   "compute_at",  "compute_inline", "compute_root", "cache_read",
                                   "cache_write", "rfactor"};
    if (std::find(std::begin(kKinds), std::end(kKinds), p.kind) == std::end(kKinds)) {
        user_error() << "unknown schedule primitive '" << p.kind << "'";
    }
    if (p.kind == "cache_read") {
        apply_cache_read(p);
        record_.push_back(p);
        return;
    }
    Stage& st = stage(p.stage);
    if (st.is_placeholder()) {
        user_error() << p.kind << " on stage '" << st.name
                     << "': it is a placeholder (an input); only computed stages have loops";
    }
    if (p.kind == "split") {
        apply_split(st, p);
    } else if (p.kind == "tile") {
        apply_tile(st, p);
    } else if (p.kind == "reorder") {
        apply_reorder(st, p);
    } else if (p.kind == "fuse") {
        apply_fuse(st, p);
    } else if (p.kind == "vectorize" || p.kind == "parallel" || p.kind == "unroll" ||
               p.kind == "bind") {
        apply_annotation(st, p);
    } else if (p.kind == "compute_at") {
        apply_compute_at(st, p);
    } else if (p.kind == "compute_inline") {
        auto* c = st.op.as<ComputeOp>();
        if (c->is_reduction()) {
            user_error() << "compute_inline on stage '" << st.name
                         << "': a reduction cannot be inlined into its consumers";
        }
        if (st.is_output) {
            user_error() << "compute_inline on stage '" << st.name
                         << "': it is an output of the schedule; outputs must be computed";
        }
        st.attach = AttachKind::Inline;
    } else if (p.kind == "compute_root") {
        st.attach = AttachKind::Root;
        st.attach_stage.clear();
        st.attach_axis = nullptr;
    } else if (p.kind == "cache_write") {
        apply_cache_write(st, p);
    } else if (p.kind == "rfactor") {
        apply_rfactor(st, p);
    }
    record_.push_back(p);
}

Ref<IterVar> Schedule::require_leaf_axis(const Stage& st, const Primitive& p,
                                         const std::string& axis) {
    Ref<IterVar> iv = st.find_axis(axis);
    if (!iv.defined()) {
        std::string known;
        for (const auto& leaf : st.leaf_axes)
            known += (known.empty() ? "" : ", ") + st.axis_name(leaf);
        user_error() << p.kind << " on stage '" << st.name << "': no axis '" << axis
                     << "' (loops: " << known << ")";
    }
    if (std::none_of(st.leaf_axes.begin(), st.leaf_axes.end(),
                     [&](const Ref<IterVar>& l) { return l.same_as(iv); })) {
        user_error() << p.kind << " on stage '" << st.name << "': axis '" << axis
                     << "' was already split or fused; use the axes it became";
    }
    return iv;
}

namespace {

void check_arity(const Primitive& p, size_t axes, size_t factors) {
    if (p.axes.size() != axes || p.factors.size() != factors) {
        user_error() << p.kind << " on stage '" << p.stage << "': expected " << axes
                     << " axis name(s) and " << factors << " factor(s)";
    }
}

}  // namespace

void Schedule::apply_split(Stage& st, const Primitive& p) {
    check_arity(p, 1, 1);
    Ref<IterVar> parent = require_leaf_axis(st, p, p.axes[0]);
    int64_t f = p.factors[0];
    if (f <= 0) {
        user_error() << "split on stage '" << st.name << "', axis '" << p.axes[0]
                     << "': " << (p.nparts ? "nparts" : "factor") << " " << f
                     << " must be positive";
    }
    const std::string& n = p.axes[0];
    IterKind kind = parent->kind;
    auto outer = make_iter_var({0, PrimExpr()}, n + ".outer", kind);
    auto inner = make_iter_var({0, PrimExpr()}, n + ".inner", kind);
    st.relations.push_back(Relation{.kind = Relation::Kind::Split,
                                    .parent = parent,
                                    .outer = outer,
                                    .inner = inner,
                                    .factor = f,
                                    .nparts = p.nparts});
    auto it = std::find_if(st.leaf_axes.begin(), st.leaf_axes.end(),
                           [&](const Ref<IterVar>& l) { return l.same_as(parent); });
    *it = inner;
    st.leaf_axes.insert(it, outer);
    st.axis_names.emplace_back(outer, n + ".outer");
    st.axis_names.emplace_back(inner, n + ".inner");
}

void Schedule::apply_tile(Stage& st, const Primitive& p) {
    check_arity(p, 2, 2);
    apply_split(
        st, Primitive{
                .kind = "tile", .stage = p.stage, .axes = {p.axes[0]}, .factors = {p.factors[0]}});
    apply_split(
        st, Primitive{
                .kind = "tile", .stage = p.stage, .axes = {p.axes[1]}, .factors = {p.factors[1]}});
    apply_reorder(st, Primitive{.kind = "tile",
                                .stage = p.stage,
                                .axes = {p.axes[0] + ".outer", p.axes[1] + ".outer",
                                         p.axes[0] + ".inner", p.axes[1] + ".inner"}});
}

void Schedule::apply_reorder(Stage& st, const Primitive& p) {
    if (p.axes.empty()) user_error() << p.kind << " on stage '" << st.name << "': no axes given";
    std::vector<Ref<IterVar>> axes;
    for (const auto& n : p.axes) {
        Ref<IterVar> iv = require_leaf_axis(st, p, n);
        for (const auto& seen : axes) {
            if (seen.same_as(iv)) {
                user_error() << p.kind << " on stage '" << st.name << "': axis '" << n
                             << "' is listed twice";
            }
        }
        axes.push_back(iv);
    }
    // The named axes take, in the given order, the positions they occupied together.
    std::vector<size_t> positions;
    for (size_t i = 0; i < st.leaf_axes.size(); ++i) {
        if (std::any_of(axes.begin(), axes.end(),
                        [&](const Ref<IterVar>& a) { return a.same_as(st.leaf_axes[i]); })) {
            positions.push_back(i);
        }
    }
    for (size_t i = 0; i < positions.size(); ++i) st.leaf_axes[positions[i]] = axes[i];
    // A vectorized loop must stay innermost.
    for (size_t i = 0; i + 1 < st.leaf_axes.size(); ++i) {
        auto ann = st.annotations.find(st.leaf_axes[i].get());
        if (ann != st.annotations.end() && ann->second == LoopAnnotation::Vectorize) {
            user_error() << p.kind << " on stage '" << st.name << "': axis '"
                         << st.axis_name(st.leaf_axes[i])
                         << "' is vectorized and would no longer be the innermost loop";
        }
    }
}

void Schedule::apply_fuse(Stage& st, const Primitive& p) {
    if (p.axes.size() < 2)
        user_error() << "fuse on stage '" << st.name << "': give two or more axes";
    std::vector<size_t> pos;
    for (const auto& n : p.axes) {
        Ref<IterVar> iv = require_leaf_axis(st, p, n);
        pos.push_back(std::find_if(st.leaf_axes.begin(), st.leaf_axes.end(),
                                   [&](const Ref<IterVar>& l) { return l.same_as(iv); }) -
                      st.leaf_axes.begin());
    }
    for (size_t i = 1; i < pos.size(); ++i) {
        if (pos[i] != pos[i - 1] + 1) {
            user_error() << "fuse on stage '" << st.name << "': axes '" << p.axes[i - 1]
                         << "' and '" << p.axes[i]
                         << "' are not adjacent loops, outer to inner; reorder first";
        }
    }
    bool reduce = st.leaf_axes[pos[0]]->kind == IterKind::Reduce;
    for (size_t i = 1; i < pos.size(); ++i) {
        if ((st.leaf_axes[pos[i]]->kind == IterKind::Reduce) != reduce) {
            user_error() << "fuse on stage '" << st.name << "': cannot fuse reduction axis with "
                         << "data-parallel axis ('" << p.axes[0] << "', '" << p.axes[i] << "')";
        }
    }
    // Fuse pairwise, outer to inner: ((a, b), c).
    Ref<IterVar> fused = st.leaf_axes[pos[0]];
    std::string name = p.axes[0];
    for (size_t i = 1; i < pos.size(); ++i) {
        Ref<IterVar> inner = st.leaf_axes[pos[0] + i];
        name += "." + p.axes[i];
        std::string fused_name = name + ".fused";
        auto result = make_iter_var({0, PrimExpr()}, fused_name,
                                    reduce ? IterKind::Reduce : IterKind::DataPar);
        st.relations.push_back(Relation{
            .kind = Relation::Kind::Fuse, .parent = result, .outer = fused, .inner = inner});
        st.axis_names.emplace_back(result, fused_name);
        fused = result;
    }
    st.leaf_axes.erase(st.leaf_axes.begin() + static_cast<std::ptrdiff_t>(pos[0]),
                       st.leaf_axes.begin() + static_cast<std::ptrdiff_t>(pos.back()) + 1);
    st.leaf_axes.insert(st.leaf_axes.begin() + static_cast<std::ptrdiff_t>(pos[0]), fused);
}

void Schedule::apply_annotation(Stage& st, const Primitive& p) {
    size_t expected_axes = 1;
    check_arity(p, expected_axes, 0);
    Ref<IterVar> iv = require_leaf_axis(st, p, p.axes[0]);
    LoopAnnotation ann = p.kind == "vectorize"  ? LoopAnnotation::Vectorize
                         : p.kind == "parallel" ? LoopAnnotation::Parallel
                         : p.kind == "unroll"   ? LoopAnnotation::Unroll
                                                : LoopAnnotation::Bind;
    if (iv->kind == IterKind::Reduce &&
        (ann == LoopAnnotation::Vectorize || ann == LoopAnnotation::Parallel ||
         ann == LoopAnnotation::Bind)) {
        user_error() << p.kind << " on stage '" << st.name << "', axis '" << p.axes[0]
                     << "': it is a reduction axis; iterations depend on each other";
    }
    if (ann == LoopAnnotation::Vectorize && !st.leaf_axes.back().same_as(iv)) {
        user_error() << "vectorize on stage '" << st.name << "', axis '" << p.axes[0]
                     << "': only the innermost loop can be vectorized (innermost is '"
                     << st.axis_name(st.leaf_axes.back()) << "')";
    }
    if (ann == LoopAnnotation::Bind) {
        static const char* kTags[] = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z",
                                      "threadIdx.x", "threadIdx.y", "threadIdx.z"};
        if (std::find(std::begin(kTags), std::end(kTags), p.target) == std::end(kTags)) {
            user_error() << "bind on stage '" << st.name << "', axis '" << p.axes[0]
                         << "': unknown thread axis '" << p.target
                         << "' (use blockIdx.x/y/z or threadIdx.x/y/z)";
        }
        st.thread_tags[iv.get()] = p.target;
    }
    st.annotations[iv.get()] = ann;
}

namespace {

// True when `reader`'s body loads `producer`'s buffer.
bool reads(const Ref<Operation>& reader, const Ref<Operation>& producer) {
    auto* c = reader.as<ComputeOp>();
    if (!c) return false;
    return std::any_of(c->inputs.begin(), c->inputs.end(), [&](const Ref<Operation>& in) {
        return in->buffer.same_as(producer->buffer);
    });
}

}  // namespace

void Schedule::apply_compute_at(Stage& st, const Primitive& p) {
    if (p.axes.size() != 1)
        user_error() << "compute_at on stage '" << st.name << "': give one axis";
    Stage& parent = stage(p.target);
    Ref<IterVar> axis = require_leaf_axis(parent, p, p.axes[0]);
    if (st.is_output) {
        user_error() << "compute_at on stage '" << st.name
                     << "': it is an output of the schedule and must be computed at root";
    }
    if (parent.name == st.name) {
        user_error() << "compute_at on stage '" << st.name
                     << "': a stage cannot be computed inside itself";
    }
    // The parent must consume this stage: read it directly or through other stages (which are
    // then computed inside the parent's loops; lowering checks that the loop encloses them).
    std::unordered_set<const Operation*> visited;
    std::function<bool(const Ref<Operation>&)> reaches = [&](const Ref<Operation>& reader) {
        if (reads(reader, st.op)) return true;
        auto* c = reader.as<ComputeOp>();
        if (!c || !visited.insert(reader.get()).second) return false;
        for (const auto& in : c->inputs) {
            const Stage* s = find_stage(in.get());
            if (s && !s->is_placeholder() && reaches(s->op)) return true;
        }
        return false;
    };
    if (!reaches(parent.op)) {
        user_error() << "compute_at on stage '" << st.name << "', axis '" << p.axes[0] << "' of '"
                     << parent.name << "': '" << parent.name << "' does not consume '" << st.name
                     << "', so that loop is not an ancestor of any consumer";
    }
    st.attach = AttachKind::Scope;
    st.attach_stage = parent.name;
    st.attach_axis = axis;
}

namespace {

// Rewrites loads of one buffer into loads of another (same indices).
class BufferReplacer : public ExprMutator {
public:
    BufferReplacer(Ref<Buffer> from, Ref<Buffer> to) : from_(std::move(from)), to_(std::move(to)) {}

protected:
    Ref<Buffer> mutate_buffer(const Ref<Buffer>& b) override { return b.same_as(from_) ? to_ : b; }

private:
    Ref<Buffer> from_, to_;
};

}  // namespace

void Schedule::apply_cache_read(const Primitive& p) {
    Stage& st = stage(p.stage);
    if (p.readers.empty()) user_error() << "cache_read of '" << st.name << "': no readers given";
    Tensor source(st.op);
    std::string cache_name = unique_stage_name(st.name + "." + p.target);
    std::vector<std::string> axis_names;
    for (size_t d = 0; d < source.ndim(); ++d) axis_names.push_back("ax" + std::to_string(d));
    Tensor cache = compute(
        source.shape(),
        [&](std::span<const PrimExpr> idx) {
            return source(std::vector<PrimExpr>(idx.begin(), idx.end()));
        },
        cache_name, st.op->loc, axis_names);
    for (const auto& reader_name : p.readers) {
        Stage& reader = stage(reader_name);
        if (!reads(reader.op, st.op)) {
            user_error() << "cache_read of '" << st.name << "': stage '" << reader_name
                         << "' does not read it";
        }
        auto* c = reader.op.as<ComputeOp>();
        PrimExpr body = BufferReplacer(st.op->buffer, cache.buffer()).mutate(c->body);
        retired_.push_back(reader.op);
        reader.op = Ref<Operation>(new ComputeOp(c->name, c->axis, body, c->loc, c->buffer));
        const_cast<Operation*>(reader.op.get())->tag = c->tag;
        stage_of_op_[reader.op.get()] = reader.name;
    }
    size_t pos = 0;
    while (stages_[pos].name != st.name) ++pos;
    add_stage_for(cache.op, pos + 1);
    stages_[pos + 1].scope = p.target;
}

void Schedule::apply_cache_write(Stage& st, const Primitive& p) {
    if (!st.relations.empty() || st.attach != AttachKind::Root || !st.annotations.empty()) {
        user_error() << "cache_write on stage '" << st.name
                     << "': apply it before other primitives on this stage";
    }
    auto* c = st.op.as<ComputeOp>();
    std::string cache_name = unique_stage_name(st.name + "." + p.target);
    // The cache computes the original body over fresh data axes (same names); the reduction
    // axes move with the body.
    std::vector<Ref<IterVar>> axis;
    std::vector<std::pair<Ref<Var>, PrimExpr>> rename;
    for (const auto& iv : c->axis) {
        axis.push_back(make_iter_var(iv->dom, iv->var->name));
        rename.emplace_back(iv->var, axis.back()->var);
    }
    PrimExpr cache_body = substitute(c->body, rename);
    Ref<Operation> cache_op(new ComputeOp(cache_name, axis, cache_body, c->loc));
    std::vector<PrimExpr> idx;
    for (const auto& iv : c->axis) idx.push_back(iv->var);
    PrimExpr copy = make_load(cache_op->buffer, idx);
    retired_.push_back(st.op);
    st.op = Ref<Operation>(new ComputeOp(c->name, c->axis, copy, c->loc, c->buffer));
    const_cast<Operation*>(st.op.get())->tag = c->tag;
    stage_of_op_[st.op.get()] = st.name;
    st.root_axes = c->axis;
    st.leaf_axes = c->axis;
    st.axis_names.erase(
        std::remove_if(st.axis_names.begin(), st.axis_names.end(),
                       [](const auto& e) { return e.first->kind == IterKind::Reduce; }),
        st.axis_names.end());
    size_t pos = 0;
    while (stages_[pos].name != st.name) ++pos;
    add_stage_for(cache_op, pos);
    stages_[pos].scope = p.target;
}

Schedule create_schedule(const std::vector<Tensor>& outputs) {
    return Schedule(outputs);
}

}  // namespace anvil::te
