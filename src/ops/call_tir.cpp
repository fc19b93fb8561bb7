#include "ops/call_tir.h"

#include "ops/op_spec.h"
#include "ops/op_table.h"
#include "support/error.h"

namespace anvil::ops {

using graph::Type;

std::vector<Type> call_tir_outputs(const CallTirAttrs& a) {
    std::vector<Type> out;
    std::vector<std::string> dtypes;
    size_t start = 0;
    while (start <= a.out_dtypes.size()) {
        size_t comma = a.out_dtypes.find(',', start);
        if (comma == std::string::npos) comma = a.out_dtypes.size();
        dtypes.push_back(a.out_dtypes.substr(start, comma - start));
        start = comma + 1;
    }
    if (dtypes.size() != a.out_ndims.size()) {
        user_error() << "call_tir " << a.kernel << ": " << a.out_ndims.size()
                     << " output rank(s) but " << dtypes.size() << " dtype(s)";
    }
    size_t pos = 0;
    for (size_t k = 0; k < a.out_ndims.size(); ++k) {
        int64_t n = a.out_ndims[k];
        if (n < 0 || pos + n > a.out_shapes.size()) {
            user_error() << "call_tir " << a.kernel << ": output shapes do not match their ranks";
        }
        std::vector<PrimExpr> shape(a.out_shapes.begin() + pos, a.out_shapes.begin() + pos + n);
        pos += n;
        DataType t;
        if (!DataType::parse(dtypes[k], &t)) {
            user_error() << "call_tir " << a.kernel << ": unknown dtype '" << dtypes[k] << "'";
        }
        out.push_back(graph::make_tensor_type(shape, t));
    }
    return out;
}

graph::Expr make_call_tir(const std::string& kernel, std::vector<graph::Expr> args,
                          const Type& result, SourceLoc loc, std::vector<PrimExpr> shape_args) {
    auto attrs = Ref<CallTirAttrs>(new CallTirAttrs());
    auto* a = const_cast<CallTirAttrs*>(attrs.get());
    a->kernel = kernel;
    a->shape_args = std::move(shape_args);
    std::vector<Type> outputs;
    if (auto* tuple = result.as<graph::TupleType>()) {
        outputs = tuple->fields;
    } else {
        outputs = {result};
    }
    for (size_t k = 0; k < outputs.size(); ++k) {
        auto* tt = outputs[k].as<graph::TensorType>();
        ANVIL_CHECK(tt) << "call_tir result " << graph::type_str(outputs[k]);
        a->out_shapes.insert(a->out_shapes.end(), tt->shape.begin(), tt->shape.end());
        a->out_ndims.push_back(static_cast<int64_t>(tt->ndim()));
        a->out_dtypes += (k ? "," : "") + tt->dtype.str();
    }
    return graph::make_call(get_op("call_tir"), std::move(args), attrs, std::move(loc));
}

namespace {

Type call_tir_type(const graph::Op&, const std::vector<Type>&, const graph::Attrs& attrs,
                   const SourceLoc&) {
    std::vector<Type> outputs = call_tir_outputs(static_cast<const CallTirAttrs&>(attrs));
    if (outputs.size() == 1) return outputs[0];
    return graph::make_tuple_type(outputs);
}

}  // namespace

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

}  // namespace anvil::ops
