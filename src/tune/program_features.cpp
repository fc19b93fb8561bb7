#include "tune/program_features.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "ir/expr_functor.h"
#include "ir/intrinsics.h"
#include "ir/linear_form.h"
#include "ir/structural_equal.h"
#include "tir/passes/passes.h"

namespace anvil::tune {

namespace {

constexpr int kStoreGroups = 4;
constexpr int kAccessSlots = 5;
// What an extent or dimension that is not a constant counts as wherever sizes multiply.
constexpr double kUnknownExtent = 1024;
constexpr double kCacheLineBytes = 64;
// Loops are told apart by bits of a mask: the accesses of loops deeper than this count as not
// depending on them (no real kernel nests 64 loops).
constexpr size_t kMaxDepth = 64;

// The columns of one store group ("log_" columns are log2(1 + x)).
#define ANVIL_STORE_COLUMNS(X) \
    X(log_float_add_sub)       \
    X(log_float_mul)           \
    X(log_float_div)           \
    X(log_float_min_max)       \
    X(log_float_math)          \
    X(log_compare_select)      \
    X(log_int_arith)           \
    X(log_casts)               \
    X(dtype_bits)              \
    X(num_loops)               \
    X(log_executions)          \
    X(log_innermost_extent)    \
    X(vector_lanes)            \
    X(vector_is_innermost)     \
    X(log_unrolled_extent)     \
    X(log_parallel_extent)     \
    X(parallel_depth)          \
    X(serial_loops)            \
    X(guards)                  \
    X(num_accesses)            \
    X(log_intensity)           \
    X(log_alloc_bytes)

// The columns of one access slot. stride_kind: 0 the same element every iteration (broadcast),
// 1 contiguous (stride +-1), 2 another constant stride, 3 not linear in the loop variable.
#define ANVIL_ACCESS_COLUMNS(X) \
    X(is_write)                 \
    X(element_bytes)            \
    X(stride)                   \
    X(stride_kind)              \
    X(vector_stride_kind)       \
    X(log_unique_bytes)         \
    X(log_reuse)                \
    X(reuse_depth)              \
    X(log_reuse_bytes)          \
    X(lines_per_iteration)      \
    X(is_local)

#define ANVIL_PROGRAM_COLUMNS(X) \
    X(num_stores)                \
    X(log_float_ops)             \
    X(log_outer_parallel_extent) \
    X(parallel_loops)            \
    X(vectorized_loops)          \
    X(unrolled_loops)            \
    X(num_loops)                 \
    X(log_alloc_bytes)           \
    X(log_unique_bytes)          \
    X(log_executions)

// Column indices: sc::num_loops is a store group's column, pc::num_loops the program's.
#define ANVIL_X(name) name,
namespace sc {
enum StoreColumn { ANVIL_STORE_COLUMNS(ANVIL_X) count };
}
namespace ac {
enum AccessColumn { ANVIL_ACCESS_COLUMNS(ANVIL_X) count };
}
namespace pc {
enum ProgramColumn { ANVIL_PROGRAM_COLUMNS(ANVIL_X) count };
}
#undef ANVIL_X

constexpr int kStoreColumns = sc::count;
constexpr int kAccessColumns = ac::count;
constexpr int kGroupWidth = kStoreColumns + kAccessSlots * kAccessColumns;
// After the program's columns: every store and access column averaged over all stores, each
// weighted as stores are ranked (executions x (1 + float ops)); an access column is first
// averaged over the store's accesses. The groups above describe the heaviest stores by their
// position in the program, which differs from kernel to kernel; these mean the same thing in
// every kernel, which is what lets a model trained on some kernels rank the programs of another.
constexpr int kWeightedWidth = kStoreColumns + kAccessColumns;
constexpr int kWidth = kStoreGroups * kGroupWidth + pc::count + kWeightedWidth;

double log1p2(double x) {
    return std::log2(1 + std::max(0.0, x));
}

double signed_log2(double x) {
    return std::copysign(std::log2(1 + std::abs(x)), x);
}

// A column's value: finite (0 stands for anything that overflowed) and in float's range.
float finite(double x) {
    if (!std::isfinite(x)) return 0;
    return static_cast<float>(std::clamp(x, -1e30, 1e30));
}

uint64_t depth_bit(size_t depth) {
    return depth < kMaxDepth ? uint64_t{1} << depth : 0;
}

// Operations per execution of a stored value, lanes counted one by one.
struct OpCounts {
    double add_sub = 0, mul = 0, div = 0, min_max = 0, math = 0;
    double compare_select = 0, int_arith = 0, casts = 0;
    double flops() const { return add_sub + mul + div + min_max + math; }
};

struct Loop {
    const Var* var;
    double extent;
    tir::ForKind kind;
};

// What one access does over its loop nest (see the access columns).
struct Access {
    float columns[kAccessColumns];
    double unique_bytes;
};

struct StoreGroup {
    float columns[kStoreColumns];
    Access slots[kAccessSlots];
    int num_slots;
    double weight;
};

// One walk over the flattened body: a stack of the enclosing loops, lets and guards, and the
// analysis of each Store when it is reached (its value and accesses are walked once).
class FeatureExtractor {
public:
    void walk(const tir::Stmt& s);
    std::vector<float> row() const;

private:
    void visit_for(const tir::For* op);
    void visit_store(const tir::Store* op);
    void count_ops(const PrimExpr& e, OpCounts* ops);
    void collect_loads(const PrimExpr& e);
    void add_load(const Load* load);
    Access analyze_access(const Buffer& buffer, const std::vector<PrimExpr>& indices,
                          DataType access_type, bool write, double executions);
    void add_index(const PrimExpr& index);
    // `lets`: how many of lets_ the atom may refer to (a let's value sees only the lets outside).
    void add_atom(const PrimExpr& atom, double coeff, size_t lets);
    int loop_depth(const PrimExpr& e) const;
    double estimate(const PrimExpr& e) const;
    double buffer_elements(const Buffer& b) const;
    uint64_t var_mask(const PrimExpr& e) const;
    bool is_local(const Buffer* b) const;

