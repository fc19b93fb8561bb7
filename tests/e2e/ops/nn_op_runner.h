// Test support for the nn op families: an op is run the way the graph lowering runs a fused
// group (placeholders for its inputs, its compute, optional elementwise tail ops inlined, the
// anchor's schedule for the host), then compared against a double-precision reference.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "../run_kernel.h"
#include "codegen/target.h"
#include "graph/op.h"
#include "ops/op_table.h"
#include "ops/tensor_shape.h"
#include "ops/transform.h"
#include "support/error.h"

namespace anvil::testing {

using Schedule = graph::ScheduleRule;

// An elementwise op applied after the anchor: `op_name`(previous, extra inputs...).
struct TailOp {
    std::string op_name;
    std::vector<runtime::NDArray> extra;  // further inputs, after the previous value
};

inline graph::Type type_of(const runtime::NDArray& a) {
    std::vector<int64_t> shape(a.shape().begin(), a.shape().end());
    return graph::make_tensor_type(shape, DataType::float32());
}

// Runs `op_name` on `inputs`; returns its output (or the tail's).
inline runtime::NDArray run_op(const std::string& op_name, const graph::Attrs& attrs,
                               const std::vector<runtime::NDArray>& inputs,
                               const std::vector<TailOp>& tail = {}, Schedule schedule = nullptr,
                               double* seconds = nullptr, int repeat = 1) {
    const graph::Op& op = ops::get_op(op_name);
    std::vector<graph::Type> types;
    std::vector<te::Tensor> args;
    for (size_t i = 0; i < inputs.size(); ++i) {
        types.push_back(type_of(inputs[i]));
        args.push_back(te::placeholder(ops::te_shape(types.back()), DataType::float32(),
                                       "in" + std::to_string(i)));
    }
    std::vector<runtime::NDArray> run_args = inputs;
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
            targs.push_back(te::placeholder(ops::te_shape(ttypes.back()), DataType::float32(),
                                            "tail" + std::to_string(args.size())));
            args.push_back(targs.back());
            run_args.push_back(t.extra[i]);
        }
        auto no_attrs = top.make_default_attrs();
        out_type = top.infer_type(top, ttypes, *no_attrs, SourceLoc{});
        if (!value.same_as(anchor)) intermediates.push_back(value);
        value = top.compute(targs, *no_attrs, out_type)[0];
    }
    te::Schedule s = te::create_schedule({value});
    for (const auto& t : intermediates) s[t].compute_inline();
    (schedule ? schedule : op.schedule)(s, anchor, {value}, make_lower_context(Target::host()));
    auto* tt = out_type.as<graph::TensorType>();
    runtime::NDArray out = zeros(tt->static_shape());
    args.push_back(value);
    run_args.push_back(out);

    driver::PipelineOptions options;
    if (const char* p = std::getenv("ANVIL_TEST_PRINT_AFTER")) options.print_after = p;
    runtime::Module m = driver::build(s, args, "llvm -mcpu=native", "kernel", options);
    runtime::PackedFunc f = m.get_function("kernel");
    std::vector<AnvilValue> values(run_args.size());
    std::vector<int> codes(run_args.size(), kAnvilDLTensor);
    for (size_t i = 0; i < run_args.size(); ++i) values[i].v_handle = run_args[i].tensor();
    auto call = [&] { f.call(values.data(), codes.data(), static_cast<int>(run_args.size())); };
    call();
    if (seconds) {
        double best = 1e30;
        for (int r = 0; r < repeat; ++r) {
            auto t0 = std::chrono::steady_clock::now();
            call();
            best = std::min(
                best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        }
        *seconds = best;
    }
    return out;
}

// Largest |got - want| / max(1, |want|), with the first failing index reported by gtest.
inline void expect_close(const runtime::NDArray& got, const std::vector<double>& want,
                         double tol = 1e-4, const std::string& what = "") {
    ASSERT_EQ(static_cast<size_t>(got.num_elements()), want.size()) << what;
    const float* g = got.data<float>();
    for (size_t i = 0; i < want.size(); ++i) {
        double err = std::fabs(g[i] - want[i]) / std::max(1.0, std::fabs(want[i]));
        if (!(err <= tol) && !(std::isinf(want[i]) && g[i] == want[i])) {
            FAIL() << what << ": element " << i << " is " << g[i] << ", want " << want[i];
        }
    }
}

// The UserError message raised by the op's type rule for the given input shapes.
inline std::string type_error(const std::string& op_name, const graph::Attrs& attrs,
                              const std::vector<std::vector<int64_t>>& shapes) {
    const graph::Op& op = ops::get_op(op_name);
    std::vector<graph::Type> types;
    for (const auto& s : shapes) types.push_back(graph::make_tensor_type(s, DataType::float32()));
    SourceLoc loc{.file = "model.onnx", .node_name = "node_7", .op_type = "Test", .opset = 13};
    try {
        op.infer_type(op, types, attrs, loc);
    } catch (const UserError& e) {
        return e.what();
    }
    return "";
}

// `a` from layout `src` to `dst` by layout_transform (NCHW -> NCHW8c, OIHW -> OIHW8i16o).
inline runtime::NDArray relayout(const runtime::NDArray& a, const std::string& src,
                                 const std::string& dst) {
    ops::LayoutTransformAttrs la;
    la.src_layout = src;
    la.dst_layout = dst;
    return run_op("layout_transform", la, {a});
}

}  // namespace anvil::testing
