// NodeBuilder: how an importer builds graph expressions for one node of the model it reads,
// whatever the model's format (ONNX, TorchScript, TFLite).
//
// Every expression it makes carries the node's SourceLoc, so a type rule that rejects a call
// names the model node; every error it raises (`error()`) names it too. The checks here are the
// ones any importer needs: that an operand is a tensor, static where it must be, an import-time
// constant where it must be, an axis in range.
#pragma once

#include <string>
#include <vector>

#include "graph/expr.h"
#include "runtime/ndarray.h"
#include "support/error.h"

namespace anvil::frontend {

class NodeBuilder {
public:
    // `dim_name` is the base of the names new_dims gives (an output's name); it is made a valid
    // identifier.
    NodeBuilder(SourceLoc loc, std::string dim_name);
    virtual ~NodeBuilder() = default;

    const SourceLoc& loc() const { return loc_; }

    // The tensor type of `e`; `what` names it in the error ("input 0").
    const graph::TensorType& tensor_type(const graph::Expr& e, const std::string& what) const;
    // Its static shape; UserError when a dimension is symbolic.
    std::vector<int64_t> static_shape(const graph::Expr& e, const std::string& what) const;
    // The number of elements of that static shape.
    int64_t static_count(const graph::Expr& e, const std::string& what) const;
    // Its rank.
    int64_t rank(const graph::Expr& e) const;
    // The integer values of a constant tensor (int8..int64, uint, bool); UserError saying that
    // `what` must be known at import time otherwise.
    std::vector<int64_t> const_ints(const graph::Expr& e, const std::string& what) const;
    // The floating-point value of a one-element constant; UserError otherwise.
    double const_scalar(const graph::Expr& e, const std::string& what) const;

    // A call of the op named `op` (ops.def) at this node's location.
    graph::Expr call(const std::string& op, std::vector<graph::Expr> args,
                     Ref<graph::Attrs> attrs = nullptr) const;
    // Constants at this node's location.
    graph::Expr constant_int64(const std::vector<int64_t>& values,
                               const std::vector<int64_t>& shape) const;
    graph::Expr constant_scalar(DataType dtype, double value) const;
    graph::Expr constant(runtime::NDArray data) const;

    // `count` new int64 dimension variables for sizes known only at run time (bound by the
    // executor from tensor values), named after the node: "y_0", "y_1", ... (numbered on across
    // calls).
    std::vector<PrimExpr> new_dims(size_t count) const;
    // `x` with `vars` bound to the values of `tensors` and `checks` verified at run time
    // (ops/value_shapes.h: bind_values).
    graph::Expr bind_values(graph::Expr x, const std::vector<graph::Expr>& tensors,
                            std::vector<PrimExpr> vars, std::vector<PrimExpr> checks = {}) const;

    // `axis` (possibly negative) normalised into [0, rank); UserError naming `what` otherwise.
    int64_t normalize_axis(int64_t axis, int64_t rank, const std::string& what) const;

    // Raises "<loc>: <message>" (stream the message).
    detail::ErrorBuilder<UserError> error() const { return user_error(loc_); }

private:
    SourceLoc loc_;
    std::string dim_name_;
    mutable size_t dims_made_ = 0;  // new_dims' numbering
};

// "[3, 3]", for messages.
std::string ints_str(const std::vector<int64_t>& values);
// The data of `e` when it is a Constant, else an undefined NDArray.
runtime::NDArray constant_data(const graph::Expr& e);

}  // namespace anvil::frontend
