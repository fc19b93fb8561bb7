#include "driver/workload_key.h"

#include <unordered_map>

#include "graph/expr_functor.h"
#include "graph/printer.h"

namespace anvil::driver {

std::string workload_key(const graph::Function& f) {
    std::unordered_map<const graph::ExprNode*, int> ids;
    std::string key = std::string(kWorkloadKeyVersion) + " | ";
    for (const auto& p : f.params) {
        ids[p.get()] = static_cast<int>(ids.size());
        key += "param " + graph::type_str(p->type) + "; ";
    }
    graph::post_order_visit(f.body, [&](const graph::Expr& e) {
        if (ids.count(e.get())) return;
        std::string line;
        if (auto* c = e.as<graph::Call>()) {
            line = c->op->name + "(" + graph::attrs_str(*c->attrs, nullptr) + ")";
            for (const auto& a : c->args) line += " %" + std::to_string(ids.at(a.get()));
        } else if (auto* t = e.as<graph::Tuple>()) {
            line = "tuple";
            for (const auto& a : t->fields) line += " %" + std::to_string(ids.at(a.get()));
        } else if (auto* g = e.as<graph::TupleGetItem>()) {
            line =
                "item " + std::to_string(g->index) + " %" + std::to_string(ids.at(g->tuple.get()));
        } else if (e.is<graph::Constant>()) {
            line = "const";
        }
        ids[e.get()] = static_cast<int>(ids.size());
        key += line + ":" + graph::type_str(e->type) + "; ";
    });
    return key;
}

}  // namespace anvil::driver
