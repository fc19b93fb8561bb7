// anvil compile MODEL.onnx|MODEL.pt|MODEL.tflite|MODULE.anvil --target "llvm -mcpu=native" -o
// model.so
//               [-O 0-3] [--input-shapes NAME:[1,3,224,224][:DTYPE] ...] [--params WEIGHTS.npz]
//               [--print-after NAME|all] [--time-passes] [--disable-pass NAME ...]
//               [--executor graph|vm|auto] [--shape-buckets NAME=SIZE,SIZE,... ...]
//               [--max-memory SIZE]
//               [--checked] [--tuning-records FILE ...] [--mixed-precision bf16|fp16]
//               [--bundle [--bundle-runtime LIBANVIL_RUNTIME_STATIC.a]]
//
// --bundle writes one static library (-o model.a) instead of a shared one: the runtime, the
// kernels, the plan and the weights, which a program links and runs through
// anvil_graph_executor_create_from_bundle (driver/export_bundle.h, examples/bundle_deploy).
// MODULE.anvil is a module in Anvil's text format (model_file.h); --params binds weights to its
// main's parameters by name. ONNX models carry their weights and take --input-shapes to override
// their declared shapes; TorchScript models (torch.jit.save; torchscript_model.h) carry their
// weights and need --input-shapes, one spec per input of forward (input_shapes.h). TFLite models
// (.tflite) carry their weights; --input-shapes overrides their inputs' shapes (a batch size).
#include <chrono>
#include <cstdio>

#include "commands.h"
#include "driver/compile.h"
#include "driver/plan_memory.h"
#include "driver/shape_buckets.h"
#include "driver/tune_model.h"
#include "frontend/onnx/from_onnx.h"
#include "input_shapes.h"
#include "model_file.h"
#include "support/error.h"
#include "torchscript_model.h"

