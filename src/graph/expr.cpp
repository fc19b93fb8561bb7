#include "graph/expr.h"

#include <algorithm>

#include "support/error.h"
#include "support/text_scanner.h"

namespace anvil::graph {

const char* expr_kind_name(ExprKind kind) {
    switch (kind) {
#define ANVIL_X(name)    \
    case ExprKind::name: \
        return #name;
        ANVIL_FOR_EACH_GRAPH_EXPR(ANVIL_X)
#undef ANVIL_X
    }
    return "?";
}

DataType dtype_of(DLDataType t) {
    // The runtime spells bool {kDLUInt, 1}; DLPack 0.8 adds kDLBool (6).
    if (t.code == 6 || (t.code == kDLUInt && t.bits == 1)) return DataType::bool_(t.lanes);
    switch (t.code) {
        case kDLInt:
            return DataType::int_(t.bits, t.lanes);
        case kDLUInt:
            return DataType::uint(t.bits, t.lanes);
        case kDLFloat:
            return DataType::float_(t.bits, t.lanes);
        case kDLBfloat:
            return DataType(DataType::Code::BFloat, t.bits, t.lanes);
        case ANVIL_DTYPE_STRING_CODE:
            return DataType::string();
        default:
            user_error() << "tensor element type code " << int(t.code) << " is not supported";
    }
    ANVIL_UNREACHABLE();
}

DLDataType dl_dtype_of(DataType t) {
    if (t.is_bool()) return DLDataType{kDLUInt, 1, static_cast<uint16_t>(t.lanes())};
    if (t.is_string()) return DLDataType{ANVIL_DTYPE_STRING_CODE, 128, 1};
    uint8_t code = t.is_int()     ? kDLInt
                   : t.is_uint()  ? kDLUInt
                   : t.is_float() ? kDLFloat
                                  : kDLBfloat;
    return DLDataType{code, static_cast<uint8_t>(t.bits()), static_cast<uint16_t>(t.lanes())};
}

Ref<Var> make_var(const std::string& name, Type type, SourceLoc loc) {
    ANVIL_CHECK(type.defined()) << "variable " << name << " without a type";
    return make_ref<Var>(name, std::move(type), std::move(loc));
}

Expr make_constant(runtime::NDArray data, SourceLoc loc) {
    ANVIL_CHECK(data.defined()) << "constant without data";
    std::vector<int64_t> shape(data.shape().begin(), data.shape().end());
    Type t = make_tensor_type(shape, dtype_of(data.dtype()));
    return Expr(new Constant(std::move(data), std::move(t), std::move(loc)));
}

Expr make_call(const Op& op, std::vector<Expr> args, Ref<Attrs> attrs, SourceLoc loc) {
    if (op.num_inputs >= 0 && static_cast<int>(args.size()) != op.num_inputs) {
        user_error(loc) << op.name << " takes " << op.num_inputs << " input(s), got "
                        << args.size();
    }
    Ref<Attrs> defaults = op.make_default_attrs();
    if (!attrs.defined()) attrs = defaults;
    ANVIL_CHECK(std::string(attrs->type_name()) == defaults->type_name())
        << op.name << " called with " << attrs->type_name() << ", expects "
        << defaults->type_name();
    std::vector<Type> arg_types;
    for (const auto& a : args) {
        ANVIL_CHECK(a.defined()) << op.name << " with an undefined argument";
        arg_types.push_back(a->type);
    }
    // Ops with a compute rule become kernels, which handle numbers only (ops/string.h has the
    // ops on strings).
    bool strings = std::any_of(arg_types.begin(), arg_types.end(), holds_strings);
    if (op.compute && strings) user_error(loc) << op.name << " does not take string tensors";
    Type t = op.infer_type(op, arg_types, *attrs, loc);
    if (op.compute && holds_strings(t)) {
        user_error(loc) << op.name << " cannot make string tensors";
    }
    return Expr(new Call(Ref<Op>(&op), Expr(), std::move(args), std::move(attrs), std::move(t),
                         std::move(loc)));
}

Expr make_call(Ref<Op> op, std::vector<Expr> args, Ref<Attrs> attrs, SourceLoc loc) {
    return make_call(*op, std::move(args), std::move(attrs), std::move(loc));
}

Expr make_call_function(Ref<Function> fn, std::vector<Expr> args, SourceLoc loc) {
    if (args.size() != fn->params.size()) {
        user_error(loc) << "function of " << fn->params.size() << " parameter(s) called with "
                        << args.size() << " argument(s)";
    }
    for (size_t i = 0; i < args.size(); ++i) {
        if (!type_equal(args[i]->type, fn->params[i]->type)) {
            user_error(loc) << "argument " << i << " has type " << type_str(args[i]->type)
                            << ", the function's parameter '" << fn->params[i]->name << "' has "
                            << type_str(fn->params[i]->type);
        }
    }
    Type t = fn->type.as<FuncType>()->ret;
    return Expr(new Call(nullptr, Expr(fn), std::move(args), Ref<Attrs>(new NoAttrs()),
                         std::move(t), std::move(loc)));
}

Expr make_tuple(std::vector<Expr> fields, SourceLoc loc) {
    std::vector<Type> types;
    for (const auto& f : fields) types.push_back(f->type);
    Type t = make_tuple_type(std::move(types));
    return Expr(new Tuple(std::move(fields), std::move(t), std::move(loc)));
}

Expr make_tuple_get_item(Expr tuple, int index, SourceLoc loc) {
    auto* tt = tuple->type.as<TupleType>();
    if (!tt) user_error(loc) << "taking item " << index << " of a " << type_str(tuple->type);
    if (index < 0 || index >= static_cast<int>(tt->fields.size())) {
        user_error(loc) << "item " << index << " of a tuple of " << tt->fields.size();
    }
    Type t = tt->fields[index];
    return Expr(new TupleGetItem(std::move(tuple), index, std::move(t), std::move(loc)));
}

Ref<Function> make_function(std::vector<Ref<Var>> params, Expr body, bool primitive, SourceLoc loc,
                            FunctionAttrs attrs) {
    ANVIL_CHECK(body.defined()) << "function without a body";
    for (const auto& [name, value] : attrs) {
        bool plain = !name.empty() && text::is_name_start(name[0]);
        for (char c : name) plain &= text::is_name_char(c);
        if (!plain || name == "primitive") {
            user_error(loc) << "function attribute name '" << name
                            << "': a name is a letter or _ then letters, digits or _ ('primitive' "
                               "is the primitive flag)";
        }
    }
    std::vector<Type> param_types;
    for (const auto& p : params) param_types.push_back(p->type);
    Type t = make_func_type(std::move(param_types), body->type);
    return make_ref<Function>(std::move(params), std::move(body), primitive, std::move(attrs),
                              std::move(t), std::move(loc));
}

Ref<Function> with_body(const Function& f, Expr body) {
    return make_function(f.params, std::move(body), f.primitive, f.loc, f.attrs);
}

Expr make_let(Ref<Var> var, Expr value, Expr body, SourceLoc loc) {
    if (!type_equal(var->type, value->type)) {
        user_error(loc) << "let %" << var->name << ": " << type_str(var->type) << " bound to a "
                        << type_str(value->type);
    }
    Type t = body->type;
    return Expr(
        new Let(std::move(var), std::move(value), std::move(body), std::move(t), std::move(loc)));
}

}  // namespace anvil::graph
