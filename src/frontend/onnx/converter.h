// The importer's converter interface (internal to frontend/onnx).
//
// A converter turns one ONNX node into graph expressions, one per node output it supports (a
// converter may return fewer than the node has, e.g. Dropout's mask; a later use of a missing
// output is an error naming it). All converters are listed ONCE (converters.def, which makes
// converter_table()), keyed by op type and the opset range whose semantics they implement.
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

#include "frontend/node_builder.h"
#include "frontend/onnx/from_onnx.h"
#include "frontend/tensor_sizes.h"
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

// The one table of converters (converters.def).
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

// The importer's view of the node being converted: its inputs and attributes, and the builder
// (node_builder.h) of expressions at its location.
class ConvertContext : public NodeBuilder {
public:
    ConvertContext(const ::onnx::NodeProto& node, int opset, SourceLoc loc,
                   std::vector<graph::Expr> inputs, std::string base_dir,
                   SubgraphBuilder* subgraphs = nullptr)
        : NodeBuilder(std::move(loc), node.output_size() > 0 ? node.output(0) : node.name()),
          node_(node),
          opset_(opset),
          inputs_(std::move(inputs)),
          base_dir_(std::move(base_dir)),
          subgraphs_(subgraphs) {}

    const ::onnx::NodeProto& node() const { return node_; }
    int opset() const { return opset_; }

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

    // The graph attribute `name` (required).
    const ::onnx::GraphProto& attr_graph(const std::string& name) const;
    // The importer's subgraph conversion (If, Loop, Scan).
    SubgraphBuilder& subgraphs() const;

private:
    const ::onnx::NodeProto& node_;
    int opset_;
    std::vector<graph::Expr> inputs_;
    std::string base_dir_;
    SubgraphBuilder* subgraphs_;
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

}  // namespace anvil::frontend
