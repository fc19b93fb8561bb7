// Converters of TFLite's operators that select along an axis: GATHER and SPLIT. Both move
// quantized integers as they are (the results keep the operand's quantization, as TFLite
// requires); SPLIT keeps a channels-first operand so.
#include "frontend/composite_ops.h"
#include "frontend/tflite/convert_ops.h"
#include "frontend/tflite/tflite_schema.h"
#include "ops/transform.h"

namespace anvil::frontend::tflite {

using graph::Expr;

// GATHER(params, indices): take along `axis`; batch_dims must be 0.
void convert_gather(TfContext& ctx) {
    ctx.expect_arity(2, 2, 1);
    const TfliteOptions& o = ctx.options(options_type::kGather);
    if (o.int32(gather_options::kBatchDims) != 0) {
        ctx.error() << "batch_dims " << o.int32(gather_options::kBatchDims)
                    << " is not supported (only 0)";
    }
    Expr params = ctx.input_tflite(0);
    DataType index_type = ctx.tensor_type(ctx.input(1).expr, "the indices").dtype;
    if (index_type != DataType::int32() && index_type != DataType::int64()) {
        ctx.error() << "the indices must be int32 or int64, got " << index_type.str();
    }
    auto [attrs, a] = new_attrs<ops::TakeAttrs>();
    a->axis = ctx.normalize_axis(o.int32(gather_options::kAxis), ctx.rank(params), "the axis");
    ctx.set_output(0, ctx.call("take", {params, ctx.input_tflite(1)}, attrs));
}

// SPLIT(axis, x): num_splits equal parts.
void convert_split(TfContext& ctx) {
    ctx.expect_arity(2, 2, ctx.num_outputs());
    int32_t parts = ctx.options(options_type::kSplit).int32(split_options::kNumSplits);
    if (parts < 1 || size_t(parts) != ctx.num_outputs()) {
        ctx.error() << "num_splits " << parts << " does not match its " << ctx.num_outputs()
                    << " result(s)";
    }
    std::vector<int64_t> axis = ctx.constant_ints(0, "the axis");
    if (axis.size() != 1) ctx.error() << "the axis must be one value";
    const TfValue& x = ctx.input(1);
    int64_t rank = ctx.rank(x.expr);
    int64_t a = ctx.normalize_axis(axis[0], rank, "the axis");
    int64_t held = x.channels_first ? channels_first_axis(a) : a;
    int64_t extent = ctx.static_shape(x.expr, "the operand")[size_t(held)];
    if (extent % parts != 0) {
        ctx.error() << "axis " << a << " of extent " << extent << " does not split into " << parts
                    << " equal parts";
    }
    auto [attrs, s] = new_attrs<ops::SplitAttrs>();
    s->axis = held;
    s->sections = parts;
    Expr tuple = ctx.call("split", {x.expr}, attrs);
    for (int32_t k = 0; k < parts; ++k) {
        ctx.set_output(size_t(k), graph::make_tuple_get_item(tuple, k, ctx.loc()),
                       x.channels_first);
    }
}

}  // namespace anvil::frontend::tflite
