// TVM's MergeComposite: each entry of a pattern table, in order, partitions the graph
// (graph/pattern/partition.h) into Composite="<name>" functions: the matched region with the
// values it reads as parameters and the constants it matches inside. Earlier entries win: a
// region an entry took is a call of a function, which later patterns see as one opaque call.
#include "graph/passes/graph_rewrite.h"
#include "graph/passes/passes.h"
#include "graph/pattern/partition.h"

namespace anvil::graph {

IRModule merge_composite(const IRModule& m, const codegen::PatternTable& table) {
    return rewrite_functions(m, [&](const Ref<Function>& f) {
        if (f->attrs.count("Compiler")) return f;
        Expr body = f->body;
        for (const auto& entry : table) {
            body = partition(entry.pattern, body, {{"Composite", entry.name}}, entry.check);
        }
        return body.same_as(f->body) ? f : with_body(*f, body);
    });
}

IRModule merge_composite(const IRModule& m, const PassContext& ctx) {
    codegen::PatternTable table;
    for (const auto& name : ctx.target.external_compilers) {
        codegen::PatternTable t = codegen::external_compiler(name).pattern_table(ctx.target);
        table.insert(table.end(), t.begin(), t.end());
    }
    return table.empty() ? m : merge_composite(m, table);
}

}  // namespace anvil::graph
