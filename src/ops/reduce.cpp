// Reductions: sum, mean, max, min, prod over a set of axes, and argmax/argmin along one axis.
// All are CommReduce: they fuse with elementwise producers (inlined) and tails, and the group is
// scheduled by schedule_reduce.
//
// mean is a sum followed by a division (two stages). argmax/argmin are two reductions: the
// extreme value, then the first (or last) index holding it; TE has no tuple reducers, and the
// second pass reads data that the first has just brought into cache.
#include "ops/reduce.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <unordered_set>

#include "graph/op.h"
#include "ir/analyzer.h"
#include "ir/expr_functor.h"
#include "ops/axes.h"
#include "ops/injective_schedule.h"
#include "ops/op_spec.h"
#include "ops/tensor_shape.h"
#include "ops/tile_schedule.h"
#include "support/error.h"
#include "te/reduction.h"

namespace anvil::ops {

using graph::Attrs;
using graph::Op;
using graph::OpPattern;
using graph::Type;

namespace {

// For each input axis, whether it is reduced.
std::vector<bool> reduced_axes(const ReduceAttrs& a, int64_t ndim, const SourceLoc& loc,
                               const std::string& op) {
    std::vector<int64_t> axes = normalize_axes(a.axes, ndim, loc, op);
    std::vector<bool> reduced(ndim, axes.empty());
    for (int64_t ax : axes) reduced[ax] = true;
    if (a.exclude && !axes.empty()) reduced.flip();
    return reduced;
}

std::vector<PrimExpr> reduced_shape(const std::vector<PrimExpr>& shape,
                                    const std::vector<bool>& reduced, bool keepdims) {
    std::vector<PrimExpr> out;
    for (size_t d = 0; d < shape.size(); ++d) {
        if (!reduced[d]) {
            out.push_back(shape[d]);
        } else if (keepdims) {
            out.push_back(make_int(DataType::int64(), 1));
        }
    }
    return out;
}

// For each input axis, whether the run-time axes reduce it (a bool expression).
std::vector<PrimExpr> dynamically_reduced(const ReduceAttrs& a, int64_t ndim) {
    std::vector<PrimExpr> reduced;
    for (int64_t d = 0; d < ndim; ++d) {
        PrimExpr any;
        for (const auto& axis : a.dynamic_axes) {
            PrimExpr r = make_int(DataType::int64(), ndim);
            PrimExpr here = eq(select(axis < 0, axis + r, axis), make_int(DataType::int64(), d));
            any = any.defined() ? any || here : here;
        }
        reduced.push_back(any);
    }
    return reduced;
}

Type reduce_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                 const SourceLoc& loc) {
    const auto& x = graph::expect_tensor(args[0], loc, "the input of " + op.name);
    if (x.dtype.is_bool()) {
        user_error(loc) << op.name << " of a bool tensor; cast it to a number type first";
    }
    const auto& a = static_cast<const ReduceAttrs&>(attrs);
    if (!a.dynamic_axes.empty()) {
        if (!a.keepdims || a.exclude || !a.axes.empty()) {
            user_error(loc) << op.name
                            << ": axes known only at run time need keepdims, without exclude "
                               "and static axes";
        }
        std::vector<PrimExpr> out;
        auto reduced = dynamically_reduced(a, static_cast<int64_t>(x.ndim()));
        for (size_t d = 0; d < x.ndim(); ++d) {
            out.push_back(
                simplify(select(reduced[d], make_int(x.shape[d].dtype(), 1), x.shape[d])));
        }
        return graph::make_tensor_type(out, x.dtype);
    }
    auto reduced = reduced_axes(a, static_cast<int64_t>(x.ndim()), loc, op.name);
    return graph::make_tensor_type(reduced_shape(x.shape, reduced, a.keepdims), x.dtype);
}

// The input index for output index `i`: reduced positions take the reduction variables in order.
std::vector<PrimExpr> input_index(std::span<const PrimExpr> i, const std::vector<bool>& reduced,
                                  bool keepdims, const std::vector<Ref<IterVar>>& raxes) {
    std::vector<PrimExpr> idx;
    size_t next_out = 0, next_r = 0;
    for (bool r : reduced) {
        if (r) {
            idx.push_back(raxes[next_r++]->var);
            if (keepdims) ++next_out;
        } else {
            idx.push_back(i[next_out++]);
        }
    }
    return idx;
}

enum class ReduceKind { Sum, Mean, Max, Min, Prod };

PrimExpr combine(ReduceKind kind, PrimExpr source, const te::Axes& axes) {
    switch (kind) {
        case ReduceKind::Sum:
        case ReduceKind::Mean:
            return te::sum(source, axes);
        case ReduceKind::Max:
            return te::max(source, axes);
        case ReduceKind::Min:
            return te::min(source, axes);
        case ReduceKind::Prod: {
            static const te::Reducer prod =
                te::comm_reducer([](PrimExpr a, PrimExpr b) { return a * b; },
                                 [](DataType t) { return make_const(t, 1); }, "prod");
            return prod(source, axes, PrimExpr());
        }
    }
    ANVIL_UNREACHABLE();
}

template <ReduceKind Kind>
std::vector<te::Tensor> reduce_compute(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                       const Type& out) {
    static constexpr const char* kNames[] = {"sum", "mean", "max", "min", "prod"};
    const char* name = kNames[static_cast<int>(Kind)];
    te::Tensor x = in[0];
    const auto& a = static_cast<const ReduceAttrs&>(attrs);
    auto reduced = reduced_axes(a, static_cast<int64_t>(x.ndim()), SourceLoc(), name);
    std::vector<Ref<IterVar>> raxes;
    PrimExpr count = make_int(DataType::int32(), 1);
    for (size_t d = 0; d < reduced.size(); ++d) {
        if (!reduced[d]) continue;
        std::string axis_name = "k";
        axis_name += std::to_string(d);  // "k" + ... trips GCC 12's -Wrestrict false positive
        raxes.push_back(te::reduce_axis(x.shape()[d], axis_name));
        count = count * x.shape()[d];
    }
    auto shape = te_shape(out);
    std::function<std::vector<PrimExpr>(std::span<const PrimExpr>)> index =
        [&](std::span<const PrimExpr> i) { return input_index(i, reduced, a.keepdims, raxes); };
    if (!a.dynamic_axes.empty()) {
        // Every axis is reduced over its size or over 1; output index + reduction index.
        raxes.clear();
        count = make_int(DataType::int32(), 1);
        auto dynamic = dynamically_reduced(a, static_cast<int64_t>(x.ndim()));
        for (size_t d = 0; d < dynamic.size(); ++d) {
            PrimExpr extent = select(dynamic[d], x.shape()[d], make_int(x.shape()[d].dtype(), 1));
            std::string axis_name = "k";
            axis_name += std::to_string(d);
            raxes.push_back(te::reduce_axis(simplify(extent), axis_name));
            count = count * cast(DataType::int32(), extent);
        }
        index = [&](std::span<const PrimExpr> i) {
            std::vector<PrimExpr> idx;
            for (size_t d = 0; d < i.size(); ++d) idx.push_back(i[d] + raxes[d]->var);
            return idx;
        };
    }
    if (raxes.empty()) {  // nothing to reduce (exclude of every axis): a copy
        return {te::compute(
            shape, [&](std::span<const PrimExpr> i) { return x(index(i)); }, name)};
    }
    std::string stage = Kind == ReduceKind::Mean ? "mean_sum" : name;
    te::Tensor r = te::compute(
        shape, [&](std::span<const PrimExpr> i) { return combine(Kind, x(index(i)), raxes); },
        stage);
    if (Kind != ReduceKind::Mean) return {r};
    return {te::compute(
        shape,
        [&](std::span<const PrimExpr> i) {
            return r(std::vector<PrimExpr>(i.begin(), i.end())) / cast(x.dtype(), count);
        },
        "mean")};
}

// ---- argmax / argmin ----------------------------------------------------------------------

Type arg_reduce_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                     const SourceLoc& loc) {
    const auto& x = graph::expect_tensor(args[0], loc, "the input of " + op.name);
    if (x.dtype.is_bool()) {
        user_error(loc) << op.name << " of a bool tensor; cast it to a number type first";
    }
    const auto& a = static_cast<const ArgReduceAttrs&>(attrs);
    int64_t axis = normalize_axis(a.axis, static_cast<int64_t>(x.ndim()), loc, op.name);
    std::vector<bool> reduced(x.ndim(), false);
    reduced[axis] = true;
    return graph::make_tensor_type(reduced_shape(x.shape, reduced, a.keepdims), DataType::int64());
}

