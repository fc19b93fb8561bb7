// Types of graph-level values.
//
//   TensorType  dtype and shape; each dimension is a scalar expression, so symbolic dimensions
//               (`n`) are representable even where only static shapes compile yet.
//   TupleType   several values (an op with several outputs, a tuple expression).
//   FuncType    a function's parameter types and result type.
//   SequenceType  an ONNX sequence: any number of tensors of one dtype, known at run time (the
//               VM holds it as a tuple). Its elements may differ in shape, so the type says only
//               what they share: `dims` (nullopt: any rank) with kAnyDim where they may differ,
//               or `empty`: a sequence known to hold nothing yet (SequenceEmpty), whose join
//               with another sequence type is that type.
//   OptionalType  a value or nothing (ONNX optional): of a tensor type or a sequence type.
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
    X(FuncType)                \
    X(SequenceType)            \
    X(OptionalType)

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

struct SequenceType : TypeNode {
    static constexpr TypeKind kKind = TypeKind::SequenceType;
    static constexpr int64_t kAnyDim = -1;  // a dimension the elements need not share
    SequenceType(DataType t, std::optional<std::vector<int64_t>> d, bool e)
        : TypeNode(kKind), dtype(t), dims(std::move(d)), empty(e) {}
    const DataType dtype;
    const std::optional<std::vector<int64_t>> dims;
    const bool empty;
};

struct OptionalType : TypeNode {
    static constexpr TypeKind kKind = TypeKind::OptionalType;
    explicit OptionalType(Type e) : TypeNode(kKind), elem(std::move(e)) {}
    const Type elem;  // a TensorType or a SequenceType
};

Type make_tensor_type(std::vector<PrimExpr> shape, DataType dtype);
Type make_tensor_type(const std::vector<int64_t>& shape, DataType dtype);
Type make_tuple_type(std::vector<Type> fields);
Type make_func_type(std::vector<Type> params, Type ret);
// A sequence whose elements have these dims (kAnyDim where they may differ; nullopt: any rank).
Type make_sequence_type(DataType dtype, std::optional<std::vector<int64_t>> dims);
// A sequence known to hold no element yet.
Type make_empty_sequence_type(DataType dtype);
// The sequence type that describes elements of tensor type `element` (constant dims are kept).
Type sequence_of(const TensorType& element);
// The type of a sequence that may be either `a` or `b` (same dtype): the dims both share. An
// empty sequence joins to the other. nullopt when the dtypes differ.
std::optional<Type> join_sequence_types(const SequenceType& a, const SequenceType& b);
// Whether a tensor of type `t` may be an element of a sequence of type `s`.
bool fits_sequence(const TensorType& t, const SequenceType& s);
Type make_optional_type(Type elem);

bool type_equal(const Type& a, const Type& b);
// Whether a value of type `t` holds strings: a string tensor, or a tuple, sequence or optional
// of them.
bool holds_strings(const Type& t);
// Relay's spelling: "Tensor[(1, 64, 112, 112), float32]", "(Tensor[...], Tensor[...])",
// "fn (Tensor[...]) -> Tensor[...]"; and "Sequence[(?, 3), float32]" (elements of rank 2 whose
// second dimension is 3), "Sequence[?, float32]" (any rank), "Sequence[empty, float32]",
// "Optional[Tensor[(5,), float32]]".
std::string type_str(const Type& t);
// A shape as types spell it: "(n, 3, 224, 224)", "(5,)".
std::string shape_str(const std::vector<PrimExpr>& shape);

// The tensor type of `t`, or a UserError at `loc` saying what `what` (e.g. "input 1 of
// nn.conv2d") was instead.
const TensorType& expect_tensor(const Type& t, const SourceLoc& loc, const std::string& what);

}  // namespace anvil::graph
