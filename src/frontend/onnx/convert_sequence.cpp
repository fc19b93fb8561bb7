// Converters of ONNX's sequence and optional ops (ops/sequence.h). Where the importer knows a
// sequence's tensors (built by SequenceConstruct, SplitToSequence or inserts at the back), a
// SequenceAt at a constant position or a ConcatFromSequence becomes ordinary ops on them;
// otherwise the executor carries them out on the sequence it holds.
#include "frontend/onnx/convert_ops.h"
#include "ops/sequence.h"
#include "ops/transform.h"

namespace anvil::frontend {

using graph::Expr;
using graph::Type;

namespace {

const graph::SequenceType& sequence_type(ConvertContext& ctx, const Expr& e,
                                         const std::string& what) {
    auto* st = e->type.as<graph::SequenceType>();
    if (!st) ctx.error() << what << " must be a sequence, not " << graph::type_str(e->type);
    return *st;
}

// The tensors of `seq` when the importer built it from known tensors; nullopt otherwise.
std::optional<Exprs> known_items(const Expr& seq) {
    std::string op = ops::sequence_op_name(seq);
    const auto* call = seq.as<graph::Call>();
    if (op == "seq.construct") return call->args;
    if (op == "seq.empty") return Exprs{};
    if (op == "seq.insert" && call->args.size() == 2) {  // at the back
        std::optional<Exprs> items = known_items(call->args[0]);
        if (items) items->push_back(call->args[1]);
        return items;
    }
    return std::nullopt;
}

// A constant position, made non-negative for a sequence of `n` tensors; nullopt when it is
// known only at run time or out of [-n, limit).
std::optional<int64_t> known_position(const Expr& pos, int64_t n, int64_t limit) {
    runtime::NDArray data = constant_data(pos);
    if (!data.defined() || data.num_elements() != 1) return std::nullopt;
    int64_t p = runtime::element_as_int64(data);
    if (p < -n || p >= limit) return std::nullopt;
    return p < 0 ? p + n : p;
}

Expr make_sequence_of(ConvertContext& ctx, Exprs items, DataType dtype) {
    if (items.empty()) return ops::make_empty_sequence(dtype, ctx.loc());
    return ops::make_sequence(std::move(items), ctx.loc());
}

}  // namespace

Type sequence_element_type(ConvertContext& ctx, const graph::SequenceType& seq,
                           int64_t extra_axis) {
    if (!seq.dims) {
        ctx.error() << "the rank of the sequence's tensors is not known at import time "
                    << "(declare the sequence's element shape)";
    }
    std::vector<PrimExpr> fresh = ctx.new_dims(seq.dims->size() + 1);
    std::vector<PrimExpr> shape;
    for (size_t i = 0; i < seq.dims->size(); ++i) {
        int64_t d = (*seq.dims)[i];
        shape.push_back(d == graph::SequenceType::kAnyDim ? fresh[i]
                                                          : make_int(DataType::int64(), d));
    }
    if (extra_axis >= 0) shape.insert(shape.begin() + extra_axis, fresh.back());
    return graph::make_tensor_type(std::move(shape), seq.dtype);
}

Type type_from_onnx(
    const ::onnx::TypeProto& t, const SourceLoc& loc, const std::string& what,
    const std::function<PrimExpr(const ::onnx::TensorShapeProto::Dimension&)>& dim) {
    auto element_dtype = [&](int elem) {
        std::optional<DataType> dtype = dtype_from_onnx(elem);
        if (!dtype) {
            user_error(loc) << what << " has element type " << onnx_dtype_name(elem)
                            << ", which Anvil does not support";
        }
        return *dtype;
    };
    if (t.has_tensor_type()) {
        const auto& tt = t.tensor_type();
        if (!tt.has_shape()) user_error(loc) << what << " has no declared shape";
        std::vector<PrimExpr> shape;
        for (const auto& d : tt.shape().dim()) shape.push_back(dim(d));
        return graph::make_tensor_type(std::move(shape), element_dtype(tt.elem_type()));
    }
    if (t.has_sequence_type()) {
        const auto& elem = t.sequence_type().elem_type();
        if (!elem.has_tensor_type()) {
            user_error(loc) << what << " is a sequence of something other than tensors";
        }
        const auto& tt = elem.tensor_type();
        std::optional<std::vector<int64_t>> dims;
        if (tt.has_shape()) {
            dims.emplace();
            for (const auto& d : tt.shape().dim()) {
                dims->push_back(d.has_dim_value() ? d.dim_value() : graph::SequenceType::kAnyDim);
            }
        }
        return graph::make_sequence_type(element_dtype(tt.elem_type()), std::move(dims));
    }
    if (t.has_optional_type()) {
        Type elem = type_from_onnx(t.optional_type().elem_type(), loc, what, dim);
        return graph::make_optional_type(elem);
    }
    user_error(loc) << what << " has a type Anvil does not support (maps and sparse tensors)";
    ANVIL_UNREACHABLE();
}

Exprs convert_sequence_construct(ConvertContext& ctx) {
    if (ctx.num_inputs() == 0) ctx.error() << "SequenceConstruct needs at least one tensor";
    return {ops::make_sequence(ctx.inputs(), ctx.loc())};
}

Exprs convert_sequence_empty(ConvertContext& ctx) {
    int elem = static_cast<int>(ctx.attr_int("dtype", ::onnx::TensorProto::FLOAT));
    std::optional<DataType> dtype = dtype_from_onnx(elem);
    if (!dtype) ctx.error() << "a sequence of " << onnx_dtype_name(elem) << " is not supported";
    return {ops::make_empty_sequence(*dtype, ctx.loc())};
}

Exprs convert_sequence_length(ConvertContext& ctx) {
    sequence_type(ctx, ctx.input(0), "the input");
    if (std::optional<Exprs> items = known_items(ctx.input(0))) {
        return {ctx.constant_int64({static_cast<int64_t>(items->size())}, {})};
    }
    return {ctx.call("seq.length", {ctx.input(0)})};
}

Exprs convert_sequence_at(ConvertContext& ctx) {
    const Expr& seq = ctx.input(0);
    const auto& st = sequence_type(ctx, seq, "the input");
    if (std::optional<Exprs> items = known_items(seq)) {
        auto n = static_cast<int64_t>(items->size());
        if (auto p = known_position(ctx.input(1), n, n)) return {(*items)[*p]};
    }
    return {ops::make_sequence_at(seq, ctx.input(1), sequence_element_type(ctx, st), ctx.loc())};
}

Exprs convert_sequence_insert(ConvertContext& ctx) {
    Exprs args = {ctx.input(0), ctx.input(1)};
    if (Expr pos = ctx.optional_input(2); pos.defined()) {
        // A constant position into a known sequence keeps it known.
        std::optional<Exprs> items = known_items(ctx.input(0));
        if (items) {
            auto n = static_cast<int64_t>(items->size());
            if (auto p = known_position(pos, n, n + 1)) {
                items->insert(items->begin() + *p, ctx.input(1));
                return {ops::make_sequence(*items, ctx.loc())};
            }
        }
        args.push_back(pos);
    }
    return {ctx.call("seq.insert", args)};
}

Exprs convert_sequence_erase(ConvertContext& ctx) {
    const Expr& seq = ctx.input(0);
    const auto& st = sequence_type(ctx, seq, "the input");
    Expr pos = ctx.optional_input(1);
    if (std::optional<Exprs> items = known_items(seq); items && !items->empty()) {
        auto n = static_cast<int64_t>(items->size());
        std::optional<int64_t> p = pos.defined() ? known_position(pos, n, n) : n - 1;
        if (p) {
            items->erase(items->begin() + *p);
            return {make_sequence_of(ctx, *items, st.dtype)};
        }
    }
    Exprs args = {seq};
    if (pos.defined()) args.push_back(pos);
    return {ctx.call("seq.erase", args)};
}

Exprs convert_concat_from_sequence(ConvertContext& ctx) {
    const Expr& seq = ctx.input(0);
    const auto& st = sequence_type(ctx, seq, "the input");
    int64_t axis = ctx.attr_int("axis", 0);
    bool new_axis = ctx.attr_int("new_axis", 0) != 0;
    if (std::optional<Exprs> items = known_items(seq); items && !items->empty()) {
        int64_t rank = ctx.rank((*items)[0]);
        axis = ctx.normalize_axis(axis, rank + (new_axis ? 1 : 0), "axis");
        Exprs parts = *items;
        if (new_axis) {
            for (auto& p : parts) p = expand_dims(ctx, p, axis);
        }
        auto [attrs, a] = new_attrs<ops::ConcatenateAttrs>();
        a->axis = axis;
        return {ctx.call("concatenate", parts, attrs)};
    }
    if (!st.dims) ctx.error() << "the rank of the sequence's tensors is not known at import time";
    auto rank = static_cast<int64_t>(st.dims->size());
    axis = ctx.normalize_axis(axis, rank + (new_axis ? 1 : 0), "axis");
    // The joined axis has a size known only at run time.
    Type result;
    if (new_axis) {
        result = sequence_element_type(ctx, st, axis);
    } else {
        std::vector<int64_t> dims = *st.dims;
        dims[axis] = graph::SequenceType::kAnyDim;
        result = sequence_element_type(
            ctx, *graph::make_sequence_type(st.dtype, dims).as<graph::SequenceType>());
    }
    return {ops::make_sequence_concat(seq, axis, new_axis, result, ctx.loc())};
}

// SplitToSequence: where the parts' count is known at import time (a 1-D split of static length,
// or a constant scalar split or none over an axis of static size) the parts are ordinary ops,
// their sizes possibly run-time values; otherwise (a 1-D split of symbolic length, a run-time
// scalar split, an axis of symbolic size, string tensors) the executor splits (seq.split).
Exprs convert_split_to_sequence(ConvertContext& ctx) {
    Expr x = ctx.input(0);
    const auto& t = ctx.tensor_type(x, "the input");
    int64_t axis = ctx.normalize_axis(ctx.attr_int("axis", 0), ctx.rank(x), "axis");
    bool keepdims = ctx.attr_int("keepdims", 1) != 0;
    Expr split = ctx.optional_input(1);
    const int64_t* dim = as_const_int(t.shape[axis]);
    int64_t split_rank = split.defined() ? ctx.rank(split) : -1;
    if (split_rank > 1) {
        ctx.error() << "the split must be a scalar or 1-D, not " << graph::type_str(split->type);
    }
    const int64_t* count =
        split_rank == 1 ? as_const_int(ctx.tensor_type(split, "split").shape[0]) : nullptr;
    bool known_size = split_rank != 0 || constant_data(split).defined();
    if (t.dtype.is_string() || (split_rank == 1 ? !count : (!dim || !known_size))) {
        return {ops::make_sequence_split(x, split, axis, keepdims, ctx.loc())};
    }
    Exprs parts;
    if (split_rank == 1) {
        parts = split_dynamic(ctx, x, axis, shape_values(ctx, split, "split"),
                              static_cast<int>(*count));
    } else {
        int64_t size = split.defined() ? ctx.const_ints(split, "a scalar split")[0] : 1;
        if (size <= 0) ctx.error() << "the split size must be positive, not " << size;
        auto [attrs, a] = new_attrs<ops::SplitAttrs>();
        a->axis = axis;
        for (int64_t at = size; at < *dim; at += size) a->indices.push_back(at);
        if (*dim > 0) {
            Expr tuple = ctx.call("split", {x}, attrs);
            for (size_t i = 0; i <= a->indices.size(); ++i) {
                parts.push_back(graph::make_tuple_get_item(tuple, static_cast<int>(i), ctx.loc()));
            }
        }
        // keepdims = 0 removes the axis, only when no split is given.
        if (!split.defined() && !keepdims) {
            for (auto& p : parts) {
                auto [sq, s] = new_attrs<ops::SqueezeAttrs>();
                s->axes = {axis};
                p = ctx.call("squeeze", {p}, sq);
            }
        }
    }
    return {make_sequence_of(ctx, parts, t.dtype)};
}

Exprs convert_optional(ConvertContext& ctx) {
    if (Expr x = ctx.optional_input(0); x.defined()) return {ctx.call("optional.some", {x})};
    const auto* type = ctx.find_attr("type");
    if (!type) ctx.error() << "an Optional without input needs the attribute 'type'";
    Type elem = type_from_onnx(type->tp(), ctx.loc(), "the attribute 'type'",
                               [&](const ::onnx::TensorShapeProto::Dimension& d) -> PrimExpr {
                                   if (d.has_dim_value()) {
                                       return make_int(DataType::int64(), d.dim_value());
                                   }
                                   return ctx.new_dims(1)[0];
                               });
    return {ops::make_optional_none(graph::make_optional_type(elem), ctx.loc())};
}

// OptionalHasElement / OptionalGetElement also take a plain tensor or sequence (opset 18),
// which always has its value; an omitted input has none.
Exprs convert_optional_has_element(ConvertContext& ctx) {
    Expr x = ctx.optional_input(0);
    if (!x.defined() || !x->type.is<graph::OptionalType>()) {
        return {ctx.constant_scalar(DataType::bool_(), x.defined() ? 1 : 0)};
    }
    return {ctx.call("optional.has_value", {x})};
}

Exprs convert_optional_get_element(ConvertContext& ctx) {
    const Expr& x = ctx.input(0);
    if (!x->type.is<graph::OptionalType>()) return {x};
    return {ctx.call("optional.get", {x})};
}

}  // namespace anvil::frontend