template <bool IsMax>
std::vector<te::Tensor> arg_reduce_compute(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                           const Type& out) {
    const char* name = IsMax ? "argmax" : "argmin";
    te::Tensor x = in[0];
    const auto& a = static_cast<const ArgReduceAttrs&>(attrs);
    int64_t axis = a.axis < 0 ? a.axis + static_cast<int64_t>(x.ndim()) : a.axis;
    std::vector<bool> reduced(x.ndim(), false);
    reduced[axis] = true;
    auto shape = te_shape(out);
    Ref<IterVar> k1 = te::reduce_axis(x.shape()[axis], "k");
    te::Tensor extreme = te::compute(
        shape,
        [&](std::span<const PrimExpr> i) {
            PrimExpr v = x(input_index(i, reduced, a.keepdims, {k1}));
            return IsMax ? te::max(v, {k1}) : te::min(v, {k1});
        },
        std::string(name) + "_value");
    Ref<IterVar> k2 = te::reduce_axis(x.shape()[axis], "k");
    return {te::compute(
        shape,
        [&](std::span<const PrimExpr> i) {
            PrimExpr v = x(input_index(i, reduced, a.keepdims, {k2}));
            PrimExpr hit = eq(v, extreme(std::vector<PrimExpr>(i.begin(), i.end())));
            PrimExpr k = cast(DataType::int64(), k2->var);
            if (a.select_last_index) {
                return te::max(select(hit, k, make_int(DataType::int64(), -1)), {k2});
            }
            PrimExpr none = cast(DataType::int64(), x.shape()[axis]);
            return te::min(select(hit, k, none), {k2});
        },
        name)};
}

