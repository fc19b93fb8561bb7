// Converters of PyTorch's pools: aten::max_pool1d/2d/3d (and their _with_indices forms),
// aten::avg_pool1d/2d/3d (ceil_mode, count_include_pad, divisor_override), and the adaptive
// pools aten::adaptive_avg_pool1d/2d/3d and aten::adaptive_max_pool1d/2d/3d (values and
// indices) for any output size; aten::max_unpool2d/3d. 1-D data pools as 2-D with a unit height;
// data may lack the batch dimension. Indices are PyTorch's: flat offsets into each (n, c) plane.
#include <numeric>

#include "frontend/conv_builder.h"
#include "frontend/pytorch/convert_ops.h"
#include "frontend/pytorch/window_args.h"
#include "ops/pool.h"
#include "ops/reduce.h"
#include "ops/transform.h"

namespace anvil::frontend::pytorch {

using graph::Expr;

namespace {

// The window of a pool, one entry per spatial dimension.
struct PoolWindow {
    std::vector<int64_t> kernel, strides, padding, dilation;  // padding: symmetric, nd values
    bool ceil_mode = false;
};

// PyTorch's own checks, which make its errors ours rather than a kernel's.
void check_window(const PtContext& ctx, const PoolWindow& w) {
    for (size_t d = 0; d < w.kernel.size(); ++d) {
        if (w.kernel[d] < 1 || w.strides[d] < 1 || w.dilation[d] < 1) {
            ctx.error() << "kernel_size " << ints_str(w.kernel) << ", stride "
                        << ints_str(w.strides) << " and dilation " << ints_str(w.dilation)
                        << " must be positive";
        }
        if (w.padding[d] < 0 || 2 * w.padding[d] > w.kernel[d]) {
            ctx.error() << "padding " << ints_str(w.padding)
                        << " must be at most half of kernel_size " << ints_str(w.kernel)
                        << ", as PyTorch requires";
        }
    }
}

// Pool `op` ("max" or "avg") of batched data `x` with `nd` spatial dimensions.
Expr pool(const PtContext& ctx, const char* op, const Expr& x, const PoolWindow& w,
          bool count_include_pad) {
    auto fill = [&](auto* a) {
        a->pool_size = ints_to_2d(w.kernel, 1);
        a->strides = ints_to_2d(w.strides, 1);
        a->dilation = ints_to_2d(w.dilation, 1);
        a->padding = symmetric_padding(ints_to_2d(w.padding, 0));
        a->ceil_mode = w.ceil_mode;
        a->count_include_pad = count_include_pad;
    };
    std::string name = std::string("nn.") + op + "_pool";
    if (w.kernel.size() == 3) {
        auto [attrs, a] = new_attrs<ops::Pool3DAttrs>();
        fill(a);
        return ctx.call(name + "3d", {x}, attrs);
    }
    auto [attrs, a] = new_attrs<ops::Pool2DAttrs>();
    fill(a);
    if (w.kernel.size() == 2) return ctx.call(name + "2d", {x}, attrs);
    return lower_2d_to_1d(ctx, ctx.call(name + "2d", {lift_1d_to_2d(ctx, x)}, attrs));
}

// PyTorch's indices of max pooling: nn.max_pool_indices gives offsets into the whole tensor,
// (n * C + c) * plane + position; PyTorch's are the position in the plane.
Expr max_pool_indices(const PtContext& ctx, const Expr& x, const PoolWindow& w) {
    auto [attrs, a] = new_attrs<ops::MaxPoolIndicesAttrs>();
    a->pool_size = w.kernel;
    a->strides = w.strides;
    a->dilation = w.dilation;
    a->padding = symmetric_padding(w.padding);
    a->ceil_mode = w.ceil_mode;
    Expr flat = ctx.call("nn.max_pool_indices", {x}, attrs);
    std::vector<int64_t> s = spatial_shape(ctx, x);
    int64_t plane = std::accumulate(s.begin(), s.end(), int64_t{1}, std::multiplies<>());
    return ctx.call("floor_mod", {flat, ctx.constant_scalar(DataType::int64(), double(plane))});
}

// `x` [N, C, ...] reshaped to [N, C, *tail], N and C kept as they are (possibly symbolic).
Expr reshape_keep_nc(const PtContext& ctx, const Expr& x, const std::vector<int64_t>& tail) {
    auto [attrs, a] = new_attrs<ops::ReshapeAttrs>();
    a->newshape = {0, 0};  // 0: the input's dimension
    for (int64_t t : tail) {
        if (t == 0) ctx.error() << "pooling to or from an empty dimension is not supported";
        a->newshape.push_back(t);
    }
    return ctx.call("reshape", {x}, attrs);
}

// A constant of `values` in `dtype` (made in float64, the closest to exact, then cast).
Expr float_constant(const PtContext& ctx, const std::vector<double>& values,
                    const std::vector<int64_t>& shape, DataType dtype) {
    runtime::NDArray a = runtime::NDArray::empty(shape, graph::dl_dtype_of(DataType::float64()));
    a.copy_from(values);
    return cast_to(ctx, ctx.constant(a), dtype);
}

// The windows of adaptive pooling of `in` to `out` positions: output i reads
// [floor(i * in / out), ceil((i + 1) * in / out)).
int64_t window_start(int64_t i, int64_t in, int64_t out) {
    return i * in / out;
}
int64_t window_end(int64_t i, int64_t in, int64_t out) {
    return ((i + 1) * in + out - 1) / out;
}

// The gathered form's tables hold every tap of every output position of a plane; they are built
// here, so their size is bounded (an output_size of 2^63 would otherwise never finish).
constexpr int64_t kMaxGatheredTaps = int64_t{1} << 26;

void check_gather_size(const PtContext& ctx, const std::vector<int64_t>& in,
                       const std::vector<int64_t>& out) {
    int64_t taps = 1;
    for (size_t d = 0; d < in.size(); ++d) {
        // Each window spans at most in / out + 2 positions.
        int64_t k = std::min(in[d], in[d] / out[d] + 2);
        if (out[d] > kMaxGatheredTaps || k > kMaxGatheredTaps / out[d] ||
            taps > kMaxGatheredTaps / (out[d] * k)) {
            ctx.error() << "adaptive pooling of " << ints_str(in) << " to " << ints_str(out)
                        << " needs more than " << kMaxGatheredTaps
                        << " window taps per plane, which is not supported";
        }
        taps *= out[d] * k;
    }
}

// Adaptive pooling whose windows differ in size: every window's input positions gathered from
// the flattened planes (padded to the largest window by repeating its last position, which
// changes neither a maximum nor the first index of one), then reduced. Returns the values and,
// for max pooling, PyTorch's indices.
std::pair<Expr, Expr> adaptive_pool_gathered(const PtContext& ctx, const Expr& x, bool is_max,
                                             const std::vector<int64_t>& in,
                                             const std::vector<int64_t>& out) {
    size_t nd = in.size();
    std::vector<int64_t> kmax(nd, 0);
    for (size_t d = 0; d < nd; ++d) {
        for (int64_t i = 0; i < out[d]; ++i) {
            kmax[d] =
                std::max(kmax[d], window_end(i, in[d], out[d]) - window_start(i, in[d], out[d]));
        }
    }
    auto product = [](const std::vector<int64_t>& v) {
        return std::accumulate(v.begin(), v.end(), int64_t{1}, std::multiplies<>());
    };
    int64_t n_out = product(out), k = product(kmax), plane = product(in);
    // positions[o][t]: the flat input position of tap t of output o; weights: 1/count for the
    // window's own taps, 0 for the repeats.
    std::vector<int64_t> positions;
    std::vector<double> weights;
    positions.reserve(static_cast<size_t>(n_out * k));
    std::vector<int64_t> o(nd, 0), t(nd, 0);
    for (int64_t oi = 0; oi < n_out; ++oi) {
        for (int64_t r = oi, d = static_cast<int64_t>(nd) - 1; d >= 0; --d) {
            o[d] = r % out[d];
            r /= out[d];
        }
        int64_t count = 1;
        for (size_t d = 0; d < nd; ++d) {
            count *= window_end(o[d], in[d], out[d]) - window_start(o[d], in[d], out[d]);
        }
        for (int64_t ti = 0; ti < k; ++ti) {
            for (int64_t r = ti, d = static_cast<int64_t>(nd) - 1; d >= 0; --d) {
                t[d] = r % kmax[d];
                r /= kmax[d];
            }
            int64_t pos = 0;
            bool own = true;
            for (size_t d = 0; d < nd; ++d) {
                int64_t start = window_start(o[d], in[d], out[d]);
                int64_t len = window_end(o[d], in[d], out[d]) - start;
                own = own && t[d] < len;
                pos = pos * in[d] + start + std::min(t[d], len - 1);
            }
            positions.push_back(pos);
            weights.push_back(own ? 1.0 / static_cast<double>(count) : 0.0);
        }
    }
    Expr flat = reshape_keep_nc(ctx, x, {plane});
    auto [take_attrs, ta] = new_attrs<ops::TakeAttrs>();
    ta->axis = 2;
    Expr taps = ctx.call("take", {flat, ctx.constant_int64(positions, {n_out * k})}, take_attrs);
    taps = reshape_keep_nc(ctx, taps, {n_out, k});
    DataType dt = ctx.tensor_type(x, "the input").dtype;
    if (!is_max) {
        Expr weighted = ctx.call("multiply", {taps, float_constant(ctx, weights, {n_out, k}, dt)});
        return {reshape_keep_nc(ctx, reduce_over(ctx, "sum", weighted, 3), out), Expr()};
    }
    Expr values = reshape_keep_nc(ctx, reduce_over(ctx, "max", taps, 3), out);
    // The tap of the maximum, then its position: positions[o * k + tap].
    auto [arg_attrs, aa] = new_attrs<ops::ArgReduceAttrs>();
    aa->axis = 3;
    aa->keepdims = false;
    Expr tap = ctx.call("argmax", {taps}, arg_attrs);
    std::vector<int64_t> base(static_cast<size_t>(n_out));
    for (int64_t i = 0; i < n_out; ++i) base[static_cast<size_t>(i)] = i * k;
    Expr index = ctx.call("add", {tap, ctx.constant_int64(base, {n_out})});
    auto [pos_attrs, pa] = new_attrs<ops::TakeAttrs>();
    pa->axis = 0;
    Expr indices = ctx.call("take", {ctx.constant_int64(positions, {n_out * k}), index}, pos_attrs);
    return {values, reshape_keep_nc(ctx, indices, out)};
}

// The spatial rank of aten::max_pool2d, aten::adaptive_avg_pool3d, ... from its name.
int64_t rank_from_kind(const std::string& kind) {
    return kind[kind.find("pool") + 4] - '0';
}

// kernel_size, stride and padding (operands 1 to 3) of the max and average pools; an empty
// stride is the kernel size.
PoolWindow window_operands(const PtContext& ctx, size_t n) {
    PoolWindow w;
    w.kernel = spatial_ints(ctx, 1, n, "kernel_size");
    w.strides = ctx.ints(2).empty() ? w.kernel : spatial_ints(ctx, 2, n, "stride");
    w.padding = spatial_ints(ctx, 3, n, "padding");
    return w;
}

}  // namespace

// aten::max_pool1d/2d/3d(x, kernel_size, stride, padding, dilation, ceil_mode), an empty stride
// meaning the kernel size; the _with_indices forms also return PyTorch's indices.
PtValues convert_max_pool(PtContext& ctx) {
    int64_t nd = rank_from_kind(ctx.kind());
    WindowData data = batched_data(ctx, ctx.tensor(0), nd);
    size_t n = static_cast<size_t>(nd);
    PoolWindow w = window_operands(ctx, n);
    w.dilation = spatial_ints(ctx, 4, n, "dilation");
    w.ceil_mode = ctx.bool_arg(5);
    check_window(ctx, w);
    Expr y = drop_batch(ctx, pool(ctx, "max", data.x, w, false), data);
    if (ctx.kind().find("_with_indices") == std::string::npos) return {PtValue::of_tensor(y)};
    Expr indices = drop_batch(ctx, max_pool_indices(ctx, data.x, w), data);
    return {PtValue::of_tensor(y), PtValue::of_tensor(indices)};
}

// aten::avg_pool1d/2d/3d(x, kernel_size, stride, padding, ceil_mode, count_include_pad[,
// divisor_override]).
PtValues convert_avg_pool(PtContext& ctx) {
    int64_t nd = rank_from_kind(ctx.kind());
    WindowData data = batched_data(ctx, ctx.tensor(0), nd);
    size_t n = static_cast<size_t>(nd);
    PoolWindow w = window_operands(ctx, n);
    w.dilation.assign(n, 1);
    w.ceil_mode = ctx.bool_arg(4);
    bool count_include_pad = ctx.bool_arg(5);
    check_window(ctx, w);
    if (nd == 1 || ctx.is_none(6)) {
        Expr y = pool(ctx, "avg", data.x, w, count_include_pad);
        return {PtValue::of_tensor(drop_batch(ctx, y, data))};
    }
    // divisor_override: the window's sum over the input (padding adds zeros) divided by it,
    // that is the average over the input positions times their count / divisor, a constant
    // per output position.
    int64_t divisor = ctx.int_arg(6);
    if (divisor == 0) ctx.error() << "divisor_override must not be zero";
    Expr avg = pool(ctx, "avg", data.x, w, false);
    std::vector<int64_t> in = spatial_shape(ctx, data.x);
    std::vector<int64_t> out = spatial_shape(ctx, avg);
    int64_t total = std::accumulate(out.begin(), out.end(), int64_t{1}, std::multiplies<>());
    std::vector<double> factor(static_cast<size_t>(total));
    for (int64_t oi = 0; oi < total; ++oi) {
        int64_t count = 1;
        for (int64_t r = oi, d = nd - 1; d >= 0; --d) {
            size_t u = static_cast<size_t>(d);
            int64_t o = r % out[u];
            r /= out[u];
            int64_t start = o * w.strides[u] - w.padding[u];
            int64_t end = std::min(start + w.kernel[u], in[u]);
            count *= std::max<int64_t>(0, end - std::max<int64_t>(start, 0));
        }
        factor[static_cast<size_t>(oi)] = double(count) / double(divisor);
    }
    DataType dt = ctx.tensor_type(avg, "the result").dtype;
    Expr y = ctx.call("multiply", {avg, float_constant(ctx, factor, out, dt)});
    return {PtValue::of_tensor(drop_batch(ctx, y, data))};
}

// aten::adaptive_avg_pool1d/2d/3d(x, output_size) and aten::adaptive_max_pool1d/2d/3d (values
// and indices). Output position i of a dimension of extent `in` pools [floor(i * in / out),
// ceil((i + 1) * in / out)): a regular pool when out divides in, gathered windows otherwise.
PtValues convert_adaptive_pool(PtContext& ctx) {
    int64_t nd = rank_from_kind(ctx.kind());
    bool is_max = ctx.kind().find("max") != std::string::npos;
    WindowData data = batched_data(ctx, ctx.tensor(0), nd);
    size_t n = static_cast<size_t>(nd);
    std::vector<int64_t> out = spatial_ints(ctx, 1, n, "output_size");
    std::vector<int64_t> in = spatial_shape(ctx, data.x);
    bool divisible = true;
    for (size_t d = 0; d < n; ++d) {
        if (out[d] < 1 || in[d] < 1) {
            ctx.error() << "output_size " << ints_str(out) << " of spatial extents " << ints_str(in)
                        << ": every output and input extent must be positive";
        }
        divisible = divisible && in[d] % out[d] == 0;
    }
    if (!divisible) check_gather_size(ctx, in, out);
    Expr y, indices;
    if (divisible) {
        PoolWindow w;
        for (size_t d = 0; d < n; ++d) w.kernel.push_back(in[d] / out[d]);
        w.strides = w.kernel;
        w.padding.assign(n, 0);
        w.dilation.assign(n, 1);
        y = pool(ctx, is_max ? "max" : "avg", data.x, w, false);
        if (is_max) indices = max_pool_indices(ctx, data.x, w);
    } else {
        std::tie(y, indices) = adaptive_pool_gathered(ctx, data.x, is_max, in, out);
    }
    y = drop_batch(ctx, y, data);
    if (!is_max) return {PtValue::of_tensor(y)};
    return {PtValue::of_tensor(y), PtValue::of_tensor(drop_batch(ctx, indices, data))};
}

// aten::max_unpool2d(x, indices, output_size) and aten::max_unpool3d(x, indices, output_size,
// stride, padding): zeros of [N, C, *output_size] with each value of x written at its index into
// its (n, c) plane (max pooling's indices; the last write wins where two are equal).
PtValues convert_max_unpool(PtContext& ctx) {
    int64_t nd = ctx.kind()[ctx.kind().size() - 2] - '0';
    WindowData data = batched_data(ctx, ctx.tensor(0), nd);
    WindowData idx = batched_data(ctx, ctx.tensor(1), nd);
    DataType it = ctx.tensor_type(idx.x, "the indices").dtype;
    if (it != DataType::int64() && it != DataType::int32()) {
        ctx.error() << "the indices must be int64 or int32, got " << it.str();
    }
    std::vector<int64_t> out = spatial_ints(ctx, 2, static_cast<size_t>(nd), "output_size");
    std::vector<int64_t> in = spatial_shape(ctx, data.x);
    if (spatial_shape(ctx, idx.x) != in) {
        ctx.error() << "the indices' spatial extents " << ints_str(spatial_shape(ctx, idx.x))
                    << " differ from the input's " << ints_str(in);
    }
    auto product = [](const std::vector<int64_t>& v) {
        return std::accumulate(v.begin(), v.end(), int64_t{1}, std::multiplies<>());
    };
    for (int64_t o : out) {
        if (o < 1) ctx.error() << "output_size " << ints_str(out) << " must be positive";
    }
    // scatter_elements takes static indices only.
    std::vector<int64_t> shape = ctx.static_shape(idx.x, "the indices");
    DataType dt = ctx.tensor_type(data.x, "the input").dtype;
    auto [zeros_attrs, z] = new_attrs<ops::BroadcastToAttrs>();
    z->shape = {shape[0], shape[1], product(out)};
    Expr zeros = ctx.call("broadcast_to", {ctx.constant_scalar(dt, 0.0)}, zeros_attrs);
    auto [attrs, a] = new_attrs<ops::ScatterAttrs>();
    a->axis = 2;
    Expr y = ctx.call("scatter_elements",
                      {zeros, reshape_keep_nc(ctx, idx.x, {product(in)}),
                       reshape_keep_nc(ctx, data.x, {product(in)})},
                      attrs);
    return {PtValue::of_tensor(drop_batch(ctx, reshape_keep_nc(ctx, y, out), data))};
}

}  // namespace anvil::frontend::pytorch