namespace anvil::cli {

namespace {

struct CompileArgs {
    std::string model;
    std::string target = "llvm -mcpu=native";
    std::string output = "model.so";
    int opt_level = 3;
    std::vector<std::string> input_shapes;
    std::string params;  // .npz of weights for a module's text
    std::string print_after;
    bool time_passes = false;
    std::vector<std::string> disabled;
    std::string executor = "auto";
    std::vector<std::string> shape_buckets;  // NAME=SIZE,SIZE,... (driver/shape_buckets.h)
    std::string max_memory;                  // 512M, 2G, bytes; empty: no limit
    bool checked = false;
    std::vector<std::string> tuning_records;  // records files (anvil tune -o)
    std::string cross_compiler;               // links the library (a foreign -mtriple)
    std::string cross_compiler_options;
    bool bundle = false;          // one static library with the runtime (driver/export_bundle.h)
    std::string bundle_runtime;   // the static runtime for the target (default: the host's)
    std::string mixed_precision;  // bf16, fp16 (or their long names); empty: float32
    std::string tflite_rounding;  // TFLITE, XNNPACK; empty: the importer's default
};

// The half type `--mixed-precision` names.
DataType parse_mixed_precision(const std::string& name) {
    if (name == "bf16" || name == "bfloat16") return DataType::bfloat16();
    if (name == "fp16" || name == "float16") return DataType::float16();
    user_error() << "--mixed-precision: expected bf16 (bfloat16) or fp16 (float16), got '" << name
                 << "'";
    ANVIL_UNREACHABLE();
}

// "tuning records: 14 of 16 tunable kernels, 93.5% of their estimated time": how much of the
// model the applied records cover, weighting each kernel by its calls and its measured time (a
// kernel without a record counts with the mean time of those with one).
void report_tuning(const std::vector<driver::KernelTuning>& kernels) {
    int tunable = 0, applied = 0;
    double covered = 0, measured_calls = 0;
    for (const auto& k : kernels) {
        if (!k.note.empty())
            std::fprintf(stderr, "warning: %s: %s\n", k.kernel.c_str(), k.note.c_str());
        if (!k.tunable) continue;
        ++tunable;
        if (!k.applied) continue;
        ++applied;
        covered += k.calls * k.record_cost;
        measured_calls += k.calls;
    }
    double mean = measured_calls > 0 ? covered / measured_calls : 0;
    double total = covered;
    for (const auto& k : kernels) {
        if (k.tunable && !k.applied) total += k.calls * mean;
    }
    std::printf("tuning records: %d of %d tunable kernels, %.1f%% of their estimated time\n",
                applied, tunable, total > 0 ? 100.0 * covered / total : 0.0);
}

int run_compile(const CompileArgs& a) {
    auto start = std::chrono::steady_clock::now();
    driver::Executor executor = driver::parse_executor(a.executor);
    driver::ShapeBuckets buckets = driver::parse_shape_buckets(a.shape_buckets);
    int64_t max_memory =
        a.max_memory.empty() ? 0 : driver::parse_byte_size(a.max_memory, "--max-memory");
    graph::IRModule m = load_model(a.model, a.input_shapes, a.params, a.tflite_rounding);
    driver::PipelineOptions options;
    options.opt_level = a.opt_level;
    options.print_after = a.print_after;
    options.time_passes = a.time_passes;
    options.disabled_passes = a.disabled;
    options.shape_buckets = buckets;
    options.max_memory_bytes = max_memory;
    if (!a.mixed_precision.empty())
        options.mixed_precision = parse_mixed_precision(a.mixed_precision);
    if (a.checked && options.checked == tir::BoundChecks::off) {
        options.checked = tir::BoundChecks::on;
    }
    if (!a.tuning_records.empty()) {
        std::vector<std::string> warnings;
        options.tuning_records = driver::load_best_records(a.tuning_records, &warnings);
        for (const auto& w : warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
    }
    driver::CompiledModel c = driver::compile_model(m, a.target, options);
    std::string memory;
    if (a.bundle) {
        if (executor == driver::Executor::vm) user_error() << "--bundle runs the graph executor";
        memory = driver::export_bundle_model(c, a.output,
                                             {.cc = a.cross_compiler,
                                              .cc_options = a.cross_compiler_options,
                                              .runtime_archive = a.bundle_runtime});
    } else {
        memory =
            driver::export_model(c, a.output, executor, a.cross_compiler, a.cross_compiler_options);
    }
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("compiled %s -> %s: %zu kernels, target '%s', %.2f s\n%s\n", a.model.c_str(),
                a.output.c_str(), c.module.kernels.size(), c.target.str().c_str(), seconds,
                memory.c_str());
    // What the external code generators of a composite target took.
    std::printf("%s", c.partition.str().c_str());
    if (!a.tuning_records.empty()) report_tuning(c.tuning);
    return 0;
}

}  // namespace

void add_compile_command(CLI::App& app, int* status) {
    auto args = std::make_shared<CompileArgs>();
    CLI::App* cmd = app.add_subcommand(
        "compile",
        "compile an ONNX model, a TorchScript model (.pt), a TFLite model (.tflite) or a "
        "module's text (.anvil) into one shared library");
    cmd->add_option("model", args->model,
                    "the ONNX model, the TorchScript model (torch.jit.save; read with PyTorch), "
                    "the TFLite model, or a module in Anvil's text format")
        ->required();
    cmd->add_option("--target", args->target,
                    "target, e.g. \"llvm -mcpu=native\"; external code generators first: "
                    "\"dnnl, llvm -mcpu=native\" offloads what oneDNN computes");
    cmd->add_option("-o,--output", args->output, "the library to write");
    cmd->add_option("--cross-compiler", args->cross_compiler,
                    "the compiler that links the library, for a target that is not this "
                    "machine (e.g. aarch64-linux-gnu-gcc for -mtriple=aarch64-linux-gnu)");
    cmd->add_option("--cross-compiler-options", args->cross_compiler_options,
                    "options added to the cross compiler's command line (e.g. --sysroot=DIR)");
    cmd->add_option("-O,--opt-level", args->opt_level, "optimization level")
        ->check(CLI::Range(0, 3));
    cmd->add_option("--mixed-precision", args->mixed_precision,
                    "compute in bf16 (bfloat16; AMX tiles or vdpbf16ps where the CPU has them) or "
                    "fp16 where that is safe: products take half-precision operands and sum in "
                    "float32, softmax, norms and long sums stay float32 (graph pass "
                    "to_mixed_precision); inputs and outputs keep their types");
    cmd->add_option("--input-shapes", args->input_shapes,
                    "NAME:[d0,d1,...] shape overrides of an ONNX or TFLite model's inputs; for a "
                    "TorchScript model, one NAME:[d0,d1,...][:DTYPE] per input of forward, in "
                    "order (dtype float32 by default; a dimension -1 or a name is symbolic)");
    cmd->add_option("--tflite-rounding", args->tflite_rounding,
                    "how a quantized TFLite model rescales its products: TFLITE (TFLite's "
                    "reference kernels, fixed point; the default) or XNNPACK (in float32, as "
                    "TFLite's CPU delegate)");
    cmd->add_option("--params", args->params,
                    "an .npz of weights bound to the module's main parameters of those names");
    cmd->add_option("--print-after", args->print_after, "print the IR after a pass, or 'all'");
    cmd->add_flag("--time-passes", args->time_passes, "report each pass's time");
    cmd->add_flag("--bundle", args->bundle,
                  "write one static library (-o model.a) with the runtime, kernels, plan and "
                  "weights, for programs to link (anvil_graph_executor_create_from_bundle)");
    cmd->add_option("--bundle-runtime", args->bundle_runtime,
                    "the static runtime to bundle (default: the host's; another target's from "
                    "its cross build)");
    cmd->add_option("--executor", args->executor,
                    "graph (static plan), vm (run-time shapes, control flow) or auto (default: "
                    "the graph executor whenever the model is static)");
    cmd->add_option("--disable-pass", args->disabled, "skip a pass (repeatable)");
    cmd->add_option("--shape-buckets", args->shape_buckets,
                    "NAME=SIZE,SIZE,...: also compile the kernels using the symbolic dimension "
                    "NAME specialized for each SIZE; the VM calls them at those sizes (several "
                    "dimensions: every combination of their sizes, at most 64)");
    cmd->add_flag("--checked", args->checked,
                  "bounds-check every buffer access of the generated kernels at run time: an "
                  "access out of bounds fails the run with a message naming the kernel, the "
                  "buffer and the index (slower; for debugging; also on when the environment "
                  "sets ANVIL_CHECKED=1, or ANVIL_CHECKED=all to keep even the checks the "
                  "compiler proves)");
    cmd->add_option("--max-memory", args->max_memory,
                    "refuse a model that needs more memory than SIZE (512M, 2G or bytes): the "
                    "graph executor's planned intermediate tensors plus its weights (default: "
                    "no limit)");
    cmd->add_option("--tuning-records", args->tuning_records,
                    "apply the best of these tuning records (anvil tune -o) to the kernels whose "
                    "workload they measured (repeatable)");
    cmd->callback([args, status] { *status = run_compile(*args); });
}

}  // namespace anvil::cli
