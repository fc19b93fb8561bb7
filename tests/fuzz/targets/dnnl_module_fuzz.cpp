// Fuzz harness: what libanvil_runtime_dnnl.so reads from a model library — the oneDNN regions
// and their weights (codegen/external/dnnl/dnnl_format.h). Bytes that load make a module whose
// every function is then called with wrong arguments, which it must refuse. The seed is the
// regions of a small network compiled with "dnnl, llvm".
#include <cstdlib>

#include "driver/compile.h"
#include "fuzz_target.h"
#include "ops/conv.h"
#include "ops/op_table.h"
#include "ops/transform.h"
#include "runtime/external_module.h"

namespace {

anvil::graph::Expr op(const std::string& name, std::vector<anvil::graph::Expr> args,
                      anvil::Ref<anvil::graph::Attrs> attrs = nullptr) {
    return anvil::graph::make_call(anvil::ops::get_op(name), std::move(args), std::move(attrs));
}

anvil::graph::Expr constant(std::vector<int64_t> shape) {
    auto a = anvil::runtime::NDArray::empty(shape, DLDataType{kDLFloat, 32, 1});
    float* p = a.data<float>();
    for (int64_t i = 0; i < a.num_elements(); ++i) p[i] = 0.01f * static_cast<float>(i % 13);
    return anvil::graph::make_constant(a);
}

// conv + bias + relu, a residual add, max pool, flatten, dense + bias, softmax.
std::string seed_regions() {
    using namespace anvil;
    auto x = graph::make_var(
        "x", graph::make_tensor_type(std::vector<int64_t>{1, 3, 8, 8}, DataType::float32()));
    ops::Conv2DAttrs padded;
    padded.padding = {1, 1, 1, 1};
    Ref<graph::Attrs> conv = make_ref<ops::Conv2DAttrs>(padded);
    graph::Expr a =
        op("nn.relu",
           {op("add", {op("nn.conv2d", {x, constant({4, 3, 3, 3})}, conv), constant({4, 1, 1})})});
    graph::Expr b = op("add", {op("nn.conv2d", {a, constant({4, 4, 3, 3})}, conv), a});
    graph::Expr p = op("nn.global_avg_pool2d", {b});
    graph::Expr f = op("flatten", {p});
    graph::Expr d = op("add", {op("nn.dense", {f, constant({5, 4})}), constant({5})});
    graph::IRModule m;
    m.functions["main"] = graph::make_function({x}, op("nn.softmax", {d}));
    driver::CompiledModel c = driver::compile_model(m, "dnnl, llvm");
    for (const auto& imported : c.kernels->imports()) {
        if (auto* ext = dynamic_cast<const runtime::ExternalModuleNode*>(imported.get())) {
            return ext->bytes();
        }
    }
    std::fprintf(stderr, "fuzz: the seed network has no oneDNN region\n");
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    // Shapes the fuzzer makes up stay within what it may allocate.
    setenv("ANVIL_DNNL_MAX_REGION_BYTES", "268435456", 1);
    anvil::fuzz::write_seeds_if_asked({seed_regions()});
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace anvil;
    fuzz::expect_only_user_errors([&] {
        runtime::Module m = runtime::load_external_module(
            "dnnl", std::string(reinterpret_cast<const char*>(data), size));
        for (const auto& name : m.function_names()) {
            fuzz::expect_only_user_errors([&] { m.get_function(name)(); });
        }
    });
    return 0;
}
