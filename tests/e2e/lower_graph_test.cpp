// Fused graph functions lowered to kernels, compiled and run: main's calls become call_tir,
// identical groups share one kernel, constants inside a group become kernel arguments.
#include "driver/lower_graph.h"

#include <gtest/gtest.h>

#include <cmath>

#include "codegen/llvm/llvm_module.h"
#include "driver/evaluate.h"
#include "ops/op_table.h"
#include "run_kernel.h"

namespace anvil {
namespace {

using graph::Expr;

Expr constant(const std::vector<int64_t>& shape, float value) {
    auto t = runtime::NDArray::empty(shape, runtime::dl_dtype_from_string("float32"));
    for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = value + 0.25f * i;
    return graph::make_constant(t);
}

// fn(%p0: [3, 17], %p1: [17]) { relu(add(%p0, %p1)) * 2 }  — a broadcast add, two elementwise
Ref<graph::Function> add_relu_scale(const graph::Type& x_type, const graph::Type& b_type) {
    auto p0 = graph::make_var("p0", x_type), p1 = graph::make_var("p1", b_type);
    Expr sum = graph::make_call(ops::get_op("add"), {p0, p1});
    Expr relu = graph::make_call(ops::get_op("nn.relu"), {sum});
    Expr scaled = graph::make_call(ops::get_op("multiply"), {relu, constant({1}, 2.0f)});
    return graph::make_function({p0, p1}, scaled, /*primitive=*/true);
}

TEST(LowerGraph, FusedFunctionsBecomeSharedKernels) {
    graph::Type x_type = graph::make_tensor_type(std::vector<int64_t>{3, 17}, DataType::float32());
    graph::Type b_type = graph::make_tensor_type(std::vector<int64_t>{17}, DataType::float32());
    auto x = graph::make_var("x", x_type);
    Expr b1 = constant({17}, -2.0f), b2 = constant({17}, 1.0f);
    Expr y1 = graph::make_call_function(add_relu_scale(x_type, b_type), {x, b1});
    Expr y2 = graph::make_call_function(add_relu_scale(x_type, b_type), {y1, b2});
    graph::IRModule m;
    m.functions["main"] = graph::make_function({x}, y2);

    graph::IRModule lowered = driver::lower_fused_functions(m, Target::host(), {});
    ASSERT_EQ(lowered.kernels.size(), 1u) << "identical groups compile once";
    EXPECT_EQ(lowered.kernels.begin()->first, "fused_add_relu_multiply");
    runtime::Module kernels =
        codegen::build_llvm({lowered.kernels.begin()->second}, Target::host());

    auto in = testing::random_tensor({3, 17}, 41);
    auto out = driver::evaluate_lowered(lowered, kernels, {in});
    ASSERT_EQ(out.size(), 1u);
    auto* bv1 = b1.as<graph::Constant>()->data.data<float>();
    auto* bv2 = b2.as<graph::Constant>()->data.data<float>();
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 17; ++j) {
            float v1 = std::max(in.data<float>()[i * 17 + j] + bv1[j], 0.0f) * 2.0f;
            float v2 = std::max(v1 + bv2[j], 0.0f) * 2.0f;
            EXPECT_FLOAT_EQ(out[0].data<float>()[i * 17 + j], v2);
        }
    }
}

TEST(LowerGraph, InputShapeMismatchIsAUserError) {
    graph::Type x_type = graph::make_tensor_type(std::vector<int64_t>{4}, DataType::float32());
    auto x = graph::make_var("x", x_type);
    auto p = graph::make_var("p", x_type);
    auto f = graph::make_function({p}, graph::make_call(ops::get_op("exp"), {p}), true);
    graph::IRModule m;
    m.functions["main"] = graph::make_function({x}, graph::make_call_function(f, {x}));
    graph::IRModule lowered = driver::lower_fused_functions(m, Target::host(), {});
    runtime::Module kernels =
        codegen::build_llvm({lowered.kernels.begin()->second}, Target::host());
    try {
        driver::evaluate_lowered(lowered, kernels, {testing::zeros({5})});
        ADD_FAILURE() << "no error";
    } catch (const UserError& e) {
        EXPECT_NE(
            std::string(e.what()).find("input 'x' is float32[5], expected Tensor[(4,), float32]"),
            std::string::npos)
            << e.what();
    }
}

}  // namespace
}  // namespace anvil
