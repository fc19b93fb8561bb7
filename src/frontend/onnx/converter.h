// The importer's converter interface (internal to frontend/onnx).
//
// A converter turns one ONNX node into graph expressions, one per node output it supports (a
// converter may return fewer than the node has, e.g. Dropout's mask; a later use of a missing
// output is an error naming it). All converters are listed in ONE table (converter_table.cpp),
// keyed by op type and the opset range whose semantics they implement.
//
// Integer tensors whose values are known at import time (Shape of a static tensor, initializers,
// Constant nodes) are graph Constants; the shape-math converters evaluate on them directly (see
// shape_eval.h), so PyTorch's Shape → Gather → Unsqueeze → Concat → Reshape chains fold here.
#pragma once

#include <onnx/onnx_pb.h>  // ONNX_ML=1 (CMake): the onnx-ml.pb.h that libonnx_proto has

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "frontend/onnx/from_onnx.h"
#include "graph/expr.h"
#include "support/error.h"

namespace anvil::frontend {

class ConvertContext;
using ConvertFn = std::vector<graph::Expr> (*)(ConvertContext& ctx);

// The newest opset whose changes the converter ranges take into account; a model of a newer
// opset is refused rather than imported with semantics that may have changed.
constexpr int kNewestOpset = 22;

// How deep If/Loop/Scan bodies may nest within each other (from_onnx.h).
constexpr int kMaxSubgraphDepth = 64;

struct Converter {
    const char* op_type;
    int min_opset;  // inclusive
    int max_opset;  // inclusive
    ConvertFn convert;
};

// The one table of converters.
const std::vector<Converter>& converter_table();

// A node's graph attribute (If's branches, Loop's and Scan's bodies) as a graph function of the
// module; the importer implements it.
struct SubgraphFunction {
    std::string name;                   // in the module's functions
    std::vector<graph::Expr> captured;  // outer values it uses: pass them after its own params
    Ref<graph::Function> function;
};
class SubgraphBuilder {
public:
    virtual ~SubgraphBuilder() = default;
    // Converts `g` with its inputs bound to `inputs` (expressions over `params`); the function
    // takes `params`, then one parameter per outer value the subgraph uses, and returns
    // make_body(the subgraph's outputs). `name_hint` names it ("<node>_then_branch").
    virtual SubgraphFunction add_function(
        const ::onnx::GraphProto& g, const std::string& name_hint,
        std::vector<Ref<graph::Var>> params, std::vector<graph::Expr> inputs,
        const std::function<graph::Expr(std::vector<graph::Expr>)>& make_body) = 0;
    // Adds a function the converter built itself (a loop body of ordinary ops); it captures
    // nothing.
    virtual SubgraphFunction add_function(const std::string& name_hint,
                                          std::vector<Ref<graph::Var>> params,
                                          graph::Expr body) = 0;
    // The value the model names `name` (an input, an initializer or an earlier node's output),
    // for ops that name values in attributes (Gradient). UserError at `loc` when there is none.
    virtual graph::Expr value_named(const std::string& name, const SourceLoc& loc) = 0;
    // Removes the functions added since `mark` (a try whose types did not fit).
    virtual size_t mark() const = 0;
    virtual void roll_back(size_t mark) = 0;
};

// The importer's view of the node being converted.
class ConvertContext {
public:
    ConvertContext(const ::onnx::NodeProto& node, int opset, SourceLoc loc,
                   std::vector<graph::Expr> inputs, std::string base_dir,
                   SubgraphBuilder* subgraphs = nullptr)
        : node_(node),
          opset_(opset),
          loc_(std::move(loc)),
          inputs_(std::move(inputs)),
          base_dir_(std::move(base_dir)),
          subgraphs_(subgraphs) {}

    const ::onnx::NodeProto& node() const { return node_; }
    int opset() const { return opset_; }
    const SourceLoc& loc() const { return loc_; }

    // Inputs: `input` requires input i to be given; `optional_input` is undefined when the node
    // omits it (absent, or named "").
    size_t num_inputs() const { return inputs_.size(); }
    const graph::Expr& input(size_t i) const;
    graph::Expr optional_input(size_t i) const;
    const std::vector<graph::Expr>& inputs() const { return inputs_; }

