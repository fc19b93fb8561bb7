// Fuzz harness: what the graph executor reads from a model library — the plan's JSON and the
// parameter blob — over fixed compiled kernels (compiled_seed_model.h). A plan that loads must
// also run: the executor checks the plan, each kernel checks its arguments.
#include <cstring>
#include <span>

#include "compiled_seed_model.h"
#include "fuzz_target.h"
#include "runtime/graph_executor.h"

namespace {
const anvil::fuzz::CompiledSeedModel* g_model = nullptr;
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    g_model = &anvil::fuzz::init_seed_model(/*for_vm=*/false);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace anvil;
    fuzz::DocumentAndParams input = fuzz::split_document_and_params(fuzz::as_text(data, size));
    fuzz::expect_only_user_errors([&] {
        runtime::GraphExecutor ex(input.document, std::span<const std::byte>(input.params),
                                  g_model->kernels);
        for (int i = 0; i < ex.num_inputs(); ++i) {
            runtime::NDArray in = ex.get_input(i);
            std::memset(in.raw_data(), 0, in.nbytes());
        }
        ex.run();
        for (int i = 0; i < ex.num_outputs(); ++i) ex.get_output(i);
    });
    return 0;
}