// ---- schedule -----------------------------------------------------------------------------

// ---- cumsum -------------------------------------------------------------------------------

Type cumsum_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                 const SourceLoc& loc) {
    const auto& x = graph::expect_tensor(args[0], loc, "the input of " + op.name);
    if (x.dtype.is_bool()) {
        user_error(loc) << op.name << " of a bool tensor; cast it to a number type first";
    }
    normalize_axis(attrs_as<CumsumAttrs>(attrs).axis, static_cast<int64_t>(x.ndim()), loc, op.name);
    return args[0];
}

// A sum over the whole axis with a condition on the reduction variable: quadratic in the axis
// length, but a plain reduction that the reduction schedule handles.
std::vector<te::Tensor> cumsum_compute(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                       const Type& out) {
    te::Tensor x = in[0];
    const auto& a = attrs_as<CumsumAttrs>(attrs);
    int64_t axis = a.axis < 0 ? a.axis + static_cast<int64_t>(x.ndim()) : a.axis;
    Ref<IterVar> k = te::reduce_axis(x.shape()[axis], "k");
    return {te::compute(
        te_shape(out),
        [&](std::span<const PrimExpr> i) {
            std::vector<PrimExpr> idx(i.begin(), i.end());
            PrimExpr j = idx[axis];
            idx[axis] = k->var;
            PrimExpr kv = k->var;
            PrimExpr in_range =
                a.reverse ? (a.exclusive ? kv > j : kv >= j) : (a.exclusive ? kv < j : kv <= j);
            return te::sum(x(idx), {k}, in_range);
        },
        "cumsum")};
}

// ---- einsum -------------------------------------------------------------------------------

// An equation resolved against the input ranks: a label per axis (letters as themselves,
// ellipsis axes as kEllipsis + their position right-aligned across the inputs).
constexpr int kEllipsis = 256;

