#include "conformance/runner/suite_test.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "driver/compare.h"
#include "driver/compile.h"
#include "driver/evaluate.h"
#include "frontend/onnx/from_onnx.h"
#include "support/error.h"

namespace anvil::conformance {

namespace fs = std::filesystem;

const char* result_name(SuiteTestResult::Kind kind) {
    switch (kind) {
        case SuiteTestResult::Kind::pass:
            return "pass";
        case SuiteTestResult::Kind::mismatch:
            return "mismatch";
        case SuiteTestResult::Kind::error:
            return "error";
    }
    return "?";
}

namespace {

std::vector<fs::path> data_sets(const fs::path& dir) {
    std::vector<fs::path> sets;
    for (const auto& entry : fs::directory_iterator(dir)) {
        if (entry.is_directory() && entry.path().filename().string().starts_with("test_data_set_"))
            sets.push_back(entry.path());
    }
    std::sort(sets.begin(), sets.end());
    return sets;
}

// `<kind>_<k>.pb` files of a data set, k = 0, 1, ... while they exist.
std::vector<fs::path> numbered_files(const fs::path& set, const std::string& kind) {
    std::vector<fs::path> files;
    for (int k = 0;; ++k) {
        fs::path p = set / (kind + "_" + std::to_string(k) + ".pb");
        if (!fs::exists(p)) return files;
        files.push_back(p);
    }
}

// Empty when the outputs match, else what differs.
std::string compare_outputs(const std::vector<runtime::NDArray>& outputs,
                            const std::vector<fs::path>& expected, const fs::path& set) {
    if (outputs.size() != expected.size()) {
        return set.filename().string() + ": the model gave " + std::to_string(outputs.size()) +
               " outputs, the data set has " + std::to_string(expected.size());
    }
    for (size_t k = 0; k < outputs.size(); ++k) {
        runtime::NDArray ref = frontend::read_tensor_pb(expected[k].string());
        ref = driver::as_declared(ref, outputs[k].dtype());
        driver::Comparison cmp = driver::compare_tensors(outputs[k], ref, 1e-3, 1e-7);
        std::string where = set.filename().string() + " output " + std::to_string(k);
        if (!cmp.same_type) return where + " is " + outputs[k].str() + ", expected " + ref.str();
        if (!cmp.ok()) {
            return where + ": " + std::to_string(cmp.mismatches) + " of " +
                   std::to_string(cmp.elements) + " elements differ, max abs error " +
                   std::to_string(cmp.max_abs_error);
        }
    }
    return "";
}

}  // namespace

SuiteTestResult run_suite_test(const fs::path& dir) {
    SuiteTestResult result;
    try {
        auto start = std::chrono::steady_clock::now();
        graph::IRModule m = frontend::from_onnx((dir / "model.onnx").string());
        driver::CompiledModel c = driver::compile_model(m, "llvm -mcpu=native");
        result.compile_seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const auto& params = c.module.main()->params;
        std::vector<fs::path> sets = data_sets(dir);
        if (sets.empty()) {
            return {SuiteTestResult::Kind::error, "no test_data_set_* folder",
                    result.compile_seconds};
        }
        for (const auto& set : sets) {
            std::vector<fs::path> files = numbered_files(set, "input");
            if (files.size() != params.size()) {
                return {SuiteTestResult::Kind::error,
                        set.filename().string() + " has " + std::to_string(files.size()) +
                            " inputs, the model takes " + std::to_string(params.size()),
                        result.compile_seconds};
            }
            std::vector<runtime::NDArray> inputs;
            for (size_t i = 0; i < params.size(); ++i) {
                const auto& t = graph::expect_tensor(params[i]->type, params[i]->loc,
                                                     "input '" + params[i]->name + "'");
                inputs.push_back(driver::as_declared(frontend::read_tensor_pb(files[i].string()),
                                                     graph::dl_dtype_of(t.dtype)));
            }
            std::vector<runtime::NDArray> outputs =
                driver::run_in_process(c.module, c.kernels, inputs);
            std::string problem = compare_outputs(outputs, numbered_files(set, "output"), set);
            if (!problem.empty()) {
                result.kind = SuiteTestResult::Kind::mismatch;
                result.detail = problem;
                return result;
            }
        }
    } catch (const Error& e) {
        result.kind = SuiteTestResult::Kind::error;
        result.detail = e.what();
    }
    return result;
}

}  // namespace anvil::conformance
