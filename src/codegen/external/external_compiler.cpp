#include "codegen/external/external_compiler.h"

#include <map>
#include <mutex>

#include "codegen/external/dnnl/dnnl_compiler.h"
#include "support/error.h"

namespace anvil::codegen {

namespace {

// THE table of external code generators.
const ExternalCompiler* const kCompilers[] = {
    &dnnl::dnnl_compiler(),
};

struct SupportRegistry {
    std::mutex mutex;
    std::map<std::pair<std::string, std::string>, SupportCheck> checks;
};

// The built-in compilers' checks are registered on first use.
SupportRegistry& support_registry() {
    static SupportRegistry* registry = [] {
        auto* r = new SupportRegistry();
        for (const auto& [op, check] : dnnl::dnnl_support_checks()) {
            r->checks[{"dnnl", op}] = check;
        }
        return r;
    }();
    return *registry;
}

}  // namespace

const ExternalCompiler* find_external_compiler(const std::string& name) {
    for (const ExternalCompiler* c : kCompilers) {
        if (c->name == name) return c;
    }
    return nullptr;
}

const ExternalCompiler& external_compiler(const std::string& name) {
    const ExternalCompiler* c = find_external_compiler(name);
    if (!c) {
        user_error() << "unknown external code generator '" << name
                     << "'; this build of Anvil has: " << external_compiler_list();
    }
    return *c;
}

std::string external_compiler_list() {
    std::string list;
    for (const ExternalCompiler* c : kCompilers) list += (list.empty() ? "" : ", ") + c->name;
    return list;
}

void register_support_check(const std::string& compiler, const std::string& op,
                            SupportCheck check) {
    SupportRegistry& r = support_registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.checks[{compiler, op}] = std::move(check);
}

bool supports(const std::string& compiler, const graph::Call& call) {
    if (!call.op.defined()) return false;
    SupportCheck check;
    {
        SupportRegistry& r = support_registry();
        std::lock_guard<std::mutex> lock(r.mutex);
        auto it = r.checks.find({compiler, call.op->name});
        if (it == r.checks.end()) return false;
        check = it->second;
    }
    return check(call);
}

bool is_known_compiler(const std::string& compiler) {
    if (find_external_compiler(compiler)) return true;
    SupportRegistry& r = support_registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    for (const auto& [key, check] : r.checks) {
        if (key.first == compiler) return true;
    }
    return false;
}

}  // namespace anvil::codegen
