// TVM's AnnotateTarget: every call an external compiler takes becomes a region of its own, a
// call of a function with Compiler="<compiler>" around it. (TVM marks region boundaries with
// compiler_begin / compiler_end annotations instead; a one-call function is the same region in
// plain IR, which prints, parses back and compiles at every step.) A compiler takes a call of a
// Composite="<compiler>.<name>" function, and an op call its support check accepts
// (codegen/external). The first compiler in `compilers` that takes a call gets it. Constant
// operands move into the region; the other operands are its parameters.
#include "codegen/external/external_compiler.h"
#include "graph/expr_functor.h"
#include "graph/passes/graph_rewrite.h"
#include "graph/passes/passes.h"
#include "support/error.h"

namespace anvil::graph {

namespace {

// The compiler a call goes to, or "".
std::string compiler_of(const Call& call, const std::vector<std::string>& compilers) {
    if (!call.type.is<TensorType>()) return "";  // one tensor out: what a region returns
    for (const auto& a : call.args) {
        if (!a->type.is<TensorType>()) return "";
    }
    if (!call.op.defined()) {
        auto* f = call.callee.as<Function>();
        auto composite = f ? f->attrs.find("Composite") : FunctionAttrs::const_iterator();
        if (!f || composite == f->attrs.end()) return "";
        for (const auto& c : compilers) {
            if (composite->second.rfind(c + ".", 0) == 0) return c;
        }
        return "";
    }
    if (call.op->executor_op) return "";
    for (const auto& c : compilers) {
        if (codegen::supports(c, call)) return c;
    }
    return "";
}

class Annotator : public ExprMutator {
public:
    explicit Annotator(const std::vector<std::string>& compilers) : compilers_(compilers) {}

protected:
    Expr mutate_(const Call* op, const Expr& self) override {
        Expr e = ExprMutator::mutate_(op, self);
        auto* call = e.as<Call>();
        std::string compiler = compiler_of(*call, compilers_);
        if (compiler.empty()) return e;
        std::vector<Ref<Var>> params;
        std::vector<Expr> inner_args, outer_args;
        for (const auto& a : call->args) {
            if (a.is<Constant>()) {
                inner_args.push_back(a);
                continue;
            }
            Ref<Var> p = make_var("p" + std::to_string(params.size()), a->type, a->loc);
            params.push_back(p);
            inner_args.push_back(Expr(p));
            outer_args.push_back(a);
        }
        Expr inner = call->op.defined()
                         ? make_call(call->op, std::move(inner_args), call->attrs, call->loc)
                         : make_call_function(call->callee.cast<Function>(), std::move(inner_args),
                                              call->loc);
        Ref<Function> region =
            make_function(std::move(params), inner, false, call->loc, {{"Compiler", compiler}});
        return make_call_function(region, std::move(outer_args), call->loc);
    }

    // Composite functions are callees, not graph: their ops are not annotated one by one.
    Expr mutate_(const Function*, const Expr& self) override { return self; }

private:
    const std::vector<std::string>& compilers_;
};

}  // namespace

IRModule annotate_target(const IRModule& m, const std::vector<std::string>& compilers) {
    for (const auto& c : compilers) {
        if (!codegen::is_known_compiler(c)) {
            user_error() << "annotate_target: unknown external code generator '" << c
                         << "'; this build of Anvil has " << codegen::external_compiler_list()
                         << " (and compilers with support checks registered from Python)";
        }
    }
    if (compilers.empty()) return m;
    return rewrite_functions(m, [&](const Ref<Function>& f) {
        if (f->attrs.count("Compiler")) return f;
        Expr body = Annotator(compilers).mutate(f->body);
        return body.same_as(f->body) ? f : with_body(*f, body);
    });
}

IRModule annotate_target(const IRModule& m, const PassContext& ctx) {
    return annotate_target(m, ctx.target.external_compilers);
}

}  // namespace anvil::graph