struct EinsumPlan {
    std::vector<std::vector<int>> inputs;
    std::vector<int> output;
    std::vector<int> reduced;      // labels summed over, in first-use order
    std::map<int, PrimExpr> size;  // per label
};

EinsumPlan plan_einsum(const std::string& equation,
                       const std::vector<std::vector<PrimExpr>>& shapes, const SourceLoc& loc,
                       const std::string& op) {
    std::string eq;
    for (char c : equation) {
        if (c != ' ') eq += c;
    }
    size_t arrow = eq.find("->");
    std::string lhs = eq.substr(0, arrow);
    std::vector<std::string> terms;
    for (size_t start = 0;;) {
        size_t comma = lhs.find(',', start);
        terms.push_back(lhs.substr(start, comma == std::string::npos ? comma : comma - start));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    if (terms.size() != shapes.size()) {
        user_error(loc) << op << ": equation '" << equation << "' has " << terms.size()
                        << " operands, the op " << shapes.size() << " inputs";
    }
    auto letters_of = [&](const std::string& term, bool* has_ellipsis) {
        std::string t = term;
        size_t e = t.find("...");
        *has_ellipsis = e != std::string::npos;
        if (*has_ellipsis) t.erase(e, 3);
        for (char c : t) {
            if (!std::isalpha(static_cast<unsigned char>(c))) {
                user_error(loc) << op << ": equation '" << equation << "' has the character '" << c
                                << "'";
            }
        }
        return e;
    };
    EinsumPlan p;
    size_t ellipsis_rank = 0;
    std::vector<int> count(kEllipsis, 0);
    for (size_t t = 0; t < terms.size(); ++t) {
        bool ell = false;
        size_t e = letters_of(terms[t], &ell);
        size_t n_letters = terms[t].size() - (ell ? 3 : 0);
        if (n_letters > shapes[t].size() || (!ell && n_letters != shapes[t].size())) {
            user_error(loc) << op << ": operand " << t << " '" << terms[t] << "' does not match "
                            << "its rank " << shapes[t].size();
        }
        size_t k = shapes[t].size() - n_letters;
        ellipsis_rank = std::max(ellipsis_rank, k);
        std::vector<int> labels;
        for (size_t i = 0; i < terms[t].size();) {
            if (ell && i == e) {
                for (size_t j = 0; j < k; ++j) labels.push_back(-1 - static_cast<int>(j));
                i += 3;
            } else {
                labels.push_back(static_cast<unsigned char>(terms[t][i++]));
                ++count[labels.back()];
            }
        }
        p.inputs.push_back(labels);
    }
    for (size_t t = 0; t < terms.size(); ++t) {  // ellipsis axes right-aligned
        size_t k = 0;
        for (int l : p.inputs[t]) k += l < 0;
        for (size_t d = 0; d < p.inputs[t].size(); ++d) {
            int& l = p.inputs[t][d];
            if (l < 0) l = kEllipsis + static_cast<int>(ellipsis_rank - k) + (-1 - l);
            const PrimExpr& n = shapes[t][d];
            auto [it, fresh] = p.size.emplace(l, n);
            const int64_t *a = as_const_int(it->second), *b = as_const_int(n);
            if (!fresh && (!a || !b || *a != *b)) {
                user_error(loc) << op << ": the axes labelled "
                                << (l >= kEllipsis ? std::string("...")
                                                   : std::string(1, static_cast<char>(l)))
                                << " have different lengths";
            }
        }
    }
    if (arrow != std::string::npos) {
        std::string rhs = eq.substr(arrow + 2);
        bool ell = false;
        size_t e = letters_of(rhs, &ell);
        for (size_t i = 0; i < rhs.size();) {
            if (ell && i == e) {
                for (size_t j = 0; j < ellipsis_rank; ++j) {
                    p.output.push_back(kEllipsis + static_cast<int>(j));
                }
                i += 3;
                continue;
            }
            int l = static_cast<unsigned char>(rhs[i++]);
            if (!p.size.count(l)) {
                user_error(loc) << op << ": the output label '" << static_cast<char>(l)
                                << "' names no input axis";
            }
            p.output.push_back(l);
        }
    } else {
        for (size_t j = 0; j < ellipsis_rank; ++j)
            p.output.push_back(kEllipsis + static_cast<int>(j));
        for (int l = 0; l < kEllipsis; ++l) {
            if (count[l] == 1) p.output.push_back(l);
        }
    }
    for (const auto& labels : p.inputs) {
        for (int l : labels) {
            bool out = std::find(p.output.begin(), p.output.end(), l) != p.output.end();
            bool seen = std::find(p.reduced.begin(), p.reduced.end(), l) != p.reduced.end();
            if (!out && !seen) p.reduced.push_back(l);
        }
    }
    return p;
}

Type einsum_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                 const SourceLoc& loc) {
    if (args.empty()) user_error(loc) << op.name << " needs at least one input";
    std::vector<std::vector<PrimExpr>> shapes;
    DataType dt;
    for (size_t i = 0; i < args.size(); ++i) {
        const auto& t =
            graph::expect_tensor(args[i], loc, "input " + std::to_string(i) + " of " + op.name);
        if (i == 0) dt = t.dtype;
        if (t.dtype != dt || t.dtype.is_bool()) {
            user_error(loc) << op.name << ": input " << i << " has type " << t.dtype.str()
                            << "; all inputs must have one number type (" << dt.str() << ")";
        }
        shapes.push_back(t.shape);
    }
    EinsumPlan p = plan_einsum(attrs_as<EinsumAttrs>(attrs).equation, shapes, loc, op.name);
    std::vector<PrimExpr> out;
    for (int l : p.output) out.push_back(p.size.at(l));
    return graph::make_tensor_type(out, dt);
}

