// Scalar expressions (PrimExpr), shared by tensor expressions and the loop IR.
//
// Semantics:
// - Operands are evaluated left to right and have no side effects, except Call to a non-pure
//   function (none of the math intrinsics have side effects).
// - Integer arithmetic wraps at the type's width. Div and Mod truncate toward zero (C semantics);
//   FloorDiv and FloorMod round toward negative infinity (index arithmetic uses these).
//   Division by zero is undefined: passes may assume it does not happen.
// - Float Div is IEEE division. Min/Max of NaN follow LLVM's minnum/maxnum.
// - Comparisons, And, Or, Not produce bool (with the operands' lane count).
// - A vector dtype (lanes > 1) is produced by Ramp, Broadcast and vector Loads; elementwise ops
//   on vectors require both operands to have the same lanes.
// - Load reads a Buffer at multi-dimensional indices (before flatten_storage) or one flat index
//   (after). A Ramp index loads consecutive or strided lanes.
// - Reduce appears only in tensor-expression bodies (te/); lowering replaces it with loops.
//
// Scalar expressions carry no SourceLoc: they are shared freely between statements, and the
// statement or stage that owns them carries the origin.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "ir/data_type.h"
#include "support/ref.h"

namespace anvil {

// Every expression node kind, once. Generates the kind enum and the functor dispatch.
#define ANVIL_FOR_EACH_EXPR(X) \
    X(IntImm)                  \
    X(FloatImm)                \
    X(Var)                     \
    X(Add)                     \
    X(Sub)                     \
    X(Mul)                     \
    X(Div)                     \
    X(Mod)                     \
    X(FloorDiv)                \
    X(FloorMod)                \
    X(Min)                     \
    X(Max)                     \
    X(EQ)                      \
    X(NE)                      \
    X(LT)                      \
    X(LE)                      \
    X(GT)                      \
    X(GE)                      \
    X(And)                     \
    X(Or)                      \
    X(Not)                     \
    X(Select)                  \
    X(Cast)                    \
    X(Call)                    \
    X(Load)                    \
    X(Ramp)                    \
    X(Broadcast)               \
    X(Reduce)

// The subset with two operands `a` and `b` (struct BinaryExpr).
#define ANVIL_FOR_EACH_BINARY_EXPR(X) \
    X(Add)                            \
    X(Sub)                            \
    X(Mul)                            \
    X(Div)                            \
    X(Mod)                            \
    X(FloorDiv)                       \
    X(FloorMod)                       \
    X(Min)                            \
    X(Max)                            \
    X(EQ)                             \
    X(NE)                             \
    X(LT)                             \
    X(LE)                             \
    X(GT)                             \
    X(GE)                             \
    X(And)                            \
    X(Or)

enum class ExprKind : uint8_t {
#define ANVIL_X(name) name,
    ANVIL_FOR_EACH_EXPR(ANVIL_X)
#undef ANVIL_X
};

const char* expr_kind_name(ExprKind kind);

struct PrimExprNode : Object {
    PrimExprNode(ExprKind kind, DataType dtype) : kind(kind), dtype(dtype) {}
    const ExprKind kind;
    const DataType dtype;
};

// Handle to an expression. Integer and float literals convert implicitly (int32 / float32), as in
// TVM's TE, so that `A(i, 0) * 2.0f` reads naturally.
class PrimExpr : public Ref<PrimExprNode> {
public:
    using Ref<PrimExprNode>::Ref;
    PrimExpr() = default;
    PrimExpr(const Ref<PrimExprNode>& r) : Ref<PrimExprNode>(r) {}
    PrimExpr(int value);
    PrimExpr(float value);
    DataType dtype() const { return get()->dtype; }
};

struct Range {
    PrimExpr min;
    PrimExpr extent;
    static Range from_min_extent(PrimExpr min, PrimExpr extent) { return {min, extent}; }
};

// ---------------------------------------------------------------------------------------------
// Nodes

struct IntImm : PrimExprNode {
    static constexpr ExprKind kKind = ExprKind::IntImm;
    IntImm(DataType t, int64_t v) : PrimExprNode(kKind, t), value(v) {}
    const int64_t value;  // for bool: 0 or 1; for uintN: the bits, zero-extended
};

struct FloatImm : PrimExprNode {
    static constexpr ExprKind kKind = ExprKind::FloatImm;
    FloatImm(DataType t, double v) : PrimExprNode(kKind, t), value(v) {}
    const double value;
};

// A variable: loop counters, let-bound names, scalar parameters. Identified by object; the name
// is only for printing.
struct Var : PrimExprNode {
    static constexpr ExprKind kKind = ExprKind::Var;
    Var(DataType t, std::string n) : PrimExprNode(kKind, t), name(std::move(n)) {}
    const std::string name;
};

struct BinaryExpr : PrimExprNode {
    BinaryExpr(ExprKind k, DataType t, PrimExpr a, PrimExpr b)
        : PrimExprNode(k, t), a(std::move(a)), b(std::move(b)) {}
    const PrimExpr a;
    const PrimExpr b;
};

#define ANVIL_DECLARE_BINARY(name)                                \
    struct name : BinaryExpr {                                    \
        static constexpr ExprKind kKind = ExprKind::name;         \
        name(DataType t, PrimExpr a, PrimExpr b)                  \
            : BinaryExpr(kKind, t, std::move(a), std::move(b)) {} \
    };
ANVIL_FOR_EACH_BINARY_EXPR(ANVIL_DECLARE_BINARY)
#undef ANVIL_DECLARE_BINARY

struct Not : PrimExprNode {
    static constexpr ExprKind kKind = ExprKind::Not;
    Not(DataType t, PrimExpr a) : PrimExprNode(kKind, t), a(std::move(a)) {}
    const PrimExpr a;
};

// Evaluates both branches (they have no side effects); lanes of cond match the values or are 1.
struct Select : PrimExprNode {
    static constexpr ExprKind kKind = ExprKind::Select;
    Select(DataType t, PrimExpr c, PrimExpr tv, PrimExpr fv)
        : PrimExprNode(kKind, t),
          cond(std::move(c)),
          true_value(std::move(tv)),
          false_value(std::move(fv)) {}
    const PrimExpr cond;
    const PrimExpr true_value;
    const PrimExpr false_value;
};

// Numeric conversion to `dtype` (float→int truncates toward zero; int→bool is `!= 0`).
struct Cast : PrimExprNode {
    static constexpr ExprKind kKind = ExprKind::Cast;
    Cast(DataType t, PrimExpr v) : PrimExprNode(kKind, t), value(std::move(v)) {}
    const PrimExpr value;
};

// A call to an intrinsic (see ir/intrinsics.h), or to an external pure function by name.
struct Call : PrimExprNode {
    static constexpr ExprKind kKind = ExprKind::Call;
    Call(DataType t, std::string n, std::vector<PrimExpr> a)
        : PrimExprNode(kKind, t), name(std::move(n)), args(std::move(a)) {}
    const std::string name;
    const std::vector<PrimExpr> args;
};

// A named, typed, multi-dimensional array: a tensor argument or an allocation.
// Identified by object. `scope` is "global" (function arguments, heap) or "local" (a temporary
// small enough for the stack or registers).
struct Buffer : Object {
    Buffer(std::string n, DataType t, std::vector<PrimExpr> s, std::string sc = "global",
           const Object* p = nullptr)
        : name(std::move(n)), dtype(t), shape(std::move(s)), scope(std::move(sc)), producer(p) {}
    const std::string name;
    const DataType dtype;               // element type (scalar)
    const std::vector<PrimExpr> shape;  // row-major, dense
    const std::string scope;
    // The tensor-expression operation that computes this buffer, when it is a TE tensor's
    // buffer (opaque here; te/ reads it to find a computation's inputs). Not owned: the
    // operation owns the buffer.
    const Object* producer;
};

struct Load : PrimExprNode {
    static constexpr ExprKind kKind = ExprKind::Load;
    Load(DataType t, Ref<Buffer> b, std::vector<PrimExpr> idx)
        : PrimExprNode(kKind, t), buffer(std::move(b)), indices(std::move(idx)) {}
    const Ref<Buffer> buffer;
    const std::vector<PrimExpr> indices;
};

// The vector [base, base + stride, ..., base + (lanes-1)*stride].
struct Ramp : PrimExprNode {
    static constexpr ExprKind kKind = ExprKind::Ramp;
    Ramp(DataType t, PrimExpr b, PrimExpr s, int l)
        : PrimExprNode(kKind, t), base(std::move(b)), stride(std::move(s)), lanes(l) {}
    const PrimExpr base;
    const PrimExpr stride;
    const int lanes;
};

struct Broadcast : PrimExprNode {
    static constexpr ExprKind kKind = ExprKind::Broadcast;
    Broadcast(DataType t, PrimExpr v, int l)
        : PrimExprNode(kKind, t), value(std::move(v)), lanes(l) {}
    const PrimExpr value;
    const int lanes;
};

// An iteration variable of a tensor expression: a data-parallel axis or a reduction axis, with
// its domain. `thread_tag` is set for GPU thread axes ("threadIdx.x", "blockIdx.x").
enum class IterKind : uint8_t { DataPar, Reduce };

struct IterVar : Object {
    IterVar(Ref<Var> v, Range d, IterKind k, std::string tag = "")
        : var(std::move(v)), dom(std::move(d)), kind(k), thread_tag(std::move(tag)) {}
    const Ref<Var> var;
    const Range dom;
    const IterKind kind;
    const std::string thread_tag;
};

// A commutative, associative combiner `result(lhs, rhs)` with its identity element.
struct CommReducer : Object {
    CommReducer(Ref<Var> l, Ref<Var> r, PrimExpr res, PrimExpr id, std::string n)
        : lhs(std::move(l)),
          rhs(std::move(r)),
          result(std::move(res)),
          identity(std::move(id)),
          name(std::move(n)) {}
    const Ref<Var> lhs;
    const Ref<Var> rhs;
    const PrimExpr result;
    const PrimExpr identity;
    const std::string name;  // "sum", "max", "min" or a user's name
    // result with lhs := a, rhs := b
    PrimExpr combine(const PrimExpr& a, const PrimExpr& b) const;
};

// combiner over `source` for all points of `axis` where `condition` holds.
struct Reduce : PrimExprNode {
    static constexpr ExprKind kKind = ExprKind::Reduce;
    Reduce(DataType t, Ref<CommReducer> c, PrimExpr s, std::vector<Ref<IterVar>> ax, PrimExpr cond)
        : PrimExprNode(kKind, t),
          combiner(std::move(c)),
          source(std::move(s)),
          axis(std::move(ax)),
          condition(std::move(cond)) {}
    const Ref<CommReducer> combiner;
    const PrimExpr source;
    const std::vector<Ref<IterVar>> axis;
    const PrimExpr condition;
};

// ---------------------------------------------------------------------------------------------
// Checked constructors. They verify operand types (InternalError on mismatch: front ends and
// the operators below convert first) and never simplify.

PrimExpr make_int(DataType t, int64_t value);
PrimExpr make_float(DataType t, double value);
// A constant of any dtype (int, uint, bool, float; vector dtypes give a Broadcast).
PrimExpr make_const(DataType t, double value);
PrimExpr make_bool(bool value);
Ref<Var> make_var(const std::string& name, DataType t = DataType::int32());
PrimExpr make_binary(ExprKind kind, PrimExpr a, PrimExpr b);
PrimExpr make_not(PrimExpr a);
PrimExpr make_select(PrimExpr cond, PrimExpr t, PrimExpr f);
PrimExpr make_cast(DataType t, PrimExpr value);
PrimExpr make_call(DataType t, const std::string& name, std::vector<PrimExpr> args);
PrimExpr make_load(Ref<Buffer> buffer, std::vector<PrimExpr> indices);
PrimExpr make_ramp(PrimExpr base, PrimExpr stride, int lanes);
PrimExpr make_broadcast(PrimExpr value, int lanes);
Ref<Buffer> make_buffer(const std::string& name, DataType t, std::vector<PrimExpr> shape,
                        const std::string& scope = "global");
// The variable a buffer parameter's dimension binds from the argument's shape: the dimension
// itself when it is a Var, or the Var under a Cast (graph dimensions are int64 variables, loop
// extents int32, so a kernel's shapes read `cast<int32>(n)`). Null for any other dimension.
const Var* dimension_var(const PrimExpr& dim);
Ref<IterVar> make_iter_var(Range dom, const std::string& name, IterKind kind = IterKind::DataPar,
                           const std::string& thread_tag = "");

// ---------------------------------------------------------------------------------------------
// Arithmetic with the usual conversions: an integer or float literal operand takes the other
// operand's type; otherwise both must have the same dtype (UserError naming both types).

PrimExpr operator+(PrimExpr a, PrimExpr b);
PrimExpr operator-(PrimExpr a, PrimExpr b);
PrimExpr operator-(PrimExpr a);
PrimExpr operator*(PrimExpr a, PrimExpr b);
PrimExpr operator/(PrimExpr a, PrimExpr b);  // Div: float division, or truncating int division
PrimExpr operator%(PrimExpr a, PrimExpr b);  // Mod: truncating
PrimExpr floordiv(PrimExpr a, PrimExpr b);
PrimExpr floormod(PrimExpr a, PrimExpr b);
PrimExpr min(PrimExpr a, PrimExpr b);
PrimExpr max(PrimExpr a, PrimExpr b);
PrimExpr eq(PrimExpr a, PrimExpr b);
PrimExpr ne(PrimExpr a, PrimExpr b);
PrimExpr operator<(PrimExpr a, PrimExpr b);
PrimExpr operator<=(PrimExpr a, PrimExpr b);
PrimExpr operator>(PrimExpr a, PrimExpr b);
PrimExpr operator>=(PrimExpr a, PrimExpr b);
PrimExpr operator&&(PrimExpr a, PrimExpr b);
PrimExpr operator||(PrimExpr a, PrimExpr b);
PrimExpr operator!(PrimExpr a);
PrimExpr select(PrimExpr cond, PrimExpr t, PrimExpr f);
PrimExpr cast(DataType t, PrimExpr value);

// Constant inspection.
const int64_t* as_const_int(const PrimExpr& e);  // IntImm value, or null
bool is_const_int(const PrimExpr& e, int64_t value);
bool is_zero(const PrimExpr& e);
bool is_one(const PrimExpr& e);

// The minimum and maximum finite values of a scalar type, as constants.
PrimExpr min_value(DataType t);
PrimExpr max_value(DataType t);

// Replace variables (by identity) with expressions.
PrimExpr substitute(const PrimExpr& e, const std::vector<std::pair<Ref<Var>, PrimExpr>>& map);

// Prints in the loop IR's expression syntax, e.g. `floordiv(i, 4) + A[i, j] * 2f`.
std::ostream& operator<<(std::ostream& os, const PrimExpr& e);
std::string to_string(const PrimExpr& e);

}  // namespace anvil
