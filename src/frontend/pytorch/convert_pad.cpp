// Converters of padding: aten::constant_pad_nd, aten::pad (F.pad: constant, reflect, replicate,
// circular), reflection_pad1d/2d/3d, replication_pad1d/2d/3d, _pad_circular. PyTorch lists pads
// from the last dimension backwards, (left, right) for each; negative pads crop. Pads may be
// symbolic sizes.
#include "frontend/pytorch/convert_ops.h"
#include "frontend/pytorch/shape_ops.h"
#include "ir/analyzer.h"
#include "ops/transform.h"

namespace anvil::frontend::pytorch {

using graph::Expr;

namespace {

// `mode` is the pad op's: constant, reflect, edge or wrap.
Expr pad(const PtContext& ctx, const Expr& x, const std::vector<PrimExpr>& pads,
         const std::string& mode, double value) {
    int64_t rank = ctx.rank(x);
    if (pads.size() % 2 != 0) ctx.error() << "the padding length must be even, got " << pads.size();
    auto covered = static_cast<int64_t>(pads.size() / 2);
    if (covered > rank) {
        ctx.error() << "the padding covers " << covered << " dimensions of a tensor of rank "
                    << rank;
    }
    // Reflection, replication and circular padding apply to the last 1-3 dimensions only.
    if (mode != "constant" && covered > 3) {
        ctx.error() << "non-constant padding of " << covered << " dimensions is not supported";
    }
    std::vector<PrimExpr> width(static_cast<size_t>(2 * rank), make_int(DataType::int64(), 0));
    bool constant = true;
    std::vector<PrimExpr> dims = dims_of(ctx, x);
    for (int64_t k = 0; k < covered; ++k) {
        auto d = static_cast<size_t>(rank - 1 - k);
        PrimExpr before = simplify(pads[static_cast<size_t>(2 * k)]);
        PrimExpr after = simplify(pads[static_cast<size_t>(2 * k + 1)]);
        width[2 * d] = before;
        width[2 * d + 1] = after;
        const int64_t* b = as_const_int(before);
        const int64_t* a = as_const_int(after);
        constant = constant && b && a;
        const int64_t* n = as_const_int(dims[d]);
        if (mode == "reflect" && n && ((b && *b >= *n) || (a && *a >= *n))) {
            ctx.error() << "reflection padding of " << (b && *b >= *n ? *b : *a)
                        << " must be less than the size " << *n << " of dimension " << d;
        }
        if (mode == "wrap" && n && ((b && *b > *n) || (a && *a > *n))) {
            ctx.error() << "circular padding of " << (b && *b > *n ? *b : *a)
                        << " must not exceed the size " << *n << " of dimension " << d;
        }
    }
    auto [attrs, p] = new_attrs<ops::PadAttrs>();
    p->pad_mode = mode;
    p->pad_value = value;
    if (constant) {
        for (const auto& w : width) p->pad_width.push_back(*as_const_int(w));
    } else {
        p->dynamic_pad_width = width;
    }
    return ctx.call("nn.pad", {x}, attrs);
}

std::string op_mode(const PtContext& ctx, const std::string& torch_mode) {
    if (torch_mode == "constant") return "constant";
    if (torch_mode == "reflect") return "reflect";
    if (torch_mode == "replicate") return "edge";
    if (torch_mode == "circular") return "wrap";
    ctx.error() << "padding mode '" << torch_mode
                << "' is not supported (constant, reflect, replicate, circular)";
    ANVIL_UNREACHABLE();
}

}  // namespace

// aten::constant_pad_nd(x, pad, value).
PtValues convert_constant_pad(PtContext& ctx) {
    double value = ctx.num_inputs() > 2 && !ctx.is_none(2) ? ctx.float_arg(2) : 0.0;
    return {PtValue::of_tensor(pad(ctx, ctx.tensor(0), ctx.int_exprs(1), "constant", value))};
}

// aten::pad(x, pad, mode, value).
PtValues convert_pad(PtContext& ctx) {
    std::string mode = ctx.num_inputs() > 2 && !ctx.is_none(2) ? ctx.str_arg(2) : "constant";
    double value = ctx.num_inputs() > 3 && !ctx.is_none(3) ? ctx.float_arg(3) : 0.0;
    if (mode != "constant" && value != 0.0) {
        ctx.error() << "padding mode '" << mode << "' does not take a value";
    }
    return {
        PtValue::of_tensor(pad(ctx, ctx.tensor(0), ctx.int_exprs(1), op_mode(ctx, mode), value))};
}

// aten::reflection_padNd / replication_padNd(x, padding), aten::_pad_circular(x, pad).
PtValues convert_mode_pad(PtContext& ctx) {
    const std::string& k = ctx.kind();
    std::string mode = k.find("reflection") != std::string::npos    ? "reflect"
                       : k.find("replication") != std::string::npos ? "edge"
                                                                    : "wrap";
    return {PtValue::of_tensor(pad(ctx, ctx.tensor(0), ctx.int_exprs(1), mode, 0.0))};
}

}  // namespace anvil::frontend::pytorch
