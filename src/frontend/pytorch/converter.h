// The PyTorch importer's converter interface (internal to frontend/pytorch).
//
// A converter turns one TorchScript node (aten::conv2d, prim::ListConstruct, ...) into values,
// one per node output. Its operands arrive as PtValues (pt_value.h); PtContext reads them with
// the checks every converter needs (a tensor where a tensor must be, an int known at import time
// where the graph needs one) and builds graph calls at the node's location (NodeBuilder), so an
// error names the node and the Python line TorchScript recorded for it.
//
// All converters are listed once, in converters.def.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "frontend/composite_ops.h"
#include "frontend/node_builder.h"
#include "frontend/pytorch/pt_value.h"
#include "frontend/pytorch/torchscript_graph.h"

namespace anvil::frontend::pytorch {

// The constant `e` simplifies to, if any. (A pointer from as_const_int into the simplified
// expression would dangle: the simplifier may return a new node that nothing else holds.)
std::optional<int64_t> known_int(const PrimExpr& e);

class PtContext;
using PtValues = std::vector<PtValue>;
using PtConvertFn = PtValues (*)(PtContext& ctx);

struct PtConverter {
    const char* kind;  // "aten::conv2d"
    PtConvertFn convert;
};
// The one table of converters (converters.def).
const std::vector<PtConverter>& converter_table();
// The converter of `kind`; null when there is none. An in-place op ("aten::relu_") converts as
// its functional form; the importer then rebinds the mutated operand to the result.
PtConvertFn find_converter(const std::string& kind);

// How converters of control flow reach the importer.
class BlockConverter {
public:
    virtual ~BlockConverter() = default;
    // Converts `block` with its inputs bound to `inputs`, in the current scope (values defined
    // around it stay visible), and returns its outputs. Used for If branches whose condition is
    // known at import time and for loops unrolled at import time.
    virtual PtValues convert_inline(const TsBlock& block, const PtValues& inputs) = 0;
    // Converts `block` as a graph function of the module named after `name_hint`: its parameters
    // are `params` (bound to the block's inputs by `inputs`, expressions over them), then one
    // parameter per outer tensor the block uses (`captured` holds the outer values, to pass
    // after the function's own arguments; a tensor of the module's weights counts as outer).
    // `make_body` turns the block's outputs into the function's result; the model assertions
    // met in the block (add_check) are attached to it.
    struct Function {
        std::string name;
        std::vector<graph::Expr> captured;
        Ref<graph::Function> function;
    };
    virtual Function convert_function(const TsBlock& block, const std::string& name_hint,
                                      std::vector<Ref<graph::Var>> params, const PtValues& inputs,
                                      const std::function<graph::Expr(const PtValues&)>& make_body,
                                      const SourceLoc& loc) = 0;
    // Removes the functions added since `mark` (a loop body converted again with other types,
    // or given up for unrolling).
    virtual size_t mark() const = 0;
    virtual void roll_back(size_t mark) = 0;
    // A model assertion checked at run time: `holds` is a bool tensor of one element; when it is
    // false, running the model fails with an error naming `loc`. It is attached to the result of
    // the function being converted (main, or the branch or loop body around it).
    virtual void add_check(graph::Expr holds, const SourceLoc& loc) = 0;
    // Binds value `id` in the current scope (a loop's carried value that its body passes on
    // unchanged is the value before the loop).
    virtual void bind_value(int64_t id, const PtValue& value) = 0;
    // The value of `id` as the node being converted sees it.
    virtual const PtValue& value_of(int64_t id, const SourceLoc& loc) = 0;
};

// What a converter sees of its node.
class PtContext : public NodeBuilder {
public:
    PtContext(const TsNode& node, SourceLoc loc, PtValues inputs, BlockConverter* blocks);

    const TsNode& node() const { return node_; }
    const std::string& kind() const { return node_.kind; }
    size_t num_inputs() const { return inputs_.size(); }
    // Operand i; UserError when the node has fewer.
    const PtValue& input(size_t i) const;
    // Whether operand i is absent or None.
    bool is_none(size_t i) const;

    // Operand i as a tensor; a number becomes a 0-d constant of its own type (int64, float32,
    // bool), as PyTorch treats a Python scalar operand.
    graph::Expr tensor(size_t i) const;
    // Operand i as a tensor of `like`'s element type when it is a number (x + 2 keeps x's type,
    // as PyTorch's promotion of a scalar operand does); a tensor operand as it is.
    graph::Expr tensor_like(size_t i, const graph::Expr& like) const;
    // Operand i as a number known at import time; UserError otherwise.
    int64_t int_arg(size_t i) const;
    double float_arg(size_t i) const;  // an int or a float
    bool bool_arg(size_t i) const;
    std::string str_arg(size_t i) const;
    // An int known at import time, possibly symbolic (a size of a symbolic input dimension).
    PrimExpr int_expr(size_t i) const;
    // A list of ints known at import time (a lone int counts as [int]).
    std::vector<int64_t> ints(size_t i) const;
    // A list of ints, possibly symbolic (sizes).
    std::vector<PrimExpr> int_exprs(size_t i) const;
    // A list of tensors.
    std::vector<graph::Expr> tensors(size_t i) const;
    // A dtype operand (a ScalarType code) or nullopt for None.
    std::optional<DataType> dtype_arg(size_t i) const;

    // The recorded type of output k.
    const TsType& output_type(size_t k) const;

    BlockConverter& blocks() const;

private:
    const TsNode& node_;
    PtValues inputs_;
    BlockConverter* blocks_;
};

// A number as a 0-d tensor of `dtype`: a run-time number's tensor, a constant (int64 exactly),
// or a shape_tensor for a symbolic size.
graph::Expr number_tensor(const NodeBuilder& ctx, const PtValue& v, DataType dtype);
// The dtype a number of this kind has as a tensor (PyTorch's defaults: int64, float32, bool).
DataType number_dtype(PtValue::Kind kind);

// The DataType of a c10::ScalarType code (6 = float32, 4 = int64, ...); nullopt when Anvil has
// none (complex, quantized).
std::optional<DataType> dtype_from_scalar_type(int64_t code);
// The DataType a description names ("float32"); nullopt when unknown.
std::optional<DataType> dtype_from_name(const std::string& name);

}  // namespace anvil::frontend::pytorch
