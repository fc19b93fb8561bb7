// NodeBuilder: building graph expressions at a model node's location, with the checks every
// importer needs.
#include "frontend/node_builder.h"

#include <cmath>

#include "ops/op_table.h"
#include "ops/value_shapes.h"
#include "support/text_scanner.h"

namespace anvil::frontend {

NodeBuilder::NodeBuilder(SourceLoc loc, std::string dim_name)
    : loc_(std::move(loc)), dim_name_(std::move(dim_name)) {
    for (char& c : dim_name_) {
        if (!text::is_name_char(c)) c = '_';
    }
    if (dim_name_.empty() || !text::is_name_start(dim_name_[0])) dim_name_ = "v" + dim_name_;
}

std::string ints_str(const std::vector<int64_t>& values) {
    std::string out = "[";
    for (size_t i = 0; i < values.size(); ++i) {
        if (i) out += ", ";
        out += std::to_string(values[i]);
    }
    return out + "]";
}

runtime::NDArray constant_data(const graph::Expr& e) {
    if (const auto* c = e.as<graph::Constant>()) return c->data;
    return {};
}

const graph::TensorType& NodeBuilder::tensor_type(const graph::Expr& e,
                                                  const std::string& what) const {
    return graph::expect_tensor(e->type, loc_, what);
}

std::vector<int64_t> NodeBuilder::static_shape(const graph::Expr& e,
                                               const std::string& what) const {
    const auto& t = tensor_type(e, what);
    if (!t.is_static()) {
        error() << what << " has the symbolic shape " << graph::type_str(e->type)
                << "; give static input shapes (--input-shapes)";
    }
    return t.static_shape();
}

int64_t NodeBuilder::static_count(const graph::Expr& e, const std::string& what) const {
    int64_t n = 1;
    for (int64_t d : static_shape(e, what)) n *= d;  // a tensor type's shape fits (checked)
    return n;
}

int64_t NodeBuilder::rank(const graph::Expr& e) const {
    return static_cast<int64_t>(tensor_type(e, "the input").ndim());
}

std::vector<int64_t> NodeBuilder::const_ints(const graph::Expr& e, const std::string& what) const {
    runtime::NDArray data = constant_data(e);
    if (!data.defined()) {
        error() << what << " must be known at import time (an initializer, a Constant or static "
                << "shape arithmetic), but it is computed by the graph";
    }
    DataType dt = graph::dtype_of(data.dtype());
    if (!dt.is_integer() && !dt.is_bool()) {
        error() << what << " must be an integer tensor, got " << dt.str();
    }
    std::vector<int64_t> out(static_cast<size_t>(data.num_elements()));
    const auto* p = static_cast<const uint8_t*>(data.raw_data());
    for (size_t i = 0; i < out.size(); ++i) {
        switch (dt.bytes()) {
            case 1:
                out[i] = dt.is_int() ? int64_t(reinterpret_cast<const int8_t*>(p)[i]) : p[i];
                break;
            case 2:
                out[i] = dt.is_int() ? int64_t(reinterpret_cast<const int16_t*>(p)[i])
                                     : int64_t(reinterpret_cast<const uint16_t*>(p)[i]);
                break;
            case 4:
                out[i] = dt.is_int() ? int64_t(reinterpret_cast<const int32_t*>(p)[i])
                                     : int64_t(reinterpret_cast<const uint32_t*>(p)[i]);
                break;
            default:
                out[i] = reinterpret_cast<const int64_t*>(p)[i];
                break;
        }
    }
    return out;
}

double NodeBuilder::const_scalar(const graph::Expr& e, const std::string& what) const {
    runtime::NDArray data = constant_data(e);
    if (!data.defined() || data.num_elements() != 1) {
        error() << what << " must be a one-element tensor known at import time";
    }
    DataType dt = graph::dtype_of(data.dtype());
    const void* p = data.raw_data();
    if (dt == DataType::float32()) return *static_cast<const float*>(p);
    if (dt == DataType::float64()) return *static_cast<const double*>(p);
    if (dt.is_integer() || dt.is_bool()) return static_cast<double>(const_ints(e, what)[0]);
    error() << what << " has element type " << dt.str() << ", which is not supported here";
    ANVIL_UNREACHABLE();
}

graph::Expr NodeBuilder::call(const std::string& op, std::vector<graph::Expr> args,
                              Ref<graph::Attrs> attrs) const {
    const graph::Op* found = ops::op_table().find(op);
    if (!found) error() << "not supported yet: this build has no graph op '" << op << "'";
    return graph::make_call(*found, std::move(args), std::move(attrs), loc_);
}

std::vector<PrimExpr> NodeBuilder::new_dims(size_t count) const {
    // `count` comes from a tensor's size (a run-time shape operand of N values makes N
    // dimensions): a model declaring a billion of them would otherwise make a billion variables.
    constexpr size_t kMaxDims = 1024;
    if (count > kMaxDims) {
        error() << "a shape of " << count << " dimensions (the values of a tensor known only at "
                << "run time); at most " << kMaxDims << " are supported";
    }
    const std::string& base = dim_name_;
    std::vector<PrimExpr> dims;
    // Numbered on from the node's earlier calls, so that no two variables share a name.
    for (size_t i = 0; i < count; ++i) {
        dims.push_back(make_var(base + "_" + std::to_string(dims_made_++), DataType::int64()));
    }
    return dims;
}

graph::Expr NodeBuilder::bind_values(graph::Expr x, const std::vector<graph::Expr>& tensors,
                                     std::vector<PrimExpr> vars,
                                     std::vector<PrimExpr> checks) const {
    return ops::make_bind_values(std::move(x), tensors, std::move(vars), std::move(checks), loc_);
}

graph::Expr NodeBuilder::constant(runtime::NDArray data) const {
    return graph::make_constant(std::move(data), loc_);
}

graph::Expr NodeBuilder::constant_int64(const std::vector<int64_t>& values,
                                        const std::vector<int64_t>& shape) const {
    runtime::NDArray a = runtime::NDArray::empty(shape, graph::dl_dtype_of(DataType::int64()));
    a.copy_from(values);
    return constant(a);
}

graph::Expr NodeBuilder::constant_scalar(DataType dtype, double value) const {
    runtime::NDArray a = runtime::NDArray::empty({}, graph::dl_dtype_of(dtype));
    void* p = a.raw_data();
    if (dtype == DataType::float32()) {
        *static_cast<float*>(p) = static_cast<float>(value);
    } else if (dtype == DataType::float64()) {
        *static_cast<double*>(p) = value;
    } else if (dtype == DataType::int64()) {
        *static_cast<int64_t*>(p) = static_cast<int64_t>(value);
    } else if (dtype == DataType::int32()) {
        *static_cast<int32_t*>(p) = static_cast<int32_t>(value);
    } else if (dtype.is_bool() || dtype == DataType::uint(8)) {
        *static_cast<uint8_t*>(p) = static_cast<uint8_t>(value);
    } else if (dtype == DataType::int_(8)) {
        *static_cast<int8_t*>(p) = static_cast<int8_t>(value);
    } else {
        error() << "a scalar constant of element type " << dtype.str() << " is not supported";
    }
    return constant(a);
}

int64_t NodeBuilder::normalize_axis(int64_t axis, int64_t rank, const std::string& what) const {
    int64_t a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a >= rank) {
        error() << what << " " << axis << " is out of range for a tensor of rank " << rank;
    }
    return a;
}

}  // namespace anvil::frontend
