// Golden tests of the graph passes: for each pass P, P.before.txt is parsed, P runs, and the
// printed module must equal P.after.txt byte for byte.
//
// After an intended change of a pass's output, regenerate with
//   ANVIL_UPDATE_GOLDEN=1 build/tests/anvil_graph_golden_tests
// and review the diff of the .after.txt files.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>

#include "golden/golden_file.h"
#include "graph/parser.h"
#include "graph/passes/pass_table.h"
#include "graph/printer.h"
#include "graph/verifier.h"
#include "ops/op_table.h"

namespace anvil::graph {
namespace {

using golden::read_file;

std::string golden_path(const std::string& name) {
    return golden::golden_path("graph", name);
}

// fold_constants' evaluator here: elementwise float32 arithmetic of constants of one shape or
// scalars (the driver's evaluator compiles; these tests stay at the graph level).
std::vector<float> evaluate_values(const Expr& e) {
    if (auto* c = e.as<Constant>()) {
        if (c->data.dtype().code == kDLInt && c->data.dtype().bits == 32) {
            auto ints = c->data.to_vector<int32_t>();
            return std::vector<float>(ints.begin(), ints.end());
        }
        return c->data.to_vector<float>();
    }
    auto* call = e.as<Call>();
    if (!call || !call->op.defined()) throw std::runtime_error("cannot evaluate");
    std::vector<std::vector<float>> args;
    for (const auto& a : call->args) args.push_back(evaluate_values(a));
    const std::string& op = call->op->name;
    size_t n = 1;
    for (const auto& a : args) n = std::max(n, a.size());
    std::vector<float> out(n);
    for (size_t i = 0; i < n; ++i) {
        auto at = [&](size_t k) { return args[k][args[k].size() == 1 ? 0 : i]; };
        if (op == "add")
            out[i] = at(0) + at(1);
        else if (op == "subtract")
            out[i] = at(0) - at(1);
        else if (op == "multiply")
            out[i] = at(0) * at(1);
        else if (op == "divide")
            out[i] = at(0) / at(1);
        else if (op == "sqrt")
            out[i] = std::sqrt(at(0));
        else if (op == "negative")
            out[i] = -at(0);
        else if (op == "cast")  // to float32 or bfloat16 (evaluate rounds)
            out[i] = at(0);
        else if (op == "qnn.quantize")  // to int8 or int32 (values of the test: in range)
            out[i] = std::clamp(std::nearbyint(at(0) / at(1)) + at(2), -128.0f,
                                e->type.as<TensorType>()->dtype.bits() == 8 ? 127.0f : 1e9f);
        else
            throw std::runtime_error("cannot evaluate " + op);
    }
    return out;
}

runtime::NDArray evaluate(const Expr& e) {
    auto values = evaluate_values(e);
    const TensorType* t = e->type.as<TensorType>();
    auto a = runtime::NDArray::empty(t->static_shape(), dl_dtype_of(t->dtype));
    if (t->dtype == DataType::bfloat16()) {
        // Round to nearest even (the test's values are finite).
        std::vector<uint16_t> bits;
        for (float v : values) {
            uint32_t x = std::bit_cast<uint32_t>(v);
            bits.push_back(uint16_t((x + 0x7fffu + ((x >> 16) & 1u)) >> 16));
        }
        a.copy_from(bits);
    } else if (t->dtype == DataType::int_(8)) {
        a.copy_from(std::vector<int8_t>(values.begin(), values.end()));
    } else if (t->dtype == DataType::int32()) {
        a.copy_from(std::vector<int32_t>(values.begin(), values.end()));
    } else {
        a.copy_from(values);
    }
    return a;
}

// The pass as Python and the pipeline find it: by name in the pass table.
IRModule run_pass(const std::string& pass, const IRModule& m) {
    PassContext ctx;
    ctx.evaluate = evaluate;
    // The BYOC passes partition for the composite target's external compilers.
    ctx.target.external_compilers = {"dnnl"};
    // to_mixed_precision runs when the driver names a half type.
    if (pass == "to_mixed_precision") ctx.mixed_precision = DataType::bfloat16();
    const GraphPassInfo* info = find_graph_pass(pass);
    EXPECT_NE(info, nullptr) << "unknown pass " << pass;
    return info ? info->run(m, ctx) : m;
}

class GraphPassGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(GraphPassGolden, MatchesAfterFile) {
    const std::string pass = GetParam();
    IRModule before = parse_module(read_file(golden_path(pass + ".before.txt")), ops::op_table());
    IRModule after = run_pass(pass, before);
    EXPECT_NO_THROW(verify(after));
    const std::string after_path = golden_path(pass + ".after.txt");
    if (!golden::compare_or_update(print(after), after_path)) return;
    // The expected text is itself valid IR.
    EXPECT_NO_THROW(parse_module(read_file(after_path), ops::op_table()));
}

std::vector<std::string> table_passes() {
    std::vector<std::string> names;
    for (const auto& p : graph_passes()) names.push_back(p.name);
    return names;
}

const std::vector<std::string> kPasses = table_passes();

INSTANTIATE_TEST_SUITE_P(GraphPasses, GraphPassGolden, ::testing::ValuesIn(kPasses));

// Every module pass of graph/passes/passes.h is in the pass table and has a golden pair here, and
// every .before.txt file is read by a test: a new pass, one missing from the table or a misnamed
// file fails instead of going untested.
TEST(GraphPassGoldenCoverage, EveryPassHasAGoldenFileAndEveryFileAPass) {
    golden::expect_golden_coverage(
        kPasses, "src/graph/passes/passes.h",
        R"(^IRModule (\w+)\(const IRModule& \w+, const PassContext& \w+\);)", "graph",
        ".before.txt");
}

}  // namespace
}  // namespace anvil::graph
