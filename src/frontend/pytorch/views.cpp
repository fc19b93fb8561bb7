// Writes through views (views.h).
#include "frontend/pytorch/views.h"

#include <set>

#include "ops/transform.h"

namespace anvil::frontend::pytorch {

using graph::Expr;

bool is_view_kind(const std::string& kind) {
    static const std::set<std::string> kViews = {
        "aten::slice",        "aten::select",     "aten::narrow",
        "aten::view",         "aten::reshape",    "aten::view_as",
        "aten::permute",      "aten::transpose",  "aten::t",
        "aten::swapaxes",     "aten::movedim",    "aten::squeeze",
        "aten::unsqueeze",    "aten::flatten",    "aten::unflatten",
        "aten::expand",       "aten::expand_as",  "aten::detach",
        "aten::alias",        "aten::diagonal",   "aten::reshape_as",
        "aten::numpy_T",      "aten::swapdims",   "aten::moveaxis",
        "aten::_unsafe_view", "aten::contiguous", "aten::to",
        "aten::type_as"};
    return kViews.count(kind) > 0;
}

std::shared_ptr<const ViewOf> derive_view(PtConvertFn convert, const TsNode& node,
                                          const SourceLoc& loc, const PtValues& inputs,
                                          const PtValue& result, int64_t source_id,
                                          BlockConverter* blocks) {
    const PtValue& source = inputs[0];
    NodeBuilder b(loc, "view");
    Expr map;
    int64_t base_id = source_id;
    if (source.view) {
        map = source.view->index_map;
        base_id = source.view->base_id;
    } else {
        const auto* t = source.tensor->type.as<graph::TensorType>();
        // Not static: the view is known, but not which elements it shows.
        if (!t || !t->is_static()) return std::make_shared<ViewOf>(ViewOf{base_id, Expr()});
        auto shape = t->static_shape();
        int64_t n = 1;
        for (int64_t d : shape) n *= d;
        map = reshape_to(
            b, iota(b, make_int(DataType::int64(), n), b.constant_scalar(DataType::int64(), 0)),
            shape);
    }
    // Ops that return their operand itself unless they convert it (contiguous(), to() of the
    // same dtype): the same elements; a conversion makes a new tensor.
    static const std::set<std::string> kAliases = {"aten::contiguous", "aten::to", "aten::type_as",
                                                   "aten::detach", "aten::alias"};
    if (kAliases.count(node.kind)) {
        const auto* in = source.tensor->type.as<graph::TensorType>();
        const auto* out = result.tensor->type.as<graph::TensorType>();
        if (!in || !out || in->dtype != out->dtype) return nullptr;
        return std::make_shared<ViewOf>(ViewOf{base_id, map});
    }
    // The same view of the index map: the converter is a function of its operands.
    PtValues operands = inputs;
    operands[0] = PtValue::of_tensor(map);
    if (!map.defined()) return std::make_shared<ViewOf>(ViewOf{base_id, Expr()});
    PtValues out;
    try {
        PtContext ctx(node, loc, operands, blocks);
        out = convert(ctx);
    } catch (const UserError&) {
        // The op took the tensor but not its index map (an op of float data only): the view
        // stays untracked, and a write through it is refused.
        return std::make_shared<ViewOf>(ViewOf{base_id, Expr()});
    }
    if (out.empty() || out[0].kind != PtValue::Tensor) return nullptr;
    return std::make_shared<ViewOf>(ViewOf{base_id, out[0].tensor});
}

Expr read_through(const NodeBuilder& b, const Expr& base, const ViewOf& view) {
    auto shape = b.static_shape(base, "the tensor viewed");
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    auto [attrs, a] = new_attrs<ops::TakeAttrs>();
    a->axis = 0;
    return b.call("take", {reshape_to(b, base, {n}), view.index_map}, attrs);
}

Expr write_through(const NodeBuilder& b, const Expr& base, const ViewOf& view, const Expr& value) {
    auto shape = b.static_shape(base, "the tensor written through a view");
    auto view_shape = b.static_shape(view.index_map, "the view");
    int64_t n = 1, m = 1;
    for (int64_t d : shape) n *= d;
    for (int64_t d : view_shape) m *= d;
    DataType dtype = b.tensor_type(base, "the tensor written").dtype;
    Expr updates = cast_to(b, value, dtype);
    if (b.static_shape(updates, "the value written") != view_shape) {
        auto [attrs, a] = new_attrs<ops::BroadcastToAttrs>();
        a->shape = view_shape;
        updates = b.call("broadcast_to", {updates}, attrs);
    }
    auto [attrs, a] = new_attrs<ops::ScatterAttrs>();
    a->axis = 0;
    Expr flat = b.call(
        "scatter_elements",
        {reshape_to(b, base, {n}), reshape_to(b, view.index_map, {m}), reshape_to(b, updates, {m})},
        attrs);
    return reshape_to(b, flat, shape);
}

}  // namespace anvil::frontend::pytorch
