#include "runtime/library_data.h"

#include <dlfcn.h>

#include <cstdint>
#include <sstream>

#include "anvil/runtime.h"
#include "runtime/external_module.h"
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
    // The external code generators' modules: the kernels import them, so the executors find
    // their functions like any kernel.
    if (const char* list = a.data->text(ANVIL_EXTERNAL_MODULES_SYMBOL)) {
        std::istringstream lines(list);
        for (std::string compiler, blob; lines >> compiler >> blob;) {
            std::span<const std::byte> bytes = a.data->bytes(blob.c_str());
            if (bytes.empty()) {
                user_error() << "cannot load model '" << path << "': it lists the external module "
                             << blob << " (" << compiler << ") but does not define it";
            }
            a.module.import_module(load_external_module(
                compiler, std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size())));
        }
    }
    return a;
}

}  // namespace anvil::runtime
