// The data symbols of an exported model library (the graph plan or VM program, the parameter
// blob). A Module sees only functions, so this is a second dlopen of the same file; the loader
// counts references, so it shares the Module's mapping, and params read in place keep it mapped.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "runtime/module.h"
#include "support/ref.h"

namespace anvil::runtime {

class LibraryData : public Object {
public:
    // UserError "cannot load model '<path>': <reason>" when dlopen fails.
    explicit LibraryData(const std::string& path);
    LibraryData(const LibraryData&) = delete;
    LibraryData& operator=(const LibraryData&) = delete;
    ~LibraryData() override;

    // The NUL-terminated text blob `name`, or null when the library has none.
    const char* text(const char* name) const;
    // The bytes of blob `name` (its size is the symbol `name` ANVIL_BLOB_SIZE_SUFFIX); empty when
    // the library has neither. UserError when only one of the two is defined.
    std::span<const std::byte> bytes(const char* name) const;

private:
    const void* symbol(const std::string& name) const;
    std::string path_;
    void* handle_ = nullptr;
};

// What an executor loads from a model library: the kernels, the document (the text blob
// `symbol`: a graph plan or a VM program) and the parameter blob, kept mapped by `data`.
struct ModelArtifact {
    Module module;
    Ref<LibraryData> data;
    const char* document = nullptr;
    std::span<const std::byte> params;
};

// UserError "cannot load model '<path>': <missing>" when the library has no `symbol`.
ModelArtifact open_model_artifact(const std::string& path, const char* symbol,
                                  const std::string& missing);

}  // namespace anvil::runtime
