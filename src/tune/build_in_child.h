// Compiling a candidate's kernels in an isolated child process with a time limit.
//
// LLVM's optimizer cannot be interrupted, and one generated program in a few hundred makes it run
// for minutes (a deeply unrolled body in the instruction combiner or the loop vectorizer). So the
// tuner lowers a candidate in its own process, prints the loop IR (its text parses back to the
// same IR, tir/printer.h) and has anvil-build (build_worker_main.cpp) parse, compile and link
// it: a build still running after timeout_s is killed and costs one trial (TVM's LocalBuilder
// timeout), a crash in the compiler costs one trial too.
#pragma once

#include <string>
#include <vector>

#include "tune/record.h"

namespace anvil::tune {

struct BuildResult {
    MeasureError error = MeasureError::none;  // compile, or build_timeout
    std::string message;                      // the compiler's error, or how the build ended
    double elapsed_s = 0;                     // wall time of the child
    bool ok() const { return error == MeasureError::none; }
};

// Compiles the kernels (each the text of a lowered PrimFunc, after every loop-IR pass) for
// `target` (Target::str()) into the shared library `library`, in a fresh anvil-build process
// that is killed after timeout_s seconds. Throws UserError only when no build can be made at
// all: timeout_s not positive, no anvil-build, no writable temporary directory.
BuildResult build_in_child(const std::vector<std::string>& kernels, const std::string& target,
                           const std::string& library, double timeout_s);

// The anvil-build program, found as measure_worker_path() finds anvil-measure, with
// $ANVIL_BUILD_WORKER first.
std::string build_worker_path();

}  // namespace anvil::tune
