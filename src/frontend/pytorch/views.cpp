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

namespace {

// Whether the op's result is laid out contiguously when its operand is: reshape of a tensor that
// is not contiguous copies in PyTorch, so a write through it must not reach the base. Slicing
// and selecting along the first axis keep contiguity; permutations, expansions and slices of
// other axes do not.
bool keeps_contiguity(const std::string& kind, const PtValues& inputs) {
    static const std::set<std::string> kReorder = {
        "aten::permute",  "aten::transpose", "aten::t",        "aten::swapaxes",
        "aten::swapdims", "aten::movedim",   "aten::moveaxis", "aten::numpy_T",
        "aten::expand",   "aten::expand_as", "aten::diagonal"};
    if (kReorder.count(kind)) return false;
    if (kind == "aten::slice" || kind == "aten::select" || kind == "aten::narrow") {
        const PtValue& dim = inputs.size() > 1 ? inputs[1] : PtValue();
        const int64_t* d = dim.is_import_time() ? as_const_int(dim.scalar) : nullptr;
        if (!d || *d != 0) return false;
        if (kind == "aten::slice" && inputs.size() > 4) {
            const int64_t* step =
                inputs[4].is_import_time() ? as_const_int(inputs[4].scalar) : nullptr;
            return step && *step == 1;
        }
    }
    return true;
}

bool is_reshape(const std::string& kind) {
    return kind == "aten::reshape" || kind == "aten::flatten" || kind == "aten::reshape_as" ||
           kind == "aten::unflatten";
}

}  // namespace

std::shared_ptr<const ViewOf> derive_view(PtConvertFn convert, const TsNode& node,
                                          const SourceLoc& loc, const PtValues& inputs,
                                          const PtValue& result, int64_t source_id,
                                          BlockConverter* blocks) {
    const PtValue& source = inputs[0];
    NodeBuilder b(loc, "view");
    Expr map;
    int64_t base_id = source_id;
    bool contiguous = true;
    if (source.view) {
        map = source.view->index_map;
        base_id = source.view->base_id;
        contiguous = source.view->contiguous;
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
    auto untracked = [&] { return std::make_shared<ViewOf>(ViewOf{base_id, Expr()}); };
    // A reshape of a non-contiguous tensor is a copy in PyTorch, or a view when the strides
    // allow it; which, the importer does not know: writes through it are refused.
    if (is_reshape(node.kind) && !contiguous) return untracked();
    // Ops that return their operand itself unless they convert it (contiguous(), to() of the
    // same dtype): the same elements; a conversion, or to(..., copy=True), makes a new tensor.
    static const std::set<std::string> kAliases = {"aten::contiguous", "aten::to", "aten::type_as",
                                                   "aten::detach", "aten::alias"};
    if (kAliases.count(node.kind)) {
        const auto* in = source.tensor->type.as<graph::TensorType>();
        const auto* out = result.tensor->type.as<graph::TensorType>();
        if (!in || !out || in->dtype != out->dtype) return nullptr;
        if (node.kind == "aten::contiguous" && !contiguous) return nullptr;
        if (node.kind == "aten::to" && inputs.size() >= 2) {
            // copy is the operand before memory_format in every overload of to().
            const PtValue& copy = inputs[inputs.size() - 2];
            if (copy.kind == PtValue::Bool &&
                (!copy.is_import_time() || !is_const_int(copy.scalar, 0))) {
                return nullptr;
            }
        }
        return std::make_shared<ViewOf>(ViewOf{base_id, map, 0, contiguous});
    }
    if (!map.defined()) return untracked();
    // The same view of the index map: the converter is a function of its operands.
    PtValues operands = inputs;
    operands[0] = PtValue::of_tensor(map);
    PtValues out;
    try {
        PtContext ctx(node, loc, operands, blocks);
        out = convert(ctx);
    } catch (const UserError&) {
        // The op took the tensor but not its index map (an op of float data only): the view
        // stays untracked, and a write through it is refused.
        return untracked();
    }
    if (out.empty() || out[0].kind != PtValue::Tensor) return nullptr;
    return std::make_shared<ViewOf>(
        ViewOf{base_id, out[0].tensor, 0, contiguous && keeps_contiguity(node.kind, inputs)});
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
