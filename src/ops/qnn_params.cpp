#include "ops/qnn_params.h"

#include "ops/axes.h"
#include "support/error.h"

namespace anvil::ops {

void check_quantized_dtype(const std::string& op, const std::string& what, DataType t,
                           const SourceLoc& loc) {
    if (t != DataType::int_(8) && t != DataType::uint(8) && t != DataType::int_(16) &&
        t != DataType::int32()) {
        user_error(loc) << op << ": " << what << " must be int8, uint8, int16 or int32, got "
                        << t.str();
    }
}

void check_qparams(const std::string& op, const std::vector<graph::Type>& params,
                   const std::string& prefix, const graph::TensorType& x,
                   std::optional<int64_t> axis, const SourceLoc& loc) {
    const char* names[] = {"scale", "zero point"};
    const DataType types[] = {DataType::float32(), DataType::int32()};
    for (size_t i = 0; i < params.size(); ++i) {
        std::string what = prefix + names[i];
        const auto& p = graph::expect_tensor(params[i], loc, "the " + what + " of " + op);
        if (p.dtype != types[i]) {
            user_error(loc) << op << ": the " << what << " must be " << types[i].str() << ", got "
                            << p.dtype.str();
        }
        if (p.ndim() == 0) continue;
        auto n = p.ndim() == 1 ? static_dim(p.shape[0]) : std::nullopt;
        if (n == 1) continue;
        if (!axis) {
            user_error(loc) << op << ": the " << what << " must be a scalar, got "
                            << graph::type_str(params[i]);
        }
        if (!n) {
            user_error(loc) << op << ": the " << what
                            << " must be a scalar or a 1-D tensor of static length, got "
                            << graph::type_str(params[i]);
        }
        int64_t ax = normalize_input_axis(*axis, x.ndim(), loc, op);
        auto len = static_dim(x.shape[static_cast<size_t>(ax)]);
        if (len != n) {
            user_error(loc) << op << ": the " << what << " has " << *n << " values, but axis " << ax
                            << " of the data has length "
                            << (len ? std::to_string(*len) : std::string("unknown"));
        }
    }
}

}  // namespace anvil::ops
