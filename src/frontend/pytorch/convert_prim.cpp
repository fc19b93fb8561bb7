// Converters of TorchScript's own values: lists and tuples, numbers and their conversions from
// and to tensors, sizes, None checks, and the ops that do nothing at inference.
#include "frontend/pytorch/convert_ops.h"
#include "ir/analyzer.h"
#include "ops/shape_tensor.h"

namespace anvil::frontend::pytorch {

using graph::Expr;

PtValues convert_list_construct(PtContext& ctx) {
    PtValues items;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) items.push_back(ctx.input(i));
    return {PtValue::of_list(std::move(items), PtValue::List)};
}

PtValues convert_tuple_construct(PtContext& ctx) {
    PtValues items;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) items.push_back(ctx.input(i));
    return {PtValue::of_list(std::move(items), PtValue::Tuple)};
}

PtValues convert_unpack(PtContext& ctx) {
    const PtValue& v = ctx.input(0);
    if (v.kind != PtValue::List && v.kind != PtValue::Tuple) {
        ctx.error() << "unpacks a " << kind_name(v.kind) << ", not a list or tuple";
    }
    if (v.items.size() != ctx.node().outputs.size()) {
        ctx.error() << "unpacks " << v.items.size() << " items into " << ctx.node().outputs.size()
                    << " values";
    }
    return v.items;
}

PtValues convert_getitem(PtContext& ctx) {
    const PtValue& v = ctx.input(0);
    if (v.kind != PtValue::List && v.kind != PtValue::Tuple) {
        ctx.error() << "indexes a " << kind_name(v.kind)
                    << "; only lists and tuples known at import time can be indexed here";
    }
    int64_t n = static_cast<int64_t>(v.items.size());
    int64_t i = ctx.int_arg(1);
    if (i < -n || i >= n) ctx.error() << "index " << i << " is out of range for " << n << " items";
    return {v.items[static_cast<size_t>(i < 0 ? i + n : i)]};
}

PtValues convert_num_to_tensor(PtContext& ctx) {
    return {PtValue::of_tensor(ctx.tensor(0))};
}

namespace {

// The kind of number aten::Int / Float / Bool make; ScalarImplicit and item keep the tensor's.
PtValue::Kind target_kind(const PtContext& ctx, DataType tensor_dtype) {
    const std::string& k = ctx.kind();
    if (k == "aten::Int") return PtValue::Int;
    if (k == "aten::Float") return PtValue::Float;
    if (k == "aten::Bool") return PtValue::Bool;
    if (tensor_dtype.is_bool()) return PtValue::Bool;
    return tensor_dtype.is_floating() ? PtValue::Float : PtValue::Int;
}

PrimExpr convert_scalar(PrimExpr s, PtValue::Kind to) {
    switch (to) {
        case PtValue::Int:
            return simplify(cast(DataType::int64(), s));
        case PtValue::Float:
            return simplify(cast(DataType::float64(), s));
        default:
            return simplify(ne(s, make_const(s.dtype(), 0)));
    }
}

DataType kind_dtype(PtValue::Kind kind) {
    if (kind == PtValue::Float) return DataType::float32();
    if (kind == PtValue::Bool) return DataType::bool_();
    return DataType::int64();
}

}  // namespace

// int(x), float(x), bool(x), x.item(): a number from a number, or from a one-element tensor. A
// tensor known at import time (a constant, or shape arithmetic) gives an import-time number;
// any other a number known only at run time.
PtValues convert_to_number(PtContext& ctx) {
    const PtValue& v = ctx.input(0);
    if (v.is_import_time()) {
        PtValue::Kind to =
            target_kind(ctx, v.kind == PtValue::Float ? DataType::float32() : DataType::int64());
        PtValue out = PtValue::of_int(convert_scalar(v.scalar, to));
        out.kind = to;
        return {out};
    }
    Expr t = v.tensor;
    if (!t.defined()) ctx.error() << "converts a " << kind_name(v.kind) << " to a number";
    const auto& type = ctx.tensor_type(t, "the operand");
    PtValue::Kind to = target_kind(ctx, type.dtype);
    if (const auto* st = ops::shape_tensor_attrs(t); st && st->values.size() == 1) {
        PtValue out = PtValue::of_int(convert_scalar(st->values[0], to));
        out.kind = to;
        return {out};
    }
    if (runtime::NDArray data = constant_data(t); data.defined()) {
        if (data.num_elements() != 1) {
            ctx.error() << "converts a tensor of " << data.num_elements()
                        << " elements to a number";
        }
        PrimExpr s = type.dtype.is_floating()
                         ? make_float(DataType::float64(), ctx.const_scalar(t, "the operand"))
                         : make_int(DataType::int64(), ctx.const_ints(t, "the operand")[0]);
        PtValue out = PtValue::of_int(convert_scalar(s, to));
        out.kind = to;
        return {out};
    }
    // Known only at run time: a 0-d tensor of the number's type.
    Expr scalar = t;
    if (type.ndim() != 0) {
        auto shape = ctx.static_shape(t, "the operand");
        int64_t n = 1;
        for (int64_t d : shape) n *= d;
        if (n != 1) ctx.error() << "converts a tensor of " << n << " elements to a number";
        scalar = reshape_to(ctx, t, {});
    }
    return {PtValue::of_runtime_number(to, cast_to(ctx, scalar, kind_dtype(to)))};
}

