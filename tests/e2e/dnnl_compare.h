// Test support for the oneDNN suites (dnnl_test.cpp, dnnl_qnn_test.cpp): one graph compiled
// natively and with "dnnl, llvm", both run on the same inputs.
#pragma once

#include <vector>

#include "driver/compile.h"
#include "driver/evaluate.h"
#include "graph/expr.h"

namespace anvil::testing {

struct NativeAndDnnl {
    std::vector<runtime::NDArray> native, dnnl;  // the outputs of each
    int64_t offloaded_ops = 0;                   // how many ops oneDNN took
};

// How many ops oneDNN took of a compiled model.
inline int64_t offloaded_ops(const driver::CompiledModel& compiled) {
    return compiled.partition.compilers.empty() ? 0 : compiled.partition.compilers[0].ops;
}

inline NativeAndDnnl run_native_and_dnnl(const std::vector<Ref<graph::Var>>& params,
                                         const graph::Expr& body,
                                         const std::vector<runtime::NDArray>& inputs) {
    graph::IRModule m;
    m.functions["main"] = graph::make_function(params, body);
    driver::CompiledModel native = driver::compile_model(m, "llvm");
    driver::CompiledModel dnnl = driver::compile_model(m, "dnnl, llvm");
    NativeAndDnnl r;
    r.native = driver::evaluate_lowered(native.module, native.kernels, inputs);
    r.dnnl = driver::evaluate_lowered(dnnl.module, dnnl.kernels, inputs);
    r.offloaded_ops = offloaded_ops(dnnl);
    return r;
}

}  // namespace anvil::testing
