// The model the artifact harnesses fuzz the data of: tests/models/cnn_dynamic_batch compiled
// once per process, as a static model (graph executor plan) or with its symbolic batch (VM
// program). Its kernels stay fixed while the plan or program and the parameter blob vary: what
// an altered or truncated model library's data sections would give the runtime.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/module.h"

namespace anvil::fuzz {

struct CompiledSeedModel {
    runtime::Module kernels;
    std::string document;  // the plan's or program's JSON
    std::string params;    // the parameter blob
};

CompiledSeedModel compile_seed_model(bool for_vm);

// What an artifact harness's LLVMFuzzerInitialize does: compiles the model once for the process
// and hands its document and params to write_seeds_if_asked as the harness's built-in seed.
const CompiledSeedModel& init_seed_model(bool for_vm);

// The fuzz input format of the artifact harnesses: the document, a NUL byte, the parameter blob.
std::string join_document_and_params(const std::string& document, const std::string& params);

// One fuzz input split at its first NUL byte (no NUL: all document, no params), each part copied
// into a buffer of its own size, so that the sanitizers see a read past either's end.
struct DocumentAndParams {
    std::string document;
    std::vector<std::byte> params;
};
DocumentAndParams split_document_and_params(std::string_view input);

}  // namespace anvil::fuzz
