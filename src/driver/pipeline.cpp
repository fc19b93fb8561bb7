#include "driver/pipeline.h"

#include <chrono>
#include <iostream>

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

// THE loop-IR pipeline. Guards from non-divisible splits are partitioned away before
// vectorizing, so the main loops vectorize; math intrinsics are lowered after vectorizing so
// they are lowered once, on vector types.
const TirPassEntry kTirPipeline[] = {
    {"flatten_storage", tir::flatten_storage},
    {"simplify", tir::simplify},
    {"partition_loops", tir::partition_loops},
    {"simplify", tir::simplify},
    {"vectorize_loops", tir::vectorize_loops, is_cpu},
    {"unroll_loops", tir::unroll_loops},
    {"lower_intrinsics", tir::lower_intrinsics, is_cpu},
    {"reuse_storage", tir::reuse_storage},
    {"simplify", tir::simplify},
};

bool is_pass_name(const std::string& name) {
    for (const auto& e : kTirPipeline) {
        if (name == e.name) return true;
    }
    return false;
}

}  // namespace

std::vector<std::string> tir_pass_names() {
    std::vector<std::string> names;
    for (const auto& e : kTirPipeline) names.push_back(e.name);
    return names;
}

Ref<tir::PrimFunc> run_tir_pipeline(const Ref<tir::PrimFunc>& input, const tir::LowerContext& ctx,
                                    const PipelineOptions& options) {
    for (const auto& name : options.disabled_passes) {
        if (!is_pass_name(name)) user_error() << "--disable-pass: unknown pass '" << name << "'";
    }
    if (!options.print_after.empty() && options.print_after != "all" &&
        !is_pass_name(options.print_after)) {
        user_error() << "--print-after: unknown pass '" << options.print_after << "'";
    }
    std::ostream& log = options.log ? *options.log : std::cerr;
    Ref<tir::PrimFunc> f = input;
    if (options.verify) tir::verify(f);
    for (const auto& entry : kTirPipeline) {
        bool disabled = false;
        for (const auto& d : options.disabled_passes) disabled |= d == entry.name;
        if (disabled || (entry.enabled && !entry.enabled(ctx))) continue;
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