std::vector<te::Tensor> einsum_compute(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                       const Type& out) {
    std::vector<std::vector<PrimExpr>> shapes;
    for (const auto& t : in) shapes.push_back(t.shape());
    EinsumPlan p =
        plan_einsum(attrs_as<EinsumAttrs>(attrs).equation, shapes, SourceLoc(), "einsum");
    std::vector<Ref<IterVar>> raxes;
    for (int l : p.reduced) raxes.push_back(te::reduce_axis(p.size.at(l), "k" + std::to_string(l)));
    return {te::compute(
        te_shape(out),
        [&](std::span<const PrimExpr> i) {
            std::map<int, PrimExpr> var;
            for (size_t d = 0; d < p.output.size(); ++d) var[p.output[d]] = i[d];
            for (size_t r = 0; r < raxes.size(); ++r) var[p.reduced[r]] = raxes[r]->var;
            PrimExpr prod;
            for (size_t t = 0; t < in.size(); ++t) {
                std::vector<PrimExpr> idx;
                for (int l : p.inputs[t]) idx.push_back(var.at(l));
                PrimExpr v = in[t](idx);
                prod = prod.defined() ? prod * v : v;
            }
            return raxes.empty() ? prod : te::sum(prod, raxes);
        },
        "einsum")};
}

int64_t const_extent(const Ref<IterVar>& iv) {
    const int64_t* v = as_const_int(iv->dom.extent);
    return v ? *v : -1;
}

// True when the inputs read by the reduction have the last data-parallel axis as their innermost
// index, so that vectorizing that axis reads contiguous memory; false when some input's innermost
// index is a reduction axis (vector lanes would gather with a stride).
bool inner_axis_is_contiguous(const te::ComputeOp& op) {
    if (op.axis.empty()) return false;
    const Var* last = op.axis.back()->var.get();
    bool contiguous = false, strided = false;
    pre_order_visit(op.body.as<Reduce>()->source, [&](const PrimExpr& e) {
        auto* load = e.as<Load>();
        if (!load || load->indices.empty()) return;
        const PrimExpr& inner = load->indices.back();
        if (inner.get() == last) contiguous = true;
        for (const auto& r : op.reduce_axis) {
            if (inner.get() == r->var.get()) strided = true;
        }
    });
    return contiguous && !strided;
}

