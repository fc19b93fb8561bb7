// The ONNX backend node tests (Debian's libonnx-testdata; expected outputs computed by ONNX's
// NumPy reference implementation) run in process: import, compile at -O3, run, compare with
// rtol 1e-3, atol 1e-7. Tests listed in expected_pass.txt must pass; any other test is run too
// and, when it passes, reported so the list can grow (a failure there is a skip, with the
// reason: an op or feature not supported yet).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "driver/compare.h"
#include "driver/compile.h"
#include "driver/evaluate.h"
#include "frontend/onnx/from_onnx.h"
#include "support/error.h"

namespace anvil {
namespace {

namespace fs = std::filesystem;

const fs::path kNodeTests = "/usr/share/libonnx-testdata/data/node";

std::set<std::string> expected_pass() {
    std::ifstream in(std::string(ANVIL_SOURCE_DIR) + "/tests/conformance/expected_pass.txt");
    std::set<std::string> names;
    for (std::string line; std::getline(in, line);) {
        if (!line.empty() && line[0] != '#') names.insert(line);
    }
    return names;
}

std::vector<std::string> all_tests() {
    std::vector<std::string> names;
    if (!fs::exists(kNodeTests)) return names;
    for (const auto& entry : fs::directory_iterator(kNodeTests)) {
        if (fs::exists(entry.path() / "model.onnx"))
            names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
}

// Runs one node test; returns an empty string when it passes, else what went wrong.
std::string run_node_test(const fs::path& dir) {
    try {
        graph::IRModule m = frontend::from_onnx((dir / "model.onnx").string());
        driver::CompiledModel c = driver::compile_model(m, "llvm -mcpu=native");
        const auto& params = c.module.main()->params;
        std::vector<runtime::NDArray> inputs;
        for (size_t i = 0; i < params.size(); ++i) {
            auto path = dir / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb");
            const auto& t = graph::expect_tensor(params[i]->type, {}, "input");
            inputs.push_back(driver::as_declared(frontend::read_tensor_pb(path.string()),
                                                 graph::dl_dtype_of(t.dtype)));
        }
        std::vector<runtime::NDArray> outputs = driver::run_in_process(c.module, c.kernels, inputs);
        for (size_t k = 0; k < outputs.size(); ++k) {
            auto path = dir / "test_data_set_0" / ("output_" + std::to_string(k) + ".pb");
            runtime::NDArray ref = frontend::read_tensor_pb(path.string());
            driver::Comparison cmp = driver::compare_tensors(outputs[k], ref, 1e-3, 1e-7);
            if (!cmp.same_type)
                return "output " + std::to_string(k) + " is " + outputs[k].str() + ", expected " +
                       ref.str();
            if (!cmp.ok()) {
                return "output " + std::to_string(k) + ": " + std::to_string(cmp.mismatches) +
                       " of " + std::to_string(cmp.elements) + " elements differ, max abs error " +
                       std::to_string(cmp.max_abs_error);
            }
        }
        return "";
    } catch (const Error& e) {
        return std::string("error: ") + e.what();
    }
}

class OnnxNodeTest : public ::testing::TestWithParam<std::string> {};

TEST_P(OnnxNodeTest, MatchesReference) {
    static const std::set<std::string> expected = expected_pass();
    std::string problem = run_node_test(kNodeTests / GetParam());
    if (expected.count(GetParam())) {
        EXPECT_EQ(problem, "") << GetParam() << " passed before and must keep passing";
    } else if (problem.empty()) {
        std::printf("note: %s passes now; add it to tests/conformance/expected_pass.txt\n",
                    GetParam().c_str());
    } else {
        GTEST_SKIP() << problem;
    }
}

INSTANTIATE_TEST_SUITE_P(Node, OnnxNodeTest, ::testing::ValuesIn(all_tests()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace anvil
