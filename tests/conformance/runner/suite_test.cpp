#include "conformance/runner/suite_test.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <vector>

#include "driver/compare.h"
#include "driver/compile.h"
#include "driver/evaluate.h"
#include "frontend/onnx/from_onnx.h"
#include "ops/control_flow.h"
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

std::string compare_tensor(const runtime::NDArray& output, runtime::NDArray ref,
                           const std::string& where) {
    ref = driver::as_declared(ref, output.dtype());
    driver::Comparison cmp = driver::compare_tensors(output, ref, 1e-3, 1e-7);
    if (!cmp.same_type) return where + " is " + output.str() + ", expected " + ref.str();
    if (!cmp.ok()) {
        return where + ": " + std::to_string(cmp.mismatches) + " of " +
               std::to_string(cmp.elements) + " elements differ, max abs error " +
               std::to_string(cmp.max_abs_error);
    }
    return "";
}

// Empty when the output value matches the expected one (tensors, sequences of them, optionals),
// else what differs.
std::string compare_value(const runtime::VMValue& output, const runtime::VMValue& ref,
                          const std::string& where) {
    using Kind = runtime::VMValue::Kind;
    if (output.kind != ref.kind) {
        const char* names[] = {"nothing", "a tensor", "a sequence"};
        return where + " is " + names[static_cast<int>(output.kind)] + ", expected " +
               names[static_cast<int>(ref.kind)];
    }
    if (output.kind == Kind::tensor) return compare_tensor(output.tensor, ref.tensor, where);
    if (output.fields.size() != ref.fields.size()) {
        return where + " has " + std::to_string(output.fields.size()) + " tensors, expected " +
               std::to_string(ref.fields.size());
    }
    for (size_t i = 0; i < output.fields.size(); ++i) {
        std::string problem =
            compare_value(output.fields[i], ref.fields[i], where + " item " + std::to_string(i));
        if (!problem.empty()) return problem;
    }
    return "";
}

// Whether a model takes or gives values other than tensors (sequences, optionals).
bool has_containers(const graph::Function& main) {
    for (const auto& p : main.params) {
        if (!p->type.is<graph::TensorType>()) return true;
    }
    for (const auto& t : ops::result_fields(main.body->type)) {
        if (!t.is<graph::TensorType>()) return true;
    }
    return false;
}

// The type an expected output file is read as: the model's declared output type decides whether
// it is an OptionalProto (Anvil may type a loop-carried sequence as optional where the model
// declares a sequence).
graph::Type expected_type(const graph::Type& result, const fs::path& model, size_t index) {
    auto* optional = result.as<graph::OptionalType>();
    if (!optional) return result;
    ::onnx::ModelProto proto;
    std::ifstream in(model, std::ios::binary);
    if (!proto.ParseFromIstream(&in) || static_cast<int>(index) >= proto.graph().output_size()) {
        throw UserError(model.string() + ": cannot read the declared outputs");
    }
    return proto.graph().output(static_cast<int>(index)).type().has_optional_type()
               ? result
               : optional->elem;
}

// Runs one data set; empty when the outputs match, else what differs.
std::string run_data_set(const driver::CompiledModel& c, const fs::path& set) {
    const auto& main = *c.module.main();
    const auto& params = main.params;
    std::vector<fs::path> files = numbered_files(set, "input");
    if (files.size() != params.size()) {
        throw UserError(set.filename().string() + " has " + std::to_string(files.size()) +
                        " inputs, the model takes " + std::to_string(params.size()));
    }
    std::vector<graph::Type> result_types = ops::result_fields(main.body->type);
    std::vector<fs::path> expected = numbered_files(set, "output");
    if (expected.size() != result_types.size()) {
        return set.filename().string() + ": the model gives " +
               std::to_string(result_types.size()) + " outputs, the data set has " +
               std::to_string(expected.size());
    }
    std::vector<runtime::VMValue> outputs;
    if (has_containers(main)) {
        std::vector<runtime::VMValue> inputs;
        for (size_t i = 0; i < params.size(); ++i) {
            inputs.push_back(frontend::read_value_pb(files[i].string(), params[i]->type));
        }
        runtime::VMValue result = driver::run_values_in_process(c.module, c.kernels, inputs);
        if (result_types.size() == 1 && !main.body->type.is<graph::TupleType>()) {
            outputs = {result};
        } else {
            outputs = result.fields;
        }
    } else {
        std::vector<runtime::NDArray> inputs;
        for (size_t i = 0; i < params.size(); ++i) {
            const auto& t = graph::expect_tensor(params[i]->type, params[i]->loc,
                                                 "input '" + params[i]->name + "'");
            inputs.push_back(driver::as_declared(frontend::read_tensor_pb(files[i].string()),
                                                 graph::dl_dtype_of(t.dtype)));
        }
        for (auto& t : driver::run_in_process(c.module, c.kernels, inputs)) outputs.emplace_back(t);
    }
    if (outputs.size() != expected.size()) {
        return set.filename().string() + ": the model gave " + std::to_string(outputs.size()) +
               " outputs, the data set has " + std::to_string(expected.size());
    }
    for (size_t k = 0; k < outputs.size(); ++k) {
        runtime::VMValue ref = frontend::read_value_pb(
            expected[k].string(),
            expected_type(result_types[k], set.parent_path() / "model.onnx", k));
        std::string problem = compare_value(
            outputs[k], ref, set.filename().string() + " output " + std::to_string(k));
        if (!problem.empty()) return problem;
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
        std::vector<fs::path> sets = data_sets(dir);
        if (sets.empty()) {
            return {SuiteTestResult::Kind::error, "no test_data_set_* folder",
                    result.compile_seconds};
        }
        for (const auto& set : sets) {
            std::string problem = run_data_set(c, set);
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
