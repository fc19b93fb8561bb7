#include "ops/axes.h"

#include <algorithm>

#include "ir/analyzer.h"
#include "support/error.h"

namespace anvil::ops {

int64_t normalize_axis(int64_t axis, int64_t ndim, const SourceLoc& loc, const std::string& op,
                       const std::string& what) {
    if (axis < -ndim || axis >= ndim) {
        user_error(loc) << op << ": " << what << " " << axis << " is out of range for a tensor of "
                        << ndim << " dimensions (expected " << -ndim << " <= " << what << " < "
                        << ndim << ")";
    }
    return axis < 0 ? axis + ndim : axis;
}

std::vector<int64_t> normalize_axes(const std::vector<int64_t>& axes, int64_t ndim,
                                    const SourceLoc& loc, const std::string& op,
                                    const std::string& what) {
    std::vector<int64_t> out;
    for (size_t i = 0; i < axes.size(); ++i) {
        int64_t a = normalize_axis(axes[i], ndim, loc, op, what + "[" + std::to_string(i) + "]");
        if (std::find(out.begin(), out.end(), a) != out.end()) {
            user_error(loc) << op << ": " << what << " names axis " << a << " twice";
        }
        out.push_back(a);
    }
    return out;
}

int64_t normalize_input_axis(int64_t axis, size_t ndim, const SourceLoc& loc,
                             const std::string& op) {
    int64_t r = static_cast<int64_t>(ndim);
    if (axis < -r || axis >= r) {
        user_error(loc) << op << ": axis " << axis << " is out of range for a " << r << "-D input";
    }
    return axis < 0 ? axis + r : axis;
}

void check_int_list(const SourceLoc& loc, const std::string& op, const char* name,
                    const std::vector<int64_t>& values, size_t n, int64_t min) {
    if (values.size() != n) {
        user_error(loc) << op << ": " << name << " needs " << n << " values, got "
                        << list_str(values);
    }
    for (int64_t v : values) {
        if (v < min) {
            user_error(loc) << op << ": " << name << " must be >= " << min << ", got "
                            << list_str(values);
        }
    }
}

const char* spatial_dim_name(size_t i, size_t nd) {
    static const char* const kNames[] = {"depth", "height", "width"};
    return kNames[3 - nd + i];
}

std::optional<int64_t> static_dim(const PrimExpr& dim) {
    if (const int64_t* v = as_const_int(dim)) return *v;
    return std::nullopt;
}

std::string dim_str(const PrimExpr& dim) {
    if (const int64_t* v = as_const_int(dim)) return std::to_string(*v);
    return to_string(dim);
}

std::string shape_str(const std::vector<PrimExpr>& shape) {
    std::string s = "(";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + dim_str(shape[i]);
    return s + ")";
}

std::string list_str(const std::vector<int64_t>& values) {
    std::string s = "[";
    for (size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + std::to_string(values[i]);
    return s + "]";
}

PrimExpr shape_product(const std::vector<PrimExpr>& shape) {
    if (shape.empty()) return make_int(DataType::int64(), 1);
    PrimExpr p = shape[0];
    for (size_t i = 1; i < shape.size(); ++i) p = p * shape[i];
    return simplify(p);
}

PrimExpr ravel_index(const std::vector<PrimExpr>& index, const std::vector<PrimExpr>& shape) {
    PrimExpr flat = make_int(DataType::int32(), 0);
    for (size_t d = 0; d < index.size(); ++d) flat = flat * shape[d] + index[d];
    return flat;
}

std::vector<PrimExpr> unravel_index(PrimExpr flat, const std::vector<PrimExpr>& shape) {
    std::vector<PrimExpr> index(shape.size());
    for (size_t d = shape.size(); d-- > 0;) {
        if (d == 0) {
            index[d] = flat;
        } else {
            index[d] = floormod(flat, shape[d]);
            flat = floordiv(flat, shape[d]);
        }
    }
    return index;
}

}  // namespace anvil::ops
