#include "driver/build.h"

#include "codegen/llvm/llvm_module.h"
#include "support/error.h"
#include "te/schedule_to_loops.h"
#include "tir/stmt_functor.h"

namespace anvil::driver {

namespace {

// GPU thread bindings are representable in every schedule but compile only for GPU targets.
void check_thread_bindings(const Ref<tir::PrimFunc>& f, const Target& target) {
    if (target.kind == "cuda") return;
    tir::pre_order_visit(f->body, [&](const tir::Stmt& s) {
        if (auto* loop = s.as<tir::For>(); loop && loop->for_kind == tir::ForKind::ThreadBinding) {
            user_error() << "function '" << f->name << "': loop '" << loop->var->name
                         << "' is bound to " << loop->thread_tag << ", but target '" << target.str()
                         << "' is not a GPU; remove bind() or compile for a GPU target";
        }
    });
}

}  // namespace

Ref<tir::PrimFunc> lower(const te::Schedule& s, const std::vector<te::Tensor>& args,
                         const std::string& name, const Target& target,
                         const PipelineOptions& options) {
    Ref<tir::PrimFunc> f = te::schedule_to_loops(s, args, name);
    check_thread_bindings(f, target);
    return run_tir_pipeline(f, make_lower_context(target), options);
}

runtime::Module build(const te::Schedule& s, const std::vector<te::Tensor>& args,
                      const std::string& target, const std::string& name,
                      const PipelineOptions& options) {
    Target t = Target::parse(target);
    if (t.kind != "llvm") {
        user_error() << "target '" << target << "': only llvm targets can be built so far";
    }
    return codegen::build_llvm({lower(s, args, name, t, options)}, t);
}

}  // namespace anvil::driver
