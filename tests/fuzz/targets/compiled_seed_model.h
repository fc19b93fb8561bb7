// The model the artifact harnesses fuzz the data of: tests/models/cnn_dynamic_batch compiled
// once per process, as a static model (graph executor plan) or with its symbolic batch (VM
// program). Its kernels stay fixed while the plan or program and the parameter blob vary: what
// an altered or truncated model library's data sections would give the runtime.
#pragma once

#include <string>

#include "runtime/module.h"

namespace anvil::fuzz {

struct CompiledSeedModel {
    runtime::Module kernels;
    std::string document;  // the plan's or program's JSON
    std::string params;    // the parameter blob
};

CompiledSeedModel compile_seed_model(bool for_vm);

// The fuzz input format of the artifact harnesses: the document, a NUL byte, the parameter blob.
std::string join_document_and_params(const std::string& document, const std::string& params);
std::pair<std::string_view, std::string_view> split_document_and_params(std::string_view input);

}  // namespace anvil::fuzz
