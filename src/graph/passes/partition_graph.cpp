// TVM's PartitionGraph, last of the four BYOC passes: every region for an external compiler (a
// function with Compiler="<c>", annotate_target.cpp / merge_compiler_regions.cpp) gets its
// global symbol, "tvmgen_default_<c>_main_<i>" numbered per compiler in the order the graph
// computes them: the name of the function its code generator emits and the executors call.
//
// Regions stay where they are, as functions called from main (TVM lifts them to global
// functions of the module; here a called function is how the graph holds every group that
// becomes one kernel, fused or external). Composite functions nothing took are inlined by
// inline_composites.
#include <map>

#include "graph/expr_functor.h"
#include "graph/passes/graph_rewrite.h"
#include "graph/passes/passes.h"

namespace anvil::graph {

namespace {

class SymbolNamer : public ExprMutator {
public:
    explicit SymbolNamer(std::map<std::string, int>& counts) : counts_(counts) {}

protected:
    Expr mutate_(const Function* op, const Expr& self) override {
        auto compiler = op->attrs.find("Compiler");
        if (compiler == op->attrs.end() || op->attrs.count("global_symbol")) return self;
        FunctionAttrs attrs = op->attrs;
        attrs["global_symbol"] = "tvmgen_default_" + compiler->second + "_main_" +
                                 std::to_string(counts_[compiler->second]++);
        return Expr(make_function(op->params, op->body, op->primitive, op->loc, attrs));
    }

private:
    std::map<std::string, int>& counts_;
};

}  // namespace

IRModule partition_graph(const IRModule& m, const PassContext&) {
    // Numbers continue after the symbols the module has already (a module partitioned before).
    std::map<std::string, int> counts;
    for (const auto& [name, f] : m.functions) {
        post_order_visit(f->body, [&](const Expr& e) {
            auto* g = e.as<Function>();
            if (!g) return;
            auto c = g->attrs.find("Compiler");
            auto s = g->attrs.find("global_symbol");
            if (c == g->attrs.end() || s == g->attrs.end()) return;
            std::string prefix = "tvmgen_default_" + c->second + "_main_";
            if (s->second.rfind(prefix, 0) == 0) {
                int i = std::atoi(s->second.c_str() + prefix.size());
                counts[c->second] = std::max(counts[c->second], i + 1);
            }
        });
    }
    return rewrite_functions(m, [&](const Ref<Function>& f) {
        if (f->attrs.count("Compiler")) return f;
        Expr body = SymbolNamer(counts).mutate(f->body);
        return body.same_as(f->body) ? f : with_body(*f, body);
    });
}

}  // namespace anvil::graph
