// Dataflow patterns over the graph IR, in the names of TVM's relay.dataflow_pattern:
//
//   DFPattern x = wildcard();
//   DFPattern conv = is_op("nn.conv2d")({x, is_constant()});
//   DFPattern p = is_op("nn.relu")({conv.optional([](const DFPattern& c) {
//       return is_op("nn.bias_add")({c, is_constant()}); })});
//
// A pattern is a small immutable DAG of nodes like the IR's own. It describes expressions:
//   wildcard()               any expression
//   is_expr(e)               an expression structurally equal to e
//   is_var(name)             a variable (of that name when one is given)
//   is_constant()            a constant
//   is_op(name)({args})      a call of that op with arguments matching args, in order (for the
//                            commutative add and multiply also swapped); is_op(name) alone: a
//                            call of it with any arguments
//   is_tuple({fields})       a tuple of that many fields, each matching
//   is_tuple_get_item(t, i)  field i (any field when i is -1) of a tuple matching t
//   a | b                    what a or b matches (a tried first)
//   p.optional(f)            p | f(p): p, or p wrapped by what f builds around it
//   p.has_attr({...})        what p matches, a call whose op attributes (or a function whose
//                            string attributes) have these values
//   p.has_type(t) / p.has_dtype(d) / p.has_shape(s)   what p matches, of that type, element
//                            type or shape
//   dominates(parent, path, child)   what child matches, each of whose operands is what parent
//                            matches or what path matches, and so on back from those (every
//                            value read comes through the path: constants need an alternative
//                            in it); path expressions other than constants and variables
//                            used by nothing else; one parent (a diamond of elementwise ops
//                            after a convolution). Looser than TVM's where the path matches
//                            inputs: a branch may end at one instead of the parent.
// One pattern node used twice must match the same expression twice: add(x, x) with x =
// wildcard() matches only an expression added to itself. Matching is in matcher.h; rewriting
// with callbacks in rewrite.h; partitioning matched regions into functions in partition.h.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "graph/expr.h"
#include "graph/type.h"
#include "ir/data_type.h"
#include "support/ref.h"

namespace anvil::graph {

#define ANVIL_FOR_EACH_PATTERN(X) \
    X(WildcardPattern)            \
    X(ExprPattern)                \
    X(VarPattern)                 \
    X(ConstantPattern)            \
    X(CallPattern)                \
    X(TuplePattern)               \
    X(TupleGetItemPattern)        \
    X(AltPattern)                 \
    X(AttrPattern)                \
    X(TypePattern)                \
    X(DataTypePattern)            \
    X(ShapePattern)               \
    X(DominatorPattern)

enum class PatternKind : uint8_t {
#define ANVIL_X(name) name,
    ANVIL_FOR_EACH_PATTERN(ANVIL_X)
#undef ANVIL_X
};

struct PatternNode : Object {
    explicit PatternNode(PatternKind k) : kind(k) {}
    const PatternKind kind;
};

// A handle to a pattern node: what the constructors below return and combine.
class DFPattern {
public:
    DFPattern() = default;
    explicit DFPattern(Ref<PatternNode> node) : node_(std::move(node)) {}

    const PatternNode* get() const { return node_.get(); }
    bool defined() const { return node_.defined(); }
    template <typename U>
    const U* as() const {
        return node_.as<U>();
    }
    bool same_as(const DFPattern& other) const { return node_.same_as(other.node_); }

