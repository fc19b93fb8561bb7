// Operands of PyTorch's convolutions and pools (window_args.h).
#include "frontend/pytorch/window_args.h"

#include "ops/transform.h"

namespace anvil::frontend::pytorch {

using graph::Expr;

std::vector<int64_t> spatial_ints(const PtContext& ctx, size_t i, size_t nd, const char* what) {
    std::vector<int64_t> v = ctx.ints(i);
    if (v.size() == 1 && nd > 1) v.assign(nd, v[0]);
    if (v.size() != nd) {
        ctx.error() << what << " has " << v.size() << " values for " << nd << " spatial dimension"
                    << (nd == 1 ? "" : "s");
    }
    return v;
}

std::vector<int64_t> symmetric_padding(const std::vector<int64_t>& p) {
    std::vector<int64_t> out = p;
    out.insert(out.end(), p.begin(), p.end());
    return out;
}

WindowData batched_data(const PtContext& ctx, const Expr& x, int64_t nd) {
    int64_t rank = ctx.rank(x);
    if (rank == nd + 2) return {x, false};
    if (rank == nd + 1) return {expand_dims(ctx, x, 0), true};
    ctx.error() << "expects " << nd + 1 << "-D (unbatched) or " << nd + 2
                << "-D (batched) input for " << nd << " spatial dimension" << (nd == 1 ? "" : "s")
                << ", got " << rank << "-D";
    ANVIL_UNREACHABLE();
}

Expr drop_batch(const PtContext& ctx, const Expr& y, const WindowData& d) {
    if (!d.unbatched) return y;
    auto [attrs, a] = new_attrs<ops::SqueezeAttrs>();
    a->axes = {0};
    return ctx.call("squeeze", {y}, attrs);
}

std::vector<int64_t> spatial_shape(const PtContext& ctx, const Expr& x) {
    const auto& shape = ctx.tensor_type(x, "the input").shape;
    std::vector<int64_t> out;
    for (size_t d = 2; d < shape.size(); ++d) {
        const int64_t* n = as_const_int(shape[d]);
        if (!n) {
            ctx.error() << "needs static spatial dimensions, but dimension " << d
                        << " of the input "
                        << "is the symbolic size " << shape[d];
        }
        out.push_back(*n);
    }
    return out;
}

}  // namespace anvil::frontend::pytorch
