// The graph IR: a typed dataflow language in Relay's style.
//
//   Var           a function parameter or let-bound name (identified by object)
//   Constant      a tensor value (weights)
//   Call          an op applied to arguments with typed attributes, or a call of a Function
//                 (a fused group) — one of `op` / `callee` is set
//   Tuple         several values; TupleGetItem takes one back out
//   Function      parameters and a body; `primitive` marks a fused group that becomes one kernel
//   Let           var = value in body
//
// Every node knows its type from the moment it is built: constructors run the op's type rule
// (so a shape error is raised where the model node is converted, naming it). Nodes are
// immutable; a pass that changes an argument builds a new node, which re-derives its type.
// Sharing a node between several users is how dataflow is expressed (a DAG), so walkers memoize.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "graph/attrs.h"
#include "graph/op.h"
#include "graph/type.h"
#include "runtime/ndarray.h"
#include "support/source_loc.h"

namespace anvil::graph {

#define ANVIL_FOR_EACH_GRAPH_EXPR(X) \
    X(Var)                           \
    X(Constant)                      \
    X(Call)                          \
    X(Tuple)                         \
    X(TupleGetItem)                  \
    X(Function)                      \
    X(Let)

enum class ExprKind : uint8_t {
#define ANVIL_X(name) name,
    ANVIL_FOR_EACH_GRAPH_EXPR(ANVIL_X)
#undef ANVIL_X
};
const char* expr_kind_name(ExprKind kind);

struct ExprNode : Object {
    ExprNode(ExprKind k, Type t, SourceLoc l) : kind(k), type(std::move(t)), loc(std::move(l)) {}
    const ExprKind kind;
    const Type type;
    const SourceLoc loc;
};
using Expr = Ref<ExprNode>;

struct Var : ExprNode {
    static constexpr ExprKind kKind = ExprKind::Var;
    Var(std::string n, Type t, SourceLoc l)
        : ExprNode(kKind, std::move(t), std::move(l)), name(std::move(n)) {}
    const std::string name;
};

struct Constant : ExprNode {
    static constexpr ExprKind kKind = ExprKind::Constant;
    Constant(runtime::NDArray d, Type t, SourceLoc l)
        : ExprNode(kKind, std::move(t), std::move(l)), data(std::move(d)) {}
    const runtime::NDArray data;
};

struct Function;

struct Call : ExprNode {
    static constexpr ExprKind kKind = ExprKind::Call;
    Call(Ref<Op> o, Expr c, std::vector<Expr> a, Ref<Attrs> at, Type t, SourceLoc l)
        : ExprNode(kKind, std::move(t), std::move(l)),
          op(std::move(o)),
          callee(std::move(c)),
          args(std::move(a)),
          attrs(std::move(at)) {}
    const Ref<Op> op;   // an operator, or
    const Expr callee;  // a Function (a fused group)
    const std::vector<Expr> args;
    const Ref<Attrs> attrs;  // the op's attribute struct (NoAttrs for function calls)
};

struct Tuple : ExprNode {
    static constexpr ExprKind kKind = ExprKind::Tuple;
    Tuple(std::vector<Expr> f, Type t, SourceLoc l)
        : ExprNode(kKind, std::move(t), std::move(l)), fields(std::move(f)) {}
    const std::vector<Expr> fields;
};

struct TupleGetItem : ExprNode {
    static constexpr ExprKind kKind = ExprKind::TupleGetItem;
    TupleGetItem(Expr tup, int i, Type t, SourceLoc l)
        : ExprNode(kKind, std::move(t), std::move(l)), tuple(std::move(tup)), index(i) {}
    const Expr tuple;
    const int index;
};

// A function's named string attributes, TVM's: Composite="dnnl.conv2d_relu" (a region a
// pattern matched, graph/pattern/partition.h), Compiler="dnnl" and global_symbol (a region an
// external code generator compiles), PartitionedFromPattern. Printed after the parameters.
using FunctionAttrs = std::map<std::string, std::string>;

struct Function : ExprNode {
    static constexpr ExprKind kKind = ExprKind::Function;
    Function(std::vector<Ref<Var>> p, Expr b, bool prim, FunctionAttrs a, Type t, SourceLoc l)
        : ExprNode(kKind, std::move(t), std::move(l)),
          params(std::move(p)),
          body(std::move(b)),
          primitive(prim),
          attrs(std::move(a)) {}
    const std::vector<Ref<Var>> params;
    const Expr body;
    const bool primitive;  // a fused group: lowered as one kernel
    const FunctionAttrs attrs;
};

struct Let : ExprNode {
    static constexpr ExprKind kKind = ExprKind::Let;
    Let(Ref<Var> v, Expr val, Expr b, Type t, SourceLoc l)
        : ExprNode(kKind, std::move(t), std::move(l)),
          var(std::move(v)),
          value(std::move(val)),
          body(std::move(b)) {}
    const Ref<Var> var;
    const Expr value;
    const Expr body;
};

// Checked constructors; each derives the node's type (UserError at `loc` when ill-typed).
Ref<Var> make_var(const std::string& name, Type type, SourceLoc loc = {});
Expr make_constant(runtime::NDArray data, SourceLoc loc = {});
// `attrs` may be null: the op's defaults.
Expr make_call(const Op& op, std::vector<Expr> args, Ref<Attrs> attrs = nullptr,
               SourceLoc loc = {});
Expr make_call(Ref<Op> op, std::vector<Expr> args, Ref<Attrs> attrs = nullptr, SourceLoc loc = {});
Expr make_call_function(Ref<Function> fn, std::vector<Expr> args, SourceLoc loc = {});
Expr make_tuple(std::vector<Expr> fields, SourceLoc loc = {});
Expr make_tuple_get_item(Expr tuple, int index, SourceLoc loc = {});
Ref<Function> make_function(std::vector<Ref<Var>> params, Expr body, bool primitive = false,
                            SourceLoc loc = {}, FunctionAttrs attrs = {});
// `f` with another body: its parameters, primitive flag, location and attributes kept.
Ref<Function> with_body(const Function& f, Expr body);
Expr make_let(Ref<Var> var, Expr value, Expr body, SourceLoc loc = {});

// The DataType of a DLPack dtype and back (graph constants are runtime tensors).
DataType dtype_of(DLDataType t);
DLDataType dl_dtype_of(DataType t);

}  // namespace anvil::graph