    // A call of this op pattern (is_op(name)) with these arguments: is_op("add")({x, y}).
    DFPattern operator()(std::vector<DFPattern> args) const;
    // This, or `wrap` applied to this (TVM's pattern.optional(lambda x: ...)).
    DFPattern optional(const std::function<DFPattern(const DFPattern&)>& wrap) const;
    // A value of has_attr: an integer, a float, a bool, a string or a list of integers.
    using AttrValue = std::variant<int64_t, double, bool, std::string, std::vector<int64_t>>;
    DFPattern has_attr(std::vector<std::pair<std::string, AttrValue>> attrs) const;
    DFPattern has_type(Type type) const;
    DFPattern has_dtype(DataType dtype) const;
    DFPattern has_shape(std::vector<PrimExpr> shape) const;
    DFPattern has_shape(const std::vector<int64_t>& shape) const;
    DFPattern has_shape(std::initializer_list<int64_t> shape) const {
        return has_shape(std::vector<int64_t>(shape));
    }

private:
    Ref<PatternNode> node_;
};

DFPattern operator|(const DFPattern& a, const DFPattern& b);

struct WildcardPattern : PatternNode {
    static constexpr PatternKind kKind = PatternKind::WildcardPattern;
    WildcardPattern() : PatternNode(kKind) {}
};

struct ExprPattern : PatternNode {
    static constexpr PatternKind kKind = PatternKind::ExprPattern;
    explicit ExprPattern(Expr e) : PatternNode(kKind), expr(std::move(e)) {}
    const Expr expr;
};

struct VarPattern : PatternNode {
    static constexpr PatternKind kKind = PatternKind::VarPattern;
    explicit VarPattern(std::string n) : PatternNode(kKind), name(std::move(n)) {}
    const std::string name;  // empty: any variable
};

struct ConstantPattern : PatternNode {
    static constexpr PatternKind kKind = PatternKind::ConstantPattern;
    ConstantPattern() : PatternNode(kKind) {}
};

struct CallPattern : PatternNode {
    static constexpr PatternKind kKind = PatternKind::CallPattern;
    CallPattern(Ref<Op> o, std::optional<std::vector<DFPattern>> a)
        : PatternNode(kKind), op(std::move(o)), args(std::move(a)) {}
    const Ref<Op> op;
    const std::optional<std::vector<DFPattern>> args;  // nullopt: any arguments
};

struct TuplePattern : PatternNode {
    static constexpr PatternKind kKind = PatternKind::TuplePattern;
    explicit TuplePattern(std::vector<DFPattern> f) : PatternNode(kKind), fields(std::move(f)) {}
    const std::vector<DFPattern> fields;
};

struct TupleGetItemPattern : PatternNode {
    static constexpr PatternKind kKind = PatternKind::TupleGetItemPattern;
    TupleGetItemPattern(DFPattern t, int i) : PatternNode(kKind), tuple(std::move(t)), index(i) {}
    const DFPattern tuple;
    const int index;  // -1: any field
};

struct AltPattern : PatternNode {
    static constexpr PatternKind kKind = PatternKind::AltPattern;
    AltPattern(DFPattern l, DFPattern r)
        : PatternNode(kKind), left(std::move(l)), right(std::move(r)) {}
    const DFPattern left, right;
};

struct AttrPattern : PatternNode {
    static constexpr PatternKind kKind = PatternKind::AttrPattern;
    AttrPattern(DFPattern p, std::vector<std::pair<std::string, DFPattern::AttrValue>> a)
        : PatternNode(kKind), pattern(std::move(p)), attrs(std::move(a)) {}
    const DFPattern pattern;
    const std::vector<std::pair<std::string, DFPattern::AttrValue>> attrs;
};

struct TypePattern : PatternNode {
    static constexpr PatternKind kKind = PatternKind::TypePattern;
    TypePattern(DFPattern p, Type t)
        : PatternNode(kKind), pattern(std::move(p)), type(std::move(t)) {}
    const DFPattern pattern;
    const Type type;
};

struct DataTypePattern : PatternNode {
    static constexpr PatternKind kKind = PatternKind::DataTypePattern;
    DataTypePattern(DFPattern p, DataType d)
        : PatternNode(kKind), pattern(std::move(p)), dtype(d) {}
    const DFPattern pattern;
    const DataType dtype;
};

struct ShapePattern : PatternNode {
    static constexpr PatternKind kKind = PatternKind::ShapePattern;
    ShapePattern(DFPattern p, std::vector<PrimExpr> s)
        : PatternNode(kKind), pattern(std::move(p)), shape(std::move(s)) {}
    const DFPattern pattern;
    const std::vector<PrimExpr> shape;
};

struct DominatorPattern : PatternNode {
    static constexpr PatternKind kKind = PatternKind::DominatorPattern;
    DominatorPattern(DFPattern p, DFPattern pa, DFPattern c)
        : PatternNode(kKind), parent(std::move(p)), path(std::move(pa)), child(std::move(c)) {}
    const DFPattern parent, path, child;
};

DFPattern wildcard();
DFPattern is_expr(Expr e);
DFPattern is_var(std::string name = "");
DFPattern is_constant();
// UserError naming the op when there is no op of that name in the op table.
DFPattern is_op(const std::string& name);
DFPattern is_tuple(std::vector<DFPattern> fields);
DFPattern is_tuple_get_item(DFPattern tuple, int index = -1);
DFPattern dominates(DFPattern parent, DFPattern path, DFPattern child);

// The pattern as text: `nn.relu(nn.conv2d(*, const))`; a node used more than once is named
// where it first appears and referred to after (`add(%0=*, %0)`).
std::string pattern_str(const DFPattern& p);

}  // namespace anvil::graph
