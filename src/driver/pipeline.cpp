#include "driver/pipeline.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "codegen/external/external_compiler.h"
#include "graph/expr_functor.h"
#include "graph/passes/pass_table.h"
#include "graph/printer.h"
#include "graph/verifier.h"
#include "support/error.h"
#include "tir/printer.h"
#include "tir/verifier.h"

namespace anvil::driver {

namespace {

using TirPass = tir::Stmt (*)(const tir::Stmt&, const tir::LowerContext&);

struct TirPassEntry {
    const char* name;
    TirPass pass;
    // When the pass applies; a null predicate means always.
    bool (*enabled)(const tir::LowerContext&) = nullptr;
};

bool is_cpu(const tir::LowerContext& ctx) {
    return !ctx.is_gpu;
}

// Not in checked builds: their checks see a tile's first element only, so the loops stay.
bool has_amx(const tir::LowerContext& ctx) {
    return (ctx.amx_bf16 || ctx.amx_int8) && ctx.bound_checks == tir::BoundChecks::off;
}

bool is_checked(const tir::LowerContext& ctx) {
    return ctx.bound_checks != tir::BoundChecks::off;
}

// The final simplify removes the bound checks it proves, unless all are to stay.
bool may_remove_checks(const tir::LowerContext& ctx) {
    return ctx.bound_checks != tir::BoundChecks::all;
}

// THE loop-IR pipeline. AMX tile products are recognized on the first simplify's flat indices,
// before partitioning, vectorizing and unrolling reshape the loops they match. Guards from
// non-divisible splits are partitioned away before vectorizing, so the main loops vectorize;
// math intrinsics are lowered after vectorizing so they are lowered once, on vector types. Bound
// checks go in last, on the accesses the code generator will make (vector, masked), before storage
// reuse (so each buffer is checked against its own size) and the final simplify (which removes the
// checks it can prove; it does not run when every check is to stay).
const TirPassEntry kTirPipeline[] = {
    {"flatten_storage", tir::flatten_storage},
    {"simplify", tir::simplify},
    {"tensorize_amx", tir::tensorize_amx, has_amx},
    {"partition_loops", tir::partition_loops},
    {"simplify", tir::simplify},
    {"vectorize_loops", tir::vectorize_loops, is_cpu},
    {"unroll_loops", tir::unroll_loops},
    {"prefetch_streams", tir::prefetch_streams, is_cpu},
    {"lower_intrinsics", tir::lower_intrinsics, is_cpu},
    {"instrument_bound_checkers", tir::instrument_bound_checkers, is_checked},
    {"reuse_storage", tir::reuse_storage},
    {"simplify", tir::simplify, may_remove_checks},
};

struct GraphPassEntry {
    const char* name;   // an entry of graph/passes/pass_table.h
    int min_opt_level;  // skipped when the build's opt_level is lower
    // Run only when canonicalize_qnn rewrote something (the clean-up of its integer arithmetic).
    bool after_qnn_only = false;
};

// THE graph pipeline. Inference simplification and constant folding before fold_scale_axis
// (which needs constant weights and scales), blocked layouts and weight pre-packing after it (they
// need the OIHW weights) and folding again after that (which packs at compile time), and fuse_ops
// last. QDQ regions become QNN ops (fake_quantization_to_integer) and constant weights are
// quantized (fold_qnn_quantize) early. The BYOC passes partition the graph for the target's
// external compilers once inference is simplified and scales are folded (so a convolution's batch
// norm is its bias), and while QNN ops are still QNN ops (as TVM partitions before relay.build
// canonicalizes them): an int8 convolution with its requantize is one composite (dnnl.qnn.conv2d),
// not the integer arithmetic canonicalize_qnn writes. Regions partitioned by patterns that nothing
// offloads are inlined before and after partitioning (the later passes and lowering know only ops
// and kernels; graph passes do not enter regions). canonicalize_qnn then rewrites the QNN ops
// left (they have no kernels) into integer arithmetic, which is folded (zero-point terms of
// constant weights precomputed), simplified (those terms merged with the biases, the
// saturations merged) and folded again before layouts and packing pick the integer kernels.
// to_mixed_precision (only with PipelineOptions::mixed_precision) comes once batch norms and
// scales are folded into the float32 weights, which it then converts, and before layouts and
// packing, which pick the half-type kernels. inline_composites, canonicalize_qnn and fuse_ops run
// at every level, disabled or not: lowering needs them.
// clang-format off
const GraphPassEntry kGraphPipeline[] = {
    {"infer_types", 0},
    {"inline_composites", 0},
    {"fake_quantization_to_integer", 1},
    {"fold_qnn_quantize", 1},
    {"simplify_inference", 0},
    {"simplify_expr", 1},
    {"fold_constants", 1},
    {"fold_scale_axis", 2},
    {"fuse_attention", 2},
    {"fuse_layer_norm", 2},
    {"to_mixed_precision", 0},
    {"merge_composite", 0},
    {"annotate_target", 0},
    {"merge_compiler_regions", 0},
    {"partition_graph", 0},
    {"inline_composites", 0},
    {"canonicalize_qnn", 0},
    {"fold_constants", 1, true},
    {"simplify_expr", 1, true},
    {"fold_constants", 1, true},
    {"alter_op_layout", 2},
    {"prepack_weights", 2},
    {"fold_constants", 2},
    {"eliminate_common_subexpr", 2},
    {"dead_code_elimination", 1},
    {"fuse_ops", 0},
};
// clang-format on

// Whether two modules hold the very same function objects under the same names.
bool same_functions(const graph::IRModule& a, const graph::IRModule& b) {
    if (a.functions.size() != b.functions.size()) return false;
    for (auto i = a.functions.begin(), j = b.functions.begin(); i != a.functions.end(); ++i, ++j) {
        if (i->first != j->first || !i->second.same_as(j->second)) return false;
    }
    return true;
}

const graph::GraphPassInfo& pipeline_pass(const char* name) {
    const graph::GraphPassInfo* p = graph::find_graph_pass(name);
    if (!p) internal_error() << "the graph pipeline names '" << name << "', which is no pass";
    return *p;
}

bool is_pass_name(const std::string& name) {
    if (name == kLowerFusedFunctions) return true;
    for (const auto& e : kTirPipeline) {
        if (name == e.name) return true;
    }
    return graph::find_graph_pass(name) != nullptr;
}

void check_pass_names(const PipelineOptions& options) {
    for (const auto& name : options.disabled_passes) {
        if (!is_pass_name(name)) user_error() << "--disable-pass: unknown pass '" << name << "'";
    }
    if (!options.print_after.empty() && options.print_after != "all" &&
        !is_pass_name(options.print_after)) {
        user_error() << "--print-after: unknown pass '" << options.print_after << "'";
    }
}

bool is_disabled(const PipelineOptions& options, const char* name) {
    for (const auto& d : options.disabled_passes) {
        if (d == name) return true;
    }
    return false;
}

// A region for an external code generator this build does not have (a function with a Compiler
// attribute naming none), or a composite target naming one, stops the compile here.
void check_external_compilers(const graph::IRModule& m, const Target& target) {
    for (const auto& name : target.external_compilers) {
        if (!codegen::find_external_compiler(name)) {
            user_error() << "target '" << target.str() << "': unknown external code generator '"
                         << name
                         << "'; this build of Anvil has: " << codegen::external_compiler_list();
        }
    }
    auto check = [](const graph::Function& f) {
        auto compiler = f.attrs.find("Compiler");
        if (compiler == f.attrs.end() || codegen::find_external_compiler(compiler->second)) return;
        auto symbol = f.attrs.find("global_symbol");
        user_error(f.loc) << "a function for the external code generator '" << compiler->second
                          << "'"
                          << (symbol != f.attrs.end() ? " (" + symbol->second + ")" : std::string())
                          << ": this build of Anvil has no external code generator of that name ("
                          << codegen::external_compiler_list()
                          << "); remove the function's Compiler attribute to compile it natively";
    };
    for (const auto& [name, f] : m.functions) {
        check(*f);
        graph::post_order_visit(f->body, [&](const graph::Expr& e) {
            if (auto* g = e.as<graph::Function>()) check(*g);
        });
    }
}

}  // namespace

tir::BoundChecks checked_by_default() {
    const char* v = std::getenv("ANVIL_CHECKED");
    if (!v || !*v || std::strcmp(v, "0") == 0) return tir::BoundChecks::off;
    return std::strcmp(v, "all") == 0 ? tir::BoundChecks::all : tir::BoundChecks::on;
}

std::vector<std::string> graph_pass_names() {
    std::vector<std::string> names;
    for (const auto& p : graph::graph_passes()) names.push_back(p.name);
    return names;
}

graph::IRModule run_graph_pass(const graph::IRModule& input, const std::string& name,
                               const graph::PassContext& ctx, const PipelineOptions& options) {
    const graph::GraphPassInfo* pass = graph::find_graph_pass(name);
    if (!pass) {
        user_error() << "unknown graph pass '" << name << "'; the graph passes are "
                     << graph::graph_pass_list();
    }
    std::ostream& log = options.log ? *options.log : std::cerr;
    auto start = std::chrono::steady_clock::now();
    graph::IRModule m;
    try {
        m = pass->run(input, ctx);
    } catch (const UserError& e) {
        throw UserError(std::string(e.what()) + "\nnote: in graph pass '" + name + "'");
    }
    auto end = std::chrono::steady_clock::now();
    if (options.time_passes) {
        log << "pass " << name << ": "
            << std::chrono::duration<double, std::milli>(end - start).count() << " ms\n";
    }
    if (options.print_after == "all" || options.print_after == name) {
        // Without the metadata section: the weights would be megabytes of base64.
        log << "// after " << name << "\n"
            << graph::print(m, graph::PrintOptions{.metadata = false}) << "\n";
    }
    if (options.verify) {
        try {
            graph::verify(m);
        } catch (const InternalError& e) {
            internal_error() << e.what() << "\nnote: after graph pass '" << name << "'";
        }
    }
    return m;
}

graph::IRModule run_graph_pipeline(const graph::IRModule& input, graph::PassContext ctx,
                                   const PipelineOptions& options) {
    check_pass_names(options);
    check_external_compilers(input, ctx.target);
    ctx.opt_level = options.opt_level;
    ctx.disabled_passes = options.disabled_passes;
    ctx.mixed_precision = options.mixed_precision;
    graph::IRModule m = input;
    bool qnn_canonicalized = false;
    for (const auto& entry : kGraphPipeline) {
        // Run even when disabled: lowering needs every op in a primitive function, no region
        // left in a function that is neither a kernel nor offloaded, every offloaded region
        // named, and no QNN op (they have no kernels).
        const std::string name = entry.name;
        bool required = name == "fuse_ops" || name == "inline_composites" ||
                        name == "partition_graph" || name == "canonicalize_qnn";
        if (!required &&
            (is_disabled(options, entry.name) || options.opt_level < entry.min_opt_level)) {
            continue;
        }
        // Only when a half type is asked for (--mixed-precision).
        if (name == "to_mixed_precision" && ctx.mixed_precision.is_void()) continue;
        if (entry.after_qnn_only && !qnn_canonicalized) continue;
        graph::IRModule out = run_graph_pass(m, pipeline_pass(entry.name).name, ctx, options);
        // A pass returns the functions it leaves alone as they were.
        if (name == "canonicalize_qnn") qnn_canonicalized = !same_functions(m, out);
        m = std::move(out);
    }
    return m;
}

std::vector<std::string> tir_pass_names() {
    std::vector<std::string> names;
    for (const auto& e : kTirPipeline) names.push_back(e.name);
    return names;
}

Ref<tir::PrimFunc> run_tir_pipeline(const Ref<tir::PrimFunc>& input,
                                    const tir::LowerContext& target_ctx,
                                    const PipelineOptions& options) {
    check_pass_names(options);
    tir::LowerContext ctx = target_ctx;
    if (options.checked != tir::BoundChecks::off) ctx.bound_checks = options.checked;
    ctx.function_name = input->name;
    ctx.params = input->params;
    std::ostream& log = options.log ? *options.log : std::cerr;
    Ref<tir::PrimFunc> f = input;
    if (options.verify) tir::verify(f);
    for (const auto& entry : kTirPipeline) {
        if (is_disabled(options, entry.name) || (entry.enabled && !entry.enabled(ctx))) continue;
        auto start = std::chrono::steady_clock::now();
        if (std::string(entry.name) == "flatten_storage") {
            f = tir::flatten_storage(f, ctx);
        } else {
            f = tir::with_body(f, entry.pass(f->body, ctx));
        }
        auto end = std::chrono::steady_clock::now();
        if (options.time_passes) {
            log << "pass " << entry.name << ": "
                << std::chrono::duration<double, std::milli>(end - start).count() << " ms\n";
        }
        if (options.print_after == "all" || options.print_after == entry.name) {
            log << "// after " << entry.name << "\n" << tir::print(f) << "\n";
        }
        if (options.verify) {
            try {
                tir::verify(f);
            } catch (const InternalError& e) {
                internal_error() << e.what() << "\nnote: after pass '" << entry.name << "'";
            }
        }
    }
    return f;
}

}  // namespace anvil::driver
