// Fuzz harness: what the VM reads from a model library — the program's JSON and the parameter
// blob — over fixed compiled kernels (compiled_seed_model.h). Programs are loaded and checked,
// not run: a valid program may loop for ever, which is no bug of the loader.
#include <span>

#include "compiled_seed_model.h"
#include "fuzz_target.h"
#include "runtime/vm.h"
#include "runtime/vm_program.h"

namespace {
const anvil::fuzz::CompiledSeedModel* g_model = nullptr;
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    g_model = &anvil::fuzz::init_seed_model(/*for_vm=*/true);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace anvil;
    fuzz::DocumentAndParams input = fuzz::split_document_and_params(fuzz::as_text(data, size));
    fuzz::expect_only_user_errors([&] {
        runtime::VMProgram program = runtime::program_from_json(input.document);
        runtime::VirtualMachine vm(std::move(program), std::span<const std::byte>(input.params),
                                   g_model->kernels);
        for (int i = 0; i < static_cast<int>(vm.input_names().size()); ++i) vm.input_info(i);
    });
    return 0;
}
