#include "runtime/registry.h"

#include <algorithm>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "runtime/last_error.h"

namespace anvil::runtime {
namespace {

struct Registry {
    std::mutex mutex;
    std::unordered_map<std::string, PackedFunc> functions;
};

// Never destroyed: functions may be looked up from static destructors and exit handlers, and
// registered functions may hold modules whose unloading at exit would race with them.
Registry& registry() {
    static Registry* instance = new Registry();
    return *instance;
}

}  // namespace

void register_global_func(const std::string& name, PackedFunc func, bool override) {
    if (!func.defined()) user_error() << "cannot register a null function as '" << name << "'";
    Registry& r = registry();
    PackedFunc replaced;  // released after the lock, like in remove_global_func
    std::lock_guard<std::mutex> lock(r.mutex);
    auto [it, inserted] = r.functions.try_emplace(name, func);
    if (inserted) return;
    if (!override) {
        user_error() << "global function '" << name
                     << "' is already registered; pass override to replace it";
    }
    replaced = std::exchange(it->second, std::move(func));
}

PackedFunc get_global_func(const std::string& name) {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.functions.find(name);
    return it == r.functions.end() ? PackedFunc() : it->second;
}

bool remove_global_func(const std::string& name) {
    Registry& r = registry();
    PackedFunc removed;  // released after the lock: its owner's destructor may use the registry
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.functions.find(name);
    if (it == r.functions.end()) return false;
    removed = std::move(it->second);
    r.functions.erase(it);
    return true;
}

std::vector<std::string> list_global_func_names() {
    Registry& r = registry();
    std::vector<std::string> names;
    {
        std::lock_guard<std::mutex> lock(r.mutex);
        names.reserve(r.functions.size());
        for (const auto& [name, func] : r.functions) names.push_back(name);
    }
    std::sort(names.begin(), names.end());
    return names;
}

}  // namespace anvil::runtime

using anvil::runtime::catch_to_status;

extern "C" {

int anvil_func_register(const char* name, AnvilPackedCFunc fn, void* resource, int override) {
    return catch_to_status([&] {
        if (name == nullptr) anvil::user_error() << "anvil_func_register: name is NULL";
        if (fn == nullptr) {
            anvil::user_error() << "anvil_func_register: function pointer for '" << name
                                << "' is NULL";
        }
        anvil::runtime::register_global_func(name, anvil::runtime::PackedFunc(fn, resource),
                                             override != 0);
        return 0;
    });
}

int anvil_func_get_global(const char* name, AnvilFunctionHandle* out) {
    return catch_to_status([&] {
        if (out == nullptr) anvil::user_error() << "anvil_func_get_global: out is NULL";
        *out = nullptr;
        if (name == nullptr) anvil::user_error() << "anvil_func_get_global: name is NULL";
        *out = anvil::runtime::get_global_func(name).new_handle();
        return 0;
    });
}

}  // extern "C"
