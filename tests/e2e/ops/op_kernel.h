// One op compiled alone the way the graph lowering compiles a fused group with it as the anchor:
// placeholders for its inputs, its compute, optional elementwise tail ops inlined into it, the
// anchor's schedule for the host, built with LLVM. The nn op tests (nn_op_runner.h) check what
// it computes; bench/op_layers_bench times it at the same layer shapes, so both measure one
// kernel. Free of gtest for that reason.
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

#include "../run_kernel.h"
#include "codegen/target.h"
#include "graph/op.h"
#include "ops/op_table.h"
#include "ops/tensor_shape.h"

namespace anvil::testing {

using Schedule = graph::ScheduleRule;

// An elementwise op applied after the anchor: `op_name`(previous, extra inputs...).
struct TailOp {
    std::string op_name;
    std::vector<runtime::NDArray> extra;  // further inputs, after the previous value
};

inline graph::Type type_of(const runtime::NDArray& a) {
    std::vector<int64_t> shape(a.shape().begin(), a.shape().end());
    return graph::make_tensor_type(shape, graph::dtype_of(a.dtype()));
}

// The compiled kernel with the arrays it is called on: the inputs, the tail ops' extra inputs,
// then the output (zero before the first call).
struct OpKernel {
    runtime::Module module;
    runtime::PackedFunc func;
    std::vector<runtime::NDArray> args;

    void call() const {
        std::vector<AnvilValue> values(args.size());
        std::vector<int> codes(args.size(), kAnvilDLTensor);
        for (size_t i = 0; i < args.size(); ++i) values[i].v_handle = args[i].tensor();
        func.call(values.data(), codes.data(), static_cast<int>(args.size()));
    }
    const runtime::NDArray& output() const { return args.back(); }
};

// Compiles `op_name` (then `tail`) on `inputs` (float32 mostly; integer products take integers)
// with the anchor's schedule, or `schedule` when given, for `target` (the host by default; a
// kernel for another CPU can be compiled, not run). ANVIL_TEST_PRINT_AFTER=PASS prints the loop
// IR after that pass.
inline OpKernel compile_op(const std::string& op_name, const graph::Attrs& attrs,
                           const std::vector<runtime::NDArray>& inputs,
                           const std::vector<TailOp>& tail = {}, Schedule schedule = nullptr,
                           const std::string& target = "llvm -mcpu=native") {
    const graph::Op& op = ops::get_op(op_name);
    std::vector<graph::Type> types;
    std::vector<te::Tensor> args;
    for (size_t i = 0; i < inputs.size(); ++i) {
        types.push_back(type_of(inputs[i]));
        args.push_back(te::placeholder(ops::te_shape(types.back()),
                                       types.back().as<graph::TensorType>()->dtype,
                                       "in" + std::to_string(i)));
    }
    OpKernel k;
    k.args = inputs;
    graph::Type out_type = op.infer_type(op, types, attrs, SourceLoc{});
    te::Tensor anchor = op.compute(args, attrs, out_type)[0];
    te::Tensor value = anchor;
    std::vector<te::Tensor> intermediates;
    for (const auto& t : tail) {
        const graph::Op& top = ops::get_op(t.op_name);
        std::vector<graph::Type> ttypes{out_type};
        std::vector<te::Tensor> targs{value};
        for (size_t i = 0; i < t.extra.size(); ++i) {
            ttypes.push_back(type_of(t.extra[i]));
            targs.push_back(te::placeholder(ops::te_shape(ttypes.back()),
                                            ttypes.back().as<graph::TensorType>()->dtype,
                                            "tail" + std::to_string(args.size())));
            args.push_back(targs.back());
            k.args.push_back(t.extra[i]);
        }
        auto no_attrs = top.make_default_attrs();
        out_type = top.infer_type(top, ttypes, *no_attrs, SourceLoc{});
        if (!value.same_as(anchor)) intermediates.push_back(value);
        value = top.compute(targs, *no_attrs, out_type)[0];
    }
    te::Schedule s = te::create_schedule({value});
    for (const auto& t : intermediates) s[t].compute_inline();
    (schedule ? schedule : op.schedule)(
        s, anchor, {value}, te::ScheduleContext{make_lower_context(Target::parse(target))});
    auto* tt = out_type.as<graph::TensorType>();
    k.args.push_back(zeros(tt->static_shape(), tt->dtype.str()));
    args.push_back(value);

    driver::PipelineOptions options;
    if (const char* p = std::getenv("ANVIL_TEST_PRINT_AFTER")) options.print_after = p;
    k.module = driver::build(s, args, target, "kernel", options);
    k.func = k.module.get_function("kernel");
    return k;
}

}  // namespace anvil::testing
