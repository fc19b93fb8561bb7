// One test of the ONNX backend test suite (Debian's libonnx-testdata): a folder with model.onnx
// and test_data_set_*/{input,output}_K.pb.
#pragma once

#include <filesystem>
#include <string>

namespace anvil::conformance {

struct SuiteTestResult {
    enum class Kind { pass, mismatch, error };
    Kind kind = Kind::pass;
    std::string detail;          // what differed or the error message; empty on a pass
    double compile_seconds = 0;  // import and compile, not running
};
const char* result_name(SuiteTestResult::Kind kind);

// Imports model.onnx, compiles it for the host, and runs every test_data_set on the executor its
// artifact would use. Inputs are matched to the model's inputs by position (the pytorch groups
// leave names empty); initializers that are also listed as inputs are weights, so they take no
// file. Outputs are compared at the suite's tolerances (rtol 1e-3, atol 1e-7). Every failure of
// Anvil's (a UserError or InternalError) becomes an `error` with its message.
SuiteTestResult run_suite_test(const std::filesystem::path& dir);

}  // namespace anvil::conformance
