// Test support for the nn op families: an op is run the way the graph lowering runs a fused
// group (op_kernel.h), then compared against a double-precision reference.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "op_kernel.h"
#include "ops/transform.h"
#include "support/error.h"

namespace anvil::testing {

// Runs `op_name` (then `tail`) on `inputs` compiled as op_kernel.h compiles it; returns its
// output (or the tail's).
inline runtime::NDArray run_op(const std::string& op_name, const graph::Attrs& attrs,
                               const std::vector<runtime::NDArray>& inputs,
                               const std::vector<TailOp>& tail = {}, Schedule schedule = nullptr) {
    OpKernel k = compile_op(op_name, attrs, inputs, tail, schedule);
    k.call();
    return k.output();
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
