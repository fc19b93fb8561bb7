#include "runtime/library_data.h"

#include <dlfcn.h>

#include <cstdint>

#include "anvil/runtime.h"
#include "support/error.h"

namespace anvil::runtime {

LibraryData::LibraryData(const std::string& path) : path_(path) {
    std::string open_path = path.find('/') == std::string::npos ? "./" + path : path;
    handle_ = dlopen(open_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) {
        const char* reason = dlerror();
        user_error() << "cannot load model '" << path
                     << "': " << (reason ? reason : "dlopen failed");
    }
}

LibraryData::~LibraryData() {
    dlclose(handle_);
}

const void* LibraryData::symbol(const std::string& name) const {
    return dlsym(handle_, name.c_str());
}

const char* LibraryData::text(const char* name) const {
    return static_cast<const char*>(symbol(name));
}

std::span<const std::byte> LibraryData::bytes(const char* name) const {
    const auto* data = static_cast<const std::byte*>(symbol(name));
    const auto* size =
        static_cast<const uint64_t*>(symbol(std::string(name) + ANVIL_BLOB_SIZE_SUFFIX));
    if ((data == nullptr) != (size == nullptr)) {
        user_error() << "cannot load model '" << path_ << "': it defines only one of " << name
                     << " and its size";
    }
    if (data == nullptr) return {};
    return {data, static_cast<size_t>(*size)};
}

ModelArtifact open_model_artifact(const std::string& path, const char* symbol,
                                  const std::string& missing) {
    ModelArtifact a{.module = load_module(path), .data = make_ref<LibraryData>(path)};
    a.document = a.data->text(symbol);
    if (a.document == nullptr) user_error() << "cannot load model '" << path << "': " << missing;
    a.params = a.data->bytes(ANVIL_GRAPH_PARAMS_SYMBOL);
    return a;
}

}  // namespace anvil::runtime
