#include "compiled_seed_model.h"

#include <cstring>

#include "driver/compile.h"
#include "driver/make_plan.h"
#include "driver/plan_memory.h"
#include "driver/vm_compiler.h"
#include "frontend/onnx/from_onnx.h"
#include "fuzz_target.h"
#include "runtime/graph_plan.h"
#include "runtime/vm_program.h"

namespace anvil::fuzz {

CompiledSeedModel compile_seed_model(bool for_vm) {
    frontend::ImportOptions import;
    if (!for_vm) import.input_shapes["input_0"] = {1, 3, 32, 32};
    graph::IRModule m = frontend::from_onnx(
        std::string(ANVIL_SOURCE_DIR) + "/tests/models/cnn_dynamic_batch/model.onnx", import);
    driver::PipelineOptions options;
    options.opt_level = 1;
    driver::CompiledModel c = driver::compile_model(m, "llvm", options);
    CompiledSeedModel out;
    out.kernels = c.kernels;
    if (for_vm) {
        driver::VMExecutable vm = driver::compile_vm(c.module);
        out.document = runtime::program_to_json(vm.program);
        out.params = std::move(vm.params);
    } else {
        driver::ExecutablePlan p = driver::make_plan(c.module);
        driver::plan_graph_memory(p.plan);
        out.document = runtime::plan_to_json(p.plan);
        out.params = std::move(p.params);
    }
    return out;
}

const CompiledSeedModel& init_seed_model(bool for_vm) {
    // Never destroyed: the JIT-compiled kernels must outlive every input, up to the process's
    // exit, where destroying them could race the JIT's own static state.
    static const CompiledSeedModel* model = new CompiledSeedModel(compile_seed_model(for_vm));
    write_seeds_if_asked({join_document_and_params(model->document, model->params)});
    return *model;
}

std::string join_document_and_params(const std::string& document, const std::string& params) {
    return document + std::string(1, '\0') + params;
}

DocumentAndParams split_document_and_params(std::string_view input) {
    size_t nul = input.find('\0');
    if (nul == std::string_view::npos) return {std::string(input), {}};
    std::string_view params = input.substr(nul + 1);
    DocumentAndParams out{std::string(input.substr(0, nul)), std::vector<std::byte>(params.size())};
    if (!params.empty()) std::memcpy(out.params.data(), params.data(), params.size());
    return out;
}

}  // namespace anvil::fuzz
