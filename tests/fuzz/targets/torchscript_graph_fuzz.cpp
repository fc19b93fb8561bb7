// Fuzz harness: bytes → the TorchScript graph description reader → the PyTorch importer. The
// description is what `anvil compile model.pt` reads from the reader script's output, and a
// hand-made one can claim anything, so everything it claims is checked. The harness makes up
// what travels beside a description: each tensor constant it names (zeros of its dtype and of
// the shape its type records, when small) and each input of forward (the shape and dtype its
// type records, else float32[1, 3, 8, 8]). Seeds: tests/fuzz/seeds/torchscript_graph, written
// from small traced and scripted modules by make_seeds.py there.
#include <cstring>
#include <map>

#include "frontend/pytorch/from_pytorch.h"
#include "frontend/pytorch/torchscript_graph.h"
#include "fuzz_target.h"
#include "graph/expr.h"

namespace {

using namespace anvil;
using frontend::pytorch::TsBlock;
using frontend::pytorch::TsType;

// The recorded shape when it is small enough to allocate for every input; else `fallback`.
std::vector<int64_t> small_shape(const TsType& t, std::vector<int64_t> fallback) {
    if (!t.shape || t.shape->size() > 6) return fallback;
    int64_t elements = 1;
    for (int64_t d : *t.shape) {
        if (d < 0 || d > 64) return fallback;
        elements *= d;
    }
    return elements <= (1 << 16) ? *t.shape : fallback;
}

// The element types a module's tensors have (what the reader script writes); else float32.
DataType dtype_or_float32(const std::string& name) {
    DataType t = DataType::float32();
    if (!DataType::parse(name, &t) || !t.is_scalar() || t.is_string() || t.is_handle() ||
        t.is_void()) {
        return DataType::float32();
    }
    return t;
}

void make_tensors(const TsBlock& block, std::map<std::string, runtime::NDArray>& tensors) {
    for (const auto& node : block.nodes) {
        for (const auto& b : node.blocks) make_tensors(b, tensors);
        if (!node.value || node.value->kind != frontend::pytorch::TsConst::Tensor) continue;
        if (tensors.count(node.value->s) || tensors.size() >= 64) continue;
        TsType type = node.outputs.empty() ? TsType{} : node.outputs[0].type;
        DataType dtype = dtype_or_float32(node.value->dtype);
        runtime::NDArray a =
            runtime::NDArray::empty(small_shape(type, {2}), graph::dl_dtype_of(dtype));
        std::memset(a.raw_data(), 0, a.nbytes());
        tensors.emplace(node.value->s, a);
    }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    anvil::fuzz::write_seeds_if_asked({});
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace anvil;
    std::string_view text = fuzz::as_text(data, size);
    fuzz::expect_only_user_errors([&] {
        frontend::pytorch::TsGraph g = frontend::pytorch::parse_torchscript_graph(text, "fuzz");
        std::map<std::string, runtime::NDArray> tensors;
        make_tensors(g.graph, tensors);
        std::vector<frontend::TorchInput> inputs;
        for (const auto& in : g.graph.inputs) {
            if (inputs.size() == 16) break;
            frontend::TorchInput t;
            t.name = "input" + std::to_string(inputs.size());
            t.shape = small_shape(in.type, {1, 3, 8, 8});
            t.dtype = dtype_or_float32(in.type.dtype);
            inputs.push_back(std::move(t));
        }
        frontend::from_torchscript(text, tensors, inputs, "fuzz");
    });
    return 0;
}
