#include "driver/lower_external.h"

#include <map>

#include "codegen/external/external_compiler.h"
#include "graph/expr_functor.h"
#include "ops/call_tir.h"
#include "runtime/external_module.h"
#include "support/error.h"

namespace anvil::driver {

namespace {

class RegionLowerer : public graph::ExprMutator {
public:
    std::map<std::string, std::vector<codegen::ExternalRegion>> regions;

private:
    std::map<std::string, const graph::Function*> callee_of_;

protected:
    graph::Expr mutate_(const graph::Call* op, const graph::Expr& self) override {
        graph::Expr e = graph::ExprMutator::mutate_(op, self);
        std::string compiler;
        const graph::Function* f = external_region(e, &compiler);
        if (!f) return e;
        auto symbol = f->attrs.find("global_symbol");
        if (symbol == f->attrs.end()) {
            internal_error() << "a region for '" << compiler << "' without a global_symbol "
                             << "(partition_graph names every region)";
        }
        auto* call = e.as<graph::Call>();
        // A region called twice (a hand-written module) is compiled once.
        auto seen = callee_of_.find(symbol->second);
        if (seen == callee_of_.end()) {
            callee_of_[symbol->second] = f;
            regions[compiler].push_back({symbol->second, call->callee.cast<graph::Function>()});
        } else if (seen->second != f) {
            user_error(f->loc) << "two regions have the global symbol '" << symbol->second
                               << "'; each needs its own";
        }
        return ops::make_call_tir(symbol->second, call->args, call->type, call->loc);
    }
};

}  // namespace

const graph::Function* external_region(const graph::Expr& e, std::string* compiler) {
    auto* call = e.as<graph::Call>();
    if (!call || call->op.defined()) return nullptr;
    auto* f = call->callee.as<graph::Function>();
    if (!f) return nullptr;
    auto c = f->attrs.find("Compiler");
    if (c == f->attrs.end()) return nullptr;
    if (compiler) *compiler = c->second;
    return f;
}

ExternalLowering lower_external_regions(const graph::IRModule& m) {
    ExternalLowering out{.module = m};
    RegionLowerer lowerer;
    for (auto& [name, f] : out.module.functions) {
        graph::Expr body = lowerer.mutate(f->body);
        if (!body.same_as(f->body)) f = graph::with_body(*f, body);
    }
    for (const auto& [compiler, regions] : lowerer.regions) {
        const codegen::ExternalCompiler& c = codegen::external_compiler(compiler);
        for (const auto& r : regions) out.symbols.insert(r.symbol);
        out.modules.push_back(runtime::load_external_module(compiler, c.codegen(regions)));
    }
    return out;
}

}  // namespace anvil::driver
