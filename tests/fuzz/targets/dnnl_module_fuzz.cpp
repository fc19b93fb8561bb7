// Fuzz harness: what libanvil_runtime_dnnl.so reads from a model library — the oneDNN regions
// and their weights (codegen/external/dnnl/dnnl_format.h). Bytes that load make a module whose
// every function is then called with wrong arguments, which it must refuse. The seeds are the
// regions of two small networks compiled with "dnnl, llvm", one float32, one int8.
#include <cstdlib>

#include "driver/compile.h"
#include "fuzz_target.h"
#include "ops/activation.h"
#include "ops/conv.h"
#include "ops/elementwise.h"
#include "ops/op_table.h"
#include "ops/qnn.h"
#include "ops/transform.h"
#include "runtime/external_module.h"

namespace {

anvil::graph::Expr op(const std::string& name, std::vector<anvil::graph::Expr> args,
                      anvil::Ref<anvil::graph::Attrs> attrs = nullptr) {
    return anvil::graph::make_call(anvil::ops::get_op(name), std::move(args), std::move(attrs));
}

// Int8 weights, int32 biases and scalar zero points: value i % 13 - 6 (scaled by `scale`).
anvil::graph::Expr integers(std::vector<int64_t> shape, DLDataType dtype, int scale = 1) {
    auto a = anvil::runtime::NDArray::empty(shape, dtype);
    for (int64_t i = 0; i < a.num_elements(); ++i) {
        int v = scale * static_cast<int>(i % 13 - 6);
        if (dtype.bits == 8) {
            static_cast<int8_t*>(a.raw_data())[i] = static_cast<int8_t>(v);
        } else {
            static_cast<int32_t*>(a.raw_data())[i] = v;
        }
    }
    return anvil::graph::make_constant(a);
}

anvil::graph::Expr scalar(float v) {
    auto a = anvil::runtime::NDArray::empty({}, DLDataType{kDLFloat, 32, 1});
    a.data<float>()[0] = v;
    return anvil::graph::make_constant(a);
}

std::string regions_of(const anvil::graph::Expr& x, const anvil::graph::Expr& body) {
    using namespace anvil;
    graph::IRModule m;
    m.functions["main"] = graph::make_function({Ref<graph::Var>(x.as<graph::Var>())}, body);
    driver::CompiledModel c = driver::compile_model(m, "dnnl, llvm");
    for (const auto& imported : c.kernels->imports()) {
        if (auto* ext = dynamic_cast<const runtime::ExternalModuleNode*>(imported.get())) {
            return ext->bytes();
        }
    }
    std::fprintf(stderr, "fuzz: the seed network has no oneDNN region\n");
    std::abort();
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
    return regions_of(x, op("nn.softmax", {d}));
}

// uint8 data: an int8 convolution with a bias, requantized, clipped and cast to uint8, then a
// grouped one requantized to int8 (dnnl.qnn.conv2d composites), zero points of 6.
std::string quantized_seed_regions() {
    using namespace anvil;
    auto x = graph::make_var(
        "x", graph::make_tensor_type(std::vector<int64_t>{1, 4, 6, 6}, DataType::uint(8)));
    const DLDataType s8{kDLInt, 8, 1}, s32{kDLInt, 32, 1};
    auto conv = [&](const graph::Expr& data, std::vector<int64_t> w, int64_t groups) {
        ops::QnnConv2DAttrs a;
        a.padding = {1, 1, 1, 1};
        a.groups = groups;
        return op("qnn.conv2d",
                  {data, integers(w, s8), integers({}, s32, -1) /* 6 */, integers({}, s32, 0),
                   scalar(0.02f), scalar(0.01f)},
                  make_ref<ops::QnnConv2DAttrs>(a));
    };
    auto requantize = [&](const graph::Expr& e, DataType out) {
        ops::RequantizeAttrs a;
        a.out_dtype = out;
        a.compute_dtype = "float32";
        return op("qnn.requantize",
                  {e, scalar(2e-4f), integers({}, s32, 0), scalar(0.05f), integers({}, s32, -1)},
                  make_ref<ops::RequantizeAttrs>(a));
    };
    ops::ClipAttrs clip;
    clip.a_min = 0;
    clip.a_max = 255;
    ops::CastAttrs cast;
    cast.dtype = DataType::uint(8);
    graph::Expr a = op("add", {conv(x, {8, 4, 3, 3}, 1), integers({8, 1, 1}, s32, 50)});
    a = op("cast", {op("clip", {requantize(a, DataType::int32())}, make_ref<ops::ClipAttrs>(clip))},
           make_ref<ops::CastAttrs>(cast));
    graph::Expr b = requantize(conv(a, {8, 2, 3, 3}, 4), DataType::int_(8));
    return regions_of(x, b);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    // Shapes the fuzzer makes up stay within what it may allocate.
    setenv("ANVIL_DNNL_MAX_REGION_BYTES", "268435456", 1);
    anvil::fuzz::write_seeds_if_asked({seed_regions(), quantized_seed_regions()});
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
