// UserErrors of the graph level and its lowering, with their messages.
#include <gtest/gtest.h>

#include <functional>

#include "codegen/llvm/llvm_module.h"
#include "driver/compile.h"
#include "driver/evaluate.h"
#include "driver/lower_graph.h"
#include "driver/make_plan.h"
#include "errors/expect_message.h"
#include "ops/call_tir.h"
#include "ops/op_table.h"
#include "support/error.h"

namespace anvil::graph {
namespace {

Type tensor(std::vector<int64_t> shape) {
    return make_tensor_type(shape, DataType::float32());
}

const SourceLoc kNode{.file = "m.onnx", .node_name = "Add_3", .op_type = "Add", .opset = 13};

TEST(GraphErrors, ConstructorsNameTheNode) {
    auto x = make_var("x", tensor({2, 3}));
    EXPECT_MESSAGE(make_call(ops::get_op("add"), {x}, nullptr, kNode),
                   "m.onnx: node 'Add_3' (Add, opset 13)", "add takes 2 input(s), got 1");
    EXPECT_MESSAGE(make_tuple_get_item(x, 0, kNode), "node 'Add_3'",
                   "taking item 0 of a Tensor[(2, 3), float32]");
    Expr pair = make_tuple({x, x});
    EXPECT_MESSAGE(make_tuple_get_item(pair, 2, kNode), "item 2 of a tuple of 2");
    auto y = make_var("y", tensor({3}));
    EXPECT_MESSAGE(make_let(y, x, x, kNode),
                   "let %y: Tensor[(3,), float32] bound to a Tensor[(2, 3), float32]");
    auto p = make_var("p", tensor({3}));
    auto f = make_function({p}, p, true);
    EXPECT_MESSAGE(make_call_function(f, {x}, kNode), "argument 0 has type Tensor[(2, 3), float32]",
                   "parameter 'p' has Tensor[(3,), float32]");
    EXPECT_MESSAGE(make_call_function(f, {}, kNode),
                   "function of 1 parameter(s) called with 0 argument(s)");
    EXPECT_MESSAGE(expect_tensor(pair->type, kNode, "input 0 of nn.relu"),
                   "input 0 of nn.relu must be a tensor, but has type (Tensor");
}

TEST(GraphErrors, ModuleWithoutMain) {
    IRModule m;
    EXPECT_MESSAGE(m.main(), "the module has no function 'main'");
}

TEST(GraphErrors, FusedFunctionsThatCannotBeLowered) {
    auto x = make_var("x", tensor({4}));
    // A fused group calling another function.
    auto p = make_var("p", tensor({4}));
    auto inner = make_function({p}, make_call(ops::get_op("exp"), {p}), true);
    auto q = make_var("q", tensor({4}));
    auto outer = make_function({q}, make_call_function(inner, {q}), true);
    EXPECT_MESSAGE(driver::lower_primitive_function(*outer, "k", Target::host(), {}),
                   "a fused function calls another function");
    // A fused group with a tuple parameter.
    auto t = make_var("t", make_tuple_type({tensor({4}), tensor({4})}));
    auto tuple_fn = make_function({t}, make_tuple_get_item(t, 0), true);
    EXPECT_MESSAGE(
        driver::lower_primitive_function(*tuple_fn, "k", Target::host(), {}),
        "a fused function takes a (Tensor[(4,), float32], Tensor[(4,), float32]); only tensors");
    // An op that is already a kernel call has nothing to lower.
    auto r = make_var("r", tensor({4}));
    auto call_fn = make_function({r}, ops::make_call_tir("k0", {r}, tensor({4})), true);
    EXPECT_MESSAGE(driver::lower_primitive_function(*call_fn, "k", Target::host(), {}),
                   "op call_tir has no tensor-expression compute");
}

// Some compiled kernels, for running modules that do not match them.
runtime::Module some_kernels() {
    auto x = make_var("x", tensor({4}));
    IRModule m;
    m.functions["main"] = make_function({x}, make_call(ops::get_op("exp"), {x}));
    return driver::compile_model(m, "llvm").kernels;
}

TEST(GraphErrors, RunningOrPlanningAModuleThatIsNotLowered) {
    auto x = make_var("x", tensor({4}));
    IRModule m;
    m.functions["main"] = make_function({x}, make_call(ops::get_op("exp"), {x}));
    runtime::Module none = some_kernels();
    EXPECT_MESSAGE(
        driver::evaluate_lowered(
            m, none, {runtime::NDArray::empty({4}, runtime::dl_dtype_from_string("float32"))}),
        "main still calls exp; lower the module first");
    EXPECT_MESSAGE(driver::evaluate_lowered(m, none, {}), "main takes 1 input(s), got 0");
    EXPECT_MESSAGE(driver::make_plan(m), "make_plan: main still calls exp; lower the module first");
}

TEST(GraphErrors, CallTirOfAMissingKernel) {
    auto x = make_var("x", tensor({4}));
    IRModule m;
    m.functions["main"] = make_function({x}, ops::make_call_tir("nowhere", {x}, tensor({4})));
    runtime::Module none = some_kernels();
    EXPECT_MESSAGE(
        driver::evaluate_lowered(
            m, none, {runtime::NDArray::empty({4}, runtime::dl_dtype_from_string("float32"))}),
        "no compiled kernel 'nowhere'");
}

TEST(GraphErrors, CallTirAttributesThatDoNotDescribeATensor) {
    ops::CallTirAttrs a;
    a.kernel = "k";
    a.out_shapes = {make_int(DataType::int64(), 2), make_int(DataType::int64(), 3)};
    a.out_ndims = {2};
    a.out_dtypes = "float32,int64";
    EXPECT_MESSAGE(ops::call_tir_outputs(a), "call_tir k: 1 output rank(s) but 2 dtype(s)");
    a.out_dtypes = "float31";
    EXPECT_MESSAGE(ops::call_tir_outputs(a), "unknown dtype 'float31'");
    a.out_dtypes = "float32";
    a.out_ndims = {3};
    EXPECT_MESSAGE(ops::call_tir_outputs(a), "output shapes do not match their ranks");
}

TEST(GraphErrors, CompileForATargetThatCannotBeBuilt) {
    auto x = make_var("x", tensor({4}));
    IRModule m;
    m.functions["main"] = make_function({x}, make_call(ops::get_op("exp"), {x}));
    EXPECT_MESSAGE(driver::compile_model(m, "cuda"),
                   "target 'cuda': only llvm targets can be built so far");
}

TEST(GraphErrors, ARegionForAnExternalCodeGeneratorThatIsNotBuilt) {
    auto x = make_var("x", tensor({4}));
    auto p = make_var("p", tensor({4}));
    auto region = make_function({p}, make_call(ops::get_op("exp"), {p}), false, kNode,
                                {{"Compiler", "acme"}, {"global_symbol", "acme_0"}});
    IRModule m;
    m.functions["main"] = make_function({x}, make_call_function(region, {x}));
    EXPECT_MESSAGE(driver::compile_model(m, "llvm"), "node 'Add_3'",
                   "a function for the external code generator 'acme' (acme_0)",
                   "has no external code generator of that name (dnnl)");
}

TEST(GraphErrors, ACompositeTargetNamingAnUnknownExternalCodeGenerator) {
    auto x = make_var("x", tensor({4}));
    IRModule m;
    m.functions["main"] = make_function({x}, make_call(ops::get_op("exp"), {x}));
    EXPECT_MESSAGE(driver::compile_model(m, "acme, llvm"),
                   "unknown external code generator 'acme'; this build of Anvil has: dnnl");
    EXPECT_MESSAGE(driver::compile_model(m, "dnnl, dnnl, llvm"), "'dnnl' given twice");
    EXPECT_MESSAGE(driver::compile_model(m, "dnnl -x, llvm"),
                   "'dnnl -x' is no external code generator name");
}

TEST(GraphErrors, ARegionTheExternalCodeGeneratorRejects) {
    auto x = make_var("x", tensor({4}));
    auto p = make_var("p", tensor({4}));
    auto region = make_function({p}, make_call(ops::get_op("sin"), {p}, nullptr, kNode), false,
                                kNode, {{"Compiler", "dnnl"}});
    IRModule m;
    m.functions["main"] = make_function({x}, make_call_function(region, {x}));
    EXPECT_MESSAGE(driver::compile_model(m, "llvm"), "node 'Add_3'",
                   "the external code generator 'dnnl' cannot compute sin (in region "
                   "tvmgen_default_dnnl_main_0)");
}

}  // namespace
}  // namespace anvil::graph