// x.size() (a list) or x.size(dim) (an int), symbolic where the dimension is.
PtValues convert_size(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    const auto& shape = ctx.tensor_type(x, "the operand").shape;
    if (ctx.num_inputs() < 2 || ctx.is_none(1)) {
        PtValues dims;
        for (const auto& d : shape) dims.push_back(PtValue::of_int(cast(DataType::int64(), d)));
        return {PtValue::of_list(std::move(dims))};
    }
    int64_t axis = ctx.normalize_axis(ctx.int_arg(1), static_cast<int64_t>(shape.size()), "dim");
    return {PtValue::of_int(cast(DataType::int64(), shape[static_cast<size_t>(axis)]))};
}

// x.numel(): the product of its dimensions, symbolic where one of them is.
PtValues convert_numel(PtContext& ctx) {
    PrimExpr n = make_int(DataType::int64(), 1);
    for (const auto& d : ctx.tensor_type(ctx.tensor(0), "the operand").shape) {
        n = n * cast(DataType::int64(), d);
    }
    return {PtValue::of_int(n)};
}

PtValues convert_dim(PtContext& ctx) {
    return {PtValue::of_int(ctx.rank(ctx.tensor(0)))};
}

PtValues convert_len(PtContext& ctx) {
    const PtValue& v = ctx.input(0);
    if (v.kind == PtValue::List || v.kind == PtValue::Tuple) {
        return {PtValue::of_int(static_cast<int64_t>(v.items.size()))};
    }
    if (v.kind == PtValue::Str) return {PtValue::of_int(static_cast<int64_t>(v.str.size()))};
    if (v.kind == PtValue::Tensor) {
        const auto& t = ctx.tensor_type(v.tensor, "the operand");
        if (t.ndim() == 0) ctx.error() << "len() of a 0-d tensor";
        return {PtValue::of_int(cast(DataType::int64(), t.shape[0]))};
    }
    ctx.error() << "len() of a " << kind_name(v.kind);
    ANVIL_UNREACHABLE();
}

// `a is None` / `a is not None` (and `is` between other values, which TorchScript allows only
// where the answer is known from the types). Between tensors, the same graph value is the same
// tensor and distinct values are taken as distinct tensors (an imported model's inputs are
// separate arrays): models test it to choose between paths that compute the same
// (nn.MultiheadAttention's self-attention fast path, `query is key`).
PtValues convert_is(PtContext& ctx) {
    bool a_none = ctx.is_none(0), b_none = ctx.is_none(1);
    const PtValue& a = ctx.input(0);
    if (a.kind == PtValue::Tensor && ctx.num_inputs() > 1 && ctx.input(1).kind == PtValue::Tensor) {
        bool same = a.tensor.get() == ctx.input(1).tensor.get();
        return {PtValue::of_bool(ctx.kind() == "aten::__is__" ? same : !same)};
    }
    if (!a_none && !b_none) {
        ctx.error() << "'is' between two values that are not None cannot be decided at import "
                       "time";
    }
    bool same = a_none == b_none;
    return {PtValue::of_bool(ctx.kind() == "aten::__is__" ? same : !same)};
}

PtValues convert_not(PtContext& ctx) {
    const PtValue& v = ctx.input(0);
    if (v.is_import_time()) {
        PtValue out = PtValue::of_bool(false);
        out.scalar = simplify(!convert_scalar(v.scalar, PtValue::Bool));
        return {out};
    }
    Expr t = ctx.tensor(0);
    return {PtValue::of_runtime_number(
        PtValue::Bool, ctx.call("logical_not", {cast_to(ctx, t, DataType::bool_())}))};
}

// dropout(x, p, train) and its feature/alpha forms: the identity at inference (train false, or
// p 0); in training mode it is random, which a compiled model cannot reproduce.
PtValues convert_dropout(PtContext& ctx) {
    double p = ctx.float_arg(1);
    if (p < 0 || p > 1) ctx.error() << "dropout probability " << p << " is not in [0, 1]";
    if (ctx.bool_arg(2) && p > 0) {
        ctx.error() << "dropout in training mode (p = " << p
                    << ") is random; call model.eval() before tracing or scripting";
    }
    return {ctx.input(0)};
}

// Ops that return their first operand at inference: detach, contiguous, clone, casts
// TorchScript's type refinement inserts.
PtValues convert_pass_through(PtContext& ctx) {
    return {ctx.input(0)};
}

PtValues convert_device(PtContext& ctx) {
    PtValue d = PtValue::of_str("cpu");
    d.kind = PtValue::Device;
    return {d};
}

// x.dtype: the ScalarType code TorchScript passes on to `to(dtype)` and friends.
PtValues convert_dtype(PtContext& ctx) {
    DataType t = ctx.tensor_type(ctx.tensor(0), "the operand").dtype;
    for (int64_t code = 0; code < 16; ++code) {
        if (auto d = dtype_from_scalar_type(code); d && *d == t) return {PtValue::of_int(code)};
    }
    ctx.error() << "a tensor of element type " << t.str() << " has no PyTorch dtype";
    ANVIL_UNREACHABLE();
}

PtValues convert_no_op(PtContext& ctx) {
    return PtValues(ctx.node().outputs.size());
}

// A raise the model reaches at import time (a branch whose condition is known to be true): the
// model's own check failed for these shapes.
PtValues convert_raise(PtContext& ctx) {
    std::string message =
        ctx.num_inputs() && ctx.input(0).kind == PtValue::Str ? ctx.input(0).str : "(no message)";
    ctx.error() << "the model raises an exception for these input shapes: " << message;
    ANVIL_UNREACHABLE();
}

// A value TorchScript leaves undefined on a path that raises; never read.
PtValues convert_uninitialized(PtContext& ctx) {
    return PtValues(ctx.node().outputs.size());
}

}  // namespace anvil::frontend::pytorch