    std::vector<Loop> loops_;
    struct Let {
        const Var* var;
        const PrimExpr* value;
        uint64_t mask;  // the loops the value uses
    };
    std::vector<Let> lets_;
    std::vector<std::pair<const Buffer*, double>> allocs_;  // allocated inside: bytes
    int guards_ = 0;

    // Scratch of the access being analyzed: coefficient per loop, loops its index depends on at
    // all, and those it depends on other than linearly.
    std::vector<double> coeff_;
    uint64_t appears_ = 0;
    uint64_t nonlinear_ = 0;
    std::vector<const Load*> loads_;  // distinct loads of the store being analyzed

    std::vector<StoreGroup> stores_;
    int num_loops_ = 0, parallel_loops_ = 0, vectorized_loops_ = 0, unrolled_loops_ = 0;
    size_t outer_parallel_depth_ = kMaxDepth;
    double outer_parallel_extent_ = 0;
    double alloc_bytes_ = 0, float_ops_ = 0, unique_bytes_ = 0, executions_ = 0;
};

void FeatureExtractor::walk(const tir::Stmt& s) {
    if (!s.defined()) return;
    switch (s->kind) {
        case tir::StmtKind::For:
            visit_for(s.as<tir::For>());
            break;
        case tir::StmtKind::Store:
            visit_store(s.as<tir::Store>());
            break;
        case tir::StmtKind::LetStmt: {
            auto* op = s.as<tir::LetStmt>();
            lets_.push_back({op->var.get(), &op->value, var_mask(op->value)});
            walk(op->body);
            lets_.pop_back();
            break;
        }
        case tir::StmtKind::Allocate: {
            auto* op = s.as<tir::Allocate>();
            double bytes = buffer_elements(*op->buffer) * op->buffer->dtype.bytes();
            allocs_.emplace_back(op->buffer.get(), bytes);
            alloc_bytes_ += bytes;
            walk(op->body);
            break;
        }
        case tir::StmtKind::IfThenElse: {
            auto* op = s.as<tir::IfThenElse>();
            ++guards_;
            walk(op->then_case);
            walk(op->else_case);
            --guards_;
            break;
        }
        case tir::StmtKind::SeqStmt:
            for (const auto& child : s.as<tir::SeqStmt>()->seq) walk(child);
            break;
        case tir::StmtKind::AssertStmt:
            walk(s.as<tir::AssertStmt>()->body);
            break;
        default:
            break;  // Evaluate, CallPacked: no store to describe
    }
}

void FeatureExtractor::visit_for(const tir::For* op) {
    Loop loop{op->var.get(), std::max(0.0, estimate(op->extent)), op->for_kind};
    ++num_loops_;
    // GPU thread loops run their iterations concurrently, like parallel ones.
    if (loop.kind == tir::ForKind::Parallel || loop.kind == tir::ForKind::ThreadBinding) {
        ++parallel_loops_;
        const size_t depth = loops_.size();
        if (depth < outer_parallel_depth_ ||
            (depth == outer_parallel_depth_ && loop.extent > outer_parallel_extent_)) {
            outer_parallel_depth_ = depth;
            outer_parallel_extent_ = loop.extent;
        }
    }
    if (loop.kind == tir::ForKind::Vectorized) ++vectorized_loops_;
    if (loop.kind == tir::ForKind::Unrolled) ++unrolled_loops_;
    loops_.push_back(loop);
    walk(op->body);
    loops_.pop_back();
}

int FeatureExtractor::loop_depth(const PrimExpr& e) const {
    const PrimExprNode* v = e.get();
    if (auto* cast = e.as<Cast>()) v = cast->value.get();  // int64 indices over int32 loops
    if (v->kind != ExprKind::Var) return -1;
    for (size_t d = loops_.size(); d-- > 0;) {
        if (loops_[d].var == v) return static_cast<int>(d);
    }
    return -1;
}

// The value of a size expression: kUnknownExtent for a variable (a symbolic dimension), 0 for an
// enclosing loop's variable (where its range starts: the tail extent min(16, n - i * 16) counts
// as 16), kUnknownExtent for whatever cannot be evaluated.
double FeatureExtractor::estimate(const PrimExpr& e) const {
    auto both = [&](auto f) {
        auto* b = static_cast<const BinaryExpr*>(e.get());
        return f(estimate(b->a), estimate(b->b));
    };
    switch (e->kind) {
        case ExprKind::IntImm:
            return static_cast<double>(e.as<IntImm>()->value);
        case ExprKind::FloatImm:
            return e.as<FloatImm>()->value;
        case ExprKind::Var:
            return loop_depth(e) >= 0 ? 0 : kUnknownExtent;
        case ExprKind::Cast:
            return estimate(e.as<Cast>()->value);
        case ExprKind::Add:
            return both([](double a, double b) { return a + b; });
        case ExprKind::Sub:
            return both([](double a, double b) { return a - b; });
        case ExprKind::Mul:
            return both([](double a, double b) { return a * b; });
        case ExprKind::Min:
            return both([](double a, double b) { return std::min(a, b); });
        case ExprKind::Max:
            return both([](double a, double b) { return std::max(a, b); });
        case ExprKind::Div:
        case ExprKind::FloorDiv:
            return both([](double a, double b) { return b != 0 ? std::floor(a / b) : a; });
        default:
            return kUnknownExtent;
    }
}

double FeatureExtractor::buffer_elements(const Buffer& b) const {
    double n = 1;
    for (const auto& d : b.shape) n *= std::max(0.0, estimate(d));
    return std::max(1.0, n);
}

uint64_t FeatureExtractor::var_mask(const PrimExpr& e) const {
    struct Collector : ExprVisitor {
        const FeatureExtractor* self;
        uint64_t mask = 0;
        void visit_(const Var* op) override {
            for (size_t d = self->loops_.size(); d-- > 0;) {
                if (self->loops_[d].var == op) mask |= depth_bit(d);
            }
            for (const Let& let : self->lets_) {
                if (let.var == op) mask |= let.mask;
            }
        }
    } collector;
    collector.self = this;
    collector.visit(e);
    return collector.mask;
}

bool FeatureExtractor::is_local(const Buffer* b) const {
    for (const auto& [buffer, bytes] : allocs_) {
        if (buffer == b) return true;
    }
    return false;
}

void FeatureExtractor::add_atom(const PrimExpr& atom, double coeff, size_t lets) {
    if (int d = loop_depth(atom); d >= 0) {
        coeff_[d] += coeff;
        appears_ |= depth_bit(d);
        return;
    }
    // A let-bound index (an offset computed once) is as linear as its value.
    if (auto* v = atom.as<Var>(); v && v->dtype.is_integer() && v->dtype.is_scalar()) {
        for (size_t l = lets; l-- > 0;) {
            if (lets_[l].var != v) continue;
            LinearSum sum = to_linear(*lets_[l].value);
            for (const auto& term : sum.terms) {
                add_atom(term.atom, coeff * static_cast<double>(sum.signed_value(term.coeff)), l);
            }
            return;
        }
    }
    // i * n with a symbolic n (a row-major offset over a symbolic shape) is linear in i.
    if (auto* mul = atom.as<Mul>()) {
        for (auto [var, other] : {std::pair{&mul->a, &mul->b}, std::pair{&mul->b, &mul->a}}) {
            int d = loop_depth(*var);
            if (d >= 0 && var_mask(*other) == 0) {
                coeff_[d] += coeff * estimate(*other);
                appears_ |= depth_bit(d);
                return;
            }
        }
    }
    uint64_t m = var_mask(atom);
    appears_ |= m;
    nonlinear_ |= m;
}

void FeatureExtractor::add_index(const PrimExpr& index) {
    DataType t = index.dtype();
    if (t.is_integer() && t.is_scalar()) {
        LinearSum sum = to_linear(index);
        for (const auto& term : sum.terms) {
            add_atom(term.atom, static_cast<double>(sum.signed_value(term.coeff)), lets_.size());
        }
    } else if (auto* ramp = index.as<Ramp>()) {
        add_index(ramp->base);
    } else if (auto* bc = index.as<Broadcast>()) {
        add_index(bc->value);
    } else {
        uint64_t m = var_mask(index);
        appears_ |= m;
        nonlinear_ |= m;
    }
}

Access FeatureExtractor::analyze_access(const Buffer& buffer, const std::vector<PrimExpr>& indices,
                                        DataType access_type, bool write, double executions) {
    const size_t n = loops_.size();
    coeff_.assign(n, 0.0);
    appears_ = nonlinear_ = 0;
    for (const auto& index : indices) add_index(index);

    const double element_bytes = buffer.dtype.bytes();
    const double buffer_elems = buffer_elements(buffer);
    // A vector access (a Ramp index) touches its lanes at once.
    const double lanes = access_type.lanes();
    auto touched = [&](size_t inside) {  // elements over the loops at depths >= inside
        double elems = lanes;
        for (size_t d = inside; d < n; ++d) {
            if (appears_ & depth_bit(d)) elems *= loops_[d].extent;
        }
        return std::min(elems, buffer_elems);
    };
    auto stride_kind = [&](size_t d) {
        if (nonlinear_ & depth_bit(d)) return 3.0;
        double s = std::abs(coeff_[d]);
        return s == 0 ? 0.0 : s == 1 ? 1.0 : 2.0;
    };

    Access a{};
    float* c = a.columns;
    c[ac::is_write] = write ? 1 : 0;
    c[ac::element_bytes] = finite(element_bytes);
    const double unique_elems = touched(0);
    a.unique_bytes = unique_elems * element_bytes;
    c[ac::log_unique_bytes] = finite(log1p2(a.unique_bytes));
    c[ac::log_reuse] = finite(log1p2(unique_elems > 0 ? executions / unique_elems : 0));
    // Outside loops, or along a nonlinear index: a new line each time.
    c[ac::lines_per_iteration] = 1;
    if (n > 0) {
        const size_t inner = n - 1;
        const bool linear = !(nonlinear_ & depth_bit(inner));
        c[ac::stride] = linear ? finite(signed_log2(coeff_[inner])) : 0;
        c[ac::stride_kind] = finite(stride_kind(inner));
        if (linear) {
            c[ac::lines_per_iteration] =
                finite(std::min(1.0, std::abs(coeff_[inner]) * element_bytes / kCacheLineBytes));
        }
    }
    for (size_t d = n; d-- > 0;) {
        if (loops_[d].kind == tir::ForKind::Vectorized) {
            c[ac::vector_stride_kind] = finite(stride_kind(d));
            break;
        }
    }
    for (size_t d = n; d-- > 0;) {
        if (d < kMaxDepth && !(appears_ & depth_bit(d))) {
            c[ac::reuse_depth] = static_cast<float>(n - d);
            c[ac::log_reuse_bytes] = finite(log1p2(touched(d + 1) * element_bytes));
            break;
        }
    }
    c[ac::is_local] = is_local(&buffer) ? 1 : 0;
    return a;
}

void FeatureExtractor::add_load(const Load* load) {
    for (const Load* seen : loads_) {
        if (seen->buffer.get() != load->buffer.get() ||
            seen->indices.size() != load->indices.size()) {
            continue;
        }
        bool same = true;
        for (size_t i = 0; i < seen->indices.size() && same; ++i) {
            same = structural_equal(seen->indices[i], load->indices[i]);
        }
        if (same) return;
    }
    loads_.push_back(load);
}

// The loads inside index arithmetic (gathers), whose arithmetic is address computation.
void FeatureExtractor::collect_loads(const PrimExpr& e) {
    struct Collector : ExprVisitor {
        FeatureExtractor* self;
        void visit_(const Load* op) override {
            self->add_load(op);
            ExprVisitor::visit_(op);
        }
    } collector;
    collector.self = this;
    collector.visit(e);
}

void FeatureExtractor::count_ops(const PrimExpr& e, OpCounts* ops) {
    const double lanes = e.dtype().lanes();
    const bool fp = e.dtype().is_floating();
    auto binary = [&](double* fp_count, double* int_count) {
        auto* b = static_cast<const BinaryExpr*>(e.get());
        *(fp ? fp_count : int_count) += lanes;
        count_ops(b->a, ops);
        count_ops(b->b, ops);
    };
    switch (e->kind) {
        case ExprKind::Add:
        case ExprKind::Sub:
            binary(&ops->add_sub, &ops->int_arith);
            break;
        case ExprKind::Mul:
            binary(&ops->mul, &ops->int_arith);
            break;
        case ExprKind::Div:
        case ExprKind::Mod:
        case ExprKind::FloorDiv:
        case ExprKind::FloorMod:
            binary(&ops->div, &ops->int_arith);
            break;
        case ExprKind::Min:
        case ExprKind::Max:
            binary(&ops->min_max, &ops->int_arith);
            break;
        case ExprKind::EQ:
        case ExprKind::NE:
        case ExprKind::LT:
        case ExprKind::LE:
        case ExprKind::GT:
        case ExprKind::GE:
        case ExprKind::And:
        case ExprKind::Or:
            binary(&ops->compare_select, &ops->compare_select);
            break;
        case ExprKind::Not:
            ops->compare_select += lanes;
            count_ops(e.as<Not>()->a, ops);
            break;
        case ExprKind::Select: {
            auto* op = e.as<Select>();
            ops->compare_select += lanes;
            count_ops(op->cond, ops);
            count_ops(op->true_value, ops);
            count_ops(op->false_value, ops);
            break;
        }
        case ExprKind::Cast:
            ops->casts += lanes;
            count_ops(e.as<Cast>()->value, ops);
            break;
        case ExprKind::Call: {
            auto* op = e.as<Call>();
            const std::string& name = op->name;
            if (name == intrin::kFma) {
                ops->add_sub += lanes;
                ops->mul += lanes;
            } else if (name == intrin::kAbs || name == intrin::kFloor || name == intrin::kCeil ||
                       name == intrin::kRound) {
                ops->add_sub += lanes;  // one cheap instruction each, not a libm call
            } else if (name == intrin::kIfThenElse) {
                ops->compare_select += lanes;
            } else if (name == intrin::kDotU8S8) {
                ops->int_arith += 4 * lanes;  // four multiply-adds per lane
            } else if (name == intrin::kDotBF16) {
                ops->add_sub += 2 * lanes;  // two multiply-adds per lane
                ops->mul += 2 * lanes;
            } else if (intrin::is_bitwise(name)) {
                ops->int_arith += lanes;
            } else if (intrin::is_fixed_point_multiply(name)) {
                ops->int_arith += 16 * lanes;  // its expansion (ir/fixed_point.h), about 16 steps
            } else if (intrin::is_math(name)) {
                ops->math += lanes;
            }
            for (const auto& arg : op->args) count_ops(arg, ops);
            break;
        }
        case ExprKind::Load: {
            auto* op = e.as<Load>();
            add_load(op);
            for (const auto& index : op->indices) collect_loads(index);
            break;
        }
        case ExprKind::Ramp:
            count_ops(e.as<Ramp>()->base, ops);
            count_ops(e.as<Ramp>()->stride, ops);
            break;
        case ExprKind::Broadcast:
            count_ops(e.as<Broadcast>()->value, ops);
            break;
        default:
            break;  // constants, variables; Reduce never reaches the loop IR
    }
}

void FeatureExtractor::visit_store(const tir::Store* op) {
    const size_t n = loops_.size();
    double executions = 1, unrolled = 0, parallel = 0;
    int parallel_depth = 0, serial = 0;
    const Loop* vector_loop = nullptr;
    for (size_t d = 0; d < n; ++d) {
        const Loop& loop = loops_[d];
        executions *= loop.extent;
        switch (loop.kind) {
            case tir::ForKind::Serial:
                ++serial;
                break;
            case tir::ForKind::Unrolled:
                unrolled = (unrolled ? unrolled : 1) * loop.extent;
                break;
            case tir::ForKind::Vectorized:
                vector_loop = &loop;
                break;
            case tir::ForKind::Parallel:
            case tir::ForKind::ThreadBinding:
                parallel = (parallel ? parallel : 1) * loop.extent;
                if (!parallel_depth) parallel_depth = static_cast<int>(d) + 1;
                break;
        }
    }

    OpCounts ops;
    loads_.clear();
    count_ops(op->value, &ops);
    for (const auto& index : op->indices) collect_loads(index);
    const double flops = ops.flops();

    std::vector<Access> accesses;
    accesses.reserve(1 + loads_.size());
    accesses.push_back(
        analyze_access(*op->buffer, op->indices, op->value.dtype(), true, executions));
    for (const Load* load : loads_) {
        accesses.push_back(
            analyze_access(*load->buffer, load->indices, load->dtype, false, executions));
    }
    std::stable_sort(accesses.begin() + 1, accesses.end(), [](const Access& a, const Access& b) {
        return a.unique_bytes > b.unique_bytes;
    });
    double total_bytes = 0;
    for (const auto& a : accesses) total_bytes += a.unique_bytes;

    StoreGroup g{};
    float* c = g.columns;
    c[sc::log_float_add_sub] = finite(log1p2(ops.add_sub));
    c[sc::log_float_mul] = finite(log1p2(ops.mul));
    c[sc::log_float_div] = finite(log1p2(ops.div));
    c[sc::log_float_min_max] = finite(log1p2(ops.min_max));
    c[sc::log_float_math] = finite(log1p2(ops.math));
    c[sc::log_compare_select] = finite(log1p2(ops.compare_select));
    c[sc::log_int_arith] = finite(log1p2(ops.int_arith));
    c[sc::log_casts] = finite(log1p2(ops.casts));
    c[sc::dtype_bits] = static_cast<float>(op->buffer->dtype.bits());
    c[sc::num_loops] = static_cast<float>(n);
    c[sc::log_executions] = finite(log1p2(executions));
    c[sc::log_innermost_extent] = n ? finite(log1p2(loops_.back().extent)) : 0;
    c[sc::vector_lanes] = vector_loop ? finite(vector_loop->extent) : 0;
    c[sc::vector_is_innermost] = vector_loop && vector_loop == &loops_.back() ? 1 : 0;
    c[sc::log_unrolled_extent] = finite(log1p2(unrolled));
    c[sc::log_parallel_extent] = finite(log1p2(parallel));
    c[sc::parallel_depth] = static_cast<float>(parallel_depth);
    c[sc::serial_loops] = static_cast<float>(serial);
    c[sc::guards] = static_cast<float>(guards_);
    c[sc::num_accesses] = static_cast<float>(accesses.size());
    c[sc::log_intensity] = finite(log1p2(total_bytes > 0 ? flops * executions / total_bytes : 0));
    for (const auto& [buffer, bytes] : allocs_) {
        if (buffer == op->buffer.get()) c[sc::log_alloc_bytes] = finite(log1p2(bytes));
    }
    g.num_slots = static_cast<int>(std::min<size_t>(accesses.size(), kAccessSlots));
    std::copy_n(accesses.begin(), g.num_slots, g.slots);
    // A store without arithmetic (a copy, an init) still moves data: weight it by executions.
    g.weight = executions * (1 + flops);
    stores_.push_back(g);

    float_ops_ += flops * executions;
    unique_bytes_ += total_bytes;
    executions_ += executions;
}

std::vector<float> FeatureExtractor::row() const {
    std::vector<float> out(kWidth, std::numeric_limits<float>::quiet_NaN());
    std::vector<size_t> order(stores_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return stores_[a].weight > stores_[b].weight; });
    order.resize(std::min<size_t>(order.size(), kStoreGroups));
    std::sort(order.begin(), order.end());  // kept stores in program order
    for (size_t g = 0; g < order.size(); ++g) {
        const StoreGroup& store = stores_[order[g]];
        float* group = out.data() + g * kGroupWidth;
        std::memcpy(group, store.columns, sizeof(store.columns));
        for (int s = 0; s < store.num_slots; ++s) {
            std::memcpy(group + kStoreColumns + s * kAccessColumns, store.slots[s].columns,
                        sizeof(store.slots[s].columns));
        }
    }
    float* p = out.data() + kStoreGroups * kGroupWidth;
    p[pc::num_stores] = static_cast<float>(stores_.size());
    p[pc::log_float_ops] = finite(log1p2(float_ops_));
    p[pc::log_outer_parallel_extent] = finite(log1p2(outer_parallel_extent_));
    p[pc::parallel_loops] = static_cast<float>(parallel_loops_);
    p[pc::vectorized_loops] = static_cast<float>(vectorized_loops_);
    p[pc::unrolled_loops] = static_cast<float>(unrolled_loops_);
    p[pc::num_loops] = static_cast<float>(num_loops_);
    p[pc::log_alloc_bytes] = finite(log1p2(alloc_bytes_));
    p[pc::log_unique_bytes] = finite(log1p2(unique_bytes_));
    p[pc::log_executions] = finite(log1p2(executions_));
    float* w = p + pc::count;
    double total = 0;
    for (const auto& store : stores_) total += store.weight;
    if (stores_.empty() || !(total > 0)) {
        std::fill(w, w + kWeightedWidth, 0.0f);
        return out;
    }
    std::vector<double> sums(kWeightedWidth, 0.0);
    for (const auto& store : stores_) {
        const double share = store.weight / total;
        for (int j = 0; j < kStoreColumns; ++j) sums[j] += share * store.columns[j];
        for (int s = 0; s < store.num_slots; ++s) {
            for (int j = 0; j < kAccessColumns; ++j) {
                sums[kStoreColumns + j] += share * store.slots[s].columns[j] / store.num_slots;
            }
        }
    }
    for (int j = 0; j < kWeightedWidth; ++j) w[j] = finite(sums[j]);
    return out;
}

std::vector<std::string> make_names() {
    static const char* const store_names[] = {
#define ANVIL_X(name) #name,
        ANVIL_STORE_COLUMNS(ANVIL_X)};
    static const char* const access_names[] = {ANVIL_ACCESS_COLUMNS(ANVIL_X)};
    static const char* const program_names[] = {ANVIL_PROGRAM_COLUMNS(ANVIL_X)};
#undef ANVIL_X
    std::vector<std::string> names;
    names.reserve(kWidth);
    for (int g = 0; g < kStoreGroups; ++g) {
        const std::string store = "store" + std::to_string(g) + ".";
        for (const char* name : store_names) names.push_back(store + name);
        for (int s = 0; s < kAccessSlots; ++s) {
            const std::string access = store + "access" + std::to_string(s) + ".";
            for (const char* name : access_names) names.push_back(access + name);
        }
    }
    for (const char* name : program_names) names.push_back(std::string("program.") + name);
    for (const char* name : store_names) names.push_back(std::string("weighted.") + name);
    for (const char* name : access_names) names.push_back(std::string("weighted.access.") + name);
    return names;
}

}  // namespace

std::vector<float> program_features(const tir::PrimFunc& f) {
    FeatureExtractor extractor;
    if (f.body.defined()) {
        tir::LowerContext ctx;
        ctx.vector_bits = 512;
        tir::Stmt body = tir::simplify(f.body, ctx);
        if (body.defined()) {
            // Through the function, so parameters keep their shapes (their sizes cap the bytes an
            // access can touch) and allocations become one-dimensional.
            auto flat = tir::flatten_storage(
                tir::make_prim_func(f.name, f.params, body, f.scalar_params), ctx);
            extractor.walk(flat->body);
        }
    }
    return extractor.row();
}

int program_feature_width() {
    return kWidth;
}

const std::vector<std::string>& program_feature_names() {
    static const std::vector<std::string> names = make_names();
    return names;
}

}  // namespace anvil::tune
