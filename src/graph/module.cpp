#include "graph/module.h"

#include "support/error.h"

namespace anvil::graph {

const Ref<Function>& IRModule::main() const {
    auto it = functions.find("main");
    if (it == functions.end()) user_error() << "the module has no function 'main'";
    return it->second;
}

IRModule IRModule::with_main(Ref<Function> f) const {
    IRModule m = *this;
    m.functions["main"] = std::move(f);
    return m;
}

}  // namespace anvil::graph
