#include "runtime/module.h"

#include <dlfcn.h>

#include <cstring>
#include <filesystem>
#include <mutex>
#include <unordered_map>

#include "runtime/last_error.h"

struct AnvilModuleObj {
    anvil::runtime::Module module;
};

namespace anvil::runtime {
namespace {

// dlopen shares one copy of a library (and of its globals) among everyone who opens it, and its
// kernels cache the registry functions they call in those globals. So the modules over one
// library are counted, and the last to go calls the library's ANVIL_MODULE_RELEASE_SYMBOL before
// its dlclose. Recursive: a released function may own a module, whose destructor comes back here.
// Both are never destroyed: modules may be released from static destructors.
std::recursive_mutex& library_mutex() {
    static auto* mutex = new std::recursive_mutex();
    return *mutex;
}
std::unordered_map<void*, int>& library_users() {
    static auto* users = new std::unordered_map<void*, int>();
    return *users;
}

void* open_library(const std::string& open_path) {
    std::lock_guard<std::recursive_mutex> lock(library_mutex());
    void* handle = dlopen(open_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) ++library_users()[handle];
    return handle;
}

void close_library(void* handle) {
    std::lock_guard<std::recursive_mutex> lock(library_mutex());
    auto it = library_users().find(handle);
    if (it != library_users().end() && --it->second == 0) {
        library_users().erase(it);
        if (auto* release =
                reinterpret_cast<void (*)()>(dlsym(handle, ANVIL_MODULE_RELEASE_SYMBOL))) {
            release();
        }
    }
    dlclose(handle);
}

// A library loaded with dlopen. The library stays mapped until the last function taken from it
// is released, because each of those functions holds a reference to this node.
class SharedLibraryModule : public ModuleNode {
public:
    explicit SharedLibraryModule(const std::string& path) : path_(path) {
        // dlopen searches the library path for names without a slash; a module path means a file.
        std::string open_path = path.find('/') == std::string::npos ? "./" + path : path;
        std::error_code ec;
        if (!std::filesystem::exists(open_path, ec)) {
            user_error() << "cannot load module '" << path << "': no such file";
        }
        handle_ = open_library(open_path);
        if (handle_ == nullptr) {
            const char* reason = dlerror();
            user_error() << "cannot load module '" << path
                         << "': " << (reason ? reason : "dlopen failed");
        }
        try {
            read_functions();
        } catch (...) {
            close_library(handle_);
            throw;
        }
    }
    SharedLibraryModule(const SharedLibraryModule&) = delete;
    SharedLibraryModule& operator=(const SharedLibraryModule&) = delete;
    ~SharedLibraryModule() override { close_library(handle_); }

    PackedFunc get_function(const std::string& name) override {
        auto it = functions_.find(name);
        return it == functions_.end() ? PackedFunc() : make_function(it->second);
    }
    std::vector<std::string> function_names() const override { return names_; }
    std::string type_key() const override { return "shared_library"; }

private:
    void read_functions() {
        const auto* list =
            static_cast<const char*>(dlsym(handle_, ANVIL_MODULE_FUNCTION_LIST_SYMBOL));
        if (list == nullptr) {
            user_error() << "cannot load module '" << path_ << "': it is not an Anvil module (no "
                         << ANVIL_MODULE_FUNCTION_LIST_SYMBOL << " symbol)";
        }
        for (const char* name = list; *name != '\0'; name += std::strlen(name) + 1) {
            void* symbol = dlsym(handle_, name);
            if (symbol == nullptr) {
                user_error() << "cannot load module '" << path_ << "': it lists function '" << name
                             << "' but does not define it";
            }
            names_.emplace_back(name);
            functions_[name] = reinterpret_cast<AnvilPackedCFunc>(symbol);
        }
    }

    std::string path_;
    void* handle_ = nullptr;
    std::vector<std::string> names_;  // in the library's order
    std::unordered_map<std::string, AnvilPackedCFunc> functions_;
};

}  // namespace

ModuleNode::~ModuleNode() = default;

std::string ModuleNode::type_key() const {
    return "module";
}

PackedFunc ModuleNode::make_function(AnvilPackedCFunc fn, void* resource) const {
    return PackedFunc(fn, resource, Ref<Object>(this));
}

PackedFunc Module::get_function(const std::string& name) const {
    if (!node_) user_error() << "get_function('" << name << "') on a null module";
    PackedFunc f = node()->get_function(name);
    for (size_t i = 0; !f && i < node_->imports().size(); ++i) {
        f = Module(node_->imports()[i]).get_function(name);
    }
    return f;
}

std::vector<std::string> Module::function_names() const {
    if (!node_) user_error() << "function_names() on a null module";
    std::vector<std::string> names = node_->function_names();
    for (const auto& m : node_->imports()) {
        std::vector<std::string> more = Module(m).function_names();
        names.insert(names.end(), more.begin(), more.end());
    }
    return names;
}

std::string Module::type_key() const {
    if (!node_) user_error() << "type_key() on a null module";
    return node_->type_key();
}

Module load_module(const std::string& path) {
    return Module(make_ref<SharedLibraryModule>(path));
}

AnvilModuleHandle module_new_handle(const Module& module) {
    return new AnvilModuleObj{module};
}

Module module_from_handle(AnvilModuleHandle handle) {
    return handle ? handle->module : Module();
}

}  // namespace anvil::runtime

using anvil::runtime::catch_to_status;

extern "C" {

int anvil_module_load(const char* path, AnvilModuleHandle* out) {
    return catch_to_status([&] {
        if (out == nullptr) anvil::user_error() << "anvil_module_load: out is NULL";
        *out = nullptr;
        if (path == nullptr) anvil::user_error() << "anvil_module_load: path is NULL";
        *out = anvil::runtime::module_new_handle(anvil::runtime::load_module(path));
        return 0;
    });
}

int anvil_module_get_function(AnvilModuleHandle module, const char* name,
                              AnvilFunctionHandle* out) {
    return catch_to_status([&] {
        if (out == nullptr) anvil::user_error() << "anvil_module_get_function: out is NULL";
        *out = nullptr;
        if (module == nullptr) anvil::user_error() << "anvil_module_get_function: module is NULL";
        if (name == nullptr) anvil::user_error() << "anvil_module_get_function: name is NULL";
        *out = module->module.get_function(name).new_handle();
        return 0;
    });
}

int anvil_module_free(AnvilModuleHandle module) {
    delete module;
    return 0;
}

}  // extern "C"
