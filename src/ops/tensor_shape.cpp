#include "ops/tensor_shape.h"

#include "ir/analyzer.h"
#include "ir/structural_equal.h"
#include "support/error.h"

namespace anvil::ops {

std::vector<PrimExpr> broadcast_shape(const std::vector<std::vector<PrimExpr>>& shapes,
                                      const SourceLoc& loc, const std::string& op,
                                      bool at_run_time) {
    size_t ndim = 0;
    for (const auto& s : shapes) ndim = std::max(ndim, s.size());
    std::vector<PrimExpr> out(ndim);
    for (size_t d = 0; d < ndim; ++d) {
        for (const auto& s : shapes) {
            if (d + s.size() < ndim) continue;  // this operand has no such leading dimension
            const PrimExpr& dim = s[d + s.size() - ndim];
            if (!out[d].defined() || is_one(out[d])) {
                out[d] = dim;
            } else if (!is_one(dim) && !structural_equal(simplify(dim), simplify(out[d]))) {
                if (at_run_time && (!as_const_int(dim) || !as_const_int(out[d]))) {
                    PrimExpr a = out[d], one = make_int(DataType::int64(), 1);
                    out[d] = select(eq(a, dim) || eq(dim, one), a,
                                    select(eq(a, one), dim, make_int(DataType::int64(), -1)));
                    continue;
                }
                user_error(loc) << op << ": shapes cannot be broadcast together: dimension " << dim
                                << " against " << out[d] << " (axis " << d << " of " << ndim << ")";
            }
        }
    }
    return out;
}

std::vector<PrimExpr> broadcast_index(const std::vector<PrimExpr>& operand_shape,
                                      std::span<const PrimExpr> out,
                                      std::span<const PrimExpr> out_shape) {
    std::vector<PrimExpr> idx;
    size_t offset = out.size() - operand_shape.size();
    for (size_t d = 0; d < operand_shape.size(); ++d) {
        const PrimExpr& dim = operand_shape[d];
        PrimExpr i = out[d + offset];
        if (is_one(dim)) {
            idx.push_back(0);
        } else if (!out_shape.empty() && !as_const_int(dim) &&
                   !structural_equal(simplify(dim), simplify(out_shape[d + offset]))) {
            idx.push_back(min(i, dim - 1));
        } else {
            idx.push_back(i);
        }
    }
    return idx;
}

std::vector<PrimExpr> to_vector(std::span<const PrimExpr> index) {
    return {index.begin(), index.end()};
}

std::vector<PrimExpr> te_shape(const graph::Type& t) {
    auto* tt = t.as<graph::TensorType>();
    ANVIL_CHECK(tt) << "te_shape of " << graph::type_str(t);
    std::vector<PrimExpr> out;
    for (const auto& d : tt->shape) {
        if (auto* v = as_const_int(d)) {
            out.push_back(make_int(DataType::int32(), *v));
        } else {
            out.push_back(d.dtype() == DataType::int32() ? d : cast(DataType::int32(), d));
        }
    }
    return out;
}

graph::Type graph_type(const te::Tensor& t) {
    return graph::make_tensor_type(t.shape(), t.dtype());
}

}  // namespace anvil::ops
