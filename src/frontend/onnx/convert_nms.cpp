// NonMaxSuppression as ordinary ops and a loop. Greedy suppression is sequential (a box is kept
// when no kept box of higher score overlaps it too much), so the selection is a control.loop
// over the score ranks r = 0 .. n-1, all batches and classes at once: the box of rank r is kept
// when its score passes the threshold, no box kept so far overlaps it by more than the IoU
// threshold and its class has kept fewer than max_output_boxes_per_class. Before the loop,
// every pair's overlap test ([B, n, n]) and every box's rank ([B, C, n], by score, ties by lower
// index) are computed once; each iteration is a few [B, C, n] kernels. The selected
// (batch, class, box) triples come out in batch, class, rank order, their count bound at run
// time. B, C and n may be symbolic: one compilation serves any number of boxes.
#include "frontend/onnx/convert_ops.h"
#include "ir/analyzer.h"
#include "ops/control_flow.h"
#include "ops/reduce.h"
#include "ops/shape_tensor.h"
#include "ops/transform.h"

namespace anvil::frontend {

using graph::Expr;

namespace {

DataType i64() {
    return DataType::int64();
}

Expr take(ConvertContext& ctx, const Expr& x, int64_t index, int64_t axis) {
    auto [attrs, a] = new_attrs<ops::TakeAttrs>();
    a->axis = axis;
    return ctx.call("take", {x, ctx.constant_scalar(i64(), static_cast<double>(index))}, attrs);
}

Expr sum(ConvertContext& ctx, const Expr& x, int64_t axis) {
    return reduce_over(ctx, "sum", x, axis);
}

Expr any(ConvertContext& ctx, const Expr& mask, int64_t axis) {
    return ctx.call("greater",
                    {sum(ctx, cast_to(ctx, mask, i64()), axis), ctx.constant_scalar(i64(), 0)});
}

// The box corners [B, n] each: ymin, xmin, ymax, xmax.
std::array<Expr, 4> corners(ConvertContext& ctx, const Expr& boxes) {
    Expr a = take(ctx, boxes, 0, 2), b = take(ctx, boxes, 1, 2);
    Expr c = take(ctx, boxes, 2, 2), d = take(ctx, boxes, 3, 2);
    if (ctx.attr_int("center_point_box", 0) != 0) {  // x_center, y_center, width, height
        DataType dt = ctx.tensor_type(boxes, "the boxes").dtype;
        Expr half_w = ctx.call("divide", {c, ctx.constant_scalar(dt, 2)});
        Expr half_h = ctx.call("divide", {d, ctx.constant_scalar(dt, 2)});
        return {ctx.call("subtract", {b, half_h}), ctx.call("subtract", {a, half_w}),
                ctx.call("add", {b, half_h}), ctx.call("add", {a, half_w})};
    }
    // y1, x1, y2, x2: either corner may come first.
    return {ctx.call("minimum", {a, c}), ctx.call("minimum", {b, d}), ctx.call("maximum", {a, c}),
            ctx.call("maximum", {b, d})};
}

// [B, n, n]: whether box j suppresses box i (both have area and IoU > threshold).
Expr overlaps(ConvertContext& ctx, const Expr& boxes, const Expr& iou_threshold) {
    std::array<Expr, 4> k = corners(ctx, boxes);
    auto pair = [&](const Expr& x) {
        return std::pair{expand_dims(ctx, x, 2), expand_dims(ctx, x, 1)};  // i, j
    };
    auto [ymin_i, ymin_j] = pair(k[0]);
    auto [xmin_i, xmin_j] = pair(k[1]);
    auto [ymax_i, ymax_j] = pair(k[2]);
    auto [xmax_i, xmax_j] = pair(k[3]);
    DataType dt = ctx.tensor_type(boxes, "the boxes").dtype;
    Expr zero = ctx.constant_scalar(dt, 0);
    auto extent = [&](const Expr& lo_i, const Expr& lo_j, const Expr& hi_i, const Expr& hi_j) {
        Expr lo = ctx.call("maximum", {lo_i, lo_j}), hi = ctx.call("minimum", {hi_i, hi_j});
        return ctx.call("maximum", {ctx.call("subtract", {hi, lo}), zero});
    };
    Expr inter = ctx.call("multiply", {extent(ymin_i, ymin_j, ymax_i, ymax_j),
                                       extent(xmin_i, xmin_j, xmax_i, xmax_j)});
    Expr area = ctx.call("multiply",
                         {ctx.call("subtract", {k[2], k[0]}), ctx.call("subtract", {k[3], k[1]})});
    Expr area_i = expand_dims(ctx, area, 2), area_j = expand_dims(ctx, area, 1);
    Expr uni = ctx.call("subtract", {ctx.call("add", {area_i, area_j}), inter});
    Expr has_area = ctx.call(
        "logical_and", {ctx.call("greater", {area_i, zero}), ctx.call("greater", {area_j, zero})});
    Expr safe = ctx.call("where", {has_area, uni, ctx.constant_scalar(dt, 1)});
    Expr iou = ctx.call("divide", {inter, safe});
    return ctx.call("logical_and", {has_area, ctx.call("greater", {iou, iou_threshold})});
}

// An int64 scalar of the value `v`: a constant, or the VM's value of a symbolic dimension.
Expr scalar_of(ConvertContext& ctx, const PrimExpr& v, const Expr& after) {
    if (const int64_t* c = as_const_int(v)) {
        return ctx.constant_scalar(i64(), static_cast<double>(*c));
    }
    return ops::make_shape_tensor({v}, {}, i64(), ctx.loc(), {after});
}

// `x` as one dimension of all its elements.
Expr flatten_all(ConvertContext& ctx, const Expr& x) {
    PrimExpr total = make_int(i64(), 1);
    for (const auto& d : ctx.tensor_type(x, "a tensor").shape) total = total * d;
    total = simplify(total);
    if (const int64_t* c = as_const_int(total)) return reshape_to(ctx, x, {*c});
    auto [attrs, a] = new_attrs<ops::ReshapeAttrs>();
    a->dims = {total};
    a->allowzero = true;
    return ctx.call("reshape", {x}, attrs);
}

// A one-element operand as a scalar of `dtype`, or `fallback` when omitted.
Expr scalar_operand(ConvertContext& ctx, size_t index, DataType dtype, double fallback,
                    const char* what) {
    Expr x = ctx.optional_input(index);
    if (!x.defined()) return ctx.constant_scalar(dtype, fallback);
    const auto& t = ctx.tensor_type(x, what);
    if (!t.is_static() || t.num_elements() != 1) ctx.error() << what << " must hold one value";
    return reshape_to(ctx, cast_to(ctx, x, dtype), {});
}

}  // namespace

Exprs convert_non_max_suppression(ConvertContext& ctx) {
    Expr boxes = ctx.input(0), scores = ctx.input(1);
    const std::vector<PrimExpr>& bs = ctx.tensor_type(boxes, "the boxes").shape;
    const std::vector<PrimExpr>& ss = ctx.tensor_type(scores, "the scores").shape;
    // Symbolic sizes must be the same dimension (one dim_param) where they have to agree.
    Analyzer analyzer;
    if (bs.size() != 3 || ss.size() != 3 || !analyzer.can_prove_equal(bs[2], make_int(i64(), 4)) ||
        !analyzer.can_prove_equal(ss[0], bs[0]) || !analyzer.can_prove_equal(ss[2], bs[1])) {
        ctx.error() << "boxes must be [batch, n, 4] and scores [batch, classes, n], not "
                    << graph::type_str(boxes->type) << " and " << graph::type_str(scores->type);
    }
    PrimExpr batches = ss[0], classes = ss[1], n = ss[2];
    DataType dt = ctx.tensor_type(scores, "the scores").dtype;
    Expr max_out = scalar_operand(ctx, 2, i64(), 0, "max_output_boxes_per_class");
    Expr iou_threshold = scalar_operand(ctx, 3, dt, 0, "iou_threshold");
    Expr suppress = overlaps(ctx, boxes, iou_threshold);  // [B, n, n]
    Expr valid =
        ctx.optional_input(4).defined()
            ? ctx.call("greater", {scores, scalar_operand(ctx, 4, dt, 0, "score_threshold")})
            : ctx.call("equal", {scores, scores});  // no threshold (NaN scores fail)
    // rank[b, c, i]: how many boxes come before box i (higher score, or equal and lower index).
    Expr zero = ctx.constant_scalar(i64(), 0);
    Expr box = iota(ctx, n, zero);          // [n]: j
    Expr box_i = expand_dims(ctx, box, 1);  // [n, 1]: i
    Expr s_i = expand_dims(ctx, scores, 3), s_j = expand_dims(ctx, scores, 2);
    Expr before = ctx.call(
        "logical_or",
        {ctx.call("greater", {s_j, s_i}),
         ctx.call("logical_and", {ctx.call("equal", {s_j, s_i}), ctx.call("less", {box, box_i})})});
    Expr rank = sum(ctx, cast_to(ctx, before, i64()), 3);  // [B, C, n]

    // The loop body (r, cond, kept, count, rank, valid, suppress, box, max_out) →
    // (cond, kept', count').
    auto param = [&](const char* name, const graph::Type& t) {
        return graph::make_var(name, t, ctx.loc());
    };
    auto scalar = [](DataType t) { return graph::make_tensor_type(std::vector<int64_t>{}, t); };
    std::vector<Ref<graph::Var>> params = {
        param("r", scalar(i64())),
        param("cond", scalar(DataType::bool_())),
        param("kept", graph::make_tensor_type(std::vector<PrimExpr>{batches, classes, n},
                                              DataType::bool_())),
        param("count", graph::make_tensor_type(std::vector<PrimExpr>{batches, classes}, i64())),
        param("rank", rank->type),
        param("valid", valid->type),
        param("suppress", suppress->type),
        param("box", box->type),
        param("max_out", max_out->type)};
    Expr at_r = ctx.call("equal", {params[4], params[0]});                  // [B, C, n]
    Expr index = sum(ctx, ctx.call("where", {at_r, params[7], zero}), 2);   // [B, C]
    Expr passes = any(ctx, ctx.call("logical_and", {at_r, params[5]}), 2);  // [B, C]
    auto [gather, g] = new_attrs<ops::GatherNDAttrs>();
    g->batch_dims = 1;
    Expr row = ctx.call("gather_nd", {params[6], expand_dims(ctx, index, 2)}, gather);  // [B, C, n]
    Expr suppressed = any(ctx, ctx.call("logical_and", {params[2], row}), 2);
    Expr keep = ctx.call("logical_and",
                         {ctx.call("logical_and", {passes, ctx.call("logical_not", {suppressed})}),
                          ctx.call("less", {params[3], params[8]})});  // [B, C]
    Expr kept = ctx.call("logical_or",
                         {params[2], ctx.call("logical_and", {at_r, expand_dims(ctx, keep, 2)})});
    Expr count = ctx.call("add", {params[3], cast_to(ctx, keep, i64())});
    Expr body = graph::make_tuple({ctx.constant_scalar(DataType::bool_(), 1), kept, count});
    std::string name = (ctx.node().output_size() ? ctx.node().output(0) : "nms") + "_select";
    for (char& c : name) {
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    }
    SubgraphFunction f = ctx.subgraphs().add_function(name, params, body);

    Expr none_kept = ctx.call("less", {rank, zero});  // all false
    Expr no_count = sum(ctx, cast_to(ctx, none_kept, i64()), 2);
    graph::Type result = graph::make_tuple_type({params[2]->type, params[3]->type});
    Expr loop = ops::make_loop(scalar_of(ctx, n, boxes), ctx.constant_scalar(DataType::bool_(), 1),
                               {none_kept, no_count}, {rank, valid, suppress, box, max_out}, f.name,
                               result, ctx.loc());
    Expr final_kept = graph::make_tuple_get_item(loop, 0, ctx.loc());  // [B, C, n], by box

    // By rank: kept_by_rank[b, c, p] and order[b, c, p], the box of rank p.
    Expr is_p = ctx.call("equal", {expand_dims(ctx, rank, 3), box});  // [B, C, n(i), n(p)]
    Expr kept_by_rank =
        any(ctx, ctx.call("logical_and", {is_p, expand_dims(ctx, final_kept, 3)}), 2);
    Expr order = sum(ctx, ctx.call("where", {is_p, box_i, zero}), 2);  // [B, C, n]
    Expr p = selected_positions(ctx, flatten_all(ctx, kept_by_rank));
    auto column = [&](const Expr& x) { return expand_dims(ctx, x, 1); };
    auto div = [&](const Expr& x, const PrimExpr& d) {
        return ctx.call("divide", {x, scalar_of(ctx, simplify(d), boxes)});
    };
    auto mod = [&](const Expr& x, const PrimExpr& d) {
        return ctx.call("mod", {x, scalar_of(ctx, simplify(d), boxes)});
    };
    auto [t, ta] = new_attrs<ops::TakeAttrs>();
    Expr chosen = ctx.call("take", {flatten_all(ctx, order), p}, t);
    auto [cat, ca] = new_attrs<ops::ConcatenateAttrs>();
    ca->axis = 1;
    return {ctx.call("concatenate",
                     {column(div(p, classes * n)), column(mod(div(p, n), classes)), column(chosen)},
                     cat)};
}

}  // namespace anvil::frontend
