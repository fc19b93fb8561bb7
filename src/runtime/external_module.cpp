#include "runtime/external_module.h"

#include <dlfcn.h>

#include <filesystem>
#include <map>
#include <mutex>

#include "support/error.h"

namespace anvil::runtime {

namespace {

using CreateFn = int (*)(const void*, size_t, AnvilModuleHandle*);

// The directory of libanvil_runtime.so, where the build and an installation put the external
// runtime libraries too.
std::string runtime_directory() {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&external_runtime_library), &info) == 0 ||
        info.dli_fname == nullptr) {
        return "";
    }
    return std::filesystem::path(info.dli_fname).parent_path().string();
}

// Opened once per process and never closed: modules made by a library keep pointers into it.
CreateFn find_create_function(const std::string& compiler) {
    static std::mutex mutex;
    static std::map<std::string, CreateFn> opened;
    std::lock_guard<std::mutex> lock(mutex);
    auto it = opened.find(compiler);
    if (it != opened.end()) return it->second;
    std::string name = external_runtime_library(compiler);
    std::string beside = runtime_directory() + "/" + name;
    std::error_code ec;
    void* handle = nullptr;
    std::string reason;
    for (const std::string& path : {beside, name}) {
        if (path == beside && !std::filesystem::exists(path, ec)) continue;
        handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (handle) break;
        const char* e = dlerror();
        reason = e ? e : "dlopen failed";
    }
    if (!handle) {
        user_error()
            << "the model has regions for the external code generator '" << compiler
            << "', but its runtime library " << name << " cannot be loaded ("
            << (reason.empty() ? "not found" : reason)
            << "); Anvil's build puts it next to libanvil_runtime.so: deploy it with the model";
    }
    auto create = reinterpret_cast<CreateFn>(dlsym(handle, "anvil_external_module_create"));
    if (!create) {
        user_error() << name << " is not an Anvil external runtime library (it defines no "
                     << "anvil_external_module_create)";
    }
    opened[compiler] = create;
    return create;
}

}  // namespace

std::string external_runtime_library(const std::string& compiler) {
    return "libanvil_runtime_" + compiler + ".so";
}

Module load_external_module(const std::string& compiler, std::string bytes) {
    CreateFn create = find_create_function(compiler);
    AnvilModuleHandle handle = nullptr;
    if (create(bytes.data(), bytes.size(), &handle) != 0 || handle == nullptr) {
        user_error() << "external code generator '" << compiler << "': " << anvil_get_last_error();
    }
    Module functions = module_from_handle(handle);
    anvil_module_free(handle);
    return Module(make_ref<ExternalModuleNode>(compiler, std::move(bytes), functions));
}

}  // namespace anvil::runtime
