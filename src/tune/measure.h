// Measuring a compiled candidate kernel in an isolated child process.
//
// The parent builds the candidate (a shared library with one kernel) and writes the kernel's
// inputs once per task; `measure_in_child` starts the measuring program (anvil-measure, see
// measure_worker_main.cpp), which loads the library, runs the kernel once on the inputs and
// writes its outputs, then times it: `repeat` measurements, each the mean of `number` runs
// (`number` grows until one measurement lasts min_repeat_ms), with the caches flushed before
// each measurement when asked. A crash, a hang (killed after timeout_s) or a failed run costs
// this one trial: it comes back as a MeasureResult with the error's kind, never as an
// exception of the tuning session.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/ndarray.h"
#include "tune/record.h"

namespace anvil::tune {

// TVM's measure_option(number, repeat, min_repeat_ms, timeout, enable_cpu_cache_flush).
struct MeasureOption {
    int number = 1;
    int repeat = 3;
    int min_repeat_ms = 0;
    bool flush_cache = false;
    double timeout_s = 10;
    int threads = 0;  // the run's thread count (0: the runtime's default, all cores)
};

// One tensor argument of a kernel, in the kernel's parameter order.
struct KernelArg {
    std::string name;
    std::vector<int64_t> shape;
    DLDataType dtype{};
    bool output = false;  // written by the kernel (allocated by the worker)
};

struct MeasureRequest {
    std::string library;   // the candidate's shared library (codegen::export_library)
    std::string function;  // the kernel's name in it
    std::vector<KernelArg> args;
    std::string inputs_npz;   // the inputs, by KernelArg::name
    std::string outputs_npz;  // where the worker writes the outputs, by KernelArg::name
};

struct MeasureResult {
    MeasureError error = MeasureError::none;
    std::string message;        // the error's text (the child's message, or how it died)
    std::vector<double> costs;  // seconds per run, one per repeat
    double elapsed_s = 0;       // wall time of the whole child run
};

// Runs the request in a fresh anvil-measure process. Throws UserError only when no measurement
// can be made at all: invalid options, no anvil-measure, no writable temporary directory.
MeasureResult measure_in_child(const MeasureRequest& request, const MeasureOption& option);

// The anvil-measure program: $ANVIL_MEASURE_WORKER (a UserError when it names no executable),
// else the one built with this library (its build path), else `anvil-measure` beside the running
// executable, else beside the shared object holding this code (the Python extension). UserError
// naming the places looked at when none exists.
std::string measure_worker_path();

// Random inputs for a kernel's input arguments (floats uniform in [-1, 1), integers 0 so that
// index inputs stay in range), deterministic in `seed`.
std::vector<std::pair<std::string, runtime::NDArray>> random_inputs(
    const std::vector<KernelArg>& args, uint64_t seed);

// Whether a candidate's outputs equal the reference's: same names, shapes and dtypes, values
// within rtol/atol for floats (NaN equal to NaN), exactly for integers. `*why` names the first
// difference.
bool outputs_match(const std::vector<std::pair<std::string, runtime::NDArray>>& reference,
                   const std::vector<std::pair<std::string, runtime::NDArray>>& candidate,
                   double rtol, double atol, std::string* why);

}  // namespace anvil::tune
