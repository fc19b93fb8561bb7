// anvil inspect MODEL.onnx | MODEL.pt | MODEL.tflite | MODULE.anvil | model.so
// [--input-shapes SPEC ...]: inputs, outputs, the op histogram (models, modules' text) or the
// kernels and planned memory (compiled models). A TorchScript model needs --input-shapes as for
// compile (input_shapes.h); without it the error names forward's inputs.
#include <cstdio>
#include <map>

#include "commands.h"
#include "graph/expr_functor.h"
#include "input_shapes.h"
#include "model_file.h"
#include "runtime/graph_executor.h"
#include "support/error.h"
#include "torchscript_model.h"

namespace anvil::cli {

namespace {

void inspect_model(const std::string& path, const std::vector<std::string>& shape_args) {
    graph::IRModule m = load_model(path, shape_args, "");
    const auto& main = m.main();
    std::printf("model %s\ninputs:\n", path.c_str());
    for (const auto& p : main->params)
        std::printf("  %s: %s\n", p->name.c_str(), graph::type_str(p->type).c_str());
    std::printf("outputs: %s\n", graph::type_str(main->body->type).c_str());
    std::map<std::string, int> histogram;
    int64_t weights = 0;
    graph::post_order_visit(main->body, [&](const graph::Expr& e) {
        if (auto* c = e.as<graph::Call>(); c && c->op.defined()) ++histogram[c->op->name];
        if (auto* k = e.as<graph::Constant>()) weights += static_cast<int64_t>(k->data.nbytes());
    });
    std::printf("ops:\n");
    for (const auto& [op, n] : histogram) std::printf("  %-24s %d\n", op.c_str(), n);
    std::printf("weights: %.2f MB\n", weights / 1e6);
}

void inspect_library(const std::string& path) {
    runtime::GraphExecutor ex = runtime::GraphExecutor::load(path);
    std::printf("compiled model %s\ninputs:\n", path.c_str());
    auto print = [](const runtime::GraphTensorInfo& info) {
        std::string shape;
        for (size_t i = 0; i < info.shape.size(); ++i)
            shape += (i ? ", " : "") + std::to_string(info.shape[i]);
        std::printf("  %s: %s[%s]\n", info.name.c_str(),
                    runtime::dl_dtype_to_string(info.dtype).c_str(), shape.c_str());
    };
    for (int i = 0; i < ex.num_inputs(); ++i) print(ex.input_info(i));
    std::printf("outputs:\n");
    for (int i = 0; i < ex.num_outputs(); ++i) print(ex.output_info(i));
    std::map<std::string, int> kernels;
    for (const auto& n : ex.plan().nodes) {
        if (n.kind == runtime::PlanNodeKind::kernel) ++kernels[n.kernel];
    }
    std::printf("kernels: %zu distinct, %d calls\n", kernels.size(), [&] {
        int calls = 0;
        for (const auto& [k, n] : kernels) calls += n;
        return calls;
    }());
    std::printf("memory: %.2f MB planned (%.2f MB without sharing), weights %.2f MB\n",
                ex.planned_bytes() / 1e6, ex.unshared_bytes() / 1e6, ex.param_bytes() / 1e6);
}

}  // namespace

void add_inspect_command(CLI::App& app, int* status) {
    auto path = std::make_shared<std::string>();
    auto shapes = std::make_shared<std::vector<std::string>>();
    CLI::App* cmd = app.add_subcommand(
        "inspect",
        "describe an ONNX, TorchScript or TFLite model, a module's text or a compiled model");
    cmd->add_option("model", *path, "model.onnx, model.pt, model.tflite, module.anvil or model.so")
        ->required();
    cmd->add_option("--input-shapes", *shapes,
                    "as for compile: the inputs of a TorchScript model (required), shape "
                    "overrides of an ONNX or TFLite model's");
    cmd->callback([path, shapes, status] {
        if (path->size() > 3 && path->compare(path->size() - 3, 3, ".so") == 0) {
            if (!shapes->empty()) user_error() << "--input-shapes: " << *path << " is compiled";
            inspect_library(*path);
        } else {
            inspect_model(*path, *shapes);
        }
        *status = 0;
    });
}

}  // namespace anvil::cli