void schedule_reduce_stage(te::Schedule& s, const te::Tensor& t, const te::ScheduleContext& ctx,
                           const LoopChoices& choices) {
    if (ctx.target.is_gpu) return;
    const auto& op = static_cast<const te::ComputeOp&>(*t.op);
    te::StageRef st = s[t];
    if (st.op_axis().empty()) return;  // a full reduction: one serial loop nest
    int64_t work = 1;  // (the partial results below, computed per row, do most of it)
    for (const auto& iv : st.leaf_axes()) work *= std::max<int64_t>(1, const_extent(iv));
    int lanes = std::max(1, ctx.target.vector_bits / std::max(8, t.dtype().bits()));
    const bool vector_rows =
        inner_axis_is_contiguous(op) && const_extent(st.op_axis().back()) >= lanes && lanes > 1;
    // Not vectorized across rows: along them, when the reduction walks contiguous memory (a
    // mean over the last axis).
    te::Tensor partial = vector_rows ? te::Tensor() : rfactor_lanes(s, t, ctx);
    std::vector<Ref<IterVar>> dp = st.op_axis(), red = st.op_reduce_axis();
    std::vector<Ref<IterVar>> outer(dp.begin(), dp.end() - 1);
    Ref<IterVar> inner = dp.back();
    Ref<IterVar> vector_lane;
    if (vector_rows) {
        auto [io, ii] = st.split(inner, choices.vector_width(const_extent(inner), lanes));
        outer.push_back(io);
        vector_lane = ii;
        std::vector<Ref<IterVar>> order = outer;
        order.insert(order.end(), red.begin(), red.end());
        order.push_back(ii);
        st.reorder(order);
        st.vectorize(ii);
    } else {
        outer.push_back(inner);
    }
    if (choices.run_parallel(work)) st.parallel(outer.size() == 1 ? outer[0] : st.fuse(outer));
    if (partial.op.defined()) attach_partial_results(s, t, partial);
}

// The knobs of a reduction's loops (the anchor, or the reduction it reads): none for a
// reduction to a single element, which is one serial loop nest.
LoopChoices reduce_loop_choices(const te::Tensor& anchor, const te::ScheduleContext& ctx) {
    if (ctx.target.is_gpu) return {};
    te::Tensor red = reduction_of(anchor);
    auto* c = red.op.defined() ? red.op.as<te::ComputeOp>() : nullptr;
    if (!c) return {};
    const int64_t elements = static_extent_product(red.shape());
    if (elements == 1 || red.ndim() == 0) return {};
    std::vector<PrimExpr> extents = red.shape();
    for (const auto& r : c->reduce_axis) extents.push_back(r->dom.extent);
    const int64_t work = static_extent_product(extents);
    const int64_t* inner = red.ndim() ? as_const_int(red.shape().back()) : nullptr;
    return declare_loop_choices(ctx, work, inner && inner_axis_is_contiguous(*c) ? *inner : 0);
}

}  // namespace

void schedule_reduce(te::Schedule& s, const te::Tensor& anchor,
                     const std::vector<te::Tensor>& outputs, const te::ScheduleContext& ctx) {
    auto is_output = [&](const te::Tensor& t) {
        for (const auto& out : outputs) {
            if (out.same_as(t)) return true;
        }
        return false;
    };
    const LoopChoices choices = reduce_loop_choices(anchor, ctx);
    std::unordered_set<const te::Operation*> seen;
    std::vector<Ref<te::Operation>> work;
    for (const auto& out : outputs) work.push_back(out.op);
    work.push_back(anchor.op);
    while (!work.empty()) {
        Ref<te::Operation> op = work.back();
        work.pop_back();
        if (op->kind != te::OpKind::Compute || !seen.insert(op.get()).second) continue;
        const auto& compute = static_cast<const te::ComputeOp&>(*op);
        te::Tensor t(op);
        if (compute.is_reduction()) {
            schedule_reduce_stage(s, t, ctx, choices);
        } else if (!is_output(t) && s.find_stage(op.get())->attach != te::AttachKind::Inline) {
            // Elementwise steps between the reduction and the outputs (mean's division) are
            // computed where they are read.
            s[t].compute_inline();
        }
        for (const auto& input : compute.inputs) work.push_back(input);
    }
    for (const auto& out : outputs) {
        if (out.op->kind != te::OpKind::Compute) continue;
        if (!static_cast<const te::ComputeOp&>(*out.op).is_reduction()) {
            schedule_injective_stage(s, out, ctx, choices);
        }
    }
}

