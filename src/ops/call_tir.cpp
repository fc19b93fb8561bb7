#include "ops/call_tir.h"

#include <sstream>

#include "ops/op_spec.h"
#include "ops/op_table.h"
#include "support/error.h"

namespace anvil::ops {

using graph::Type;

graph::Expr make_call_tir(const std::string& kernel, std::vector<graph::Expr> args,
                          const Type& result, SourceLoc loc, std::vector<PrimExpr> shape_args,
                          KernelVariants variants) {
    auto attrs = Ref<CallTirAttrs>(new CallTirAttrs());
    auto* a = const_cast<CallTirAttrs*>(attrs.get());
    a->kernel = kernel;
    a->shape_args = std::move(shape_args);
    a->bucket_dims = std::move(variants.dims);
    a->bucket_kernels = std::move(variants.kernels);
    a->bucket_values = std::move(variants.values);
    a->set_outputs(result);
    return graph::make_call(get_op("call_tir"), std::move(args), attrs, std::move(loc));
}

graph::Expr make_call_packed(const std::string& func, std::vector<graph::Expr> args,
                             const Type& result, SourceLoc loc) {
    auto attrs = Ref<CallPackedAttrs>(new CallPackedAttrs());
    auto* a = const_cast<CallPackedAttrs*>(attrs.get());
    a->func = func;
    a->set_outputs(result);
    return graph::make_call(get_op("call_packed"), std::move(args), attrs, std::move(loc));
}

namespace {

Type result_type(std::vector<Type> outputs) {
    if (outputs.size() == 1) return outputs[0];
    return graph::make_tuple_type(std::move(outputs));
}

Type call_tir_type(const graph::Op&, const std::vector<Type>&, const graph::Attrs& attrs,
                   const SourceLoc& loc) {
    const auto& a = attrs_as<CallTirAttrs>(attrs);
    size_t dims = a.bucket_dims.size(), kernels = a.bucket_kernels.size();
    if ((dims == 0) != (kernels == 0)) {
        user_error(loc) << "call_tir @" << a.kernel
                        << ": bucket_kernels and bucket_dims come together (given " << kernels
                        << " kernel(s) and " << dims << " dimension(s))";
    }
    if (a.bucket_values.size() != dims * kernels) {
        user_error(loc) << "call_tir @" << a.kernel << ": " << kernels
                        << " bucket kernel(s) specialized for " << dims << " dimension(s) need "
                        << dims * kernels << " bucket value(s), given " << a.bucket_values.size();
    }
    for (const auto& k : a.bucket_kernels) {
        if (k.empty() || k == a.kernel) {
            user_error(loc) << "call_tir @" << a.kernel
                            << ": a bucket kernel must be another kernel of the module";
        }
    }
    return result_type(call_tir_outputs(a));
}

Type call_packed_type(const graph::Op&, const std::vector<Type>& args, const graph::Attrs& attrs,
                      const SourceLoc& loc) {
    const auto& a = attrs_as<CallPackedAttrs>(attrs);
    if (a.func.empty()) user_error(loc) << "call_packed needs a function name";
    for (size_t i = 0; i < args.size(); ++i) {
        graph::expect_tensor(
            args[i], loc, "argument " + std::to_string(i) + " of call_packed \"" + a.func + "\"");
    }
    return result_type(call_packed_outputs(a));
}

}  // namespace

void check_call_tir(const graph::Expr& e, const tir::PrimFunc& kernel) {
    const auto& call = *e.as<graph::Call>();
    const auto& attrs = *call_tir_attrs(e);
    std::vector<Type> tensors;
    for (const auto& a : call.args) tensors.push_back(a->type);
    std::vector<Type> outputs = call_tir_outputs(attrs);
    tensors.insert(tensors.end(), outputs.begin(), outputs.end());
    auto where = [&] { return "call_tir @" + kernel.name + ": "; };
    if (tensors.size() != kernel.params.size() ||
        attrs.shape_args.size() != kernel.scalar_params.size()) {
        user_error(e->loc) << where() << "the kernel takes " << kernel.params.size()
                           << " tensor(s) and " << kernel.scalar_params.size()
                           << " scalar(s), the call passes " << call.args.size()
                           << " argument(s) and " << outputs.size() << " output(s), and "
                           << attrs.shape_args.size() << " shape argument(s)";
    }
    for (size_t i = 0; i < tensors.size(); ++i) {
        const Buffer& p = *kernel.params[i];
        std::string what = i < call.args.size() ? "argument " + std::to_string(i)
                                                : "output " + std::to_string(i - call.args.size());
        const auto& t = graph::expect_tensor(tensors[i], e->loc, where() + what);
        bool fits = t.dtype == p.dtype && t.ndim() == p.shape.size();
        for (size_t d = 0; fits && d < t.ndim(); ++d) {
            const int64_t* a = as_const_int(t.shape[d]);
            const int64_t* b = as_const_int(p.shape[d]);
            fits = !a || !b || *a == *b;
        }
        if (!fits) {
            std::ostringstream declared;
            declared << p.dtype.str() << "[";
            for (size_t d = 0; d < p.shape.size(); ++d) declared << (d ? ", " : "") << p.shape[d];
            declared << "]";
            user_error(e->loc) << where() << what << " has type " << graph::type_str(tensors[i])
                               << ", the kernel's parameter " << p.name << " is " << declared.str();
        }
    }
}

const CallTirAttrs* call_tir_attrs(const graph::Expr& e) {
    return call_attrs<CallTirAttrs>(e, "call_tir");
}

const CallPackedAttrs* call_packed_attrs(const graph::Expr& e) {
    return call_attrs<CallPackedAttrs>(e, "call_packed");
}

Ref<graph::Op> make_call_tir_op() {
    // Already a kernel: no compute or schedule, never fused or lowered again.
    return make_op(
        {.name = "call_tir",
         .num_inputs = -1,
         .make_default_attrs = default_attrs<CallTirAttrs>,
         .infer_type = call_tir_type,
         .pattern = graph::OpPattern::Opaque,
         .executor_op = true,
         .description = "call a loop-IR kernel of the module, destination-passing style"});
}

Ref<graph::Op> make_call_packed_op() {
    // The registry function is looked up by the executor when the program loads or runs.
    return make_op(
        {.name = "call_packed",
         .num_inputs = -1,
         .make_default_attrs = default_attrs<CallPackedAttrs>,
         .infer_type = call_packed_type,
         .pattern = graph::OpPattern::Opaque,
         .executor_op = true,
         .description = "call a registry function (C++ or Python), destination-passing style"});
}

}  // namespace anvil::ops
