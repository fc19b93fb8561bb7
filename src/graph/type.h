// Types of graph-level values.
//
//   TensorType  dtype and shape; each dimension is a scalar expression, so symbolic dimensions
//               (`n`) are representable even where only static shapes compile yet.
//   TupleType   several values (an op with several outputs, a tuple expression).
//   FuncType    a function's parameter types and result type.
//
// Types are compared structurally (type_equal), never by identity.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/expr.h"
#include "support/source_loc.h"

namespace anvil::graph {

#define ANVIL_FOR_EACH_TYPE(X) \
    X(TensorType)              \
    X(TupleType)               \
    X(FuncType)

enum class TypeKind : uint8_t {
#define ANVIL_X(name) name,
    ANVIL_FOR_EACH_TYPE(ANVIL_X)
#undef ANVIL_X
};

struct TypeNode : Object {
    explicit TypeNode(TypeKind k) : kind(k) {}
    const TypeKind kind;
};
using Type = Ref<TypeNode>;

struct TensorType : TypeNode {
    static constexpr TypeKind kKind = TypeKind::TensorType;
    TensorType(std::vector<PrimExpr> s, DataType t)
        : TypeNode(kKind), shape(std::move(s)), dtype(t) {}
    const std::vector<PrimExpr> shape;
    const DataType dtype;

    size_t ndim() const { return shape.size(); }
    // All dimensions are constants.
    bool is_static() const;
    // The constant dimensions; InternalError when a dimension is symbolic.
    std::vector<int64_t> static_shape() const;
    int64_t num_elements() const;  // of a static shape
};

struct TupleType : TypeNode {
    static constexpr TypeKind kKind = TypeKind::TupleType;
    explicit TupleType(std::vector<Type> f) : TypeNode(kKind), fields(std::move(f)) {}
    const std::vector<Type> fields;
};

struct FuncType : TypeNode {
    static constexpr TypeKind kKind = TypeKind::FuncType;
    FuncType(std::vector<Type> p, Type r)
        : TypeNode(kKind), params(std::move(p)), ret(std::move(r)) {}
    const std::vector<Type> params;
    const Type ret;
};

Type make_tensor_type(std::vector<PrimExpr> shape, DataType dtype);
Type make_tensor_type(const std::vector<int64_t>& shape, DataType dtype);
Type make_tuple_type(std::vector<Type> fields);
Type make_func_type(std::vector<Type> params, Type ret);

bool type_equal(const Type& a, const Type& b);
// Relay's spelling: "Tensor[(1, 64, 112, 112), float32]", "(Tensor[...], Tensor[...])",
// "fn (Tensor[...]) -> Tensor[...]".
std::string type_str(const Type& t);
// A shape as types spell it: "(n, 3, 224, 224)", "(5,)".
std::string shape_str(const std::vector<PrimExpr>& shape);

// The tensor type of `t`, or a UserError at `loc` saying what `what` (e.g. "input 1 of
// nn.conv2d") was instead.
const TensorType& expect_tensor(const Type& t, const SourceLoc& loc, const std::string& what);

}  // namespace anvil::graph
