#include "tir/stmt.h"

#include "support/error.h"

namespace anvil::tir {

const char* stmt_kind_name(StmtKind kind) {
    switch (kind) {
#define ANVIL_X(name)    \
    case StmtKind::name: \
        return #name;
        ANVIL_FOR_EACH_STMT(ANVIL_X)
#undef ANVIL_X
    }
    return "?";
}

const char* for_kind_name(ForKind kind) {
    switch (kind) {
        case ForKind::Serial:
            return "serial";
        case ForKind::Parallel:
            return "parallel";
        case ForKind::Vectorized:
            return "vectorized";
        case ForKind::Unrolled:
            return "unrolled";
        case ForKind::ThreadBinding:
            return "thread_binding";
    }
    return "?";
}

bool parse_for_kind(const std::string& text, ForKind* out) {
    for (ForKind k : {ForKind::Serial, ForKind::Parallel, ForKind::Vectorized, ForKind::Unrolled,
                      ForKind::ThreadBinding}) {
        if (text == for_kind_name(k)) {
            *out = k;
            return true;
        }
    }
    return false;
}

Stmt make_let(Ref<Var> var, PrimExpr value, Stmt body, SourceLoc loc) {
    ANVIL_CHECK(var->dtype == value.dtype())
        << "let " << var->name << ": " << var->dtype.str() << " bound to " << value.dtype().str();
    ANVIL_CHECK(body.defined()) << "let " << var->name << " without a body";
    return Stmt(new LetStmt(std::move(var), std::move(value), std::move(body), std::move(loc)));
}

Stmt make_for(Ref<Var> var, PrimExpr min, PrimExpr extent, ForKind kind, Stmt body,
              std::string thread_tag, SourceLoc loc) {
    ANVIL_CHECK(var->dtype.is_integer() && var->dtype.is_scalar())
        << "loop variable " << var->name << " of type " << var->dtype.str();
    ANVIL_CHECK(min.dtype() == var->dtype && extent.dtype() == var->dtype)
        << "loop " << var->name << " bounds of type " << min.dtype().str() << ", "
        << extent.dtype().str();
    ANVIL_CHECK(body.defined()) << "loop " << var->name << " without a body";
    return Stmt(new For(std::move(var), std::move(min), std::move(extent), kind, std::move(body),
                        std::move(thread_tag), std::move(loc)));
}

Stmt make_store(Ref<Buffer> buffer, PrimExpr value, std::vector<PrimExpr> indices, SourceLoc loc) {
    ANVIL_CHECK(value.dtype().element_of() == buffer->dtype)
        << "store of " << value.dtype().str() << " into " << buffer->name << " of "
        << buffer->dtype.str();
    if (!indices.empty()) {
        ANVIL_CHECK(indices.back().dtype().lanes() == value.dtype().lanes())
            << "store into " << buffer->name << ": index lanes " << indices.back().dtype().lanes()
            << " vs value lanes " << value.dtype().lanes();
    }
    return Stmt(new Store(std::move(buffer), std::move(value), std::move(indices), std::move(loc)));
}

Stmt make_allocate(Ref<Buffer> buffer, Stmt body, SourceLoc loc) {
    ANVIL_CHECK(body.defined()) << "allocate " << buffer->name << " without a body";
    return Stmt(new Allocate(std::move(buffer), std::move(body), std::move(loc)));
}

Stmt make_if(PrimExpr cond, Stmt then_case, Stmt else_case, SourceLoc loc) {
    ANVIL_CHECK(cond.dtype() == DataType::bool_()) << "if condition of type " << cond.dtype().str();
    ANVIL_CHECK(then_case.defined()) << "if without a then-branch";
    return Stmt(new IfThenElse(std::move(cond), std::move(then_case), std::move(else_case),
                               std::move(loc)));
}

Stmt make_evaluate(PrimExpr value, SourceLoc loc) {
    return Stmt(new Evaluate(std::move(value), std::move(loc)));
}

Stmt make_seq(std::vector<Stmt> seq, SourceLoc loc) {
    std::vector<Stmt> flat;
    for (auto& s : seq) {
        if (!s.defined()) continue;
        if (auto* inner = s.as<SeqStmt>()) {
            flat.insert(flat.end(), inner->seq.begin(), inner->seq.end());
        } else {
            flat.push_back(std::move(s));
        }
    }
    if (flat.size() == 1) return flat[0];
    return Stmt(new SeqStmt(std::move(flat), std::move(loc)));
}

size_t count_message_placeholders(const std::string& message) {
    size_t n = 0;
    for (size_t k = message.find("{}"); k != std::string::npos; k = message.find("{}", k + 2)) {
        ++n;
    }
    return n;
}

Stmt make_assert(PrimExpr cond, std::string message, Stmt body, SourceLoc loc,
                 std::vector<PrimExpr> message_args) {
    ANVIL_CHECK(cond.dtype().is_bool()) << "assert of type " << cond.dtype().str();
    ANVIL_CHECK(count_message_placeholders(message) == message_args.size())
        << "assert message with " << count_message_placeholders(message) << " placeholders {} and "
        << message_args.size() << " arguments";
    for (const auto& a : message_args) {
        ANVIL_CHECK(a.dtype().is_integer() &&
                    (a.dtype().is_scalar() || a.dtype().lanes() == cond.dtype().lanes()))
            << "assert message argument of type " << a.dtype().str() << " (expected an integer "
            << "scalar or a vector with the condition's " << cond.dtype().lanes() << " lanes)";
    }
    return Stmt(new AssertStmt(std::move(cond), std::move(message), std::move(body), std::move(loc),
                               std::move(message_args)));
}

PackedArg tensor_arg(Ref<Buffer> buffer) {
    std::vector<PrimExpr> shape = buffer->shape;
    return PackedArg{std::move(buffer), std::move(shape), PrimExpr()};
}

PackedArg scalar_arg(PrimExpr value) {
    return PackedArg{Ref<Buffer>(), {}, std::move(value)};
}

Stmt make_call_packed(std::string func, std::vector<PackedArg> args, SourceLoc loc) {
    ANVIL_CHECK(!func.empty()) << "call_packed without a function name";
    for (const auto& a : args) {
        ANVIL_CHECK(a.buffer.defined() != a.value.defined())
            << "call_packed " << func << ": an argument is neither a tensor nor a scalar";
        if (a.value.defined()) {
            DataType t = a.value.dtype();
            ANVIL_CHECK(t.is_scalar() && !t.is_handle())
                << "call_packed " << func << ": scalar argument of type " << t.str();
        }
    }
    return Stmt(new CallPacked(std::move(func), std::move(args), std::move(loc)));
}

Ref<PrimFunc> make_prim_func(std::string name, std::vector<Ref<Buffer>> params, Stmt body,
                             std::vector<Ref<Var>> scalar_params) {
    ANVIL_CHECK(body.defined()) << "function " << name << " without a body";
    return make_ref<PrimFunc>(std::move(name), std::move(params), std::move(scalar_params),
                              std::move(body));
}

Ref<PrimFunc> with_body(const Ref<PrimFunc>& f, Stmt body) {
    if (body.same_as(f->body)) return f;
    return make_ref<PrimFunc>(f->name, f->params, f->scalar_params, std::move(body));
}

}  // namespace anvil::tir