    // Attributes, with the default used when the node does not set one. A present attribute of
    // the wrong kind is a UserError.
    bool has_attr(const std::string& name) const;
    int64_t attr_int(const std::string& name, int64_t fallback) const;
    float attr_float(const std::string& name, float fallback) const;
    std::string attr_string(const std::string& name, const std::string& fallback) const;
    std::vector<int64_t> attr_ints(const std::string& name,
                                   const std::vector<int64_t>& fallback = {}) const;
    std::vector<float> attr_floats(const std::string& name) const;
    std::vector<std::string> attr_strings(const std::string& name) const;
    runtime::NDArray attr_tensor(const std::string& name) const;  // required
    const ::onnx::AttributeProto* find_attr(const std::string& name) const;

    // The tensor type of `e`; `what` names it in the error ("input 0").
    const graph::TensorType& tensor_type(const graph::Expr& e, const std::string& what) const;
    // Its static shape; UserError when a dimension is symbolic.
    std::vector<int64_t> static_shape(const graph::Expr& e, const std::string& what) const;
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
    // executor from tensor values), named after the node's first output: "y_0", "y_1", ...
    // (numbered on across calls).
    std::vector<PrimExpr> new_dims(size_t count) const;
    // `x` with `vars` bound to the values of `tensors` and `checks` verified at run time
    // (ops/value_shapes.h: bind_values).
    graph::Expr bind_values(graph::Expr x, const std::vector<graph::Expr>& tensors,
                            std::vector<PrimExpr> vars, std::vector<PrimExpr> checks = {}) const;

    // `axis` (possibly negative) normalised into [0, rank); UserError naming `what` otherwise.
    int64_t normalize_axis(int64_t axis, int64_t rank, const std::string& what) const;

    // Raises "<loc>: <message>" (stream the message).
    detail::ErrorBuilder<UserError> error() const { return user_error(loc_); }

    // The graph attribute `name` (required).
    const ::onnx::GraphProto& attr_graph(const std::string& name) const;
    // The importer's subgraph conversion (If, Loop, Scan).
    SubgraphBuilder& subgraphs() const;

private:
    const ::onnx::NodeProto& node_;
    int opset_;
    SourceLoc loc_;
    std::vector<graph::Expr> inputs_;
    std::string base_dir_;
    SubgraphBuilder* subgraphs_;
    mutable size_t dims_made_ = 0;  // new_dims' numbering
};

// ---- element types and tensors (tensor_proto.cpp) ---------------------------------------------

// The DataType of an ONNX TensorProto element type; nullopt when Anvil has none (complex,
// float8).
std::optional<DataType> dtype_from_onnx(int elem_type);
// The graph type of an ONNX TypeProto: a tensor (whose dimensions `dim` converts), a sequence of
// tensors or an optional of either. UserError at `loc` naming `what` for other types.
graph::Type type_from_onnx(
    const ::onnx::TypeProto& t, const SourceLoc& loc, const std::string& what,
    const std::function<PrimExpr(const ::onnx::TensorShapeProto::Dimension&)>& dim);
// ONNX's name of an element type ("FLOAT", "STRING", ...) for messages.
std::string onnx_dtype_name(int elem_type);
// "[3, 3]", for messages.
std::string ints_str(const std::vector<int64_t>& values);
// The data of `e` when it is a Constant, else an undefined NDArray.
runtime::NDArray constant_data(const graph::Expr& e);

// ---- sizes (tensor_sizes.cpp) ------------------------------------------------------------------

// The byte size of a tensor of `shape` and `dtype`; nullopt when a dimension is negative or the
// element count or byte size overflows 64 bits (or comes within a factor 2 of it).
std::optional<int64_t> checked_byte_size(std::span<const int64_t> shape, DataType dtype);
// UserError at `loc` naming `what` and the shape when checked_byte_size refuses it.
void check_shape(std::span<const int64_t> shape, DataType dtype, const SourceLoc& loc,
                 const std::string& what);
// check_shape on every tensor `type` holds (tuple fields, optional and sequence elements); the
// symbolic dimensions of a tensor count as 1.
void check_type_sizes(const graph::Type& type, const SourceLoc& loc, const std::string& what);

}  // namespace anvil::frontend
