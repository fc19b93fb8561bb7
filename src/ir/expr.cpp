#include "ir/expr.h"

#include <cmath>
#include <limits>
#include <sstream>

#include "ir/expr_functor.h"
#include "support/error.h"

namespace anvil {

const char* expr_kind_name(ExprKind kind) {
    switch (kind) {
#define ANVIL_X(name)    \
    case ExprKind::name: \
        return #name;
        ANVIL_FOR_EACH_EXPR(ANVIL_X)
#undef ANVIL_X
    }
    return "?";
}

PrimExpr::PrimExpr(int value) : PrimExpr(make_int(DataType::int32(), value)) {}
PrimExpr::PrimExpr(float value) : PrimExpr(make_float(DataType::float32(), value)) {}

PrimExpr make_int(DataType t, int64_t value) {
    ANVIL_CHECK(t.is_scalar() && (t.is_integer() || t.is_bool())) << "IntImm of type " << t.str();
    return PrimExpr(new IntImm(t, value));
}

PrimExpr make_float(DataType t, double value) {
    ANVIL_CHECK(t.is_scalar() && t.is_floating()) << "FloatImm of type " << t.str();
    return PrimExpr(new FloatImm(t, value));
}

PrimExpr make_const(DataType t, double value) {
    if (t.is_vector()) return make_broadcast(make_const(t.element_of(), value), t.lanes());
    if (t.is_floating()) return make_float(t, value);
    if (t.is_bool()) return make_int(t, value != 0 ? 1 : 0);
    // A double outside int64's range (or NaN) has no value as an int64 in C++; such constants
    // (a float literal folded into an integer, a huge number in IR text) saturate instead.
    if (std::isnan(value)) return make_int(t, 0);
    if (value >= 0x1p63) return make_int(t, std::numeric_limits<int64_t>::max());
    if (value < -0x1p63) return make_int(t, std::numeric_limits<int64_t>::min());
    return make_int(t, static_cast<int64_t>(value));
}

PrimExpr make_bool(bool value) {
    return make_int(DataType::bool_(), value ? 1 : 0);
}

Ref<Var> make_var(const std::string& name, DataType t) {
    return Ref<Var>(new Var(t, name));
}

static bool is_compare(ExprKind k) {
    return k == ExprKind::EQ || k == ExprKind::NE || k == ExprKind::LT || k == ExprKind::LE ||
           k == ExprKind::GT || k == ExprKind::GE;
}

PrimExpr make_binary(ExprKind kind, PrimExpr a, PrimExpr b) {
    ANVIL_CHECK(a.defined() && b.defined()) << expr_kind_name(kind) << " of an undefined operand";
    ANVIL_CHECK(a.dtype() == b.dtype())
        << expr_kind_name(kind) << " operands differ: " << a.dtype().str() << " vs "
        << b.dtype().str() << " in " << a << " and " << b;
    DataType t = a.dtype();
    if (is_compare(kind)) t = DataType::bool_(a.dtype().lanes());
    if (kind == ExprKind::And || kind == ExprKind::Or) {
        ANVIL_CHECK(a.dtype().is_bool()) << "logical op on " << a.dtype().str();
    }
    switch (kind) {
#define ANVIL_X(name)    \
    case ExprKind::name: \
        return PrimExpr(new name(t, std::move(a), std::move(b)));
        ANVIL_FOR_EACH_BINARY_EXPR(ANVIL_X)
#undef ANVIL_X
        default:
            internal_error() << "make_binary of non-binary kind " << expr_kind_name(kind);
    }
    ANVIL_UNREACHABLE();
}

PrimExpr make_not(PrimExpr a) {
    ANVIL_CHECK(a.dtype().is_bool()) << "logical not of " << a.dtype().str();
    DataType t = a.dtype();
    return PrimExpr(new Not(t, std::move(a)));
}

PrimExpr make_select(PrimExpr cond, PrimExpr t, PrimExpr f) {
    ANVIL_CHECK(cond.dtype().is_bool()) << "select condition of type " << cond.dtype().str();
    ANVIL_CHECK(t.dtype() == f.dtype())
        << "select branches differ: " << t.dtype().str() << " vs " << f.dtype().str();
    ANVIL_CHECK(cond.dtype().lanes() == 1 || cond.dtype().lanes() == t.dtype().lanes())
        << "select condition lanes " << cond.dtype().lanes();
    DataType ty = t.dtype();
    return PrimExpr(new Select(ty, std::move(cond), std::move(t), std::move(f)));
}

PrimExpr make_cast(DataType t, PrimExpr value) {
    ANVIL_CHECK(t.lanes() == value.dtype().lanes())
        << "cast changes lanes: " << value.dtype().str() << " to " << t.str();
    return PrimExpr(new Cast(t, std::move(value)));
}

PrimExpr make_call(DataType t, const std::string& name, std::vector<PrimExpr> args) {
    return PrimExpr(new Call(t, name, std::move(args)));
}

PrimExpr make_load(Ref<Buffer> buffer, std::vector<PrimExpr> indices) {
    ANVIL_CHECK(buffer.defined()) << "load from an undefined buffer";
    ANVIL_CHECK(!indices.empty() || buffer->shape.empty())
        << "load from " << buffer->name << " without indices";
    int lanes = indices.empty() ? 1 : indices.back().dtype().lanes();
    for (const auto& i : indices) {
        ANVIL_CHECK(i.dtype().is_integer())
            << "index of type " << i.dtype().str() << " into " << buffer->name;
    }
    DataType t = buffer->dtype.with_lanes(lanes);
    return PrimExpr(new Load(t, std::move(buffer), std::move(indices)));
}

PrimExpr make_ramp(PrimExpr base, PrimExpr stride, int lanes) {
    ANVIL_CHECK(base.dtype().is_scalar() && base.dtype() == stride.dtype())
        << "ramp of " << base.dtype().str() << " and " << stride.dtype().str();
    ANVIL_CHECK(lanes > 1) << "ramp with " << lanes << " lanes";
    DataType t = base.dtype().with_lanes(lanes);
    return PrimExpr(new Ramp(t, std::move(base), std::move(stride), lanes));
}

PrimExpr make_broadcast(PrimExpr value, int lanes) {
    ANVIL_CHECK(value.dtype().is_scalar()) << "broadcast of vector " << value.dtype().str();
    ANVIL_CHECK(lanes > 1) << "broadcast to " << lanes << " lanes";
    DataType t = value.dtype().with_lanes(lanes);
    return PrimExpr(new Broadcast(t, std::move(value), lanes));
}

Ref<Buffer> make_buffer(const std::string& name, DataType t, std::vector<PrimExpr> shape,
                        const std::string& scope) {
    ANVIL_CHECK(t.is_scalar()) << "buffer " << name << " of vector type " << t.str();
    return make_ref<Buffer>(name, t, std::move(shape), scope);
}

const Var* dimension_var(const PrimExpr& dim) {
    if (auto* c = dim.as<Cast>()) return c->value.as<Var>();
    return dim.as<Var>();
}

Ref<IterVar> make_iter_var(Range dom, const std::string& name, IterKind kind,
                           const std::string& thread_tag) {
    DataType t = dom.extent.defined() ? dom.extent.dtype() : DataType::int32();
    return make_ref<IterVar>(make_var(name, t), std::move(dom), kind, thread_tag);
}

PrimExpr CommReducer::combine(const PrimExpr& a, const PrimExpr& b) const {
    return substitute(result, {{lhs, a}, {rhs, b}});
}

// ---------------------------------------------------------------------------------------------
// Operators

namespace {

bool is_literal(const PrimExpr& e) {
    return e.is<IntImm>() || e.is<FloatImm>();
}

// Gives a literal operand the other operand's type (broadcasting to its lanes).
void match_types(PrimExpr& a, PrimExpr& b, const char* op) {
    if (a.dtype() == b.dtype()) return;
    auto convert = [](const PrimExpr& lit, DataType to) {
        double v = lit.is<IntImm>() ? static_cast<double>(lit.as<IntImm>()->value)
                                    : lit.as<FloatImm>()->value;
        if (to.element_of().is_integer() && lit.is<FloatImm>() && v != std::floor(v))
            return PrimExpr();
        return make_const(to, v);
    };
    PrimExpr converted;
    if (is_literal(b) && (converted = convert(b, a.dtype())).defined()) {
        b = converted;
    } else if (is_literal(a) && (converted = convert(a, b.dtype())).defined()) {
        a = converted;
    } else if (a.dtype().is_scalar() && b.dtype().is_vector() &&
               a.dtype() == b.dtype().element_of()) {
        a = make_broadcast(a, b.dtype().lanes());
    } else if (b.dtype().is_scalar() && a.dtype().is_vector() &&
               b.dtype() == a.dtype().element_of()) {
        b = make_broadcast(b, a.dtype().lanes());
    } else {
        user_error() << "operands of '" << op << "' have different types: " << a.dtype().str()
                     << " (" << a << ") and " << b.dtype().str() << " (" << b << "); insert a cast";
    }
}

PrimExpr binary(ExprKind kind, PrimExpr a, PrimExpr b, const char* op) {
    match_types(a, b, op);
    return make_binary(kind, std::move(a), std::move(b));
}

}  // namespace

PrimExpr operator+(PrimExpr a, PrimExpr b) {
    return binary(ExprKind::Add, a, b, "+");
}
PrimExpr operator-(PrimExpr a, PrimExpr b) {
    return binary(ExprKind::Sub, a, b, "-");
}
PrimExpr operator-(PrimExpr a) {
    return binary(ExprKind::Sub, make_const(a.dtype(), 0), a, "-");
}
PrimExpr operator*(PrimExpr a, PrimExpr b) {
    return binary(ExprKind::Mul, a, b, "*");
}
PrimExpr operator/(PrimExpr a, PrimExpr b) {
    return binary(ExprKind::Div, a, b, "/");
}
PrimExpr operator%(PrimExpr a, PrimExpr b) {
    return binary(ExprKind::Mod, a, b, "%");
}
PrimExpr floordiv(PrimExpr a, PrimExpr b) {
    return binary(ExprKind::FloorDiv, a, b, "floordiv");
}
PrimExpr floormod(PrimExpr a, PrimExpr b) {
    return binary(ExprKind::FloorMod, a, b, "floormod");
}
PrimExpr min(PrimExpr a, PrimExpr b) {
    return binary(ExprKind::Min, a, b, "min");
}
PrimExpr max(PrimExpr a, PrimExpr b) {
    return binary(ExprKind::Max, a, b, "max");
}
PrimExpr eq(PrimExpr a, PrimExpr b) {
    return binary(ExprKind::EQ, a, b, "==");
}
PrimExpr ne(PrimExpr a, PrimExpr b) {
    return binary(ExprKind::NE, a, b, "!=");
}
PrimExpr operator<(PrimExpr a, PrimExpr b) {
    return binary(ExprKind::LT, a, b, "<");
}
PrimExpr operator<=(PrimExpr a, PrimExpr b) {
    return binary(ExprKind::LE, a, b, "<=");
}
PrimExpr operator>(PrimExpr a, PrimExpr b) {
    return binary(ExprKind::GT, a, b, ">");
}
PrimExpr operator>=(PrimExpr a, PrimExpr b) {
    return binary(ExprKind::GE, a, b, ">=");
}
PrimExpr operator&&(PrimExpr a, PrimExpr b) {
    return binary(ExprKind::And, a, b, "&&");
}
PrimExpr operator||(PrimExpr a, PrimExpr b) {
    return binary(ExprKind::Or, a, b, "||");
}
PrimExpr operator!(PrimExpr a) {
    return make_not(std::move(a));
}

PrimExpr select(PrimExpr cond, PrimExpr t, PrimExpr f) {
    match_types(t, f, "select");
    return make_select(std::move(cond), std::move(t), std::move(f));
}

PrimExpr cast(DataType t, PrimExpr value) {
    if (value.dtype() == t) return value;
    if (t.is_vector() && value.dtype().is_scalar()) {
        return make_broadcast(cast(t.element_of(), value), t.lanes());
    }
    return make_cast(t, std::move(value));
}

const int64_t* as_const_int(const PrimExpr& e) {
    if (auto* imm = e.as<IntImm>()) return &imm->value;
    return nullptr;
}

bool is_const_int(const PrimExpr& e, int64_t value) {
    const int64_t* v = as_const_int(e);
    return v && *v == value;
}
bool is_zero(const PrimExpr& e) {
    return is_const_int(e, 0);
}
bool is_one(const PrimExpr& e) {
    return is_const_int(e, 1);
}

PrimExpr min_value(DataType t) {
    if (t.is_int()) {
        return make_int(t, t.bits() == 64 ? std::numeric_limits<int64_t>::min()
                                          : -(int64_t{1} << (t.bits() - 1)));
    }
    if (t.is_uint() || t.is_bool()) return make_int(t, 0);
    if (t.bits() == 16 && t.is_float()) return make_float(t, -65504.0);
    if (t.is_bfloat()) return make_float(t, -3.38953139e38);
    if (t.bits() == 32) return make_float(t, -std::numeric_limits<float>::max());
    return make_float(t, -std::numeric_limits<double>::max());
}

PrimExpr max_value(DataType t) {
    if (t.is_int()) {
        return make_int(t, t.bits() == 64 ? std::numeric_limits<int64_t>::max()
                                          : (int64_t{1} << (t.bits() - 1)) - 1);
    }
    if (t.is_bool()) return make_int(t, 1);
    if (t.is_uint()) {
        return make_int(t,
                        t.bits() == 64 ? -1 : static_cast<int64_t>((uint64_t{1} << t.bits()) - 1));
    }
    if (t.bits() == 16 && t.is_float()) return make_float(t, 65504.0);
    if (t.is_bfloat()) return make_float(t, 3.38953139e38);
    if (t.bits() == 32) return make_float(t, std::numeric_limits<float>::max());
    return make_float(t, std::numeric_limits<double>::max());
}

namespace {

class Substituter : public ExprMutator {
public:
    explicit Substituter(const std::vector<std::pair<Ref<Var>, PrimExpr>>& map) : map_(map) {}

protected:
    PrimExpr mutate_(const Var* op, const PrimExpr& self) override {
        for (const auto& [var, value] : map_) {
            if (var.get() == op) return value;
        }
        return self;
    }

private:
    const std::vector<std::pair<Ref<Var>, PrimExpr>>& map_;
};

}  // namespace

PrimExpr substitute(const PrimExpr& e, const std::vector<std::pair<Ref<Var>, PrimExpr>>& map) {
    if (map.empty()) return e;
    return Substituter(map).mutate(e);
}

}  // namespace anvil