Ref<Op> make_einsum_op() {
    return make_op({.name = "einsum",
                    .num_inputs = -1,
                    .make_default_attrs = default_attrs<EinsumAttrs>,
                    .infer_type = einsum_type,
                    .compute = einsum_compute,
                    .schedule = schedule_reduce,
                    .pattern = OpPattern::Opaque,
                    .description = "sum of products by an index equation (ONNX Einsum)"});
}

Ref<Op> make_cumsum_op() {
    return make_op({.name = "cumsum",
                    .num_inputs = 1,
                    .make_default_attrs = default_attrs<CumsumAttrs>,
                    .infer_type = cumsum_type,
                    .compute = cumsum_compute,
                    .schedule = schedule_reduce,
                    .pattern = OpPattern::CommReduce,
                    .description = "cumulative sum along an axis (ONNX CumSum)"});
}

Ref<Op> make_sum_op() {
    return make_op({.name = "sum",
                    .num_inputs = 1,
                    .make_default_attrs = default_attrs<ReduceAttrs>,
                    .infer_type = reduce_type,
                    .compute = reduce_compute<ReduceKind::Sum>,
                    .schedule = schedule_reduce,
                    .pattern = OpPattern::CommReduce,
                    .description = "sum over axes"});
}

Ref<Op> make_mean_op() {
    return make_op({.name = "mean",
                    .num_inputs = 1,
                    .make_default_attrs = default_attrs<ReduceAttrs>,
                    .infer_type = reduce_type,
                    .compute = reduce_compute<ReduceKind::Mean>,
                    .schedule = schedule_reduce,
                    .pattern = OpPattern::CommReduce,
                    .description = "mean over axes"});
}

Ref<Op> make_max_op() {
    return make_op({.name = "max",
                    .num_inputs = 1,
                    .make_default_attrs = default_attrs<ReduceAttrs>,
                    .infer_type = reduce_type,
                    .compute = reduce_compute<ReduceKind::Max>,
                    .schedule = schedule_reduce,
                    .pattern = OpPattern::CommReduce,
                    .description = "maximum over axes"});
}

Ref<Op> make_min_op() {
    return make_op({.name = "min",
                    .num_inputs = 1,
                    .make_default_attrs = default_attrs<ReduceAttrs>,
                    .infer_type = reduce_type,
                    .compute = reduce_compute<ReduceKind::Min>,
                    .schedule = schedule_reduce,
                    .pattern = OpPattern::CommReduce,
                    .description = "minimum over axes"});
}

Ref<Op> make_prod_op() {
    return make_op({.name = "prod",
                    .num_inputs = 1,
                    .make_default_attrs = default_attrs<ReduceAttrs>,
                    .infer_type = reduce_type,
                    .compute = reduce_compute<ReduceKind::Prod>,
                    .schedule = schedule_reduce,
                    .pattern = OpPattern::CommReduce,
                    .description = "product over axes"});
}

Ref<Op> make_argmax_op() {
    return make_op({.name = "argmax",
                    .num_inputs = 1,
                    .make_default_attrs = default_attrs<ArgReduceAttrs>,
                    .infer_type = arg_reduce_type,
                    .compute = arg_reduce_compute<true>,
                    .schedule = schedule_reduce,
                    .pattern = OpPattern::CommReduce,
                    .description = "int64 index of the maximum along axis"});
}

Ref<Op> make_argmin_op() {
    return make_op({.name = "argmin",
                    .num_inputs = 1,
                    .make_default_attrs = default_attrs<ArgReduceAttrs>,
                    .infer_type = arg_reduce_type,
                    .compute = arg_reduce_compute<false>,
                    .schedule = schedule_reduce,
                    .pattern = OpPattern::CommReduce,
                    .description = "int64 index of the minimum along axis"});
}

}  // namespace anvil::ops
