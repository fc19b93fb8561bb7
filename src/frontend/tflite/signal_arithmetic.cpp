#include "frontend/tflite/signal_arithmetic.h"

#include <cstring>

#include "frontend/composite_ops.h"
#include "frontend/tflite/tflite_schema.h"

namespace anvil::frontend::tflite {

using graph::Expr;

Expr integer_constant(const TfContext& ctx, DataType dtype, const std::vector<int64_t>& values,
                      const std::vector<int64_t>& shape) {
    runtime::NDArray array = runtime::NDArray::empty(shape, graph::dl_dtype_of(dtype));
    auto* bytes = static_cast<uint8_t*>(array.raw_data());
    const size_t width = size_t(dtype.bytes());
    for (size_t k = 0; k < values.size(); ++k) {
        // Two's complement, little-endian: the low bytes are the value converted to the type.
        std::memcpy(bytes + k * width, &values[k], width);
    }
    return ctx.constant(array);
}

Expr integer_scalar(const TfContext& ctx, DataType dtype, int64_t value) {
    return integer_constant(ctx, dtype, {value}, {});
}

Expr with_scalar(const TfContext& ctx, const char* op, const Expr& x, int64_t value) {
    DataType dtype = ctx.tensor_type(x, "the operand").dtype;
    return ctx.call(op, {x, integer_scalar(ctx, dtype, value)});
}

Expr significant_bits(const TfContext& ctx, const Expr& x) {
    // The count of powers of two 2^0 .. 2^(bits-1) at most x.
    DataType dtype = ctx.tensor_type(x, "the operand").dtype;
    std::vector<int64_t> powers;
    for (int k = 0; k < dtype.bits(); ++k) powers.push_back(int64_t(uint64_t{1} << k));
    Expr at_least =
        ctx.call("greater_equal", {expand_dims(ctx, x, ctx.rank(x)),
                                   integer_constant(ctx, dtype, powers, {int64_t(powers.size())})});
    return reduce_over(ctx, "sum", cast_to(ctx, at_least, DataType::int32()), ctx.rank(x));
}

Expr floor_sqrt(const TfContext& ctx, const Expr& x) {
    const DataType u64 = DataType::uint(64);
    const int64_t max_root = 0xFFFFFFFF;  // floor(sqrt(2^64 - 1))
    // float64(x) is x to 53 bits, so its square root is within one of the true root.
    Expr r = cast_to(
        ctx, ctx.call("floor", {ctx.call("sqrt", {cast_to(ctx, x, DataType::float64())})}), u64);
    r = ctx.call("minimum", {r, integer_scalar(ctx, u64, max_root)});
    // One step down when r * r > x; one step up when (r + 1)^2 <= x, i.e. x - r * r > 2 r.
    Expr too_big = ctx.call("greater", {ctx.call("multiply", {r, r}), x});
    r = ctx.call("where", {too_big, with_scalar(ctx, "subtract", r, 1), r});
    Expr rest = ctx.call("subtract", {x, ctx.call("multiply", {r, r})});
    Expr too_small = ctx.call("logical_and",
                              {ctx.call("less", {r, integer_scalar(ctx, u64, max_root)}),
                               ctx.call("greater", {rest, with_scalar(ctx, "left_shift", r, 1)})});
    return ctx.call("where", {too_small, with_scalar(ctx, "add", r, 1), r});
}

std::vector<int64_t> constant_vector(const TfContext& ctx, size_t i, int8_t type,
                                     const std::string& what) {
    expect_vector(ctx, ctx.input_tensor(i), type, what);
    return ctx.constant_ints(i, what);
}

void expect_vector(const TfContext& ctx, const TfliteTensor& t, int8_t type,
                   const std::string& what) {
    if (t.type != type || t.shape.size() != 1) {
        std::vector<int64_t> shape(t.shape.begin(), t.shape.end());
        ctx.error() << what << " must be a 1-D " << tensor_type_name(type) << " tensor, got "
                    << tensor_type_name(t.type) << " " << ints_str(shape);
    }
}

}  // namespace anvil::frontend::tflite
